"""Profile files (scenarios/platforms/, scenarios/workloads/): YAML data
validated by a runner's pydantic model. A profile may hold an
`assumption_ranges:` section (routertwin.assumptions): it is checked here,
against the file's comments and the model, and left out of the model."""

from __future__ import annotations

import functools
from pathlib import Path

import pydantic
from pydantic import BaseModel

from routertwin.assumptions import SECTION, check_ranges
from routertwin.errors import ScenarioError
from routertwin.scenario import Locator, plain, read_yaml_file


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
    _check_ranges_once(Path(path).read_text(encoding="utf-8"), shown, Path(path), model)
    return profile


@functools.lru_cache(maxsize=64)
def _check_ranges_once(text: str, shown: str, path: Path, model: type[BaseModel]) -> None:
    # A profile is loaded by its runner's check, its run and every fit that
    # reads it; its ranges are checked once per text (each end validates the
    # whole model).
    doc, _ = read_yaml_file(path)
    check_ranges(doc, shown, path, model)
