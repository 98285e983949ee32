"""Calling the native runners of `routertwin._core` (plain dicts in and out)
from a runner, and reading their counts as an RFC 2544 trial."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from routertwin.errors import ScenarioError
from routertwin.methods.rfc2544 import TrialResult


def case_error(source: Path | None, case_id: str, message: str) -> ScenarioError:
    """A ScenarioError about one case: `FILE: case 'ID': message` (no file
    when the scenario has none)."""
    where = f"{source}: " if source else ""
    return ScenarioError(f"{where}case '{case_id}': {message}")


def call_native(fn: Callable[[dict], dict], config: dict, *, source: Path | None, case_id: str,
                engine: str) -> dict:
    """`fn(config)`; a key the native runner rejects (a value the load-time
    checks let through) is still the input's fault: a ScenarioError naming
    the scenario file, the case and `engine`'s message."""
    try:
        return fn(config)
    except ValueError as exc:
        raise case_error(source, case_id, f"{engine}: {exc}") from None


def trial_result(load: float, out: dict, extra: dict) -> TrialResult:
    """The RFC 2544 TrialResult of a native run at `load`: frames sent and
    received and the latencies (us) the native runner counted, plus `extra`."""
    return TrialResult(load, int(out["tx_packets"]), int(out["rx_packets"]), float(out["latency_min_us"]),
                       float(out["latency_avg_us"]), float(out["latency_max_us"]), extra)
