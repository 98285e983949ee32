"""Profile files (scenarios/platforms/, scenarios/workloads/): YAML data
validated by a runner's pydantic model."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from routertwin.scenario_loader import load_yaml_model


def load_profile(path: Path, model: type[BaseModel]):
    """Load a platform/workload YAML file into `model` (errors name file, line and key)."""
    return load_yaml_model(path, model)
