"""Where the project is: the folder holding validation/reference.csv."""

from __future__ import annotations

from pathlib import Path

from routertwin.errors import UserError

MARKER = Path("validation") / "reference.csv"


def find_root(start: Path | None = None, explicit: Path | None = None) -> Path:
    """Return the project root: `explicit` if given (it must hold the marker),
    else the first of `start` (default: cwd) and its parents that holds it."""
    if explicit is not None:
        root = Path(explicit).resolve()
        if not (root / MARKER).is_file():
            raise UserError(f"{root}: not a RouterTwin project root (no {MARKER})")
        return root
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_file():
            return folder
    raise UserError(
        f"{here}: no RouterTwin project here or above (no {MARKER}); use --root DIR"
    )


def display_path(path: Path, root: Path | None) -> str:
    """`path` relative to `root` when inside it (stable across checkouts),
    else as an absolute POSIX path."""
    path = Path(path).resolve()
    if root is not None:
        try:
            return path.relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()
