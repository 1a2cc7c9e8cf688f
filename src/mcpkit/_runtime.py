"""Process-level tuning applied by the servers mcpkit runs itself (``mcpkit run``)."""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    """Move everything alive after start-up (modules, the catalog, schemas) out of the
    garbage collector's reach, so collections scan only what requests create."""
    gc.collect()
    gc.freeze()
