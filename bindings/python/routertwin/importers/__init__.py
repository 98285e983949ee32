"""`routertwin import KIND FILE`: turn what a user already runs into a
scenario they can read and edit (DESIGN.md, "Mapping a real system").

Registry: every module of this package whose name does not start with "_"
is an importer kind, found by name like the runners (nothing is registered
by hand, so adding a kind is adding a module). A module defines:

- `KIND`: the word on the command line (`routertwin import KIND FILE`);
- `HELP`: one line for `routertwin import --help`;
- optionally `add_arguments(parser)`: the kind's own options (argparse);
- `convert(path: Path, args) -> Imported`: read FILE (`args` holds the
  common options `out`, `strict` and the kind's own), raise
  `routertwin.errors.UserError` with `FILE:LINE: ...` (or `FILE: offset N:`)
  for bad input, and return the files to write. Nothing is written by the
  module: `write()` writes every file of an `Imported` or none.

A directive or route the twin does not model is never dropped silently: it
goes into `Imported.unmodelled` as `FILE:LINE: what` (printed, and written
into the scenario's comments); with `--strict` the first one is an error.

Kinds here: `linux` (`ip -j route show table all`), `frr` (`show ip route
json`), `bird` (`show route all`), `mrt` (TABLE_DUMP_V2 RIB dumps), each
writing a router scenario and its FIB file (routertwin.fib). docs/import.md.
`haproxy` (haproxy.cfg) and `ipvs` (`ipvsadm -S -n`) write an lb scenario
with a `balancer`; `haproxy-stat` (`show stat` CSV) calibrate rows.
docs/import-lb.md.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import pkgutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from routertwin.errors import UserError


@dataclass
class Imported:
    """What one import writes: `files` (path -> text or bytes; the scenario
    first), a one-line `summary` for the terminal, and the `unmodelled`
    items (`FILE:LINE: what`)."""

    files: dict[Path, str | bytes]
    summary: str
    unmodelled: list[str] = field(default_factory=list)


def _modules() -> dict[str, ModuleType]:
    """KIND -> importer module, for every module of this package."""
    found = {}
    for m in pkgutil.iter_modules(__path__):
        if not m.name.startswith("_"):
            module = importlib.import_module(f"{__name__}.{m.name}")
            found[module.KIND] = module
    return found


def available() -> list[str]:
    """The importer kinds (the words `routertwin import` takes)."""
    return sorted(_modules())


def get(kind: str) -> ModuleType:
    """The importer module of `kind`; UserError naming the known kinds if none."""
    modules = _modules()
    if kind not in modules:
        close = difflib.get_close_matches(kind or "", list(modules), n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else f" (known kinds: {', '.join(sorted(modules))})"
        raise UserError(f"routertwin import: unknown kind '{kind}'{hint}")
    return modules[kind]


def add_parsers(sub) -> None:
    """One sub-command per kind under `routertwin import`: FILE, -o/--out,
    --strict and the kind's own options."""
    for kind in available():
        module = get(kind)
        p = sub.add_parser(module.KIND, help=module.HELP, description=module.HELP)
        p.add_argument("file", type=Path, metavar="FILE")
        p.add_argument("-o", "--out", type=Path, metavar="OUT",
                       help="the scenario file to write (default: FILE's name with .yaml, in the current folder)")
        p.add_argument("--strict", action="store_true",
                       help="anything the twin does not model is an error instead of a listed note")
        if hasattr(module, "add_arguments"):
            module.add_arguments(p)


def convert(kind: str, path: Path, args: argparse.Namespace) -> Imported:
    """Reads `path` with the importer of `kind`; writes nothing."""
    module = get(kind)
    if not Path(path).is_file():
        raise UserError(f"{path}: file not found")
    imported = module.convert(Path(path), args)
    if args.strict and imported.unmodelled:
        raise UserError(f"{imported.unmodelled[0]} (--strict: not modelled)")
    return imported


def write(imported: Imported) -> list[Path]:
    """Writes every file of `imported` or none: each goes to a temporary
    name in its folder first, and all are renamed once all are written."""
    temps: list[tuple[str, Path]] = []
    try:
        for path, content in imported.files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            temps.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                f.write(content.encode() if isinstance(content, str) else content)
        for tmp, path in temps:
            os.replace(tmp, path)
        temps = []
    finally:
        for tmp, _ in temps:
            Path(tmp).unlink(missing_ok=True)
    return list(imported.files)


def options(kind: str, **values) -> argparse.Namespace:
    """The options of `kind` at their defaults, with `values` replacing some
    (the Python API's way to give what the command line takes as flags)."""
    p = argparse.ArgumentParser(add_help=False)
    sub = p.add_subparsers(dest="kind")
    add_parsers(sub)
    args = p.parse_args([get(kind).KIND, "FILE"])
    known = {**vars(args), "root": None}  # root: the command line's global --root
    for key, value in values.items():
        if key not in known or key in ("kind", "file"):
            raise UserError(f"routertwin import {kind}: unknown option '{key}' "
                            f"(options: {', '.join(k for k in sorted(known) if k not in ('kind', 'file'))})")
        setattr(args, key, value)
    return args
