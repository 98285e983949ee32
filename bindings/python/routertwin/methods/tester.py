"""The tester protocol: how a runner offers its device to the RFC 2544
methods (routertwin.methods.rfc2544) and to `routertwin rfc2544`.

A runner module whose devices can be put behind a tester defines

    testers(scenario: LoadedScenario, *, duration_s: float | None = None) -> list[TesterCase]

one `TesterCase` per case of the scenario, in the scenario's order.
`duration_s` replaces the scenario's trial duration (tester time per trial).
A case is a device at a frame size; `trial_at(size, seed)` returns the
`trial(offered_load) -> TrialResult` callable the methods search over (the
same device at another size, for the frame-size sweep) and
`burst_at(size, seed)` the `burst(frames) -> TrialResult` callable of the
back-to-back test. Each call of a trial is one full model run; the device
keeps no state between trials (a tester restarts every trial).

Runners without `testers` cannot be benchmarked: `routertwin rfc2544` says
so in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Callable

from routertwin.errors import UserError
from routertwin.methods.rfc2544 import Burst, Trial


@dataclass(frozen=True)
class TesterCase:
    case: str  # the case id (CaseResult.case of the scenario's own run)
    size: int  # the case's size, in `size_unit`
    size_unit: str  # what `size` counts, e.g. "IP packet bytes" or "Ethernet frame bytes (FCS incl.)"
    size_range: tuple[int, int]  # smallest and largest size the device accepts
    duration_s: float  # tester time of one trial
    trial_at: Callable[[int, int], Trial]  # (size, seed) -> trial(offered_load)
    burst_at: Callable[[int, int], Burst]  # (size, seed) -> burst(frames) at the maximum rate
    max_frame_rate: Callable[[int], float]  # (size) -> frames/s at 100 % offered load, all ports
    describe: str = ""  # one line: what the device is, for tables and files

    def check_size(self, size: int, flag: str) -> None:
        lo, hi = self.size_range
        if not lo <= size <= hi:
            raise UserError(f"{flag}: size {size} is outside {lo}..{hi} ({self.size_unit}) of case '{self.case}'")


def case_testers(module: ModuleType, scenario, duration_s: float | None = None) -> list[TesterCase]:
    """The runner's tester cases; a one-line UserError when its kind has none."""
    fn = getattr(module, "testers", None)
    if fn is None:
        raise UserError(f"{scenario.path}: kind '{scenario.kind}' offers no tester "
                        "(its runner defines no testers(); docs/rfc2544.md)")
    return fn(scenario, duration_s=duration_s)
