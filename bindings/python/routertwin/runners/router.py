"""kind: router -- a cell-switched router with POS line cards (the Juniper
T640 of seed 001) offered traffic by an RFC 2544 tester.

The native model is `routertwin._core.run_router` (keys documented in
model/helper/router-scenario.h): POS framing with byte stuffing computed from
each packet's octets, a dp_lpm route lookup, segmentation into fabric cells,
an iSLIP crossbar per packet forwarding engine, egress re-framing and queues.
`mode: packet` simulates every packet (windows of milliseconds); `mode:
steady` is the long-run mode for the 30 s and 5 minute tests (rates from a
sample of real packets, queues as Lindley recursions over blocks).

Each case runs one RFC 2544 method (routertwin.methods.rfc2544) over the
model as a tester would:

    frmol       one trial at 100 % offered load
    load        one trial at `offered_load`
    throughput  zero-loss throughput by bisection (`resolution`), then the
                trial at that load
    ndr_pdr     NDR and PDR (loss <= pdr_loss_pct %) bisections
    loss_curve  RFC 2544 26.3 from 100 % in steps of `step`; one result per load
    size_sweep  FRMOL at each size from `sizes[0]` up in 1-byte steps until the
                first loss-free size (at most to `sizes[1]`); one result per size

Example (scenarios/t640/t640-30s.yaml):

    scenario: t640-30s
    kind: router
    seed: 1
    platform: ../platforms/t640.yaml
    fitted: ../platforms/fitted/t640.yaml
    mode: steady
    duration_s: 30
    cases:
      - {case: 40b-500k, method: frmol, ip_bytes: 40, routes: 500000,
         routes_as_destinations: true}

Metrics (per case): pps (frames forwarded per second, the report's packet
rate), tx_pps, pct_of_theoretical (tester transmit rate as % of the
no-escape maximum), rx_pct, throughput_gbps (IP octets), latency_min,
latency_avg, latency_max (us), lost_packets, zero_loss (1 or 0),
mean_ingress_escapes, fabric_load, lookup_load; counters are the drop
reasons. Wall-clock time is reported on the progress line only.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

from pydantic import Field, PositiveFloat, PositiveInt, field_validator, model_validator

from routertwin.errors import ScenarioError
from routertwin.methods import rfc2544
from routertwin.methods.tester import TesterCase
from routertwin.results import CaseResult
from routertwin.scenario import FieldError, ScenarioModel, ScenarioPath

Mode = Literal["packet", "steady"]


# ---------------------------------------------------------------- profile --

class Framing(ScenarioModel):
    fcs_bits: Literal[16, 32]
    shared_flag: bool
    address_control: bool = True
    protocol_bytes: Literal[1, 2] = 2


class Lookup(ScenarioModel):
    probes_per_second: PositiveFloat
    queue_us: PositiveFloat


class Fabric(ScenarioModel):
    # Cells and the header added to each packet are at most a jumbo frame
    # (9216 bytes; a cell needs 16 for the native model's own header).
    cell_bytes: int = Field(ge=16, le=9216)
    internal_header_bytes: int = Field(ge=0, le=9216)
    gbps_per_pfe: PositiveFloat
    queueing: Literal["fifo", "voq"] = "voq"
    scheduler: Literal["islip", "fifo_random", "fifo_rr"] = "islip"
    # iSLIP converges in at most N iterations for N ports (McKeown 1999,
    # "The iSLIP scheduling algorithm", IEEE/ACM ToN 7(2)); the model has at
    # most 256 ports. Speedup: assumption, 16 is far above any fabric (the
    # T640's is not published; docs/t640.md).
    islip_iterations: int = Field(default=1, ge=1, le=256)
    speedup: int = Field(default=1, ge=1, le=16)


class Buffers(ScenarioModel):
    ingress_us: PositiveFloat
    egress_us: PositiveFloat


class RouterPlatform(ScenarioModel):
    """scenarios/platforms/<router>.yaml: the hardware (each number cited or
    marked as an assumption in the file's comments)."""

    platform: str
    # The native model pairs port p with p + ports/2 and keeps per-port state
    # for at most 256 ports (RouterConfig::Validate).
    ports: int = Field(ge=2, le=256)
    ports_per_pfe: PositiveInt
    sonet: str
    framing: Framing
    lookup: Lookup
    fabric: Fabric
    buffers: Buffers
    route_first_prefix: str = "16.0.0.0"

    @field_validator("sonet")
    @classmethod
    def _known_sonet(cls, v: str) -> str:
        from routertwin import _core

        _core.sonet_payload_bps(v)  # ValueError names the rates it knows
        return v

    @field_validator("route_first_prefix")
    @classmethod
    def _ipv4(cls, v: str) -> str:
        try:
            ipaddress.IPv4Address(v)
        except ValueError:
            raise ValueError(f"not an IPv4 address: {v!r}") from None
        return v

    @model_validator(mode="after")
    def _pairs_and_pfes(self):
        if self.ports % 2:
            raise FieldError(("ports",), f"ports must be even (port p is paired with p + ports/2), got {self.ports}")
        if self.ports % self.ports_per_pfe:
            raise FieldError(("ports_per_pfe",), f"ports_per_pfe {self.ports_per_pfe} must divide ports {self.ports}")
        return self

    def free_slash24s(self) -> int:
        """/24 prefixes from route_first_prefix to the end of the IPv4 space:
        generated routes are consecutive /24s from there."""
        return (2**32 - (int(ipaddress.IPv4Address(self.route_first_prefix)) & 0xFFFFFF00)) // 256


def load_platform(path: Path) -> RouterPlatform:
    """The router platform profile (errors name file, line and key)."""
    from routertwin.scenario import load_yaml_model

    return load_yaml_model(path, RouterPlatform)


# ----------------------------------------------------------------- schema --

# At most one day of tester time: the RFC 2544 tests run seconds to minutes
# (the seed's longest is 5 minutes); a day keeps every packet count exact in
# a double (780 Mpps x 86400 s < 2^53) and within uint64 in the native model.
# mode: packet is limited further, by memory (check()).
MAX_DURATION_S = 86400.0

# Packet mode reserves one descriptor per offered frame up front (~32 bytes
# measured: 15.6 M frames took 605 MB RSS, 20 ms of the full T640 at 40 B);
# 5e7 frames stay under ~2 GB and about a minute of wall time.
MAX_PACKET_MODE_FRAMES = 5e7

# Generated routes are consecutive /24s: there are 2^24 in all of IPv4
# (check() bounds them by the platform's first prefix).
MAX_ROUTES = 2**24


class Case(ScenarioModel):
    case: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    method: Literal["frmol", "load", "throughput", "ndr_pdr", "loss_curve", "size_sweep"] = "frmol"
    ip_bytes: int = Field(default=40, ge=32, le=9000)
    routes: int = Field(default=0, ge=0, le=MAX_ROUTES)
    routes_as_destinations: bool = False
    route_file: ScenarioPath | None = None
    # A fraction of the tester's maximum rate; at least a millionth of it
    # (780 frames/s on the T640), below which a trial sends almost nothing.
    offered_load: float = Field(default=1.0, ge=1e-6, le=1)
    duration_s: float | None = Field(default=None, gt=0, le=MAX_DURATION_S)  # default: the scenario's
    mode: Mode | None = None  # default: the scenario's
    # Bisection runs log2(1 / resolution) trials: at most 20 from 1e-6.
    resolution: float = Field(default=0.001, ge=1e-6, lt=1)
    pdr_loss_pct: float = Field(default=0.5, ge=0, lt=100)
    # The loss curve runs 1 / step trials: at most 1000 (RFC 2544 26.3 asks
    # for steps of at most 10 %).
    step: float = Field(default=0.1, ge=0.001, le=0.1)
    sizes: tuple[int, int] | None = None  # size_sweep: first and last size

    @model_validator(mode="after")
    def _sizes(self):
        if self.method == "size_sweep":
            if self.sizes is None:
                raise FieldError(("sizes",), "size_sweep needs 'sizes: [first, last]'")
            if not (32 <= self.sizes[0] <= self.sizes[1] <= 9000):
                raise FieldError(("sizes",), "sizes must satisfy 32 <= first <= last <= 9000")
        elif self.sizes is not None:
            raise FieldError(("sizes",), "'sizes' applies to method size_sweep only")
        return self


class Schema(ScenarioModel):
    platform: ScenarioPath
    fitted: ScenarioPath  # scenarios/platforms/fitted/<study>.yaml: the fixed pipeline latency
    mode: Mode = "steady"
    duration_s: float = Field(default=30.0, gt=0, le=MAX_DURATION_S)
    cases: list[Case] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self):
        seen = set()
        for i, c in enumerate(self.cases):
            if c.case in seen:
                raise FieldError(("cases", i, "case"), f"case '{c.case}' appears twice")
            seen.add(c.case)
        return self


def check(scenario) -> None:
    """Load-time checks that need the platform profile and the fitted file:
    both load (their own errors name their file and line), generated routes
    fit in the IPv4 space after the platform's first prefix, and a packet-mode
    run fits in memory."""
    cfg: Schema = scenario.config
    plat = load_platform(cfg.platform)
    load_pipeline_latency(cfg.fitted, plat)
    for i, case in enumerate(cfg.cases):
        if case.routes > plat.free_slash24s():
            raise FieldError(("cases", i, "routes"),
                             f"{case.routes} routes do not fit: consecutive /24s from the platform's "
                             f"route_first_prefix {plat.route_first_prefix} give at most {plat.free_slash24s()}")
        dur = case.duration_s or cfg.duration_s
        too_long = trial_too_long(plat, case.mode or cfg.mode, dur, case.sizes[0] if case.sizes else case.ip_bytes)
        if too_long:
            raise FieldError(("cases", i, "duration_s") if case.duration_s else ("duration_s",),
                             too_long + ": shorten duration_s or use mode: steady")


def trial_too_long(plat: RouterPlatform, mode: str, duration_s: float, ip_bytes: int) -> str | None:
    """Why a trial of `duration_s` at full load of `ip_bytes` packets cannot
    run (over a day, or a packet-mode run beyond memory), or None."""
    if duration_s > MAX_DURATION_S:
        return f"a trial of {duration_s:g} s is longer than a day ({MAX_DURATION_S:g} s)"
    rate = max_frame_rate(plat, ip_bytes)
    if mode == "packet" and duration_s * rate > MAX_PACKET_MODE_FRAMES:
        return (f"mode packet would simulate {duration_s * rate:.3g} frames ({duration_s:g} s at {rate:.4g} "
                f"frames/s); at most {MAX_PACKET_MODE_FRAMES:.0e} fit in memory")
    return None


# ---------------------------------------------------------------- latency --

def frame_overhead(plat: RouterPlatform) -> int:
    """PPP/HDLC octets around an IP packet with no escapes: flag (one when
    shared between frames), address and control, protocol, FCS (RFC 1662)."""
    f = plat.framing
    return (1 if f.shared_flag else 2) + (2 if f.address_control else 0) + f.protocol_bytes + f.fcs_bits // 8


def zero_load_us(plat: RouterPlatform, ip_bytes: int) -> dict[str, float]:
    """What the fastest packet of `ip_bytes` spends besides the fixed
    pipeline latency, by part (us): the latency the tester measures is taken
    as first bit sent to first bit received (ASSUMPTION: the seed does not
    say how the Agilent tester timestamps), so a store-and-forward router
    adds the ingress frame's serialization (no escapes: the fastest frame),
    one lookup-engine table read (the fewest any DIR-24-8 lookup makes), and
    one fabric slot per cell of the packet. The native model reports
    latency = fixed + queueing waits, so its fixed part is the pipeline
    latency plus these (native_config)."""
    from routertwin import _core

    fab = plat.fabric
    cells = -(-(ip_bytes + fab.internal_header_bytes) // fab.cell_bytes)
    return {
        "serialization": 8.0 * (ip_bytes + frame_overhead(plat)) / _core.sonet_payload_bps(plat.sonet) * 1e6,
        "lookup": 1.0 / plat.lookup.probes_per_second * 1e6,
        "fabric": cells * 8.0 * fab.cell_bytes / (fab.gbps_per_pfe * 1e9) * 1e6,
    }


def pipeline_latency_param(plat: RouterPlatform) -> str:
    """The fitted parameter name of a platform's fixed pipeline latency."""
    return f"latency.{plat.platform}.pipeline_us"


def load_pipeline_latency(fitted: Path, plat: RouterPlatform) -> float:
    """The platform's fixed pipeline latency (us) from a fitted file written
    by `routertwin calibrate` (routertwin.studies.t640)."""
    from routertwin.validation.calibration import load_fitted

    name = pipeline_latency_param(plat)
    values = load_fitted(fitted)
    if name not in values:
        raise ScenarioError(f"{fitted}: no fitted parameter '{name}' for platform '{plat.platform}' "
                            "(run `routertwin calibrate`)")
    return float(values[name])


# ------------------------------------------------------------------- run --

def native_config(plat: RouterPlatform, case: Case, *, pipeline_latency_us: float, load: float, ip_bytes: int,
                  duration_s: float, mode: str, seed: int) -> dict:
    """The run_router config dict of one trial."""
    cfg = {
        "mode": mode,
        "ports": plat.ports,
        "ports_per_pfe": plat.ports_per_pfe,
        "sonet": plat.sonet,
        "fcs_bits": plat.framing.fcs_bits,
        "shared_flag": plat.framing.shared_flag,
        "address_control": plat.framing.address_control,
        "protocol_bytes": plat.framing.protocol_bytes,
        "ip_bytes": ip_bytes,
        "offered_load": load,
        "routes": case.routes,
        "routes_as_destinations": case.routes_as_destinations,
        "route_first_prefix": plat.route_first_prefix,
        "lookup_probes_per_second": plat.lookup.probes_per_second,
        "lookup_queue_us": plat.lookup.queue_us,
        "cell_bytes": plat.fabric.cell_bytes,
        "internal_header_bytes": plat.fabric.internal_header_bytes,
        "fabric_gbps_per_pfe": plat.fabric.gbps_per_pfe,
        "queueing": plat.fabric.queueing,
        "scheduler": plat.fabric.scheduler,
        "islip_iterations": plat.fabric.islip_iterations,
        "speedup": plat.fabric.speedup,
        "ingress_buffer_us": plat.buffers.ingress_us,
        "egress_buffer_us": plat.buffers.egress_us,
        "fixed_latency_us": pipeline_latency_us + sum(zero_load_us(plat, ip_bytes).values()),
        "duration_s": duration_s,
        "seed": seed,
    }
    if case.route_file is not None:
        cfg["route_file"] = str(case.route_file)
    return cfg


class RouterTester:
    """The model as an RFC 2544 device: trial(load) -> TrialResult."""

    def __init__(self, plat: RouterPlatform, case: Case, *, pipeline_latency_us: float, ip_bytes: int,
                 duration_s: float, mode: str, seed: int, progress=None, source: Path | None = None):
        self.plat, self.case, self.pipeline_latency_us = plat, case, pipeline_latency_us
        self.ip_bytes, self.duration_s, self.mode, self.seed = ip_bytes, duration_s, mode, seed
        self.progress = progress
        self.source = source  # the scenario file, named in errors

    def __call__(self, load: float) -> rfc2544.TrialResult:
        from routertwin import _core

        where = f"{self.source}: " if self.source else ""
        # Trials of `routertwin rfc2544` (--duration, bursts, other sizes) bypass
        # the scenario's load-time check: hold each to the same limits.
        too_long = trial_too_long(self.plat, self.mode, self.duration_s, self.ip_bytes)
        if too_long:
            raise ScenarioError(f"{where}case '{self.case.case}': {too_long}")
        cfg = native_config(self.plat, self.case, pipeline_latency_us=self.pipeline_latency_us,
                            load=load, ip_bytes=self.ip_bytes,
                            duration_s=self.duration_s, mode=self.mode, seed=self.seed)
        try:
            r = _core.run_router(cfg)
        except ValueError as exc:  # a config the checks above let through: still the input's fault
            raise ScenarioError(f"{where}case '{self.case.case}': native model: {exc}") from None
        if self.progress is not None:
            self.progress.advance(0, status=f"{self.case.case} {self.ip_bytes}B load {load:.4f}")
        extra = {k: r[k] for k in ("tx_pps", "rx_pps", "theoretical_pps", "tx_pct", "rx_pct",
                                    "throughput_gbps", "mean_ingress_escapes", "mean_egress_escapes",
                                    "fabric_load", "lookup_load", "bottleneck")}
        extra["tx_fps"], extra["rx_fps"] = r["tx_pps"], r["rx_pps"]  # the tester protocol's names
        extra["drops"] = dict(r["drops"])
        return rfc2544.TrialResult(load, int(r["tx_packets"]), int(r["rx_packets"]),
                                   r["latency_min_us"], r["latency_avg_us"], r["latency_max_us"], extra)


def case_result(case_id: str, params: dict, t: rfc2544.TrialResult, more: dict | None = None) -> CaseResult:
    e = t.extra
    metrics = {
        "pps": e["rx_pps"],
        "tx_pps": e["tx_pps"],
        "pct_of_theoretical": e["tx_pct"],
        "rx_pct": e["rx_pct"],
        "throughput_gbps": e["throughput_gbps"],
        "latency_min": t.latency_min_us,
        "latency_avg": t.latency_avg_us,
        "latency_max": t.latency_max_us,
        "lost_packets": float(t.lost),
        "loss_pct": 100.0 * t.loss_ratio,
        "zero_loss": 1.0 if t.lost == 0 else 0.0,
        "mean_ingress_escapes": e["mean_ingress_escapes"],
        "mean_egress_escapes": e["mean_egress_escapes"],
        "fabric_load": e["fabric_load"],
        "lookup_load": e["lookup_load"],
    }
    metrics.update(more or {})
    bottleneck = e["bottleneck"] if t.lost > 0 else ""
    counters = {k: float(v) for k, v in sorted(e["drops"].items())}
    return CaseResult(case=case_id, params=params, metrics=metrics, bottleneck=bottleneck,
                      counters=counters)


def _params(case: Case, ip_bytes: int, load: float, duration_s: float, mode: str) -> dict:
    return {
        "method": case.method, "ip_bytes": ip_bytes, "routes": case.routes,
        "routes_as_destinations": case.routes_as_destinations, "offered_load": load,
        "duration_s": duration_s, "mode": mode,
    }


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    plat = load_platform(cfg.platform)
    pipe_us = load_pipeline_latency(cfg.fitted, plat)
    out: list[CaseResult] = []
    progress.set_total(len(cfg.cases))
    for case in cfg.cases:
        mode = case.mode or cfg.mode
        dur = case.duration_s or cfg.duration_s

        def tester(size: int) -> RouterTester:
            return RouterTester(plat, case, pipeline_latency_us=pipe_us, ip_bytes=size, duration_s=dur,
                                mode=mode, seed=scenario.seed, progress=progress, source=scenario.path)

        dev = tester(case.ip_bytes)
        if case.method == "frmol":
            t = rfc2544.frmol(dev)
            out.append(case_result(case.case, _params(case, case.ip_bytes, 1.0, dur, mode), t))
        elif case.method == "load":
            t = dev(case.offered_load)
            out.append(case_result(case.case, _params(case, case.ip_bytes, case.offered_load, dur, mode), t))
        elif case.method == "throughput":
            s = rfc2544.throughput(dev, resolution=case.resolution)
            if s.trial is None:
                raise ScenarioError(f"case '{case.case}': no offered load is loss-free")
            out.append(case_result(case.case, _params(case, case.ip_bytes, s.load, dur, mode), s.trial,
                                   {"throughput_load": s.load, "trials": float(len(s.trials))}))
        elif case.method == "ndr_pdr":
            r = rfc2544.ndr_pdr(dev, resolution=case.resolution, pdr_loss_ratio=case.pdr_loss_pct / 100)
            for name, s in (("ndr", r.ndr), ("pdr", r.pdr)):
                if s.trial is None:
                    raise ScenarioError(f"case '{case.case}': no {name.upper()} load found")
                out.append(case_result(f"{case.case}-{name}", _params(case, case.ip_bytes, s.load, dur, mode),
                                       s.trial, {f"{name}_load": s.load}))
        elif case.method == "loss_curve":
            for t in rfc2544.frame_loss_curve(dev, step=case.step):
                pct = round(100 * t.offered_load, 6)
                out.append(case_result(f"{case.case}-{pct:g}pct",
                                       _params(case, case.ip_bytes, t.offered_load, dur, mode), t))
        elif case.method == "size_sweep":
            first, last = case.sizes
            sweep = rfc2544.frame_size_sweep(tester, range(first, last + 1))
            for size, t in sweep.trials:
                first_ok = float(sweep.first_zero_loss_bytes or 0)
                out.append(case_result(f"{case.case}-{size}b", _params(case, size, 1.0, dur, mode), t,
                                       {"first_zero_loss_bytes": first_ok}))
        progress.advance(1, status=f"{case.case} done")
    return out


# ---------------------------------------------------------------- tester --

def max_frame_rate(plat: RouterPlatform, ip_bytes: int) -> float:
    """Frames/s of all ports at 100 % offered load with no escapes (the
    report's theoretical maximum): SONET payload / frame octets
    (docs/t640.md section 1)."""
    from routertwin import _core

    return plat.ports * _core.sonet_payload_bps(plat.sonet) / (8.0 * (ip_bytes + frame_overhead(plat)))


def testers(scenario, *, duration_s: float | None = None) -> list[TesterCase]:
    """Each case as a device behind an RFC 2544 tester (routertwin.methods.tester):
    the case's routes, destinations and mode, at any IP packet size. A burst
    of N frames is one trial at 100 % load lasting N / max_frame_rate."""
    cfg: Schema = scenario.config
    plat = load_platform(cfg.platform)
    pipe_us = load_pipeline_latency(cfg.fitted, plat)
    out = []
    for case in cfg.cases:
        mode = case.mode or cfg.mode
        dur = duration_s or case.duration_s or cfg.duration_s

        def trial_at(size: int, seed: int, case=case, mode=mode, dur=dur) -> RouterTester:
            return RouterTester(plat, case, pipeline_latency_us=pipe_us, ip_bytes=size, duration_s=dur,
                                mode=mode, seed=seed, source=scenario.path)

        def burst_at(size: int, seed: int, case=case, mode=mode):
            def burst(frames: int) -> rfc2544.TrialResult:
                dev = RouterTester(plat, case, pipeline_latency_us=pipe_us, ip_bytes=size,
                                   duration_s=frames / max_frame_rate(plat, size), mode=mode, seed=seed,
                                   source=scenario.path)
                return dev(1.0)
            return burst

        routes = f"{case.routes} routes" + (" as destinations" if case.routes_as_destinations else "")
        out.append(TesterCase(
            case=case.case, size=case.ip_bytes, size_unit="IP packet bytes", size_range=(32, 9000),
            duration_s=dur, trial_at=trial_at, burst_at=burst_at,
            max_frame_rate=lambda size: max_frame_rate(plat, size),
            describe=f"{plat.platform}, {plat.ports} x {plat.sonet} POS, {routes}, {mode} mode"))
    return out
