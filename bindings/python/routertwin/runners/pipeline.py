"""kind: pipeline -- a multi-core packet-processing pipeline (an Octeon-style
network processor) offered frames by an RFC 2544-style tester.

A packet enters through the port (line rate with preamble and inter-frame
gap), is handed by the packet-input and work-scheduling units to one of the
cores, costs that core a number of cycles (fixed + the C core's priced
operation counters + per-byte + crypto per byte), and leaves through the port
again (line rate of the *output* frame, which ESP tunnelling makes longer).
Shared resources the cores contend for are stations of a closed queueing
network whose customers are the busy cores:

- the packet-I/O engine (SSO get_work + PKO send + buffer free), visited once
  per packet for a time fitted once per chip family (its ceiling);
- an optional lock (a serialized critical section per packet, e.g. the Linux
  transmit path), held for a fitted number of core cycles.

Work ordering: with the SSO's ATOMIC tag a flow's packets are processed one
at a time, so at most `flows` cores are busy; ORDERED (and UNTAGGED) tags let
every core work and only restore order on output.

Two methods compute a case: `packet` runs the C++ packet-level engine
(`routertwin._core.run_pipeline`, keys in model/helper/forwarding-scenario.h);
`analytic` is the closed form below (exact Mean Value Analysis of the closed
network, capped by line rate in/out, offered load and memory bandwidth).
`both` runs the packet level and reports the analytic throughput beside it.

Example (scenarios/octeon/cn68-se-1core.yaml):

    scenario: cn68-se-1core
    kind: pipeline
    seed: 1
    platform: ../platforms/cn68xx-1500-ddr3-1066.yaml
    workload: ../workloads/ipfwd-se.yaml
    fitted: ../platforms/fitted/octeon.yaml
    flows: 4
    tag_type: ORDERED
    sweep: {frame_bytes: [64, 128, 256, 1518], cores: [1]}
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (AfterValidator, BaseModel, Field, NonNegativeFloat, NonNegativeInt,
                      PositiveFloat, PositiveInt, ValidationInfo, field_validator, model_validator)

from routertwin.errors import ScenarioError, UserError
from routertwin.results import CaseResult
from routertwin.scenario import FieldError, ScenarioModel, ScenarioPath

# Metrics a case may report (mappings are checked against them). Packet level
# adds core<i>_util per core and <resource>_util for each engine resource.
METRICS = (
    "pps", "gbps", "gbps_out", "line_rate_fraction", "latency_avg_us", "latency_min_us",
    "latency_max_us", "cycles_per_packet", "loss_pct", "core_util", "cores_util", "packet_input_util",
    "packet_output_util", "lock_util", "memory_util", "line_rate_util", "ordering_util",
    "pps_analytic", "latency_analytic_us",
)

ETH_HEADER_BYTES = 14
ETH_FCS_BYTES = 4

# dp_ops_t field names (core/include/dp/dp_ops.h), in order: the keys a
# workload's ops_per_packet and a platform's counter_cycles may use.
OPS_COUNTERS = (
    "packets", "bytes_parsed", "bytes_written", "checksum_bytes", "csum_updates",
    "table_probes", "cache_lines", "table_writes", "rules_evaluated", "bytes_copied",
    "crypto_bytes",
)


def _known_counters(value: dict) -> dict:
    unknown = sorted(set(value) - set(OPS_COUNTERS))
    if unknown:
        raise ValueError(f"unknown operation counter {unknown[0]!r}; counters: {', '.join(OPS_COUNTERS)}")
    return value


# Ethernet frames incl. FCS: 64 bytes (IEEE 802.3 minimum) to 9216 (the
# common jumbo limit of switch ports).
MIN_FRAME, MAX_FRAME = 64, 9216


def _frame_size(v: int | str) -> int | str:
    if isinstance(v, int) and not MIN_FRAME <= v <= MAX_FRAME:
        raise ValueError(f"frame {v} bytes is outside {MIN_FRAME}..{MAX_FRAME}")
    return v


Frame = Annotated[int | str, AfterValidator(_frame_size)]
"""Frame bytes incl. FCS, or the name of a mix in `mixes`."""

# At most 4096 cores (assumption: far above any network processor; seed 002's
# CN78xx has 48); check() holds each case to its platform's cores.count.
CoreCount = Annotated[int, Field(ge=1, le=4096)]
# The engine keeps three 8-byte words of state per flow: 2^20 flows is 24 MB
# (the seed's tests use 4 to 70 flows; the what-ifs 10000).
Flows = Annotated[int, Field(ge=1, le=2**20)]
# Offered load is a fraction of the input line rate: a port cannot carry
# more; at least a millionth of it, below which a window of microseconds to a
# second offers next to no frame to measure.
Load = Annotated[float, Field(ge=1e-6, le=1)]


# ---------------------------------------------------------------- profiles --

class Cores(ScenarioModel):
    count: CoreCount
    clock_hz: PositiveFloat


class Memory(ScenarioModel):
    type: str
    transfers_per_s: PositiveFloat
    controllers: PositiveInt
    bytes_per_transfer: PositiveInt
    efficiency: float = Field(gt=0, le=1)

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.transfers_per_s * self.controllers * self.bytes_per_transfer * self.efficiency


class Port(ScenarioModel):
    type: Literal["ethernet"]
    rate_bps: PositiveFloat
    overhead_bytes: NonNegativeInt  # preamble + SFD + inter-frame gap per frame
    min_frame_bytes: PositiveInt


class PlatformProfile(ScenarioModel):
    """scenarios/platforms/<name>.yaml: what the chip is (cited or assumed)."""

    platform: str
    family: str
    cores: Cores
    sclk_hz: PositiveFloat
    memory: Memory
    port: Port
    stages_ns: dict[str, NonNegativeFloat]
    input_buffer_packets: int = Field(ge=1, le=2**32 - 1)  # the engine's queue depth is a 32-bit count
    counter_cycles: dict[str, NonNegativeFloat] = {}

    _check_counters = field_validator("counter_cycles")(_known_counters)


class EspSpec(ScenarioModel):
    """ESP tunnel-mode encapsulation sizes (RFC 4303)."""

    outer_ip_bytes: PositiveInt
    esp_header_bytes: PositiveInt
    iv_bytes: NonNegativeInt
    block_bytes: PositiveInt
    trailer_bytes: PositiveInt
    icv_bytes: NonNegativeInt


class WorkloadProfile(ScenarioModel):
    """scenarios/workloads/<name>.yaml: what the software does to a packet."""

    workload: str
    description: str = ""
    cost_key: str
    path: Literal["ipv4_forward", "l2_passthrough", "ipsec_esp_tunnel"]  # what the packet goes through
    ops_per_packet: dict[str, NonNegativeInt]
    esp: EspSpec | None = None
    lock: str = "none"

    _check_counters = field_validator("ops_per_packet")(_known_counters)


def load_profile(path: Path, model: type[BaseModel]):
    """Load a platform/workload YAML file into `model` (errors name file, line and key)."""
    from routertwin.scenario import load_yaml_model

    return load_yaml_model(path, model)


class CostSet(ScenarioModel):
    fixed_cycles: NonNegativeFloat
    per_byte_cycles: NonNegativeFloat = 0.0
    crypto_byte_cycles: NonNegativeFloat = 0.0


class IoCeiling(ScenarioModel):
    sclk_cycles_per_packet: PositiveFloat


class LockHold(ScenarioModel):
    hold_cycles: PositiveFloat


@dataclass
class FittedParameters:
    """Fitted values, structured. In a fitted file (routertwin calibrate) they
    are flat names: `cost.<platform>.<cost_key>.<field>` (fields of CostSet),
    `io_ceiling.<family>.sclk_cycles_per_packet`, `lock.<name>.hold_cycles`."""

    costs: dict[str, dict[str, CostSet]]  # platform -> cost_key -> costs
    io_ceiling: dict[str, IoCeiling]  # family -> ceiling
    locks: dict[str, LockHold]

    def flat(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for plat, sets in self.costs.items():
            for key, cs in sets.items():
                for name, v in cs.model_dump(exclude_unset=True).items():
                    out[f"cost.{plat}.{key}.{name}"] = v
        for fam, io in self.io_ceiling.items():
            out[f"io_ceiling.{fam}.sclk_cycles_per_packet"] = io.sclk_cycles_per_packet
        for name, lock in self.locks.items():
            out[f"lock.{name}.hold_cycles"] = lock.hold_cycles
        return out

    @classmethod
    def from_flat(cls, values: dict[str, float], shown: str) -> "FittedParameters":
        import pydantic

        costs: dict[str, dict[str, dict]] = {}
        io: dict[str, IoCeiling] = {}
        locks: dict[str, LockHold] = {}
        for name, v in values.items():
            parts = name.split(".")
            try:
                if parts[0] == "cost" and len(parts) == 4:
                    CostSet.model_validate({"fixed_cycles": 0.0, parts[3]: v})  # this one field, alone
                    costs.setdefault(parts[1], {}).setdefault(parts[2], {})[parts[3]] = v
                elif parts[0] == "io_ceiling" and len(parts) == 3 and parts[2] == "sclk_cycles_per_packet":
                    io[parts[1]] = IoCeiling(sclk_cycles_per_packet=v)
                elif parts[0] == "lock" and len(parts) == 3 and parts[2] == "hold_cycles":
                    locks[parts[1]] = LockHold(hold_cycles=v)
                else:
                    raise ScenarioError(f"{shown}: parameter '{name}' is not a pipeline parameter "
                                        "(cost.P.K.FIELD, io_ceiling.F.sclk_cycles_per_packet, lock.L.hold_cycles)")
            except pydantic.ValidationError as exc:
                err = exc.errors(include_url=False)[0]
                raise ScenarioError(f"{shown}: parameter '{name}': {err['msg']} (got {v!r})") from None
        built = {}
        for p, sets in costs.items():
            built[p] = {}
            for k, f in sets.items():
                if "fixed_cycles" not in f:
                    raise ScenarioError(f"{shown}: parameter 'cost.{p}.{k}.fixed_cycles' is missing")
                built[p][k] = CostSet(**f)
        return cls(built, io, locks)


# ---------------------------------------------------------------- scenario --

# Simulated time per case (packet method). At most 1 s: the engine runs ~10^7
# frames per wall second (measured: 100 ms of 32 cores at 64 B, 4.3 M frames,
# 1.3 s), so 1 s at 100G (149 M frames of 64 B) takes about 15 s; the seed's
# windows are milliseconds.
MAX_DURATION_US = 1e6

class MixPart(ScenarioModel):
    bytes: int = Field(ge=MIN_FRAME, le=MAX_FRAME)
    weight: PositiveFloat


TagType = Literal["ORDERED", "ATOMIC", "UNTAGGED"]


class Case(ScenarioModel):
    id: str | None = None  # default "<frame>b-<cores>c" (+ "-<flows>f", "-<tag>" when set)
    frame: Frame
    cores: CoreCount
    flows: Flows | None = None  # default: the scenario's
    tag_type: TagType | None = None  # default: the scenario's
    offered_load: Load | None = None  # fraction of the input line rate


class Sweep(ScenarioModel):
    """Every combination of the lists (case ids as in Case)."""

    frame: list[Frame]
    cores: list[CoreCount]
    flows: list[Flows] | None = None
    tag_type: list[TagType] | None = None


class Schema(ScenarioModel):

    platform: ScenarioPath
    workload: ScenarioPath
    fitted: ScenarioPath
    # what-if: replace the platform's port rate; at most 1.6 Tbit/s, the
    # fastest Ethernet rate IEEE 802.3 has defined (802.3dj).
    port_rate_bps: float | None = Field(default=None, gt=0, le=1.6e12)
    flows: Flows = 4
    tag_type: TagType = "ORDERED"
    offered_load: Load = 1.0  # fraction of the input line rate (the tests offered line rate)
    method: Literal["packet", "analytic", "both"] = "both"
    contention: Literal["none", "mva"] = "none"  # analytic only: see analytic()
    duration_us: float = Field(default=2000.0, gt=0, le=MAX_DURATION_US)  # simulated time per case (packet)
    warmup_us: NonNegativeFloat = 500.0  # not measured; smaller than duration_us
    mixes: dict[str, list[MixPart]] = {}
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
        if self.cases is None and self.sweep is None:
            raise FieldError(("sweep",), "give exactly one of 'cases' and 'sweep'")
        if self.cases is not None and self.sweep is not None:
            raise FieldError(("cases",), "give exactly one of 'cases' and 'sweep'")
        for loc, f in _frame_locs(self):
            if isinstance(f, str) and f not in self.mixes:
                raise FieldError(loc, f"frame {f!r} is neither a frame size nor a mix defined in 'mixes'")
        ids: dict[str, int] = {}
        for i, c in enumerate(_cases(self)):
            cid = _case_id(c)
            if cid in ids:
                loc = ("cases", i, "id" if c.id else "frame") if self.cases is not None else ("sweep",)
                raise FieldError(loc, f"case id '{cid}' appears twice; give cases distinct ids")
            ids[cid] = i
        return self


def _frame_locs(cfg: "Schema") -> list[tuple[tuple, int | str]]:
    """(location in the scenario, frame) of every frame the scenario names."""
    if cfg.cases is not None:
        return [(("cases", i, "frame"), c.frame) for i, c in enumerate(cfg.cases)]
    return [(("sweep", "frame", i), f) for i, f in enumerate(cfg.sweep.frame)]


def _case_locs(cfg: "Schema", index: int, c: "Case") -> dict[str, tuple]:
    """Where the scenario sets case `index`'s frame, cores and flows."""
    if cfg.cases is not None:
        return {k: ("cases", index, k) for k in ("frame", "cores", "flows")}
    sw = cfg.sweep
    return {"frame": ("sweep", "frame", sw.frame.index(c.frame)),
            "cores": ("sweep", "cores", sw.cores.index(c.cores)),
            "flows": ("sweep", "flows", sw.flows.index(c.flows)) if sw.flows else ("flows",)}


# ------------------------------------------------------------- mechanisms --

def wire_bytes(frame: float, port: Port) -> float:
    """Bytes a frame occupies on the wire: the frame plus preamble/SFD/IFG."""
    return frame + port.overhead_bytes


def line_rate_pps(frame: float, port: Port) -> float:
    """Frames per second of `frame` bytes at the port's line rate."""
    return port.rate_bps / (8.0 * wire_bytes(frame, port))


@dataclass(frozen=True)
class EspTunnel:
    """ESP tunnel-mode encapsulation of one Ethernet frame."""

    inner_ip: int  # the original IP packet (frame - Ethernet header - FCS)
    pad: int  # padding so that inner_ip + pad + trailer is a multiple of the block
    encrypted: int  # bytes through the cipher: inner_ip + pad + trailer
    authenticated: int  # bytes through the MAC: ESP header + IV + encrypted
    out_ip: int  # outer IP packet: outer header + ESP header + IV + encrypted + ICV
    out_frame: int  # the frame on the wire out (incl. Ethernet header and FCS)

    @property
    def crypto_bytes(self) -> int:
        return self.encrypted + self.authenticated


def esp_tunnel(frame: int, esp: EspSpec, min_frame: int = 64) -> EspTunnel:
    """Frame growth of ESP tunnel mode (RFC 4303 section 2.4: the padding
    makes payload + pad + 2-byte trailer a multiple of the cipher block)."""
    inner = frame - ETH_HEADER_BYTES - ETH_FCS_BYTES
    pad = (-(inner + esp.trailer_bytes)) % esp.block_bytes
    encrypted = inner + pad + esp.trailer_bytes
    authenticated = esp.esp_header_bytes + esp.iv_bytes + encrypted
    out_ip = esp.outer_ip_bytes + authenticated + esp.icv_bytes
    out_frame = max(min_frame, ETH_HEADER_BYTES + out_ip + ETH_FCS_BYTES)
    return EspTunnel(inner, pad, encrypted, authenticated, out_ip, out_frame)


@dataclass(frozen=True)
class FrameCost:
    """One frame size through one workload on one platform."""

    frame: int
    weight: float
    out_frame: int
    cycles: float  # core cycles per packet when the core is alone (fitted + priced)
    crypto_bytes: int


def frame_cost(frame: int, weight: float, plat: PlatformProfile, wl: WorkloadProfile, cost: CostSet) -> FrameCost:
    """Per-packet cycles = fixed + priced C-core counters + per frame byte + per crypto byte."""
    ops = dict(wl.ops_per_packet)
    out_frame = frame
    crypto = 0
    if wl.esp is not None:
        t = esp_tunnel(frame, wl.esp, plat.port.min_frame_bytes)
        out_frame, crypto = t.out_frame, t.crypto_bytes
        ops["crypto_bytes"] = ops.get("crypto_bytes", 0) + crypto
    priced = sum(plat.counter_cycles.get(k, 0.0) * v for k, v in ops.items() if k != "crypto_bytes")
    cycles = (cost.fixed_cycles + priced + cost.per_byte_cycles * frame
              + cost.crypto_byte_cycles * ops.get("crypto_bytes", 0))
    return FrameCost(frame, weight, out_frame, cycles, crypto)


def mva_closed(customers: int, think_s: float, demands_s: dict[str, float]) -> tuple[float, dict[str, float]]:
    """Exact Mean Value Analysis (Reiser & Lavenberg 1980) of a closed network:
    `customers` cores each spend `think_s` alone, then visit every queueing
    station (single FIFO server, exponential service of mean demand) once.
    Returns throughput and the mean residence time at each station."""
    queue = {k: 0.0 for k in demands_s}
    resid = dict(demands_s)
    x = 0.0
    for n in range(1, customers + 1):
        resid = {k: d * (1.0 + queue[k]) for k, d in demands_s.items()}
        x = n / (think_s + sum(resid.values()))
        queue = {k: x * r for k, r in resid.items()}
    return x, resid


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


def analytic(r: Resolved, contention: str = "none") -> CaseResult:
    """Closed-form throughput, utilizations and mean latency of a case.

    contention "none": every resource is a rate bound, as in the packet-level
    max-plus engine (a core never waits for the I/O engine or the lock while a
    packet is on it); the two must agree. "mva": the cores block on the shared
    packet-I/O engine and the lock, as customers of a closed queueing network
    with exponential service (mva_closed); rounds the knee below the bounds."""
    port = r.plat.port
    n = r.busy_cores
    line_in = port.rate_bps / (8.0 * (r.mean_frame + port.overhead_bytes))
    shared = {"packet_input": r.io_s}
    if r.lock_s > 0:
        shared["lock"] = r.lock_s
    bounds = {
        "cores" if n == r.cores else "ordering": n / r.core_s,
        **{k: 1.0 / d for k, d in shared.items()},
        "offered_load": r.offered_load * line_in,
        "line_rate": port.rate_bps / (8.0 * (r.mean_out_frame + port.overhead_bytes)),
        "memory": r.plat.memory.bandwidth_bytes_per_s / (r.mean_frame + r.mean_out_frame),
    }
    bottleneck = min(bounds, key=bounds.get)
    x = bounds[bottleneck]
    at_core_s = r.core_s
    if contention == "mva":
        think = r.core_s - sum(shared.values())
        if think <= 0:
            raise CaseError("contention", "shared-station time exceeds the per-packet core time on "
                            f"'{r.plat.platform}'")
        x_closed, resid = mva_closed(n, think, shared)
        if x_closed < x:
            x = x_closed
            util = {"cores" if n == r.cores else "ordering": x * think / n}
            util.update({k: x * d for k, d in shared.items()})
            bottleneck = max(util, key=util.get)
        at_core_s = think + sum(resid.values())
    # Latency: the hardware stages, serialization in and out, the time a core
    # holds the packet, and, when the box cannot carry what is offered, the
    # full input buffer ahead of it (drops keep it full).
    fixed_s = sum(r.plat.stages_ns.values()) * 1e-9
    ser_s = 8.0 * (r.mean_frame + r.mean_out_frame) / port.rate_bps
    saturated = x < bounds["offered_load"] * (1 - 1e-9)
    queue_s = r.plat.input_buffer_packets / x if saturated else 0.0
    latency_s = fixed_s + ser_s + at_core_s + queue_s
    if bottleneck == "offered_load" and r.offered_load >= 1.0:
        bottleneck = "line_rate_in"
    metrics = {
        "pps": x,
        "gbps": x * r.mean_frame * 8.0 / 1e9,
        "gbps_out": x * r.mean_out_frame * 8.0 / 1e9,
        "line_rate_fraction": x / line_in,
        "latency_avg_us": latency_s * 1e6,
        "core_util": x * r.core_s / r.cores,
        "packet_input_util": x * r.io_s,
        "cycles_per_packet": r.core_s * r.plat.cores.clock_hz,
    }
    if r.lock_s > 0:
        metrics["lock_util"] = x * r.lock_s
    return CaseResult(case="", metrics=metrics, bottleneck=bottleneck)


# ------------------------------------------------------------ packet level --

def engine_config(r: Resolved, cfg: Schema, seed: int) -> dict:
    """The run_pipeline keys (model/helper/forwarding-scenario.h) of a case.

    The engine's tester offers one frame size on the port and its device runs
    the C core's IPv4 forwarding, priced by `counter_prices`. For the ipv4
    workloads the fitted fixed and per-byte cycles go in as such, so the core's
    own counters are priced by the engine; for other paths (L2, ESP) the whole
    per-packet cost is folded into fixed_cycles_per_packet and no counter is
    priced. The ESP output frame is longer than the input: the egress port's
    line rate of the output frame is given as the output pps ceiling.
    """
    if len(r.frames) != 1:
        raise CaseError("frame", "method 'packet' runs one frame size per case; use method: analytic for "
                        "frame mixes")
    f = r.frames[0]
    plat, port = r.plat, r.plat.port
    keys = {
        "seed": seed,
        "num_cores": r.cores,
        "clock_hz": plat.cores.clock_hz,
        "scheduling": r.tag_type.lower(),
        "input_pps_ceiling": 1.0 / r.io_s,
        "memory_bytes_per_s": plat.memory.bandwidth_bytes_per_s,
        "memory_bytes_per_frame_byte": 2.0,
        "memory_bytes_per_packet": float(f.out_frame - f.frame),
        "port_bit_rate": port.rate_bps,
        "frame_bytes": f.frame,
        "offered_pps": 0.0 if r.offered_load == 1.0 else r.offered_load * line_rate_pps(f.frame, port),
        "arrivals": "constant",
        "num_flows": r.flows,
        "duration_s": cfg.duration_us * 1e-6,
        "warmup_s": cfg.warmup_us * 1e-6,
        "input_queue_depth": plat.input_buffer_packets,
        "lock_hold_cycles": r.lock_s * plat.cores.clock_hz,
        "fixed_latency_s": sum(plat.stages_ns.values()) * 1e-9,
    }
    if f.out_frame != f.frame:
        keys["output_pps_ceiling"] = line_rate_pps(f.out_frame, port)
    if r.wl.path == "ipv4_forward":
        keys["fixed_cycles_per_packet"] = r.cost.fixed_cycles
        keys["cycles_per_frame_byte"] = r.cost.per_byte_cycles
        keys["counter_prices"] = dict(plat.counter_cycles)
    else:
        keys["fixed_cycles_per_packet"] = f.cycles
    return keys


def run_engine(keys: dict, source: Path | None, case_id: str) -> dict:
    """`_core.run_pipeline(keys)`; a key the engine rejects (a value the
    load-time checks let through) is still the input's fault: a
    ScenarioError naming the scenario file, the case and the engine's key."""
    from routertwin import _core

    try:
        return _core.run_pipeline(keys)
    except ValueError as exc:
        where = f"{source}: " if source else ""
        raise ScenarioError(f"{where}case '{case_id}': packet engine: {exc}") from None


def run_packet(r: Resolved, cfg: Schema, seed: int, source: Path | None = None, case_id: str = "") -> CaseResult:
    """One case through the C++ packet-level engine (ns-3 + PipelineEngine)."""
    from routertwin import _core

    if not hasattr(_core, "run_pipeline"):
        raise UserError("method 'packet' needs routertwin._core.run_pipeline, which this build "
                        "does not have (run scripts/dev-refresh.sh); or use method: analytic")
    keys = engine_config(r, cfg, seed)
    out = run_engine(keys, source, case_id)
    f = r.frames[0]
    pps = float(out["forwarded_pps"])
    line_in = line_rate_pps(f.frame, r.plat.port)
    metrics = {
        "pps": pps,
        "gbps": pps * f.frame * 8.0 / 1e9,
        "gbps_out": pps * f.out_frame * 8.0 / 1e9,
        "line_rate_fraction": pps / line_in,
        "latency_avg_us": float(out["latency_avg_us"]),
        "latency_min_us": float(out["latency_min_us"]),
        "latency_max_us": float(out["latency_max_us"]),
        "cycles_per_packet": float(out["service_cycles"]),
        "loss_pct": float(out["loss_pct"]),
    }
    for name, u in sorted(out["utilization"].items()):
        metrics[f"{name}_util"] = float(u)
    for i, u in enumerate(out["core_utilization"]):
        metrics[f"core{i}_util"] = float(u)
    bottleneck = str(out["bottleneck"])
    if bottleneck == "packet_output" and "output_pps_ceiling" in keys:
        bottleneck = "line_rate"  # the ceiling given is the egress line rate of the ESP frame
    if pps >= 0.995 * r.offered_load * line_in:
        bottleneck = "line_rate_in" if r.offered_load >= 1.0 else "offered_load"
    counters = {f"drop.{k}": float(v) for k, v in sorted(out["drops"].items())}
    if r.wl.path == "ipv4_forward":  # the engine's core runs IPv4 forwarding: its counters are this path's
        counters.update({f"ops.{k}": float(v) for k, v in sorted(out["ops_per_packet"].items())})
    return CaseResult(case="", metrics=metrics, bottleneck=bottleneck, counters=counters)


# ------------------------------------------------------------------ runner --

def _cases(cfg: Schema) -> list[Case]:
    if cfg.cases is not None:
        return list(cfg.cases)
    sw = cfg.sweep
    return [Case(frame=f, cores=c, flows=n, tag_type=t)
            for t in (sw.tag_type or [None]) for n in (sw.flows or [None])
            for f in sw.frame for c in sw.cores]


def _case_id(c: Case) -> str:
    if c.id:
        return c.id
    f = f"{c.frame}b" if isinstance(c.frame, int) else str(c.frame)
    cid = f"{f}-{c.cores}c"
    if c.flows is not None:
        cid += f"-{c.flows}f"
    if c.tag_type is not None:
        cid += f"-{c.tag_type.lower()}"
    return cid


def _frames(cfg: Schema, c: Case) -> list[tuple[int, float]]:
    if isinstance(c.frame, int):
        return [(c.frame, 1.0)]
    return [(m.bytes, m.weight) for m in cfg.mixes[c.frame]]


def _resolve_case(cfg: Schema, c: Case, plat: PlatformProfile, wl: WorkloadProfile,
                  fitted: FittedParameters) -> Resolved:
    """Case `c` on the profiles, the scenario's values standing in for what
    the case leaves unset (the same for the load-time check and the run)."""
    return resolve(plat, wl, fitted, _frames(cfg, c), c.cores, c.flows or cfg.flows,
                   c.tag_type or cfg.tag_type, c.offered_load or cfg.offered_load)


def load_fitted(path: Path) -> FittedParameters:
    from routertwin.validation.calibration import load_fitted as load_values

    return FittedParameters.from_flat(load_values(path), str(path))


def load_profiles(cfg: Schema) -> tuple[PlatformProfile, WorkloadProfile, FittedParameters]:
    """The scenario's platform (with its port_rate_bps what-if), workload and
    fitted parameters; errors name the profile file and line."""
    plat = load_profile(cfg.platform, PlatformProfile)
    if cfg.port_rate_bps is not None:
        plat = plat.model_copy(update={"port": plat.port.model_copy(update={"rate_bps": cfg.port_rate_bps})})
    return plat, load_profile(cfg.workload, WorkloadProfile), load_fitted(cfg.fitted)


def check(scenario) -> None:
    """Load-time checks (routertwin.scenario calls them before any scenario
    runs): the profiles load, and every case resolves and has an analytic
    answer on them -- fitted costs present, cores within the platform's
    count, contention computable -- and, at packet level, is one frame size.
    Errors point at the scenario key to change (e.g. `sweep.cores[1]`)."""
    cfg: Schema = scenario.config
    plat, wl, fitted = load_profiles(cfg)
    for i, c in enumerate(_cases(cfg)):
        locs = _case_locs(cfg, i, c)
        try:
            r = _resolve_case(cfg, c, plat, wl, fitted)
            analytic(r, cfg.contention)
            if cfg.method != "analytic":
                engine_config(r, cfg, scenario.seed)
        except CaseError as exc:
            raise FieldError(locs.get(exc.key, (exc.key,)), str(exc)) from None


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    plat, wl, fitted = load_profiles(cfg)
    cases = _cases(cfg)
    ids = [_case_id(c) for c in cases]
    progress.set_total(len(cases))
    out = []
    for c, cid in zip(cases, ids):
        r = _resolve_case(cfg, c, plat, wl, fitted)
        res = analytic(r, cfg.contention)
        if cfg.method in ("packet", "both"):
            pkt = run_packet(r, cfg, seed=scenario.seed, source=scenario.path, case_id=cid)
            if cfg.method == "both":
                pkt.metrics["pps_analytic"] = res.metrics["pps"]
                pkt.metrics["latency_analytic_us"] = res.metrics["latency_avg_us"]
            res = pkt
        res.case = cid
        res.params = {
            "platform": plat.platform, "workload": wl.workload, "frame": c.frame, "cores": c.cores,
            "flows": r.flows, "tag_type": r.tag_type, "offered_load": r.offered_load,
            "port_gbps": plat.port.rate_bps / 1e9, "method": cfg.method,
        }
        out.append(res)
        progress.advance(status=cid)
    return out


# ------------------------------------------------------------------ tester --

class PipelineTester:
    """One case as an RFC 2544 device: trial(offered_load) runs the packet-level
    engine (`_core.run_pipeline`) with the tester offering `offered_load` of the
    port's line rate (constant spacing) for `duration_s`, and reports the
    frames it sent and got back and their latencies. The engine runs until
    every frame is back or dropped, so tx - rx is exactly the frames lost."""

    def __init__(self, cfg: Schema, plat: PlatformProfile, wl: WorkloadProfile, fitted: FittedParameters,
                 case: Case, frame: int, *, duration_s: float, seed: int, source: Path | None = None):
        self.cfg, self.plat, self.wl, self.fitted, self.case = cfg, plat, wl, fitted, case
        self.frame, self.duration_s, self.seed = frame, duration_s, seed
        self.source = source  # the scenario file, named in errors

    def _keys(self, load: float, duration_s: float, warmup_s: float) -> dict:
        r = resolve(self.plat, self.wl, self.fitted, [(self.frame, 1.0)], self.case.cores,
                    self.case.flows or self.cfg.flows, self.case.tag_type or self.cfg.tag_type, load)
        keys = engine_config(r, self.cfg, self.seed)
        keys["duration_s"], keys["warmup_s"] = duration_s, warmup_s
        return keys

    def run(self, load: float, duration_s: float, warmup_s: float):
        from routertwin.methods.rfc2544 import TrialResult

        # Trials of `routertwin rfc2544` (--duration, bursts) bypass the
        # scenario's bound on duration_us: hold them to it.
        if duration_s > MAX_DURATION_US * 1e-6:
            where = f"{self.source}: " if self.source else ""
            raise ScenarioError(f"{where}case '{_case_id(self.case)}': a trial of {duration_s:g} s is longer "
                                f"than the packet engine's limit of {MAX_DURATION_US * 1e-6:g} s")
        out = run_engine(self._keys(load, duration_s, warmup_s), self.source, _case_id(self.case))
        extra = {
            "tx_fps": float(out["offered_pps"]),
            "rx_fps": float(out["forwarded_pps"]),
            "service_us": float(out["service_us"]),
            "bottleneck": str(out["bottleneck"]),
            "drops": dict(out["drops"]),
        }
        return TrialResult(load, int(out["tx_packets"]), int(out["rx_packets"]), float(out["latency_min_us"]),
                           float(out["latency_avg_us"]), float(out["latency_max_us"]), extra)

    def __call__(self, load: float):
        # The forwarded rate is measured after the scenario's warm-up share of
        # the trial; tx and rx count every frame of the trial.
        warm = self.duration_s * min(self.cfg.warmup_us / self.cfg.duration_us, 0.5)
        return self.run(load, self.duration_s, warm)

    def burst(self, frames: int):
        """`frames` frames back to back at line rate (a trial at 100 % lasting
        frames / line rate)."""
        return self.run(1.0, frames / line_rate_pps(self.frame, self.plat.port), 0.0)


def testers(scenario, *, duration_s: float | None = None):
    """Each case as a device behind an RFC 2544 tester (routertwin.methods.tester),
    always at packet level whatever the scenario's `method`; sizes are
    Ethernet frames incl. FCS on the platform's port. Frame-mix cases cannot
    be offered: the engine's tester sends one size."""
    from routertwin.methods.tester import TesterCase

    cfg: Schema = scenario.config
    plat, wl, fitted = load_profiles(cfg)
    dur = duration_s or cfg.duration_us * 1e-6
    out = []
    for c in _cases(cfg):
        cid = _case_id(c)

        def trial_at(size: int, seed: int, c=c, cid=cid) -> PipelineTester:
            if not isinstance(c.frame, int):
                raise UserError(f"case '{cid}' is the frame mix '{c.frame}': the packet-level tester "
                                "offers one frame size")
            return PipelineTester(cfg, plat, wl, fitted, c, size, duration_s=dur, seed=seed, source=scenario.path)

        def burst_at(size: int, seed: int, trial_at=trial_at):
            return trial_at(size, seed).burst

        out.append(TesterCase(
            case=cid, size=c.frame if isinstance(c.frame, int) else 0,
            size_unit="Ethernet frame bytes (FCS incl.)", size_range=(64, 9216), duration_s=dur,
            trial_at=trial_at, burst_at=burst_at, max_frame_rate=lambda size: line_rate_pps(size, plat.port),
            describe=f"{plat.platform}, {wl.workload}, {c.cores} core(s), {plat.port.rate_bps / 1e9:g} Gbit/s port"))
    return out
