"""A pipeline case resolved on its profiles: the fitted costs of its
platform and workload, the cycles of each of its frame sizes, the packet-I/O
and lock times, and the scenario's values where the case leaves one unset.
The analytic model and the packet-level engine both start from it."""

from __future__ import annotations

from dataclasses import dataclass

from routertwin.errors import UserError
from routertwin.runners.pipeline.frame_cost import FrameCost, frame_cost
from routertwin.runners.pipeline.profiles import CostSet, FittedParameters, PlatformProfile, WorkloadProfile
from routertwin.runners._shared.ethernet import line_rate_pps
from routertwin.runners._shared.workload import TraceSpec, trace_native_pps, trace_summary
from routertwin.runners.pipeline.schema import Case, Schema, case_frames, case_trace


@dataclass
class Resolved:
    """Everything a case needs, engine-independent."""

    plat: PlatformProfile
    wl: WorkloadProfile
    frames: list[FrameCost]  # one per frame size of the case (weights sum to 1)
    cores: int
    flows: int
    tag_type: str
    offered_load: float
    cost: CostSet
    io_s: float  # packet-I/O engine time per packet (1 / its pps ceiling)
    lock_s: float  # lock hold per packet (0: no lock)
    section_s: float = 0.0  # end of each packet's service under its flow's ATOMIC tag (0: none)
    trace: TraceSpec | None = None  # replayed at packet level; frames are its size histogram

    @property
    def mean_frame(self) -> float:
        return sum(f.frame * f.weight for f in self.frames)

    @property
    def mean_out_frame(self) -> float:
        return sum(f.out_frame * f.weight for f in self.frames)

    @property
    def core_s(self) -> float:
        """Mean time a packet keeps a core busy when the core is alone."""
        return sum(f.cycles * f.weight for f in self.frames) / self.plat.cores.clock_hz

    @property
    def busy_cores(self) -> int:
        """Cores that can hold work at once: ATOMIC tags serialize each flow."""
        return min(self.cores, self.flows) if self.tag_type == "ATOMIC" else self.cores


class CaseError(UserError):
    """A case its profiles cannot serve; `key` is the scenario key to blame
    ("fitted", "cores", "frame", "contention"), which check() turns into
    its file and line."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


def resolve(plat: PlatformProfile, wl: WorkloadProfile, fitted: FittedParameters,
            frames: list[tuple[int, float]], cores: int, flows: int, tag_type: str,
            offered_load: float) -> Resolved:
    try:
        cost = fitted.costs[plat.platform][wl.cost_key]
    except KeyError:
        raise CaseError("fitted", f"fitted parameters have no costs for platform '{plat.platform}', "
                        f"workload cost_key '{wl.cost_key}': run `routertwin calibrate`") from None
    if plat.family not in fitted.io_ceiling:
        raise CaseError("fitted", f"fitted parameters have no io_ceiling for family '{plat.family}'")
    lock_s = 0.0
    if wl.lock != "none":
        if wl.lock not in fitted.locks:
            raise CaseError("fitted", f"fitted parameters have no lock '{wl.lock}'")
        lock_s = fitted.locks[wl.lock].hold_cycles / plat.cores.clock_hz
    if cores > plat.cores.count:
        raise CaseError("cores", f"{cores} cores asked of platform '{plat.platform}', which has "
                        f"{plat.cores.count}")
    total = sum(w for _, w in frames)
    costs = [frame_cost(f, w / total, plat, wl, cost) for f, w in frames]
    io_s = fitted.io_ceiling[plat.family].sclk_cycles_per_packet / plat.sclk_hz
    return Resolved(plat, wl, costs, cores, flows, tag_type, offered_load, cost, io_s, lock_s)


def resolve_case(cfg: Schema, c: Case, plat: PlatformProfile, wl: WorkloadProfile,
                 fitted: FittedParameters) -> Resolved:
    """Case `c` on the profiles, the scenario's values standing in for what
    the case leaves unset (the same for the load-time check and the run). A
    trace not rescaled offers its own rate: its offered load is that rate's
    share of the port's line rate for the trace's mean frame."""
    load = c.offered_load or cfg.offered_load
    trace = case_trace(cfg, c)
    if trace is not None and not trace.rescale:
        summary = trace_summary(trace.file)
        try:
            native = trace_native_pps(summary)
        except UserError as exc:
            raise CaseError("frame", f"{trace.file}: {exc}") from None
        load = min(1.0, native / line_rate_pps(summary["mean_frame_bytes"], plat.port))
    r = resolve(plat, wl, fitted, case_frames(cfg, c), c.cores, c.flows or cfg.flows,
                c.tag_type or cfg.tag_type, load)
    r.trace = trace
    section = cfg.flow_section_cycles if c.flow_section_cycles is None else c.flow_section_cycles
    if section > 0:
        if r.tag_type != "ORDERED":
            raise CaseError("flow_section_cycles", "a flow's ATOMIC section is a switch from an ORDERED "
                            f"tag; this case's tag_type is {r.tag_type}")
        if r.lock_s > 0:
            raise CaseError("flow_section_cycles", f"workload '{wl.workload}' has a lock; a case has one "
                            "serialized section per packet")
        r.section_s = section / plat.cores.clock_hz
    return r
