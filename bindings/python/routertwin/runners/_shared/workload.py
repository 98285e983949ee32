"""Offered traffic beyond one frame size at constant spacing (issue 16), as
scenario keys shared by the kinds that take offered traffic: frame-size mixes
(named, a table, or an empirical distribution from a file), pcap traces,
arrival processes and flow popularity. The traffic itself is generated in
C++ (model/testers/model/traffic-profile.h, pcap-trace.h); the named mixes
and the trace reader are those of the native module, so there is one
definition of each."""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat, model_validator

from routertwin.errors import UserError
from routertwin.scenario_loader import FieldError, ScenarioModel, ScenarioPath


class MixFile(ScenarioModel):
    """An empirical frame-size distribution from a CSV file: rows of
    `bytes,weight` (a histogram), or one frame size per row (samples, e.g.
    exported from a capture); a header row of non-numbers is skipped."""

    file: ScenarioPath


class TraceSpec(ScenarioModel):
    """A pcap trace replayed as the offered traffic: its frame sizes, flows
    (by 5-tuple: ordering tags and per-flow state) and inter-arrival times."""

    file: ScenarioPath
    rescale: bool = False  # scale the trace's instants to the case's offered load of the port's line rate
    loop: bool = False  # replay the trace again until the run's duration


class Arrivals(ScenarioModel):
    """The arrival process of the offered frames (long-run rate = offered
    load). Random arrivals are shaped by the port: a frame starts when the
    previous one has left the wire."""

    process: Literal["constant", "poisson", "onoff", "mmpp"] = "constant"
    burst_mean_frames: float = Field(default=16.0, ge=1)  # onoff: geometric bursts of this mean
    burst_peak_load: float = Field(default=1.0, gt=0, le=1)  # onoff: rate inside a burst, share of line rate
    mmpp_rate_ratio: float = Field(default=4.0, ge=1)  # mmpp: high-state / low-state rate
    mmpp_high_fraction: float = Field(default=0.2, gt=0, lt=1)  # mmpp: share of time in the high state
    mmpp_cycle_us: PositiveFloat = 1000.0  # mmpp: mean high + low sojourn


class FlowMix(ScenarioModel):
    """Which flow each frame belongs to: the tester's rotation, uniform, or
    Zipf popularity (flow of rank k has weight k^-exponent) over the case's
    fixed flows; or flow-level traffic (`sizes: pareto | lognormal`): flows
    start by the arrival process, carry a heavy-tailed number of packets at
    `flow_pps` each, then end, and the case's flows are about the mean
    number active at once (FlowLevelProcess in traffic-profile.h). The
    router's RouterFlowMix adds its own keys to these."""

    popularity: Literal["round_robin", "uniform", "zipf"] = "round_robin"
    zipf_exponent: float = Field(default=1.0, ge=0, le=100)
    sizes: Literal["none", "pareto", "lognormal"] = "none"
    pareto_alpha: float = Field(default=1.2, gt=1, le=100)  # tail index; > 1 for a finite mean
    pareto_min_packets: float = Field(default=1.0, ge=1, le=1e9)  # xm, the smallest flow
    lognormal_mu: float = Field(default=2.0, ge=0, le=20)  # mean of ln(packets)
    lognormal_sigma: float = Field(default=1.0, gt=0, le=5)  # sd of ln(packets)
    flow_pps: float = Field(default=0.0, ge=0, le=1e10)  # each flow's packet rate; 0 = offered rate / flows

    # the refusal below in the kind's words: what a flow-level flow picks
    # for itself, and what popularity spreads packets over instead
    flow_picks: ClassVar[str] = "picks its own flows"
    popularity_spreads: ClassVar[str] = "fixed flows"

    @model_validator(mode="after")
    def _sizes_pick_their_own_flows(self):
        if self.sizes != "none" and self.popularity != "round_robin":
            raise FieldError(("popularity",), f"sizes: {self.sizes} (flow-level traffic) {self.flow_picks}; "
                             f"popularity: {self.popularity} applies to {self.popularity_spreads}")
        return self

    def flow_level(self) -> bool:
        return self.sizes != "none"


def named_mixes() -> list[str]:
    """Names of the built-in frame-size mixes (traffic-profile.h)."""
    from routertwin import _core

    return list(_core.frame_mix_names())


def named_mix(name: str) -> list[tuple[int, float]]:
    """(frame bytes, weight) of a named mix (traffic-profile.h cites each)."""
    from routertwin import _core

    return [(int(b), float(w)) for b, w in _core.frame_mix(name)]


def read_mix_file(path: Path) -> list[tuple[int, float]]:
    """(frame bytes, weight) of an empirical distribution file (see MixFile)."""
    counts: dict[int, float] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.reader(fh), 1):
            cells = [c.strip() for c in row if c.strip()]
            if not cells or cells[0].startswith("#"):
                continue
            try:
                size = int(cells[0])
                weight = float(cells[1]) if len(cells) > 1 else 1.0
            except ValueError:
                if lineno == 1:
                    continue  # a header
                raise UserError(f"{path}:{lineno}: expected 'bytes[,weight]', got {','.join(cells)!r}") from None
            if not 64 <= size <= 9216 or not weight >= 0 or weight != weight or weight == float("inf"):
                raise UserError(f"{path}:{lineno}: frame {size} must be 64..9216 and weight a finite number >= 0")
            counts[size] = counts.get(size, 0.0) + weight
    if not counts or sum(counts.values()) <= 0:
        raise UserError(f"{path}: no frame sizes with a positive weight")
    return sorted(counts.items())


def trace_summary(path: Path) -> dict:
    """One streamed pass over a pcap file (`_core.trace_summary`): packets,
    first_s, span_s, mean_frame_bytes, frame_sizes {bytes: packets}, flows.
    A malformed or truncated file is a UserError naming it and the packet.
    Read once per file version (the load-time check and every case share it)."""
    st = Path(path).stat()
    return dict(_trace_summary(str(path), st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=16)
def _trace_summary(path: str, mtime_ns: int, size: int) -> dict:
    from routertwin import _core

    try:
        return _core.trace_summary(path)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def trace_native_pps(summary: dict) -> float:
    """The trace's own packet rate over its span."""
    span = summary["span_s"]
    if summary["packets"] < 2 or span <= 0:
        raise UserError("a trace needs at least two packets with increasing timestamps")
    return (summary["packets"] - 1) / span


def arrival_keys(a: Arrivals | None, line_pps: float) -> dict:
    """Native keys of an arrival process (forwarding-scenario.h)."""
    if a is None or a.process == "constant":
        return {}
    keys: dict = {"arrivals": a.process}
    if a.process == "onoff":
        keys["burst_mean_frames"] = a.burst_mean_frames
        keys["burst_peak_pps"] = a.burst_peak_load * line_pps
    elif a.process == "mmpp":
        keys.update(mmpp_rate_ratio=a.mmpp_rate_ratio, mmpp_high_fraction=a.mmpp_high_fraction,
                    mmpp_cycle_s=a.mmpp_cycle_us * 1e-6)
    return keys


def flow_keys(f: FlowMix | None) -> dict:
    """Native keys of a flow popularity or flow sizes (forwarding-scenario.h)."""
    if f is None:
        return {}
    keys: dict = {}
    if f.popularity != "round_robin":
        keys["flow_popularity"] = f.popularity
    if f.popularity == "zipf":
        keys["zipf_exponent"] = f.zipf_exponent
    if f.sizes != "none":
        keys["flow_sizes"] = f.sizes
        if f.sizes == "pareto":
            keys.update(pareto_alpha=f.pareto_alpha, pareto_min_packets=f.pareto_min_packets)
        else:
            keys.update(lognormal_mu=f.lognormal_mu, lognormal_sigma=f.lognormal_sigma)
        if f.flow_pps > 0:
            keys["flow_pps"] = f.flow_pps
    return keys
