"""RFC 3511 / RFC 9411 benchmarks of a load balancer (or any stateful
device): the maximum TCP connection establishment rate, the maximum HTTP
transaction rate and the concurrent TCP connection capacity, each as a
search for the largest load that meets its pass criterion.

The three benchmarks (RFC 3511, "Benchmarking Methodology for Firewall
Performance"; RFC 9411, which obsoletes it, keeps them for network security
devices):

- maximum TCP connection establishment rate: RFC 3511 section 5.3; RFC 9411
  section 7.2 (TCP/HTTP connections per second). Unit: a connection, opened,
  used for one HTTP/1.0 request and closed (RFC 9411 7.2: one transaction
  per connection);
- maximum HTTP transaction rate: RFC 3511 section 5.7; RFC 9411 section 7.3
  (HTTP throughput, transactions on persistent connections). Unit: a request
  and its response on an open connection;
- concurrent TCP connection capacity: RFC 3511 section 5.2; RFC 9411
  section 7.5. Unit: a connection established and kept open.

Pass criteria, as the RFCs state them and as the twin measures them:

- rates (`rate_passes`): (a) RFC 9411 7.2.3.3 / 7.3.3.3 a and b: failed
  transactions and connections ended by the device (an RST, a refused
  packet) fewer than 0.001 % (1 in 100,000) of those attempted; the twin
  counts a unit failed when any of its packets is refused by the balancer
  (a named drop) or lost in a full core queue (`units_failed`). (b) RFC 9411
  7.2.3.3 c: the rate is sustained (the RFC allows a 5 % deviation of the
  forwarding rate over a real tester's sustain phase). A device that cannot
  keep up queues the excess until its queues overflow, which in a short run
  may not happen: so the twin requires the units completed in the measured
  window to fall short of those started in it by at most
  `sustain_tolerance` (0.5 % by default) plus one unit: the twin's counts
  are exact and deterministic, and what remains is the window's edges (the
  units completing in the window are those started one latency earlier: at
  a constant rate the same count, +-1).
- capacity (`capacity_passes`): RFC 3511 5.2: all N connections are
  established and then each is used (its validation phase: data sent over
  every connection); the twin opens N connections through the balancer
  (SYN, SYN-ACK, ACK: the C core's session table holds them) and then sends
  a data segment on each, which must be forwarded as part of its connection.
  RFC 9411 7.5.3.3's criteria on transactions over those connections reduce
  to the same two counts here.

Search (`search_max`): RFC 9411 7.2.4 / 7.5.4: step 1, a qualification run
at 10 % of the target objective (it must pass); step 2, the target; step 3,
the iteration: if the target passes, the load doubles until a run fails
(RFC 3511 5.3.3: an iterative search for the maximum); then bisection
between the highest passing and the lowest failing load until they are
within `resolution` (relative) of each other. The answer is the highest
passing load. Each run is independent (a fresh device, the same seed), so
the search is deterministic.

From a scenario of kind lb (routertwin.runners.lb), as a case:

    routertwin run scenarios/adx/adx-cps.yaml \\
        --set 'cases=[{id: m, method: max-cps, target: 1.5e6}]'

and from Python: `rt.run(rt.load("scenarios/adx/adx-cps.yaml").with_(cases=[
{"id": "m", "method": "max-cps", "target": 1.5e6}]))`, or these functions
with any `run(load) -> dict` callable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

# RFC 9411 7.2.3.3 a/b (and 7.3.3.3, 7.5.3.3): fewer than 0.001 % failures.
MAX_FAILED_RATIO = 1e-5
# RFC 9411 7.2.4 step 1: the qualification run at 10 % of the target objective.
QUALIFICATION_FRACTION = 0.1
DEFAULT_RESOLUTION = 0.005
DEFAULT_SUSTAIN_TOLERANCE = 0.005


def rate_passes(out: dict, *, sustain_tolerance: float = DEFAULT_SUSTAIN_TOLERANCE) -> tuple[bool, str]:
    """The rate criteria on one run (the dict of routertwin._core.run_lb):
    (pass, why). `units_started` / `units_completed` / `units_failed` count
    the units started in, completed in, and started in and failed in the
    measured window."""
    started = out["units_started"]
    if started <= 0:
        return False, "no unit started in the measured window"
    failed = out["units_failed"]
    if failed > MAX_FAILED_RATIO * started:
        return False, f"{failed} of {started} units failed (> 0.001 %)"
    done = out["units_completed"]
    # one unit more for the window's edges: the units completing in it are
    # those started one latency earlier, the same count +-1 at a constant rate
    if started - done > sustain_tolerance * started + 1:
        return False, (f"not sustained: {done} of {started} units completed in the window "
                       f"(< {100 * (1 - sustain_tolerance):.4g} %)")
    return True, f"{done} of {started} completed, {failed} failed"


def capacity_passes(out: dict, n: int) -> tuple[bool, str]:
    """RFC 3511 5.2 on one fill of n connections (per shard): all
    established and all validated by a data segment."""
    held = out["fill_connections_per_core"]
    if held < n:
        return False, f"{held} of {n} connections established (the table refused the next)"
    if out["fill_validated"] < n:
        return False, f"{out['fill_validated']} of {n} connections carried their data segment"
    return True, f"{n} established and validated"


@dataclass
class Trial:
    load: float
    passed: bool
    why: str
    out: dict = field(repr=False)


@dataclass
class SearchResult:
    maximum: float            # the highest passing load (0 if none passed)
    lowest_failing: float     # the lowest failing load seen (inf if none failed)
    trials: list[Trial]       # in the order run


def search_max(run: Callable[[float], dict], passes: Callable[[dict, float], tuple[bool, str]], target: float, *,
               resolution: float = DEFAULT_RESOLUTION, integer: bool = False, upper: float = math.inf,
               max_trials: int = 60, on_trial: Callable[[Trial], None] | None = None) -> SearchResult:
    """The RFC 9411 7.x.4 search for the largest load that passes: the
    qualification at 10 % of `target`, the target, doubling while it passes
    (not beyond `upper`), then bisection until the bracket is within
    `resolution` of the lowest failing load (with `integer`, loads are whole
    numbers and the bracket closes at 1). `run(load)` returns the run's dict,
    `passes(out, load)` the criterion."""
    if not target > 0:
        raise ValueError("the target objective must be > 0")
    if not 0 < resolution < 1:
        raise ValueError("resolution must be in (0, 1)")
    trials: list[Trial] = []
    cache: dict[float, Trial] = {}

    def trial(load: float) -> Trial:
        load = float(max(1, round(load))) if integer else load
        if load in cache:
            return cache[load]
        if len(trials) >= max_trials:
            raise RuntimeError(f"the search did not converge in {max_trials} runs")
        out = run(load)
        ok, why = passes(out, load)
        t = Trial(load, ok, why, out)
        trials.append(t)
        cache[load] = t
        if on_trial:
            on_trial(t)
        return t

    qualification = trial(QUALIFICATION_FRACTION * target)
    if not qualification.passed:
        raise ValueError(f"the qualification run at 10 % of the target ({qualification.load:.6g}) fails "
                         f"({qualification.why}): lower the target")
    lo, hi = qualification.load, math.inf
    load = min(float(target), upper)
    while True:
        t = trial(load)
        if not t.passed:
            hi = t.load
            break
        lo = t.load
        if load >= upper:
            break
        load = min(2 * load, upper)

    def closed() -> bool:
        if integer:
            return hi - lo <= 1
        return hi - lo <= resolution * hi

    while hi < math.inf and not closed():
        mid = (lo + hi) / 2
        t = trial(math.floor(mid) if integer else mid)
        if t.load in (lo, hi):  # integers: nothing left between them
            break
        if t.passed:
            lo = t.load
        else:
            hi = t.load
    return SearchResult(lo, hi, trials)
