"""Importers: a real system's configuration or table -> a scenario a person
can read and edit (`routertwin import KIND FILE`), and for some kinds the way
back (`routertwin export KIND SCENARIO`).

One module per kind, found by name like the runners (routertwin.runners):
`routertwin.importers.<kind>` defines `import_file(path, shown=None) ->
Imported` (routertwin.importers._lbcommon) and may define
`export(scenario) -> str`. Names starting with "_" are not kinds; nothing is
registered by hand, so adding a kind is adding a module.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType

from routertwin.errors import UserError

# Modules of this package that are data or helpers, not kinds.
_NOT_KINDS = {"haproxy_keywords"}


def available() -> list[str]:
    """The importer kinds (module names; '-' may stand for '_' on the command line)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if not m.name.startswith("_") and m.name not in _NOT_KINDS)


def get(kind: str) -> ModuleType:
    """The importer module of `kind`; a UserError naming the known kinds otherwise."""
    name = str(kind).replace("-", "_")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or name not in available():
        raise UserError(f"routertwin import: unknown kind '{kind}' (known: {', '.join(available())})")
    return importlib.import_module(f"{__name__}.{name}")
