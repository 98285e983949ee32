"""The pipeline in closed form: every shared resource a rate bound, or (with
`contention: mva`) the cores as customers of a closed queueing network
solved exactly by Mean Value Analysis; mean latency from the stages,
serialization, core time and a full input buffer when saturated.

Beyond the mean (issue 15), the latency distribution and the loss of the
closed form's queue (`queue_distribution`): constant spacing of one frame
size is D/D/c (every packet the same latency, nothing lost below the
bottleneck), Poisson arrivals are M/D/c (routertwin.runners._shared.md_queue),
and a saturated case is the fluid model (the input buffer full for every
packet, the excess lost)."""

from __future__ import annotations

import math

from routertwin.results import CaseResult
from routertwin.runners._shared.ethernet import line_rate_pps
from routertwin.runners._shared.md_queue import MDcWait, md1k_blocking, mdck_blocking, number_in_system
from routertwin.runners.queue_analytic import closed_form
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


def analytic(r: Resolved, contention: str = "none", arrivals: str = "constant") -> CaseResult:
    """Closed-form throughput, utilizations and mean latency of a case.

    contention "none": every resource is a rate bound, as in the packet-level
    max-plus engine (a core never waits for the I/O engine or the lock while a
    packet is on it); the two must agree. "mva": the cores block on the shared
    packet-I/O engine and the lock, as customers of a closed queueing network
    with exponential service (mva_closed); rounds the knee below the bounds.
    `arrivals` is the scenario's arrival process ("constant", "poisson", ...;
    "trace" for a pcap replay): it decides the latency distribution and the
    loss (queue_distribution), and with Poisson arrivals the mean wait."""
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
    # Latency, on the packet engine's clock (docs/model.md: last bit out of
    # the tester to last bit back): the hardware stages, the time a core
    # holds the packet, the egress wire time of the frame (preamble and gap
    # included, as the engine's line occupies them), and, when the box cannot
    # carry what is offered, the full input buffer ahead of it (drops keep it
    # full). The ingress frame's serialization is over before the clock
    # starts.
    fixed_s = sum(r.plat.stages_ns.values()) * 1e-9
    ser_s = 1.0 / line_rate_pps(r.mean_out_frame, port)
    saturated = x < bounds["offered_load"] * (1 - 1e-9)
    queue_s = r.plat.input_buffer_packets / x if saturated else 0.0
    latency_s = fixed_s + ser_s + at_core_s + queue_s
    if bottleneck == "offered_load" and r.offered_load >= 1.0:
        bottleneck = "line_rate_in"
    offered = bounds["offered_load"]
    dist_metrics, dist = queue_distribution(r, contention, arrivals, x, offered, saturated, latency_s)
    metrics = {
        **rate_metrics(x, r.mean_frame, r.mean_out_frame, line_in),
        "latency_avg_us": latency_s * 1e6,
        **dist_metrics,
        "core_util": x * r.core_s / r.cores,
        "packet_input_util": x * r.io_s,
        "cycles_per_packet": r.core_s * r.plat.cores.clock_hz,
    }
    if r.lock_s > 0:
        metrics["lock_util"] = x * r.lock_s
    return CaseResult(case="", metrics=metrics, bottleneck=bottleneck, distributions=dist)


def station_times(r: Resolved) -> dict[str, float]:
    """Seconds each single server of the packet engine's path holds a packet
    (model/pipeline/model/pipeline-engine.h): the tester's wire, the
    packet-input engine, the memory bandwidth, a core, the egress wire."""
    port = r.plat.port
    return {
        "wire_in": 1.0 / line_rate_pps(r.mean_frame, port),
        "packet_input": r.io_s,
        "memory": (r.mean_frame + r.mean_out_frame) / r.plat.memory.bandwidth_bytes_per_s,
        "core": r.core_s,
        "wire_out": 1.0 / line_rate_pps(r.mean_out_frame, port),
    }


def queue_distribution(r: Resolved, contention: str, arrivals: str, x: float, offered: float, saturated: bool,
                       latency_s: float) -> tuple[dict[str, float], dict]:
    """The latency percentiles (us, the packet engine's metric names), the
    loss and the latency histogram of the closed form's queue, where it has
    one; `latency_s` is its latency without queueing (or, saturated, with
    the full buffer). Returns ({}, {}) where it has none: a frame mix
    (service times vary: M/G/c), MVA contention, a lock or a flow section
    (more stations in the loop), ATOMIC tags on several cores (a flow's
    packets never overlap: not one FIFO), on/off, MMPP and trace arrivals.

    - Saturated: the fluid model the mean already uses. Every packet finds
      the input buffer full, so the latency is one value (p50 = p99 = max),
      and the excess offered is lost: loss 1 - x / offered. With Poisson
      arrivals the loss is the blocking below instead (M/D/1/K, or M/D/c/K
      of the cores), at saturation too.
    - Constant spacing, one frame size, below the bottleneck: D/D/c. Frame
      n goes to the core that served frame n - c, which is free since the
      spacing exceeds core time / c: no packet waits, none is lost, the
      latency is one value.
    - Poisson arrivals, one frame size, below the bottleneck. With one
      core, or with cores that never wait because a slower single station
      ahead of them spaces the frames (D/D/c: core time / c at most that
      station's time), the engine's path is a tandem of single servers of
      constant service (station_times; the cores then only delay), and the
      waits summed over such a tandem are, packet by packet, the wait of
      one M/D/1 queue with the slowest service (Friedman 1965, "Reduction
      methods for tandem queuing systems", Oper. Res. 13): the wait is
      M/D/1 of the slowest station, exact. The latency clock
      starts when the frame has left the tester's wire, so the wire's own
      wait (M/D/1 of the wire time) comes off the mean; the percentiles keep
      it, overstating by that wait (the wire's load times its time: 0.2 ns
      at 64 bytes, 40G, half a core). When the wire is itself the slowest
      station, it spaces the frames for every other: no frame waits in the
      box, and the latency is one value again. Several cores slower than
      every single station (core time / c above each): M/D/c of the cores
      alone, an approximation (the single stations' waits are left out);
      no distribution when the egress wire is slower than the cores and
      they slower than what feeds them. Loss: the blocking of the slowest
      station served out of the input queue (the engine holds a packet
      there until it starts on a core, so the packet-input engine, the
      memory and the cores; pipeline-engine.cc). The engine admits a packet
      while fewer than the buffer's packets wait for a core, and a packet
      the packet-input engine or the memory is serving has already started
      on a core (their ceilings add no latency: the core starts when they
      start it), so the room is the buffer plus the packets in service:
      M/D/1/K, K = buffer + 1, when a single station is the slowest (one
      core, at any load; or cores spaced by a slower packet-input engine or
      memory), and M/D/c/K, K = buffer + c, when the cores are (at any load;
      md_queue.mdck_blocking, an approximation exact at c = 1 and with no
      waiting room; none given only near saturation with more room than
      md_queue's cut chain holds). Both take the arrivals at the buffer to
      be Poisson, which holds where the stations ahead of it (the tester's
      wire, 16.8 ns at 64 bytes on 40G, and the packet-input engine, 23.3 ns)
      are much faster than the bottleneck: measured against the engine,
      within 2 % with 4 and 8 cores (75.8 and 37.9 ns a packet) at loads
      0.7 to 1.2. Where the bottleneck is barely slower than they are, they
      space the frames, the arrivals are smoother than Poisson and the
      engine loses less: 12 cores (25.3 ns) +27 % at 0.8 of capacity, +8.8 %
      at 1.0, +1.4 % at 1.1; 16 cores, bound by the packet-input engine
      (M/D/1/K), +24 % at 0.8 (buffer 8; the fluid part dominates above
      capacity). None when those stations are all faster than the tester's
      wire: it spaces the frames and none waits in the box; the tester's
      queue is not the box's buffer, and the egress side is unbounded
      (pipeline-engine.h), so neither wire loses a frame. The buffer is
      taken infinite for the waits, so there is no maximum:
      `latency_max_us` is absent. A load too close to the slowest station's
      capacity has no distribution here (md_queue's truncation: above rho
      ~0.9991 with one server, ~0.9942 with four cores): its mean and its
      loss are reported, no percentiles; for M/D/c the mean there is
      Cosmetatos' approximation (mdc_mean_wait). Where M/D/c/K's cut chain
      is too long for the room (md_queue.MAX_FINITE_STATES, only near
      saturation), a saturated case reports the fluid loss
      max(0, 1 - x/offered), a lower bound of the queue's; one below
      saturation reports no loss.
    """
    one_size = len(r.frames) == 1 and r.trace is None
    simple = contention == "none" and r.lock_s == 0 and r.section_s == 0 and one_size
    c = r.busy_cores
    fifo = c == 1 or r.tag_type != "ATOMIC"
    if not (simple and fifo) or arrivals not in ("constant", "poisson"):
        return {}, {}
    fluid = max(0.0, 1.0 - x / offered) if saturated else 0.0
    loss = fluid
    st = station_times(r)
    before = max(st["wire_in"], st["packet_input"], st["memory"])  # the single servers ahead of the cores
    # One chain of single servers when the cores never wait (one core, or
    # frames spaced by a slower station ahead: D/D/c); its slowest station d.
    chain = c == 1 or r.core_s / c <= before
    d = max(before, st["wire_out"], r.core_s if c == 1 else 0.0)
    # The input queue feeds the packet-input engine, the memory and the
    # cores; the slowest of them per packet (a core's time / c for c cores).
    single_in_box = max(st["packet_input"], st["memory"])
    slowest_in_box = max(single_in_box, r.core_s / c)
    cores_bound = r.core_s / c > single_in_box
    mdc_p = None  # M/D/c of the cores: its number in system, shared by the loss and the waits
    if arrivals == "poisson" and slowest_in_box > st["wire_in"]:
        buffer = r.plat.input_buffer_packets
        if c == 1 or not cores_bound:
            # (any load: M/D/1/K holds above rho = 1 too, and replaces the fluid loss)
            loss = md1k_blocking(offered * slowest_in_box, buffer + 1)
        else:
            # (any load too: M/D/c/K's approximation from Crommelin's chain cut
            # above the room where the infinite one does not exist, and replaces
            # the fluid loss at and above saturation)
            if not saturated:
                try:
                    mdc_p = number_in_system(offered * r.core_s, c)
                except ValueError:  # a load too close to c for the infinite chain (md_queue)
                    mdc_p = None
            try:
                loss = mdck_blocking(offered * r.core_s, c, buffer + c, mdc_p)
            except ValueError:
                # More room than the cut chain holds, near saturation. Above
                # it the fluid loss stands: a lower bound, M/D/c/K's limit as
                # the room grows (CaseResult has no notes field: the docstring
                # says so). Below it none is given.
                loss = fluid if saturated else None
    loss_metric = {} if loss is None else {"loss_pct": 100.0 * loss}
    if saturated or arrivals == "constant" or (chain and d == st["wire_in"]):
        # (the last: the tester's wire is the slowest station and spaces the
        # frames for every other: none waits in the box)
        return point_mass(latency_s, loss)
    if chain:
        # Pollaczek-Khinchine for the slowest station, less the tester's wire
        # (each an M/D/1 wait rho d / 2(1 - rho)); exact at any load below 1
        mean_wait = (closed_form("md1", offered, 1.0 / d, 1)["wait_s"]
                     - closed_form("md1", offered, 1.0 / st["wire_in"], 1)["wait_s"])
        mean = {"latency_avg_us": (latency_s + mean_wait) * 1e6, **loss_metric}
        servers = 1
    elif r.core_s / c >= st["wire_out"]:
        d, mean, servers = r.core_s, {}, c  # the cores are the slowest: M/D/c of the cores
    else:
        return loss_metric, {}  # cores and egress wire both slower than what feeds them: no one queue
    try:
        wait = MDcWait(offered, d, servers, mdc_p if servers > 1 else None)
    except ValueError:  # a load too close to 1 for the distribution (md_queue)
        return mean or {"latency_avg_us": (latency_s + mdc_mean_wait(offered, d, servers)) * 1e6, **loss_metric}, {}
    if not mean:
        mean = {"latency_avg_us": (latency_s + wait.mean()) * 1e6, **loss_metric}
    metrics = {**mean, "latency_min_us": latency_s * 1e6,
               **{name: (latency_s + wait.quantile(q)) * 1e6 for name, q in PERCENTILES}}
    return metrics, {"latency_histogram": cdf_histogram(lambda t: wait.cdf(t - latency_s), latency_s,
                                                        latency_s + wait.quantile(1.0 - HISTOGRAM_TAIL))}


# The packet engine's percentile metrics (routertwin.distributions.PERCENTILES, with "_us").
PERCENTILES = (("latency_p50_us", 0.5), ("latency_p99_us", 0.99), ("latency_p999_us", 0.999))
# A closed-form histogram stops where this much of the mass is left (put in its last bin).
HISTOGRAM_TAIL = 1e-6


def mdc_mean_wait(lam: float, d: float, c: int) -> float:
    """Mean wait of M/D/c by Cosmetatos' correction of half the M/M/c wait
    (Erlang C): W = W_MMc / 2 (1 + (1 - rho)(c - 1)(sqrt(4 + 5c) - 2) / (16 rho c))
    (Cosmetatos 1975, "Approximate explicit formulae for the average queueing
    time in the processes (M/D/r) and (D/M/r)", INFOR 13). Exact as rho -> 1 (heavy
    traffic halves the M/M/c wait); used only where the exact chain is too
    long (rho above ~0.994 at four cores), where against md_queue's chain it
    is within 1.5e-6 of the mean wait at four cores (rho 0.99: 6e-7, 0.994:
    1.4e-6, 0.995: 1.4e-6 with 3473 states; 0.5: 5e-3)."""
    rho = lam * d / c
    correction = 1.0 + (1.0 - rho) * (c - 1) * (math.sqrt(4.0 + 5.0 * c) - 2.0) / (16.0 * rho * c)
    return 0.5 * closed_form("mmc", lam, 1.0 / d, c)["wait_s"] * correction


def point_mass(latency_s: float, loss: float) -> tuple[dict[str, float], dict]:
    """Every packet the same latency: its percentiles, min and max are the mean."""
    us = latency_s * 1e6
    metrics = {"latency_min_us": us, "latency_max_us": us, **{name: us for name, _ in PERCENTILES},
               "loss_pct": 100.0 * loss}
    return metrics, {"latency_histogram": cdf_histogram(lambda t: 1.0 if t >= latency_s else 0.0, latency_s,
                                                        latency_s)}


def cdf_histogram(cdf, low_s: float, high_s: float) -> dict:
    """A distribution given by its CDF (seconds) as a latency histogram dict
    (routertwin.distributions: bins [lower_us, upper_us, mass]) on the
    native LatencyHistogram's axis (model/common/model/latency-histogram.h:
    100 log bins per decade from 1 ns), from the bin holding `low_s` to the
    one holding `high_s`; the mass beyond `high_s` goes in the last bin, so
    the masses add to 1 ("count": 1, a probability, not packets)."""
    per_decade, low_edge = 100, 1e-9
    first = math.floor(per_decade * math.log10(low_s / low_edge))
    last = math.floor(per_decade * math.log10(high_s / low_edge))
    bins, before = [], 0.0
    for i in range(first, last + 1):
        lo, hi = low_edge * 10 ** (i / per_decade), low_edge * 10 ** ((i + 1) / per_decade)
        upto = 1.0 if i == last else cdf(hi)
        if upto > before:
            bins.append([lo * 1e6, hi * 1e6, upto - before])
            before = upto
    return {"count": 1.0, "bins": bins}
