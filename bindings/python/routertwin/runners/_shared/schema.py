"""Cross-key rules a runner's Schema may need."""

from __future__ import annotations

from pydantic import BaseModel

from routertwin.scenario_loader import FieldError


def exactly_one(model: BaseModel, first: str, second: str, *, blame_missing: str, blame_both: str) -> None:
    """Raise FieldError unless exactly one of the keys `first` and `second`
    is set; the error points at `blame_missing` when neither is, at
    `blame_both` when both are."""
    message = f"give exactly one of '{first}' and '{second}'"
    given = [getattr(model, key) is not None for key in (first, second)]
    if not any(given):
        raise FieldError((blame_missing,), message)
    if all(given):
        raise FieldError((blame_both,), message)
