"""What ``mcpkit run`` and ``mcpkit proxy`` do to their own process, being the program: once
the app has started, what start-up left alive (modules, the catalog, schemas) is moved out
of the garbage collector's reach, so its full collections scan only what requests create;
``MCPKIT_FREEZE_GC_AT_STARTUP=0`` says not to. Here, in the command's package, because a
library never touches its host's collector: the serving code only runs the hook it is
handed (``mcpkit._runtime.AsTheProgram``)."""

from __future__ import annotations

import gc
import os

from mcpkit._runtime import AsTheProgram
from mcpkit.cli._run_options import PROGRAM_DEFAULTS


def freeze_startup_objects() -> None:
    """Freeze what is alive now out of the collector's reach (after a last collection)."""
    gc.collect()
    gc.freeze()


def as_the_program() -> AsTheProgram:
    """What the command hands the serving code: the freeze, unless
    ``MCPKIT_FREEZE_GC_AT_STARTUP`` says no. The settings are loaded only when it is set:
    they import the HTTP transport, which stdio does without."""
    text = os.environ.get("MCPKIT_FREEZE_GC_AT_STARTUP", "")
    if not text.strip():
        freeze = bool(PROGRAM_DEFAULTS["freeze_gc_at_startup"])
    else:
        from mcpkit.cli._settings import BY_FIELD

        freeze = bool(BY_FIELD["freeze_gc_at_startup"].parse(text))
    return AsTheProgram(after_start=freeze_startup_objects if freeze else None)


__all__ = ["as_the_program", "freeze_startup_objects"]
