"""Profile files (scenarios/platforms/, scenarios/workloads/): YAML data
validated by a runner's pydantic model. A profile may hold an
`assumption_ranges:` section (routertwin.assumptions): it is checked here,
against the file's comments and the model, and left out of the model."""

from __future__ import annotations

from pathlib import Path

import pydantic
from pydantic import BaseModel

from routertwin.assumptions import SECTION, check_ranges
from routertwin.errors import ScenarioError
from routertwin.scenario_loader import Locator, plain, read_yaml_file


def load_profile(path: Path, model: type[BaseModel]):
    """Load a platform/workload YAML file into `model` (errors name file, line and key)."""
    doc, shown = read_yaml_file(path)
    data = plain(doc)
    if isinstance(data, dict):
        data.pop(SECTION, None)
    try:
        profile = model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ScenarioError(Locator(doc, shown, []).explain(exc, model, sorted(model.model_fields))) from None
    text = Path(path).read_text(encoding="utf-8")
    if (text, model) not in _RANGES_PASSED:
        check_ranges(doc, shown, Path(path), model)
        _RANGES_PASSED.add((text, model))
    return profile


# (profile text, model) whose assumption ranges passed the check: a profile
# is loaded by its runner's check, its run and every fit that reads it, and
# each range end validates the whole model; whether the ranges pass depends
# on the text alone, so each text is checked once per process.
_RANGES_PASSED: set[tuple[str, type]] = set()
