"""The pipeline in closed form: every shared resource a rate bound, or (with
`contention: mva`) the cores as customers of a closed queueing network
solved exactly by Mean Value Analysis; mean latency from the stages,
serialization, core time and a full input buffer when saturated."""

from __future__ import annotations

from routertwin.results import CaseResult
from routertwin.runners._shared.ethernet import line_rate_pps
from routertwin.runners.pipeline.metrics import rate_metrics
from routertwin.runners.pipeline.resolve import CaseError, Resolved


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


def analytic(r: Resolved, contention: str = "none") -> CaseResult:
    """Closed-form throughput, utilizations and mean latency of a case.

    contention "none": every resource is a rate bound, as in the packet-level
    max-plus engine (a core never waits for the I/O engine or the lock while a
    packet is on it); the two must agree. "mva": the cores block on the shared
    packet-I/O engine and the lock, as customers of a closed queueing network
    with exponential service (mva_closed); rounds the knee below the bounds."""
    port = r.plat.port
    n = r.busy_cores
    line_in = line_rate_pps(r.mean_frame, port)
    shared = {"packet_input": r.io_s}
    if r.lock_s > 0:
        shared["lock"] = r.lock_s
    # A flow's ATOMIC section passes one packet at a time: with the tester's
    # rotation each flow has 1/flows of the packets, so the sections bound
    # the rate at flows / section (the collisions of a random interleaving
    # are the packet engine's to count, not this bound's).
    section_bound = {"ordering": r.flows / min(r.section_s, r.core_s)} if r.section_s > 0 else {}
    bounds = {
        "cores" if n == r.cores else "ordering": n / r.core_s,
        **section_bound,
        **{k: 1.0 / d for k, d in shared.items()},
        "offered_load": r.offered_load * line_in,
        "line_rate": line_rate_pps(r.mean_out_frame, port),
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
        **rate_metrics(x, r.mean_frame, r.mean_out_frame, line_in),
        "latency_avg_us": latency_s * 1e6,
        "core_util": x * r.core_s / r.cores,
        "packet_input_util": x * r.io_s,
        "cycles_per_packet": r.core_s * r.plat.cores.clock_hz,
    }
    if r.lock_s > 0:
        metrics["lock_util"] = x * r.lock_s
    return CaseResult(case="", metrics=metrics, bottleneck=bottleneck)
