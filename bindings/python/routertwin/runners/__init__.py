"""Runner registry: a scenario's `kind` names the module or package
`routertwin.runners.<kind>`, which defines `Schema` (pydantic, extra="forbid")
and `run(scenario, progress) -> list[CaseResult]` (docs/contracts.md), and
may define `check(scenario)` (load-time checks, called by the scenario
loader), `testers(scenario, duration_s=)` (routertwin.methods.tester) and
`METRICS` (the metric names mappings may read) and `UNITS` (metric and
parameter name, or a regular expression over names -> unit, for the
DataFrames of routertwin.api). A small kind is one module
(queue_analytic.py); a grown one a package whose `__init__` exposes just
those names from its modules (pipeline/, router/). Names starting with "_"
are not kinds: `_shared` holds what several kinds use. Adding a kind means
adding a module or package; nothing is registered by hand.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import re
from types import ModuleType


class UnknownKind(LookupError):
    """No runner module of that name (the scenario loader adds file and line)."""


def available() -> list[str]:
    """Names of every runner module or package in this package."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def get(kind: str) -> ModuleType:
    """The runner module (or package) for `kind`; raises UnknownKind if there is none."""
    if not isinstance(kind, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", kind):
        raise UnknownKind(f"not a runner name: {kind!r}")
    module_name = f"{__name__}.{kind}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # the runner exists but something it imports does not: a bug, not a typo
        known = available()
        close = difflib.get_close_matches(kind, known, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else f" (known kinds: {', '.join(known)})"
        raise UnknownKind(f"unknown kind '{kind}'{hint}") from None
    for attr in ("Schema", "run"):
        if not hasattr(module, attr):
            raise TypeError(f"runner module {module_name} defines no {attr!r} (docs/contracts.md)")
    return module
