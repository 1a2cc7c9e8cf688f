"""What ``mcpkit install`` is asked to install: a file, a module or a ``module:attr``,
resolved to where it is, how ``mcpkit run`` will be given it, and its default name."""

from __future__ import annotations

import contextlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from mcpkit.cli._errors import EXIT_USAGE, CliError
from mcpkit.cli._loader import split_target

_MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")


@dataclass(frozen=True, slots=True)
class ResolvedTarget:
    """What ``mcpkit run`` is given (an absolute file, and ``:OBJECT``), the name the entry
    takes when the server names none, the module a ``MODULE:OBJECT`` named, and the target
    to check here (as the user wrote it, so that errors show the file as written);
    ``local_package``: the module's top package, when only the working folder holds it."""

    run_target: str
    stem: str
    module: str | None = None
    check_target: str = ""
    local_package: str | None = None


def resolve_target(target: str, cwd: Path) -> ResolvedTarget:
    """A file (a path, or a name ending in ``.py``) or else an importable module."""
    file_part, object_name = split_target(target)
    if not file_part:
        raise CliError(
            f"no file in {target!r}", "give FILE[:OBJECT] or MODULE:OBJECT", code=EXIT_USAGE
        )
    suffix = f":{object_name}" if object_name else ""
    path = cwd / file_part
    is_file = (
        path.is_file()
        or file_part.endswith(".py")
        or any(sep in file_part for sep in ("/", "\\"))
        or not _MODULE_NAME.match(file_part)
    )
    if is_file:
        absolute = path.resolve()
        if not absolute.exists():
            raise CliError(f"no such file: {file_part}", f"looked for {absolute}")
        return ResolvedTarget(str(absolute) + suffix, absolute.stem, check_target=target)
    origin, local_package = _module_file(file_part, cwd)
    return ResolvedTarget(
        origin + suffix, file_part.rpartition(".")[2], file_part, local_package=local_package
    )


def _module_file(module: str, cwd: Path) -> tuple[str, str | None]:
    """The source file of ``module``, found as ``python -m`` would from ``cwd``; and its top
    package when that is found from ``cwd`` only."""
    import importlib.machinery
    import importlib.util

    folder = str(cwd)
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    except Exception as exc:  # importing the parent package raised
        raise CliError(
            f"importing the package of {module} failed: {type(exc).__name__}: {exc}",
            suggest_debug=True,
        ) from exc
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    if spec is None:
        raise CliError(
            f"no such file or module: {module}",
            f"looked for the file {cwd / module} and for a module importable from {cwd}",
        )
    origin = spec.origin
    if not spec.has_location or not origin or not origin.endswith(".py"):
        raise CliError(
            f"{module} has no Python source file to run ({origin or 'none'})",
            "give the server's .py file instead: path/to/server.py[:OBJECT]",
        )
    top = module.partition(".")[0]
    elsewhere = [entry for entry in sys.path if entry not in ("", folder)]
    local = "." in module and importlib.machinery.PathFinder.find_spec(top, elsewhere) is None
    return str(Path(origin).resolve()), top if local else None
