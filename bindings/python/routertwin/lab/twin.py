"""The twin's side of the lab: calibrate this machine's per-hop cost on one
path, predict the others.

The twin's models of seed 004's paths live in `scenarios/zstack/` and the
runner kind that runs them. When this build has no such runner, every path
reports "twin: not available (reason)" and the measured side stands alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Calibrated:
    name: str
    value: float
    unit: str
    from_path: str
    note: str


@dataclass
class TwinOutcome:
    available: bool
    reason: str = ""
    predictions_bps: dict[str, float] = field(default_factory=dict)
    calibrated: list[Calibrated] = field(default_factory=list)
    scenario: str = ""
    seed: int | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def unavailable(cls, reason: str) -> "TwinOutcome":
        return cls(False, reason)


def predict(params, results, root: Path | None) -> TwinOutcome:
    from routertwin import runners

    kinds = runners.available()
    if "zstack" not in kinds:
        return TwinOutcome.unavailable("this build has no ZStack path model (runner kind 'zstack', "
                                       "scenarios/zstack/): issue 13's models have not landed")
    return TwinOutcome.unavailable("the ZStack runner is present but the lab does not drive it yet")
