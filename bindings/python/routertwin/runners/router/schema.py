"""The keys of a router scenario (`Schema`: a list of cases, each one RFC
2544 method) and the limits a trial is held to."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from routertwin.runners.router.analytic import max_frame_rate
from routertwin.runners.router.platform import RouterPlatform
from routertwin.runners._shared.workload import Arrivals, FlowMix
from routertwin.scenario_loader import FieldError, ScenarioModel, ScenarioPath

Mode = Literal["packet", "steady"]


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


# IP packet mixes a case may name without defining them: the common "simple
# IMIX", 7:4:1 of 40/576/1500-byte IP packets (Ostinato's IMIX table lists
# their 64/594/1518-byte Ethernet frames: IP + 18, the 58 padded to 64;
# ostinato.org/blog/imix). POS carries the IP packet unpadded.
NAMED_IP_MIXES = {"simple_imix": [(40, 7.0), (576, 4.0), (1500, 1.0)]}


class IpMixPart(ScenarioModel):
    bytes: int = Field(ge=32, le=9000)
    weight: float = Field(gt=0)


class RouterTrace(ScenarioModel):
    """A pcap or pcapng file every tester port replays (`file`), or one per
    port (`ports: {port: file}`, ports numbered from 0 as in a route file;
    ports not named stay idle), in mode packet: each packet's IP size
    (clamped to 32..9000) and the trace's inter-arrival times, rescaled to
    the case's offered load of the port's theoretical rate for its trace's
    sizes, and looped. `destinations: trace` (the default) routes each
    packet by its own IPv4 destination through the FIB (a case's
    route_file, or the generated routes; not IPv4: dropped as not_ipv4);
    `tester` keeps the tester's mapping, port p to its peer."""

    file: ScenarioPath | None = None
    ports: dict[int, ScenarioPath] | None = None
    destinations: Literal["trace", "tester"] = "trace"

    @model_validator(mode="after")
    def _one_form(self):
        if (self.file is None) == (self.ports is None):
            raise FieldError(("file",), "give either 'file' (every port) or 'ports' (a file per port)")
        if self.ports is not None and not self.ports:
            raise FieldError(("ports",), "at least one port needs a file")
        return self


class Case(ScenarioModel):
    case: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    method: Literal["frmol", "load", "throughput", "ndr_pdr", "loss_curve", "size_sweep"] = "frmol"
    ip_bytes: int = Field(default=40, ge=32, le=9000)
    # a mix in `mixes`, a named one (simple_imix) or a trace in `traces`:
    # every packet its own IP size; mode packet; ip_bytes is then unused
    ip_mix: str | None = None
    routes: int = Field(default=0, ge=0, le=MAX_ROUTES)
    routes_as_destinations: bool = False
    # a FIB file ('prefix/len TARGET' lines: a port, ECMP ports p,q or a
    # discard; docs/import.md); with routes 0 and routes_as_destinations the
    # traffic goes to its routes
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
        if self.ip_mix is not None and self.method == "size_sweep":
            raise FieldError(("ip_mix",), "a size_sweep sweeps single sizes; ip_mix applies to the other methods")
        return self


class RouterFlowMix(FlowMix):
    """Which of its destinations each tester packet goes to (router-model.h
    RouterConfig::destinationPopularity): the rotation, uniform, or Zipf
    over the port's destinations in route order (rank k: weight
    k^-zipf_exponent). Mode packet; not with a trace.

    Or flow-level traffic (`sizes: pareto | lognormal`; RouterConfig::
    flowSizes, FlowLevelProcess): each port's flows start by the scenario's
    `arrivals` process at offered rate / E[S] flows/s, carry S = ceil(X)
    packets (X Pareto(pareto_alpha, pareto_min_packets) or
    lognormal(lognormal_mu, lognormal_sigma)) at `flow_pps` each (0: the
    port's offered rate / `flows`, so that about `flows` are active at once
    a port), each to one destination, then end."""

    flows: int = Field(default=1000, ge=1, le=2**24)  # mean flows active a port when flow_pps is 0

    flow_picks = "gives each flow its destination"
    popularity_spreads = "packets"


class Schema(ScenarioModel):
    platform: ScenarioPath
    fitted: ScenarioPath  # scenarios/platforms/fitted/<study>.yaml: the fixed pipeline latency
    mode: Mode = "steady"
    duration_s: float = Field(default=30.0, gt=0, le=MAX_DURATION_S)
    mixes: dict[str, list[IpMixPart]] = {}  # IP packet sizes and weights (share of packets)
    traces: dict[str, RouterTrace] = {}  # traces a case's ip_mix may name
    # each packet's size drawn from the mix, or a fixed interleaving whose
    # shares are exact every cycle of the weights (a tester's repeating pattern)
    mix_order: Literal["random", "sequence"] = "random"
    # the tester's frame instants on each port (mode packet; not with a
    # trace): constant spacing, Poisson, on/off bursts (burst_peak_load of
    # the port's rate) or a two-state MMPP, at the case's offered load
    arrivals: Arrivals | None = None
    flow_mix: RouterFlowMix | None = None  # popularity of each port's destinations, or flow-level traffic
    # Beside each steady-state trial, the same trial at packet level for
    # this many seconds of tester time from empty queues: its per-packet
    # latency histogram, ports, loss timeline and egress queue lengths
    # (metrics window_*, distributions["packet_window"]; docs/t640.md).
    packet_window_s: float | None = Field(default=None, gt=0, le=MAX_DURATION_S)
    cases: list[Case] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self):
        seen = set()
        for i, c in enumerate(self.cases):
            if c.case in seen:
                raise FieldError(("cases", i, "case"), f"case '{c.case}' appears twice")
            seen.add(c.case)
            if c.ip_mix is not None:
                if c.ip_mix not in self.mixes and c.ip_mix not in NAMED_IP_MIXES and c.ip_mix not in self.traces:
                    raise FieldError(("cases", i, "ip_mix"), f"ip_mix '{c.ip_mix}' is neither in 'mixes' nor a "
                                     f"named mix ({', '.join(NAMED_IP_MIXES)}) nor in 'traces'")
                if (c.mode or self.mode) != "packet":
                    raise FieldError(("cases", i, "ip_mix"), "an ip_mix runs in mode packet only")
            if self.flow_mix is not None and self.flow_mix.popularity != "round_robin":
                if (c.mode or self.mode) != "packet":
                    raise FieldError(("flow_mix",), f"a destination popularity runs in mode packet only (case "
                                     f"'{c.case}' runs in mode steady)")
                if c.ip_mix is not None and c.ip_mix in self.traces:
                    raise FieldError(("flow_mix",), f"case '{c.case}' replays a trace, which brings its own "
                                     "destinations")
            if self.flow_mix is not None and self.flow_mix.flow_level():
                if (c.mode or self.mode) != "packet":
                    raise FieldError(("flow_mix", "sizes"), f"flow-level traffic runs in mode packet only "
                                     f"(case '{c.case}' runs in mode steady)")
                if c.ip_mix is not None and c.ip_mix in self.traces:
                    raise FieldError(("flow_mix", "sizes"), f"case '{c.case}' replays a trace, which brings "
                                     "its own flows")
            if self.arrivals is not None and self.arrivals.process != "constant":
                if (c.mode or self.mode) != "packet":
                    raise FieldError(("arrivals",), f"random arrivals run in mode packet only (case '{c.case}' "
                                     "runs in mode steady)")
                if c.ip_mix is not None and c.ip_mix in self.traces:
                    raise FieldError(("arrivals",), f"case '{c.case}' replays a trace, which brings its own "
                                     "instants")
                if self.arrivals.process == "onoff" and self.arrivals.burst_peak_load <= c.offered_load:
                    raise FieldError(("arrivals", "burst_peak_load"), f"must be above case '{c.case}''s "
                                     f"offered_load {c.offered_load:g} (a burst is sent faster than the mean)")
        for name in self.traces:
            if name in self.mixes:
                raise FieldError(("traces", name), f"'{name}' names both a mix and a trace")
        return self


def case_trace(cfg: Schema, case: Case) -> RouterTrace | None:
    """The trace the case replays, if its ip_mix names one."""
    return cfg.traces.get(case.ip_mix) if case.ip_mix is not None else None


def ip_mix(cfg: Schema, case: Case) -> list[tuple[int, float]] | None:
    """(IP bytes, weight) of the case's mix (a trace's: its IP sizes, clamped
    to 32..9000 as the model clamps them), or None for one size."""
    if case.ip_mix is None:
        return None
    if case.ip_mix in cfg.mixes:
        return [(m.bytes, m.weight) for m in cfg.mixes[case.ip_mix]]
    trace = case_trace(cfg, case)
    if trace is not None:
        from routertwin.runners._shared.workload import trace_summary

        # Every replaying port's packets, as the model counts them.
        per_file = [trace.file] if trace.file is not None else list(trace.ports.values())
        sizes: dict[int, float] = {}
        for f in per_file:
            for b, n in trace_summary(f)["ip_sizes"].items():
                size = min(max(int(b), 32), 9000)
                sizes[size] = sizes.get(size, 0.0) + float(n)
        return sorted(sizes.items())
    return NAMED_IP_MIXES[case.ip_mix]



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


def router_arrival_keys(a: Arrivals | None, f: RouterFlowMix | None = None) -> dict:
    """run_router's keys of an arrival process, a destination popularity and
    flow-level traffic (router-model.h RouterConfig::arrivals,
    destinationPopularity, flowSizes)."""
    keys: dict = {}
    if f is not None and f.popularity != "round_robin":
        keys.update(destination_popularity=f.popularity, zipf_exponent=f.zipf_exponent)
    if f is not None and f.flow_level():
        keys.update(flow_sizes=f.sizes, flow_pps=f.flow_pps, flows=f.flows)
        if f.sizes == "pareto":
            keys.update(pareto_alpha=f.pareto_alpha, pareto_min_packets=f.pareto_min_packets)
        else:
            keys.update(lognormal_mu=f.lognormal_mu, lognormal_sigma=f.lognormal_sigma)
    if a is None or a.process == "constant":
        return keys
    keys["arrivals"] = a.process
    if a.process == "onoff":
        keys.update(burst_mean_frames=a.burst_mean_frames, burst_peak_load=a.burst_peak_load)
    elif a.process == "mmpp":
        keys.update(mmpp_rate_ratio=a.mmpp_rate_ratio, mmpp_high_fraction=a.mmpp_high_fraction,
                    mmpp_cycle_s=a.mmpp_cycle_us * 1e-6)
    return keys
