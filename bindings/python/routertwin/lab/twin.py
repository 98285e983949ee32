"""The twin's side of the lab: calibrate this machine's endpoint cost on one
path, predict the others, through the public API on the `tcp_path` kind.

The twin of each lab path is a scenario in `scenarios/lab/` on the platform
`scenarios/platforms/lab-netns.yaml`; a run changes it only with what the
run itself measured or set: the endpoints' TCP sysctls read from the
namespaces, the shaped links' rate, the twin's seed and simulated time, and
`lab-vm.cpu_per_byte_ns`, the one parameter fitted.

Calibration: the endpoints' CPU time per byte is fitted to the calibration
path's measured average alone (the closed form of the busiest server,
`routertwin.runners.tcp_path.analytic.ceiling`, inverted by bisection); the
other paths' measurements are never read before their predictions exist.
Why this parameter (and not a per-hop cost): docs/lab.md "Calibration".

When the build has no `tcp_path` kind or its native model fails, every path
reports "twin: not available (reason)" and the measured side stands alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from routertwin.lab.system import say

SCENARIOS = {"flat-direct": "scenarios/lab/lab-flat-direct.yaml",
             "flat-eip": "scenarios/lab/lab-flat-eip.yaml",
             "vpc-eip": "scenarios/lab/lab-vpc-eip.yaml"}
CALIBRATED_TYPE = "lab-vm"
CALIBRATED_KEY = "cpu_per_byte_ns"
WIRE_TYPE = "lab-wire"
# Simulated seconds per path (default of --twin-seconds): one TCP flow here
# reaches steady state within milliseconds (RTT well under 1 ms). Measured
# on lab-flat-eip: 0.1 s and 0.5 s give goodputs within 0.03 % of each
# other (901.70 and 901.91 Mbit/s fitted, 941.32 and 941.45 link-bound), at
# 3.5 and 12-25 s of wall time on a busy 2-core machine.
TWIN_SECONDS = 0.5


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
    scenarios: dict[str, str] = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)
    bottlenecks: dict[str, str] = field(default_factory=dict)
    seed: int | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def unavailable(cls, reason: str) -> "TwinOutcome":
        return cls(False, reason)


def tcp_overrides(sysctls: dict[str, str]) -> tuple[dict, list[str]]:
    """The scenario's `tcp:` keys from an endpoint namespace's sysctls (the
    lab reads them live), and notes on what the twin cannot follow."""
    over, notes = {}, []
    cc = sysctls.get("tcp_congestion_control", "")
    if cc in ("cubic", "newreno"):
        over["congestion"] = cc
    elif cc:
        notes.append(f"the endpoints ran {cc}, which the twin's TCP does not have; it used the platform's")
    for key, name in (("tcp_timestamps", "timestamps"), ("tcp_sack", "sack"),
                      ("tcp_window_scaling", "window_scaling")):
        if sysctls.get(key, "").strip() in ("0", "1"):
            over[name] = sysctls[key].strip() == "1"
    for key, name in (("tcp_wmem", "snd_buf_bytes"), ("tcp_rmem", "rcv_buf_bytes")):
        fields = sysctls.get(key, "").split()
        if len(fields) == 3:
            over[name] = min(int(fields[2]), 2**30)
    return over, notes


def run_overrides(platform, wire_rate_bps: float, sysctls: dict[str, str], seed: int,
                  twin_seconds: float = TWIN_SECONDS) -> tuple[dict, list[str]]:
    """Everything a run changes in the lab scenarios except the fitted cost."""
    tcp, notes = tcp_overrides(sysctls)
    from routertwin.lab import topology

    wire = platform.link_types[WIRE_TYPE].model_dump()
    wire["rate_bps"] = float(wire_rate_bps)
    # tbf's queue in full frames: `latency` at the shaped rate plus the bucket
    queue_bytes = topology.tbf_rate_bps(wire_rate_bps) / 8 * topology.TBF_LATENCY_MS * 1e-3 + topology.TBF_BURST_BYTES
    wire["queue_packets"] = max(1, round(queue_bytes / (topology.MTU + topology.ETH_HEADER_BYTES)))
    return {"tcp": tcp, "link_types": {WIRE_TYPE: wire}, "transfer": {"duration_s": twin_seconds},
            "seed": seed}, notes


def with_endpoint_cost(overrides: dict, platform, cost_ns_per_byte: float) -> dict:
    vm = platform.node_types[CALIBRATED_TYPE].model_dump()
    vm[CALIBRATED_KEY] = cost_ns_per_byte
    return {**overrides, "node_types": {CALIBRATED_TYPE: vm}}


def closed_form_bps(scenario, endpoint_cost_ns_per_byte: float | None = None) -> float:
    """The tcp_path kind's closed-form ceiling of a scenario (no NAT work),
    optionally with the endpoint type's cost per byte replaced."""
    from routertwin.runners.tcp_path.analytic import ceiling
    from routertwin.runners.tcp_path.native import merged_tcp, resolve
    from routertwin.runners.tcp_path.profiles import load_platform

    cfg = scenario.loaded.config
    plat = load_platform(cfg.platform)
    nodes, links = resolve(cfg, plat)
    if endpoint_cost_ns_per_byte is not None:
        nodes = [(name, t.model_copy(update={CALIBRATED_KEY: endpoint_cost_ns_per_byte})
                  if hop.type == CALIBRATED_TYPE else t) for hop, (name, t) in zip(cfg.path, nodes)]
    return ceiling(nodes, links, merged_tcp(cfg, plat)).goodput_bps


def calibrate_endpoint_cost(base, overrides: dict, platform, measured_bps: float) -> tuple[float, str]:
    """The endpoint cost (ns per IP byte) at which the calibration path's
    closed-form goodput equals `measured_bps` (the only measurement read).
    When the path without endpoint cost is already at or below the
    measurement, the link bound it and the cost is 0 with that said."""
    scenario = base.with_(with_endpoint_cost(overrides, platform, 0.0))

    def goodput(x: float) -> float:
        return closed_form_bps(scenario, x)

    free = goodput(0.0)
    if free <= measured_bps:
        return 0.0, (f"the measurement ({measured_bps / 1e6:.1f} Mbit/s) reached the path's ceiling without "
                     f"endpoint cost ({free / 1e6:.1f}): the link bound it, so the endpoint cost is only "
                     "bounded, not fitted; 0 used")
    lo, hi = 0.0, 1.0
    while goodput(hi) > measured_bps:
        hi *= 2
        if hi > 1e6:
            raise ValueError("no endpoint cost explains the measurement")
    for _ in range(60):
        mid = (lo + hi) / 2
        if goodput(mid) > measured_bps:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2
    return x, (f"endpoints' CPU time per IP byte at which the closed-form goodput equals the measured "
               f"{measured_bps / 1e6:.1f} Mbit/s (path ceiling without it: {free / 1e6:.1f})")


def fit(params, results, root: Path, sysctls: dict[str, str] | None = None):
    """Loads the lab's twin scenarios and fits the endpoint cost to the
    calibration path's measurement, the only measurement it reads. Returns
    (scenarios by path, the overrides every run gets, the fitted value,
    notes)."""
    import routertwin as rt
    from routertwin.runners.tcp_path.profiles import load_platform

    base = {p: rt.load(root / SCENARIOS[p]) for p in params.paths}
    platform = load_platform(base[params.calibrate].loaded.config.platform)
    overrides, notes = run_overrides(platform, params.wire_rate_bps, sysctls or {}, params.seed,
                                     params.twin_seconds)
    measured = results[params.calibrate].avg_bps
    cost, how = calibrate_endpoint_cost(base[params.calibrate], overrides, platform, measured)
    fitted = Calibrated(f"{CALIBRATED_TYPE}.{CALIBRATED_KEY}", cost, "ns per IP byte", params.calibrate, how)
    return base, with_endpoint_cost(overrides, platform, cost), fitted, notes


def predict(params, results, root: Path | None, sysctls: dict[str, str] | None = None) -> TwinOutcome:
    """The twin's goodput of every measured path: fitted on the calibration
    path, run with ns-3 on each (the calibration path too, so its error
    shows how far the packet-level run is from the closed form it was
    fitted through)."""
    from routertwin import runners

    if "tcp_path" not in runners.available():
        return TwinOutcome.unavailable("this build has no tcp_path runner (issue 13's ns-3 path model), so no "
                                       "prediction")
    if root is None or not all((root / SCENARIOS[p]).exists() for p in params.paths):
        return TwinOutcome.unavailable("the lab's twin scenarios (scenarios/lab/*.yaml) are not found: run "
                                       "from the project folder or give --root")
    import routertwin as rt

    try:
        base, final, fitted, notes = fit(params, results, root, sysctls)
    except Exception as exc:  # the measured side stands; the reason is printed in its place
        return TwinOutcome.unavailable(f"calibrating on {params.calibrate} failed: {type(exc).__name__}: {exc}")
    outcome = TwinOutcome(True, seed=params.seed, overrides=final, notes=notes, calibrated=[fitted],
                          scenarios={p: SCENARIOS[p] for p in params.paths})
    say(f"twin: {fitted.name} = {fitted.value:.4g} {fitted.unit}, fitted on {params.calibrate}")
    for i, name in enumerate(params.paths, 1):
        say(f"twin [{i}/{len(params.paths)}]: ns-3 run of {SCENARIOS[name]} ({params.twin_seconds:g} s simulated)")
        try:
            (case,) = rt.run(base[name].with_(final)).runs[0].cases
        except Exception as exc:  # the native model refused or failed: say so, measured side stands
            return TwinOutcome.unavailable(f"the tcp_path run of {SCENARIOS[name]} failed: "
                                           f"{type(exc).__name__}: {exc}")
        outcome.predictions_bps[name] = case.metrics["goodput_mbps"] * 1e6
        outcome.bottlenecks[name] = case.bottleneck
    return outcome
