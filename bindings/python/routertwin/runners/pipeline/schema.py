"""The keys of a pipeline scenario (`Schema`) and the cases they name: an
explicit list or every combination of a sweep."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (AfterValidator, Field, NonNegativeFloat, PositiveFloat, ValidationInfo, field_validator,
                      model_validator)

from routertwin.runners._shared.ethernet import MAX_FRAME, MIN_FRAME
from routertwin.runners._shared.schema import exactly_one
from routertwin.runners._shared.workload import (Arrivals, FlowMix, MixFile, TraceSpec, named_mix, named_mixes,
                                                 read_mix_file, trace_summary)
from routertwin.runners.pipeline.profiles import CoreCount
from routertwin.scenario_loader import FieldError, ScenarioModel, ScenarioPath


def _frame_size(v: int | str) -> int | str:
    if isinstance(v, int) and not MIN_FRAME <= v <= MAX_FRAME:
        raise ValueError(f"frame {v} bytes is outside {MIN_FRAME}..{MAX_FRAME}")
    return v


Frame = Annotated[int | str, AfterValidator(_frame_size)]
"""Frame bytes incl. FCS, or the name of a mix in `mixes`, of a named mix
(simple_imix, imix_570, spirent_imix, four_size_imix) or of a trace in `traces`."""

# The engine keeps three 8-byte words of state per flow: 2^20 flows is 24 MB
# (the seed's tests use 4 to 70 flows; the what-ifs 10000).
Flows = Annotated[int, Field(ge=1, le=2**20)]
# Offered load is a fraction of the input line rate: a port cannot carry
# more; at least a millionth of it, below which a window of microseconds to a
# second offers next to no frame to measure.
Load = Annotated[float, Field(ge=1e-6, le=1)]

# Simulated time per case (packet method). At most 1 s: the engine runs ~10^7
# frames per wall second (measured: 100 ms of 32 cores at 64 B, 4.3 M frames,
# 1.3 s), so 1 s at 100G (149 M frames of 64 B) takes about 15 s; the seed's
# windows are milliseconds.
MAX_DURATION_US = 1e6


class MixPart(ScenarioModel):
    bytes: int = Field(ge=MIN_FRAME, le=MAX_FRAME)
    weight: PositiveFloat


TagType = Literal["ORDERED", "ATOMIC", "UNTAGGED"]
# What-if: the last cycles of each packet's service under its flow's ATOMIC
# tag, switched to from ORDERED with the core waiting for the switch (an
# IPsec SA's sequence number, say); 0 = none. At most 10^6 cycles.
SectionCycles = Annotated[float, Field(ge=0, le=1e6)]


class Case(ScenarioModel):
    id: str | None = None  # default "<frame>b-<cores>c" (+ "-<flows>f", "-<tag>" when set)
    frame: Frame
    cores: CoreCount
    flows: Flows | None = None  # default: the scenario's
    tag_type: TagType | None = None  # default: the scenario's
    offered_load: Load | None = None  # fraction of the input line rate
    flow_section_cycles: SectionCycles | None = None  # default: the scenario's


class Sweep(ScenarioModel):
    """Every combination of the lists (case ids as in Case)."""

    frame: list[Frame]
    cores: list[CoreCount]
    flows: list[Flows] | None = None
    tag_type: list[TagType] | None = None
    flow_section_cycles: list[SectionCycles] | None = None


class Schema(ScenarioModel):

    platform: ScenarioPath
    workload: ScenarioPath
    fitted: ScenarioPath
    # what-if: replace the platform's port rate; at most 1.6 Tbit/s, the
    # fastest Ethernet rate IEEE 802.3 has defined (802.3dj).
    port_rate_bps: float | None = Field(default=None, gt=0, le=1.6e12)
    flows: Flows = 4
    tag_type: TagType = "ORDERED"
    flow_section_cycles: SectionCycles = 0.0  # ORDERED only: a flow's ATOMIC section (what-if)
    offered_load: Load = 1.0  # fraction of the input line rate (the tests offered line rate)
    method: Literal["packet", "analytic", "both"] = "both"
    contention: Literal["none", "mva"] = "none"  # analytic only: see analytic()
    duration_us: float = Field(default=2000.0, gt=0, le=MAX_DURATION_US)  # simulated time per case (packet)
    warmup_us: NonNegativeFloat = 500.0  # not measured; smaller than duration_us
    mixes: dict[str, list[MixPart] | MixFile] = {}  # a table, or an empirical distribution file
    # packet method: each frame's size drawn from the mix, or a fixed interleaving
    # whose shares are exact every cycle of the weights (a tester's repeating pattern)
    frame_order: Literal["random", "sequence"] = "random"
    traces: dict[str, TraceSpec] = {}  # pcap files a case's frame may name (packet method)
    # the arrival process (default constant spacing); the closed form takes
    # constant and Poisson for its latency distribution and loss (analytic.queue_distribution)
    arrivals: Arrivals | None = None
    flow_mix: FlowMix | None = None  # packet method: flow popularity (default the tester's rotation)
    cases: list[Case] | None = None
    sweep: Sweep | None = None

    @field_validator("warmup_us")
    @classmethod
    def _warmup_leaves_a_window(cls, v: float, info: ValidationInfo) -> float:
        duration = info.data.get("duration_us")  # absent when it failed its own check
        if duration is not None and v >= duration:
            raise ValueError(f"warmup_us {v:g} must be smaller than duration_us {duration:g}")
        return v

    @model_validator(mode="after")
    def _cases_or_sweep(self):
        exactly_one(self, "cases", "sweep", blame_missing="sweep", blame_both="cases")
        for loc, f in frame_locs(self):
            if isinstance(f, str) and f not in self.mixes and f not in self.traces and f not in named_mixes():
                raise FieldError(loc, f"frame {f!r} is neither a frame size nor a mix defined in 'mixes' "
                                 f"(nor a named mix: {', '.join(named_mixes())}; nor a trace in 'traces')")
        for name in self.traces:
            if name in self.mixes:
                raise FieldError(("traces", name), f"'{name}' names both a mix and a trace")
        ids: dict[str, int] = {}
        for i, c in enumerate(expand_cases(self)):
            cid = case_id(c)
            if cid in ids:
                loc = ("cases", i, "id" if c.id else "frame") if self.cases is not None else ("sweep",)
                raise FieldError(loc, f"case id '{cid}' appears twice; give cases distinct ids")
            ids[cid] = i
        return self


def frame_locs(cfg: Schema) -> list[tuple[tuple, int | str]]:
    """(location in the scenario, frame) of every frame the scenario names."""
    if cfg.cases is not None:
        return [(("cases", i, "frame"), c.frame) for i, c in enumerate(cfg.cases)]
    return [(("sweep", "frame", i), f) for i, f in enumerate(cfg.sweep.frame)]


def case_locs(cfg: Schema, index: int, c: Case) -> dict[str, tuple]:
    """Where the scenario sets case `index`'s frame, cores, flows and flow section."""
    if cfg.cases is not None:
        locs = {k: ("cases", index, k) for k in ("frame", "cores", "flows")}
        if c.flow_section_cycles is not None:
            locs["flow_section_cycles"] = ("cases", index, "flow_section_cycles")
        return locs
    sw = cfg.sweep
    return {"frame": ("sweep", "frame", sw.frame.index(c.frame)),
            "cores": ("sweep", "cores", sw.cores.index(c.cores)),
            "flows": ("sweep", "flows", sw.flows.index(c.flows)) if sw.flows else ("flows",),
            "flow_section_cycles": (("sweep", "flow_section_cycles",
                                     sw.flow_section_cycles.index(c.flow_section_cycles))
                                    if sw.flow_section_cycles else ("flow_section_cycles",))}


def expand_cases(cfg: Schema) -> list[Case]:
    """The scenario's cases: its list, or every combination of its sweep."""
    if cfg.cases is not None:
        return list(cfg.cases)
    sw = cfg.sweep
    return [Case(frame=f, cores=c, flows=n, tag_type=t, flow_section_cycles=h)
            for h in (sw.flow_section_cycles or [None])
            for t in (sw.tag_type or [None]) for n in (sw.flows or [None])
            for f in sw.frame for c in sw.cores]


def case_id(c: Case) -> str:
    """The case's id, or "<frame>b-<cores>c" (+ "-<flows>f", "-<tag>", "-s<section cycles>"
    when set)."""
    if c.id:
        return c.id
    f = f"{c.frame}b" if isinstance(c.frame, int) else str(c.frame)
    cid = f"{f}-{c.cores}c"
    if c.flows is not None:
        cid += f"-{c.flows}f"
    if c.tag_type is not None:
        cid += f"-{c.tag_type.lower()}"
    if c.flow_section_cycles is not None:
        cid += f"-s{c.flow_section_cycles:g}"
    return cid


def case_frames(cfg: Schema, c: Case) -> list[tuple[int, float]]:
    """(frame bytes, weight) of the case: its one size, its mix (a table, a
    file's empirical distribution, a named mix) or its trace's frame sizes."""
    if isinstance(c.frame, int):
        return [(c.frame, 1.0)]
    mix = cfg.mixes.get(c.frame)
    if isinstance(mix, MixFile):
        return read_mix_file(mix.file)
    if mix is not None:
        return [(m.bytes, m.weight) for m in mix]
    if c.frame in cfg.traces:
        sizes = trace_summary(cfg.traces[c.frame].file)["frame_sizes"]
        return [(int(b), float(n)) for b, n in sorted(sizes.items())]
    return named_mix(c.frame)


def case_trace(cfg: Schema, c: Case) -> TraceSpec | None:
    """The trace the case replays, if its frame names one."""
    return cfg.traces.get(c.frame) if isinstance(c.frame, str) else None

