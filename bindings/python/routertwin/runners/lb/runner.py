"""The runner contract of kind lb: check (load time) and run."""

from __future__ import annotations

import math
import re
import sys

from routertwin.methods import rfc3511
from routertwin.methods.tolly import fit_line, run_to_saturation
from routertwin.distributions import (lb_distributions, lb_metrics, loss_clustering, loss_distribution,
                                      queue_wait_percentiles, timed_distributions)
from routertwin.results import CaseResult
from routertwin.runners.lb.metrics import UNIT_METRIC
from routertwin.runners.lb.native import SYN_FRAME_BYTES, call, fill_config, step_config
from routertwin.runners.lb.profiles import load_platform, load_prices
from routertwin.runners.lb.schema import Case, Schema
from routertwin.scenario_loader import FieldError


def check(scenario) -> None:
    """The profiles load; every case's config is accepted by the native
    runner's key checks (a flood above the line rate of its ports, say),
    blamed on the case key to change."""
    cfg: Schema = scenario.config
    from routertwin import _core

    schedulers = _core.lb_scheduler_names()
    for i, c in enumerate(cfg.cases):
        if c.cores is not None and c.cores > 4096:
            raise FieldError(("cases", i, "cores"), "at most 4096 cores")
        if c.method == "failover":
            _check_failover(c, i)
        # before the timed keys' check, which would blame an unknown scheduler on 'timed'
        if c.scheduler is not None and c.scheduler not in schedulers:
            raise FieldError(("cases", i, "scheduler"),
                             f"unknown scheduler '{c.scheduler}' (dp_sched: {', '.join(schedulers)})")
        if c.method == "timed":
            try:
                _core.lb_timed_check(_timed_keys(scenario, c)[0])
            except ValueError as exc:
                raise FieldError(("cases", i, "timed"), str(exc)) from None
    if cfg.platform is None:
        return  # remap and failover cases only (Schema checks that)
    plat = load_platform(cfg.platform)
    prices = load_prices(cfg.fitted)
    for i, c in enumerate(cfg.cases):
        rates = [c.rate] if c.method == "step" else (c.steps or []) if c.method == "tolly" else \
            [c.target] if c.method in ("max-cps", "max-tps") else []
        for j, r in enumerate(rates):
            try:
                _validate(step_config(cfg, plat, prices, scenario.seed, c, r))
            except ValueError as exc:
                loc = ("cases", i, "rate") if c.method == "step" else ("cases", i, "steps", j) \
                    if c.method == "tolly" else ("cases", i, "target")
                raise FieldError(loc, str(exc)) from None


def _validate(keys: dict) -> None:
    """The native key checks without a run: the flood's line rate, names."""
    from routertwin import _core

    known = set(_core.lb_config_keys())
    unknown = set(keys) - known
    if unknown:
        raise ValueError(f"unknown native keys {sorted(unknown)}")
    if keys["workload"] == "synflood":
        line = keys["flood_ports"] * keys["port_bit_rate"] / (8.0 * (SYN_FRAME_BYTES + 20))
        if keys["rate"] > line * (1 + 1e-12):
            raise ValueError(f"attack rate {keys['rate']:.6g} pps exceeds the line rate of {keys['flood_ports']} "
                             f"ports of 64-byte frames, {line:.6g} pps")


def _step_metrics(cfg: Schema, plat, out: dict, keys: dict) -> tuple[dict, str, dict]:
    unit = UNIT_METRIC[keys["workload"]]
    m = {
        "rate": out["completed_rate"], unit: out["completed_rate"], "offered_rate": out["offered_rate"],
        "cpu_util": out["cpu_mean_pct"], "cpu_max": out["cpu_max_pct"], "cpu_closed_form": out["cpu_closed_form_pct"],
        "cycles_per_unit": out["cycles_per_unit"], "packets_per_unit": out["packets_per_unit"],
        "throughput_gbps": out["delivered_bps"] / 1e9, "connections_end": float(out["connections_end"]),
        "units_failed": float(out["units_failed"]), "frames_to_servers": float(out["frames_to_servers"]),
        "delivery_errors": float(out["delivery_errors"]), "expired": float(out["expired"]),
        "time_wait_end": float(out["time_wait_end"]),
        "aging_cpu": out["aging_cpu_mean_pct"], "latency_us": out["mean_latency_s"] * 1e6,
    }
    for i, u in enumerate(out["core_utilization_pct"]):
        m[f"core{i}_util"] = u
    m.update(lb_metrics(out))
    if keys["forwarding"] == "tunnel":
        m["icmp_frag_needed"] = float(out["icmp_frag_needed"])
        m["icmp_frag_needed_used"] = float(out["icmp_frag_needed_used"])
    if keys["workload"] == "synflood":
        m["attack_gbps"] = out["completed_rate"] * (SYN_FRAME_BYTES + plat.port_overhead_bytes) * 8 / 1e9
        m["cookies_sent"] = float(out["cookies_sent"])
        if keys["legit_rate"] > 0:
            m["legit_tps"] = out["legit_completed_rate"]
            m["legit_offered_tps"] = out["legit_offered_rate"]
            m["legit_success_pct"] = 100.0 * out["legit_completed_rate"] / out["legit_offered_rate"] \
                if out["legit_offered_rate"] > 0 else 100.0
        if not keys["syn_cookies"]:
            # every flood SYN opens a connection that waits in SYN_RECV (60 s,
            # IPVS): one core's shard of the platform's size fills in
            per_core_open = out["completed_rate"] / keys["num_cores"]
            cap = plat.sessions_per_core / plat.sessions_per_connection
            m["seconds_to_fill"] = cap / per_core_open if per_core_open > 0 else math.inf
    drops = {k: float(v) for k, v in out["drops"].items()}
    if out["trace_ipv6_packets_not_replayed"]:
        # the trace's IPv6 connections: the balancer's session table keys IPv4 5-tuples
        drops["trace_ipv6_not_replayed"] = float(out["trace_ipv6_packets_not_replayed"])
        print(f"{keys['trace_file']}: {out['trace_ipv6_connections_not_replayed']} IPv6 connections "
              f"({out['trace_ipv6_packets_not_replayed']} packets) not replayed: the balancer's session table "
              f"keys IPv4 5-tuples", file=sys.stderr)
    if out["drops"].get("core_queue_full"):
        util = out["core_utilization_pct"]
        busiest = max(range(len(util)), key=util.__getitem__)
        bottleneck = "cores" if out["cpu_mean_pct"] >= 99 else f"core {busiest}"
    elif out["drops"].get("session_table_full"):
        bottleneck = "session table"
    elif out["bottleneck"]:
        bottleneck = out["bottleneck"]
    else:
        # nothing saturated: name the most loaded resource and its load
        bottleneck = f"none (busiest core {out['cpu_max_pct']:.0f} %)"
    return m, bottleneck, drops


def _params(cfg: Schema, plat, c: Case, keys: dict, **extra) -> dict:
    return {"workload": keys["workload"], "method": c.method, "forwarding": keys["forwarding"],
            "cores": keys["num_cores"], "syn_cookies": keys["syn_cookies"], "platform": plat.platform, **extra}


def _occupancy(c: Case, out: dict, params: dict) -> list[CaseResult]:
    """The connections held over time (occupancy_sample_us > 0): a case per sample."""
    return [CaseResult(f"{c.id}-occ-{k + 1}", {**params, "t_ms": round(1e3 * t, 6), "phase": "occupancy"},
                       {"connections": float(n), "time_wait": float(tw)}, "", {})
            for k, (t, n, tw) in enumerate(zip(out["occupancy_t_s"], out["occupancy_connections"],
                                              out["occupancy_time_wait"]))]


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    plat = load_platform(cfg.platform) if cfg.platform is not None else None
    prices = load_prices(cfg.fitted)
    progress.set_total(len(cfg.cases))
    results: list[CaseResult] = []
    for c in cfg.cases:
        if c.method == "fill":
            keys = fill_config(cfg, plat, prices, scenario.seed, c)
            out = call(keys, source=scenario.path, case_id=c.id)
            m = {"max_concurrent": float(out["max_concurrent"]), "concurrent": float(out["max_concurrent"]),
                 "connections_per_core": float(out["fill_connections_per_core"]), **_fill_figures(out, keys)}
            results.append(CaseResult(c.id, _params(cfg, plat, c, keys, sessions_per_core=keys["sessions_per_core"]),
                                      m, "session table", {"refused_full": float(out["refused_full"])}))
        elif c.method == "remap":
            results.append(_remap(scenario, plat, c))
        elif c.method == "failover":
            results.append(_failover(scenario, c))
        elif c.method == "ecmp":
            results.append(_ecmp(scenario, c))
        elif c.method == "timed":
            results.extend(_timed(scenario, c))
        elif c.method == "tablefill":
            results.extend(_tablefill(scenario, c))
        elif c.method == "split":
            results.append(_split(scenario, c))
        elif c.method == "step":
            keys = step_config(cfg, plat, prices, scenario.seed, c, c.rate)
            out = call(keys, source=scenario.path, case_id=c.id)
            m, bottleneck, drops = _step_metrics(cfg, plat, out, keys)
            params = _params(cfg, plat, c, keys, rate=c.rate, phase="step")
            results.append(CaseResult(c.id, params, m, bottleneck, drops, lb_distributions(out)))
            results.extend(_occupancy(c, out, params))
        elif c.method in ("max-cps", "max-tps"):
            results.extend(_max_rate(scenario, cfg, plat, prices, c, progress))
        elif c.method == "max-concurrent":
            results.extend(_max_concurrent(scenario, cfg, plat, prices, c, progress))
        else:
            results.extend(_tolly(scenario, cfg, plat, prices, c, progress))
        progress.advance(status=c.id)
    return results


def _remap(scenario, plat, c: Case) -> CaseResult:
    """Connections moved when one server of a pool fails (model/lb/helper/lb-remap.h):
    server 0 of `servers` under `scheduler`, or `server` of the balancer's `pool`
    (its usable active servers, in their order; lb_remap gives them weight 1)."""
    from routertwin import _core
    from routertwin.runners._shared.native import call_native

    if c.pool is not None:
        pool = scenario.config.balancer.pool(c.pool)
        usable = _usable(pool)
        weights = [s.weight for s in usable]
        if c.action == "add":
            weights.append(c.weight or usable[0].weight)
        failed = [s.name for s in usable].index(c.server) if c.server is not None else 0
        keys = {"scheduler": pool.scheduler, "servers": len(weights), "failed": failed,
                "weights": {str(i): float(w) for i, w in enumerate(weights)}, **pool.sched_keys()}
    else:
        keys = {"scheduler": c.scheduler or plat.scheduler, "servers": c.servers or 96, "failed": 0}
    keys.update({"action": c.action, "keys": c.keys or 100000, "seed": scenario.seed})
    out = call_native(_core.lb_remap, keys, source=scenario.path, case_id=c.id, engine="lb_remap")
    on = {"fail": "on_failed_pct", "drain": "on_drained_pct", "add": "on_added_pct"}[c.action]
    m = {"moved": float(out["moved"]), "moved_pct": 100.0 * out["moved"] / out["keys"],
         on: 100.0 * out["on_failed"] / out["keys"], "redirected_pct": 100.0 * out["redirected"] / out["keys"],
         "refused_pct": 100.0 * (out["keys"] - sum(out["after_per_server"])) / out["keys"]}
    if out["table_size"]:
        m["table_changes_pct"] = 100.0 * out["table_changes"] / out["table_size"]
    # the load on the others: where the keys' next connections go after the change
    after = [100.0 * n / out["keys"] for n in out["after_per_server"]]
    m["after_max_pct"] = max(after)
    if c.pool is not None:
        names = [s.name for s in usable] + (["added"] if c.action == "add" else [])
        m.update({f"after_{name}_pct": share for name, share in zip(names, after)})
    params = {"method": "remap", "action": c.action, "scheduler": keys["scheduler"], "servers": keys["servers"],
              "keys": keys["keys"], "keyed": out["keyed"]}
    if c.pool is not None:
        params.update(pool=c.pool, server=c.server if c.action != "add" else None)
    return CaseResult(c.id, params, m, "", {})


def _ecmp(scenario, c: Case) -> CaseResult:
    """N instances of the pool's balancer behind a router's ECMP; one fails or
    one is added (model/lb/helper/lb-ecmp.h): connections moved to another
    instance, and broken with per-instance session tables (mid-flow packets
    refused, as IPVS by default, or scheduled, as with sloppy_tcp and Katran),
    with shared session state, and with Maglev in every instance."""
    from routertwin import _core
    from routertwin.runners._shared.native import call_native

    e = c.ecmp
    if c.pool is not None:
        bal = scenario.config.balancer
        pool = bal.pool(c.pool)
        usable = _usable(pool)
        keys = {"scheduler": pool.scheduler, "weights": {str(i): float(s.weight) for i, s in enumerate(usable)},
                **pool.sched_keys()}
        # HAProxy is a proxy: it terminates the client's TCP connection
        forwarding = e.forwarding or pool.forwarding or ("proxy" if bal.source == "haproxy" else "dr")
    else:
        keys = {"scheduler": c.scheduler, "servers": c.servers or 4}
        forwarding = e.forwarding or "dr"
    keys.update({"instances": e.instances, "action": e.action, "ecmp": e.mode, "hash": e.hash,
                 "forwarding": forwarding, "connections": c.keys or 100000, "seed": scenario.seed})
    if e.action == "fail":
        keys["instance"] = e.instance
    if e.mode == "resilient":
        keys.update(buckets=e.buckets, rebalance=e.rebalance)
    if e.weights is not None:
        keys["instance_weights"] = {str(i): float(w) for i, w in enumerate(e.weights)}
    out = call_native(_core.lb_ecmp, keys, source=scenario.path, case_id=c.id, engine="lb_ecmp")
    n = out["connections"]
    on = "on_failed_instance_pct" if e.action == "fail" else "on_added_instance_pct"
    m = {"moved": float(out["moved"]), "moved_pct": 100.0 * out["moved"] / n, on: 100.0 * out["on_changed"] / n,
         "broken_local_pct": 100.0 * out["broken_local"] / n,
         "broken_local_sloppy_pct": 100.0 * out["broken_local_sloppy"] / n,
         "broken_shared_pct": 100.0 * out["broken_shared"] / n,
         "broken_maglev_pct": 100.0 * out["broken_maglev"] / n,
         "hash_space_moved_pct": 100.0 * out["hash_space_moved"] / out["hash_space"],
         "instance_after_max_pct": 100.0 * max(out["after"]) / n}
    if out["buckets"]:
        m.update(buckets_moved=float(out["buckets_moved"]),
                 buckets_moved_pct=100.0 * out["buckets_moved"] / out["buckets"],
                 buckets_busy_pct=100.0 * out["buckets_busy"] / out["buckets"])
    params = {"method": "ecmp", "action": e.action, "instances": e.instances, "ecmp": e.mode, "hash": e.hash,
              "forwarding": forwarding, "scheduler": keys["scheduler"], "connections": n}
    if e.action == "fail":
        params["instance"] = e.instance
    if e.mode == "resilient":
        params.update(buckets=e.buckets, rebalance=e.rebalance)
    if e.weights is not None:
        params["instance_weights"] = ",".join(map(str, e.weights))
    if c.pool is not None:
        params["pool"] = c.pool
    return CaseResult(c.id, params, m, "", {})


def _split(scenario, c: Case) -> CaseResult:
    """A URL mix through a service's content switching (runners/lb/content.py):
    the share of requests each pool gets, the share each rule decides, and
    what deciding costs (pattern tests and byte comparisons per request, as
    the C core's dp_urlrule counts them, short-circuited as HAProxy's)."""
    from routertwin.runners.lb.content import Switch

    svc = scenario.config.balancer.service(c.service)
    switch = Switch(svc.acls, svc.rules, svc.pool)
    pools: dict[str | None, int] = {}
    by_rule = [0] * (len(svc.rules) + 1)  # the last: no rule matched
    total = terms = compared = 0
    for r in c.split.requests:
        v = switch.route(r.url, r.host)
        pools[v.pool] = pools.get(v.pool, 0) + r.count
        by_rule[v.rule] += r.count
        total += r.count
        terms += v.terms * r.count
        compared += v.bytes_compared * r.count
    m = {"requests": float(total), "terms_per_request": terms / total, "bytes_compared_per_request": compared / total}
    targets = [p for p in dict.fromkeys([r.pool for r in svc.rules] + [svc.pool]) if p is not None]
    m.update({f"to_{p}_pct": 100.0 * pools.get(p, 0) / total for p in targets})
    if svc.pool is None:
        m["no_pool_pct"] = 100.0 * pools.get(None, 0) / total  # HAProxy answers 503
    m.update({f"rule_{k + 1}_pct": 100.0 * n / total for k, n in enumerate(by_rule[:-1])})
    m["default_pct"] = 100.0 * by_rule[-1] / total
    params = {"method": "split", "service": c.service, "rules": len(svc.rules), "default": svc.pool,
              "distinct_requests": len(c.split.requests)}
    return CaseResult(c.id, params, m, "", {})


def _usable(pool) -> list:
    """The active servers a what-if balances over (not disabled, not backup, weight > 0)."""
    return [s for s in pool.servers if not s.disabled and not s.backup and s.weight > 0]


def _timed_keys(scenario, c: Case) -> tuple[dict, list[str]]:
    """lb_timed's keys of a timed case (without the seed) and the servers' names."""
    t = c.timed
    keys: dict = {"action": c.action, "rate": t.rate, "lifetime": t.lifetime, "warmup_s": t.warmup_s,
                  "at_s": t.at_s, "settle_s": t.settle_s, "end_s": t.end_s, "sample_s": t.sample_s}
    if t.lifetime == "exponential":
        keys["lifetime_mean_ms"] = t.lifetime_mean_ms
    elif t.lifetime == "pareto":
        keys.update(pareto_alpha=t.pareto_alpha, pareto_min_ms=t.pareto_min_ms)
    else:
        keys.update(lognormal_mu=t.lognormal_mu, lognormal_sigma=t.lognormal_sigma)
    if c.pool is None:
        keys.update(scheduler=c.scheduler, servers=c.servers or 4)
        names = [f"s{i}" for i in range(keys["servers"])]
        persistence = t.persistence or "none"
    else:
        pool = scenario.config.balancer.pool(c.pool)
        usable = _usable(pool)
        names = [s.name for s in usable]
        keys.update(scheduler=pool.scheduler, servers=len(usable), **pool.sched_keys(),
                    weights={str(i): float(s.weight) for i, s in enumerate(usable)},
                    maxconn={str(i): float(s.maxconn) for i, s in enumerate(usable)},
                    maxqueue={str(i): float(s.maxqueue) for i, s in enumerate(usable)},
                    redispatch=pool.redispatch)
        if c.action == "add":
            first = usable[0]
            keys["weights"][str(len(usable))] = float(c.weight or first.weight)
            keys["maxconn"][str(len(usable))] = float(first.maxconn)
            keys["maxqueue"][str(len(usable))] = float(first.maxqueue)
        if c.server is not None:
            keys["server"] = names.index(c.server)
        # timeout queue; unset or 0, HAProxy uses timeout connect (manual 4.2 "timeout queue"; 2.6
        # cfgparse.c: `if (!timeout.queue) timeout.queue = timeout.connect`); neither: no limit
        queue_ms = pool.queue_timeout_ms or pool.connect_timeout_ms
        if queue_ms:
            keys["timeout_queue_ms"] = max(1, math.ceil(queue_ms))
        cookie = pool.cookie is not None and pool.cookie.mode == "insert" and all(s.cookie for s in usable)
        persistence = t.persistence or ("cookie" if cookie else "none")
    if persistence == "cookie":
        keys.update(persistence="cookie", clients=t.clients or 10 * keys["servers"])
    if c.action == "add":
        names.append("added")
    return keys, names


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _residual_max_s(t, n: int) -> float:
    """E[the last of n connections to end] when each one's remaining lifetime
    is drawn from the equilibrium (residual) distribution of the lifetime,
    as for the connections present at a random instant in an M/G/infinity
    system: exponential, H_n x mean (memoryless); Pareto and lognormal,
    the integral of 1 - F_e(x)^n, F_e(x) = 1 - E[(L - x)+] / E[L], by the
    trapezoid rule on a logarithmic grid, plus the Pareto tail beyond it
    (n int_X^inf (1 - F_e), alpha > 2; with alpha <= 2 the residual has no
    mean and neither has the drain)."""
    if n == 0:
        return 0.0
    if t.lifetime == "exponential":
        return sum(1.0 / k for k in range(1, n + 1)) * t.lifetime_mean_ms / 1000.0
    import numpy as np

    if t.lifetime == "pareto":
        a, xm = t.pareto_alpha, t.pareto_min_ms
        if a <= 2:
            return math.inf
        # n (xm / X)^(a-1) / a = 1e-9 past X
        top = xm * (n / (a * 1e-9)) ** (1.0 / (a - 1))
        x = np.concatenate([np.linspace(0.0, xm, 2001), np.geomspace(xm, top, 20001)[1:]])
        surv = np.where(x < xm, 1.0 - x * (a - 1) / (a * xm), (xm / np.maximum(x, xm)) ** (a - 1) / a)
        tail = n * xm ** (a - 1) * top ** (2 - a) / (a * (a - 2))
    else:
        mu, sigma = t.lognormal_mu, t.lognormal_sigma
        mean = math.exp(mu + sigma * sigma / 2)
        top = math.exp(mu + sigma * sigma + 12 * sigma)  # P(L > top) ~ 1e-33: nothing left to integrate
        x = np.concatenate([np.linspace(0.0, math.exp(mu - 6 * sigma), 1001),
                            np.geomspace(math.exp(mu - 6 * sigma), top, 40001)[1:]])
        z = (np.log(np.maximum(x, 1e-300)) - mu) / sigma
        erfc = np.vectorize(math.erfc)
        # E[(L - x)+] = E[L] Phi(sigma - z) - x Phi(-z)
        surv = np.where(x > 0, (mean * 0.5 * erfc((z - sigma) / math.sqrt(2)) - x * 0.5 * erfc(z / math.sqrt(2)))
                        / mean, 1.0)
        tail = 0.0
    f = 1.0 - (1.0 - np.clip(surv, 0.0, 1.0)) ** n
    return (float(np.sum((f[1:] + f[:-1]) * np.diff(x)) / 2) + tail) / 1000.0


def _timed(scenario, c: Case) -> list[CaseResult]:
    """A drain, removal or addition under a workload (model/lb/helper/lb-timed.h),
    over `replications` seeds: the time to drain (mean, percentiles, and the
    closed form from each run's N0), each server's connections and new
    connections per second before and after, queueing and 503s."""
    from routertwin import _core
    from routertwin.runners._shared.native import call_native
    from routertwin.validation.intervals import replication_seeds

    t = c.timed
    keys, names = _timed_keys(scenario, c)
    outs = [call_native(_core.lb_timed, {**keys, "seed": seed}, source=scenario.path, case_id=c.id,
                        engine="lb_timed") for seed in replication_seeds(scenario.seed, t.replications)]
    mean_ms = {"exponential": t.lifetime_mean_ms,
               "pareto": t.pareto_alpha * t.pareto_min_ms / (t.pareto_alpha - 1),
               "lognormal": math.exp(t.lognormal_mu + t.lognormal_sigma ** 2 / 2)}[t.lifetime]
    requests = sum(o["requests"] for o in outs)
    m: dict[str, float] = {"replications": float(len(outs)), "lifetime_mean_ms": mean_ms,
                           "offered_active": t.rate * mean_ms / 1000.0,
                           "requests": requests / len(outs), "served": _mean([o["served"] for o in outs])}
    for key in ("queued", "queue_timeouts", "refused_maxqueue", "refused_no_server", "redispatched_full"):
        m[f"{key}_pct"] = 100.0 * sum(o[key] for o in outs) / requests if requests else 0.0
    m["http_503_pct"] = m["queue_timeouts_pct"] + m["refused_maxqueue_pct"] + m["refused_no_server_pct"]
    m["before_503_per_s"] = _mean([o["before_503_per_s"] for o in outs])
    m["after_503_per_s"] = _mean([o["after_503_per_s"] for o in outs])
    # neither served nor refused by end_s: still in a queue when the run ends
    m["waiting_at_end_pct"] = 100.0 - m["http_503_pct"] - 100.0 * sum(o["served"] for o in outs) / requests
    waited = [o for o in outs if o["queue_wait_histogram"]["count"]]
    m["queue_wait_mean_ms"] = _mean([o["queue_wait_mean_ms"] for o in waited]) if waited else 0.0
    if waited:
        m.update(queue_wait_percentiles(waited))
    dist = timed_distributions(outs)
    m.update(loss_clustering(dist["loss_timeline"]))
    m["backend_queue_max"] = float(max(o["backend_queue_max"] for o in outs))
    m["server_queue_max"] = float(max(o["server_queue_max"] for o in outs))
    for i, name in enumerate(names):
        m[f"before_{name}_active"] = _mean([o["before_active"][i] for o in outs])
        m[f"after_{name}_active"] = _mean([o["after_active"][i] for o in outs])
        m[f"before_{name}_cps"] = _mean([o["before_new_per_s"][i] for o in outs])
        m[f"after_{name}_cps"] = _mean([o["after_new_per_s"][i] for o in outs])
    if c.action in ("drain", "remove"):
        m["n0_mean"] = _mean([float(o["n0"]) for o in outs])
    if c.action == "remove":
        m["broken_mean"] = _mean([float(o["broken"]) for o in outs])
    if c.action == "drain":
        drained = sorted(o["drain_s"] for o in outs if o["drain_s"] >= 0)
        m["drained_runs"] = float(len(drained))
        m["draining_new_mean"] = _mean([float(o["draining_new"]) for o in outs])
        if drained:
            import numpy as np

            m.update(drain_s_mean=_mean(drained), drain_s_p50=float(np.percentile(drained, 50)),
                     drain_s_p90=float(np.percentile(drained, 90)), drain_s_max=drained[-1])
            if len(drained) > 1:
                sd = float(np.std(drained, ddof=1))
                m["drain_s_ci95"] = 1.96 * sd / math.sqrt(len(drained))
        if not any(o["draining_new"] for o in outs):
            # nothing new reached it: its last connection is the last of N0 residual lifetimes
            m["drain_s_closed_form"] = _mean([_residual_max_s(t, o["n0"]) for o in outs])
    params = {"method": "timed", "action": c.action, "scheduler": keys["scheduler"], "servers": keys["servers"],
              "rate": t.rate, "lifetime": t.lifetime, "at_s": t.at_s, "end_s": t.end_s,
              "persistence": keys.get("persistence", "none"), "timeout_queue_ms": keys.get("timeout_queue_ms", 0),
              # measured (show stat, docs/import-lb.md 5d) or the what-if's assumption
              "workload": f"calibrate ({', '.join(t.calibrate)})" if t.calibrate else "assumption"}
    if c.pool is not None:
        params.update(pool=c.pool, server=c.server if c.action in ("drain", "remove") else None)
    cases = [CaseResult(c.id, params, m, "", {}, dist)]
    if t.sample_s > 0 and c.action in ("drain", "remove"):
        for k in range(len(outs[0]["samples"])):
            cases.append(CaseResult(f"{c.id}-t-{k}", {**params, "t_s": round(k * t.sample_s, 9), "phase": "drain"},
                                    {"connections": _mean([float(o["samples"][k]) for o in outs])}, "", {}))
    return cases


def _tablefill(scenario, c: Case) -> list[CaseResult]:
    """The connection table against memory and new-connection rate
    (runners/lb/tablefill.py): the limit, its memory, the rate that reaches
    it (Little's law: held = rate x holding time), then per load factor the
    system simulated on the C++ timed engine (its frontend limit and accept
    queue) beside its closed forms (<id>-x<factor>), with the accept queue's
    wait distribution and the refusals over time."""
    from routertwin import _core
    from routertwin.runners._shared.native import call_native
    from routertwin.runners.lb import tablefill
    from routertwin.validation.intervals import replication_seeds

    f = c.tablefill
    limit = f.held_limit()
    holding_s = (f.lifetime_mean_ms + f.linger_ms) / 1000.0
    at_limit = limit / holding_s
    params = {"method": "tablefill", "limit": limit, "limit_source": f.limit_source,
              "bytes_per_connection": f.bytes_per_connection, "bytes_source": f.bytes_source,
              "accept_queue": f.accept_queue, "queue_source": f.queue_source, "overflow": f.overflow,
              "refused_as": f.refused_as,
              "lifetime_mean_ms": f.lifetime_mean_ms, "linger_ms": f.linger_ms,
              "workload": "assumption (exponential lifetimes, Poisson arrivals)"}
    m = {"limit": float(limit), "memory_at_limit_bytes": float(limit * f.bytes_per_connection),
         "holding_s": holding_s, "rate_at_limit_per_s": at_limit}
    results = [CaseResult(c.id, params, m, "", {})]
    seeds = replication_seeds(scenario.seed, len(f.load_factors))
    for factor, seed in zip(f.load_factors, seeds):
        rate = factor * at_limit
        offered = rate * holding_s
        warmup, measured, start = tablefill.spans(offered, limit, f.accept_queue, f.measure_holdings)
        keys = tablefill.engine_keys(rate, holding_s, limit, f.accept_queue, seed, warmup, measured, start)
        out = call_native(_core.lb_timed, keys, source=scenario.path, case_id=f"{c.id}-x{factor:g}",
                          engine="lb_timed")
        closed = tablefill.blocking(offered, limit, f.accept_queue)
        arrivals, refused_n = out["before_requests"], out["before_refused_frontend"]
        window_s = keys["end_s"] - keys["warmup_s"]
        refused = refused_n / arrivals if arrivals else 0.0
        held = out["before_active"][0]
        accepted = arrivals - refused_n
        waited = out["before_queued"]
        mk = {"rate_per_s": rate, "offered_erlangs": offered, "arrivals": float(arrivals),
              "simulated_holdings": measured,
              "refused_pct": 100.0 * refused, "refused_closed_form_pct": 100.0 * closed,
              "refused_per_s": refused_n / window_s,
              "queued_pct": 100.0 * waited / arrivals if arrivals else 0.0,
              "held_mean": held, "held_littles_law": rate * (1 - closed) * holding_s,
              "held_max": float(out["frontend_held_max"]), "waiting_mean": out["before_accept_queue"],
              "waiting_closed_form": tablefill.mean_waiting(offered, limit, f.accept_queue),
              "memory_mean_bytes": held * f.bytes_per_connection}
        if f.accept_queue:
            # the mean over every accepted connection (0 for those accepted at once): the waits of
            # those that got their connection by the end x the fraction that waited (those still in
            # the accept queue at the end counted too), and Little's law on the closed form's queue:
            # L_q / accepted rate
            mk["queue_wait_mean_ms"] = out["queue_wait_mean_ms"] * waited / accepted if accepted else 0.0
            mk["queue_wait_closed_form_ms"] = 1000.0 * mk["waiting_closed_form"] / (rate * (1 - closed))
            mk.update(queue_wait_percentiles([out]))
        short = {k: params[k] for k in ("method", "limit", "accept_queue", "overflow", "lifetime_mean_ms", "linger_ms")}
        dist = timed_distributions([out])
        mk.update(loss_clustering(dist["loss_timeline"]))
        results.append(CaseResult(f"{c.id}-x{factor:g}", {**short, "load_factor": factor}, mk,
                                  "connection limit" if refused > 0 else "", {f.counter: float(refused_n)}, dist))
    return results


def _check_failover(c: Case, i: int) -> None:
    """The native key checks of run_lb_failover, blamed on the failover key
    they name (its line in the scenario)."""
    from routertwin import _core

    keys = dict(c.failover or {})
    try:
        _core.lb_failover_check(keys)
    except ValueError as exc:
        m = re.match(r"key '([^']+)'", str(exc))
        loc = ("cases", i, "failover", m.group(1)) if m and m.group(1) in keys else ("cases", i, "failover")
        raise FieldError(loc, str(exc).split(": ", 1)[-1]) from None


def _failover(scenario, c: Case) -> CaseResult:
    """A server (or a balancer) dies: detection time beside its closed-form
    window, requests failed with the case's retries/redispatch, balancer
    failover and sticky clients moved (model/lb/helper/lb-failover.h)."""
    from routertwin import _core
    from routertwin.runners._shared.native import call_native

    keys = dict(c.failover or {})
    out = call_native(_core.run_lb_failover, keys, source=scenario.path, case_id=c.id, engine="lb_failover")
    m = {k: float(out[k]) for k in ("detection_ms", "window_min_ms", "window_max_ms", "requests", "served",
                                     "failed", "retried", "redispatched", "to_dead_server", "failover_ms",
                                     "master_down_interval_ms", "lost_in_failover", "sticky_moved",
                                     "sticky_clients_moved")}
    # the served requests' delay (failed attempts' timeouts and turn-arounds), and the failures over time
    m.update({f"served_delay_{q}_ms": out[f"served_delay_{q}_us"] / 1000.0 for q in ("p50", "p99", "p999", "max")})
    dist = {"loss_timeline": loss_distribution(out["failure_timeline"])}
    m.update(loss_clustering(dist["loss_timeline"]))
    return CaseResult(c.id, {"method": "failover", **keys}, m, "", {}, dist)


def _tolly(scenario, cfg: Schema, plat, prices, c: Case, progress) -> list[CaseResult]:
    """Load steps, the line, the 100 % rate, and the run to true saturation;
    every run also as its own case (<id>-step-<k>, <id>-sat-<k>) for plots."""
    out_cases: list[CaseResult] = []
    cpus = []
    for k, rate in enumerate(c.steps):
        keys = step_config(cfg, plat, prices, scenario.seed, c, rate)
        out = call(keys, source=scenario.path, case_id=f"{c.id}-step-{k + 1}")
        m, bottleneck, drops = _step_metrics(cfg, plat, out, keys)
        cpus.append(m["cpu_util"])
        out_cases.append(CaseResult(f"{c.id}-step-{k + 1}", _params(cfg, plat, c, keys, rate=rate, phase="step"),
                                    m, bottleneck, drops, lb_distributions(out)))
        progress.advance(0, status=f"{c.id} step {k + 1}")
    line = fit_line(list(c.steps), cpus)
    metrics = {"intercept_pct": line.intercept, "slope_pct_per_munit": line.slope * 1e6, "r2": line.r2,
               "rate_at_100": line.rate_at_100, "rate_at_100_lo": line.rate_at_100_lo,
               "rate_at_100_hi": line.rate_at_100_hi}
    metrics[UNIT_METRIC[cfg.workload]] = line.rate_at_100
    bottleneck = ""
    if c.saturation:
        sat_runs: list[tuple[float, dict, dict]] = []

        def step(rate: float) -> dict:
            keys = step_config(cfg, plat, prices, scenario.seed, c, rate)
            out = call(keys, source=scenario.path, case_id=f"{c.id}-sat")
            sat_runs.append((rate, out, keys))
            progress.advance(0, status=f"{c.id} saturation {rate:.4g}/s")
            return out

        sat = run_to_saturation(step, start=max(c.steps))
        for k, (rate, out, keys) in enumerate(sat_runs):
            m, b, drops = _step_metrics(cfg, plat, out, keys)
            out_cases.append(CaseResult(f"{c.id}-sat-{k + 1}", _params(cfg, plat, c, keys, rate=rate,
                                                                         phase="saturation"), m, b, drops,
                                        lb_distributions(out)))
        line_at_sat = line.intercept + line.slope * sat.rate
        metrics.update({"saturation_rate": sat.rate, "saturation_cpu": sat.cpu_mean,
                        "saturation_cpu_max": sat.cpu_max,
                        "saturation_vs_line_pct": 100.0 * (sat.rate - line.rate_at_100) / line.rate_at_100,
                        "line_cpu_at_saturation": line_at_sat})
        bottleneck = sat.resource
    # the line itself, for plots: from zero load to 100 % CPU
    for k, x in enumerate((0.0, line.rate_at_100)):
        out_cases.append(CaseResult(f"{c.id}-line-{k + 1}", {"rate": x, "phase": "Tolly line (twin)",
                                                              "method": c.method, "workload": cfg.workload},
                                    {"cpu_util": line.intercept + line.slope * x}, "", {}))
    keys = step_config(cfg, plat, prices, scenario.seed, c, c.steps[-1])
    out_cases.insert(0, CaseResult(c.id, _params(cfg, plat, c, keys, steps=list(c.steps)), metrics, bottleneck, {}))
    return out_cases


def _fill_figures(out: dict, keys: dict) -> dict:
    """What the twin's tables cost per connection held: bytes of the session
    table, and the insert rate of the box (its cores at 100 % doing nothing
    but connection set-up: SYN, SYN-ACK, ACK at the priced cycles)."""
    per_conn = out["fill_cycles_per_connection"]
    return {"bytes_per_connection": out["bytes_per_connection"],
            "insert_rate": keys["num_cores"] * keys["clock_hz"] / per_conn if per_conn > 0 else math.inf}


def _max_rate(scenario, cfg: Schema, plat, prices, c: Case, progress) -> list[CaseResult]:
    """RFC 3511 5.3 / 5.7, RFC 9411 7.2 / 7.3: the largest rate that meets
    the pass criteria (routertwin.methods.rfc3511), each run also as a case
    (<id>-trial-<k>) for plots."""
    runs: list[tuple[dict, dict]] = []

    def run(rate: float) -> dict:
        keys = step_config(cfg, plat, prices, scenario.seed, c, rate)
        out = call(keys, source=scenario.path, case_id=f"{c.id}-trial-{len(runs) + 1}")
        runs.append((keys, out))
        return out

    def passes(out: dict, rate: float) -> tuple[bool, str]:
        return rfc3511.rate_passes(out, sustain_tolerance=c.sustain_tolerance)

    def shown(t: rfc3511.Trial) -> None:
        progress.advance(0, status=f"{c.id} {t.load:.6g}/s {'pass' if t.passed else 'fail'}")

    res = rfc3511.search_max(run, passes, c.target, resolution=c.resolution, on_trial=shown)
    cases = []
    best = None
    for k, (t, (keys, out)) in enumerate(zip(res.trials, runs)):
        m, bottleneck, drops = _step_metrics(cfg, plat, out, keys)
        m["passed"] = 1.0 if t.passed else 0.0
        cases.append(CaseResult(f"{c.id}-trial-{k + 1}", _params(cfg, plat, c, keys, rate=t.load, phase="search",
                                                                   why=t.why), m, bottleneck, drops,
                                lb_distributions(out)))
        if t.passed and t.load == res.maximum:
            best = (keys, out, m, bottleneck)
    keys, out, m_best, bottleneck = best
    unit = UNIT_METRIC[keys["workload"]]
    metric = "max_cps" if c.method == "max-cps" else "max_tps"
    metrics = {metric: res.maximum, unit: res.maximum, "rate": res.maximum, "trials": float(len(res.trials)),
               "lowest_failing_rate": res.lowest_failing, "cpu_util": m_best["cpu_util"],
               "cpu_max": m_best["cpu_max"], "cycles_per_unit": m_best["cycles_per_unit"],
               # where the units' work alone would fill the cores: cores x clock / cycles per unit
               # (the aging sweep takes its share, aging_cpu, on top)
               "rate_at_full_cpu": keys["num_cores"] * keys["clock_hz"] / m_best["cycles_per_unit"]}
    params = _params(cfg, plat, c, keys, target=c.target, resolution=c.resolution,
                     sustain_tolerance=c.sustain_tolerance)
    why = res.trials[[t.load for t in res.trials].index(res.lowest_failing)].why \
        if math.isfinite(res.lowest_failing) else "none failed"
    return [CaseResult(c.id, params, metrics, f"{bottleneck}; above it: {why}", {})] + cases


def _max_concurrent(scenario, cfg: Schema, plat, prices, c: Case, progress) -> list[CaseResult]:
    """RFC 3511 5.2 / RFC 9411 7.5: the most connections that are all
    established and all carry data. The shards share nothing and are alike,
    so the search fills one core's shard and the box holds cores x that."""
    cores = c.cores or plat.cores
    runs: list[tuple[dict, dict]] = []

    def run(n: float) -> dict:
        keys = fill_config(cfg, plat, prices, scenario.seed, c, limit=int(n), validate=True)
        out = call(keys, source=scenario.path, case_id=f"{c.id}-trial-{len(runs) + 1}")
        runs.append((keys, out))
        return out

    def shown(t: rfc3511.Trial) -> None:
        progress.advance(0, status=f"{c.id} {t.load * cores:.6g} connections {'pass' if t.passed else 'fail'}")

    per_core_target = max(10.0, c.target / cores)
    res = rfc3511.search_max(run, lambda out, n: rfc3511.capacity_passes(out, int(n)), per_core_target,
                             resolution=c.resolution, integer=True, on_trial=shown)
    cases = []
    best = None
    for k, (t, (keys, out)) in enumerate(zip(res.trials, runs)):
        m = {"concurrent": t.load * cores, "connections_per_core": float(out["fill_connections_per_core"]),
             "fill_validated": float(out["fill_validated"]), "passed": 1.0 if t.passed else 0.0}
        cases.append(CaseResult(f"{c.id}-trial-{k + 1}", _params(cfg, plat, c, keys, connections=t.load * cores,
                                                                   phase="search", why=t.why), m, "", {}))
        if t.passed and t.load == res.maximum:
            best = (keys, out)
    keys, out = best
    metrics = {"max_concurrent": res.maximum * cores, "concurrent": res.maximum * cores,
               "connections_per_core": res.maximum, "trials": float(len(res.trials)),
               **_fill_figures(out, keys)}
    params = _params(cfg, plat, c, keys, target=c.target, resolution=c.resolution,
                     sessions_per_core=keys["sessions_per_core"])
    why = res.trials[[t.load for t in res.trials].index(res.lowest_failing)].why \
        if math.isfinite(res.lowest_failing) else "none failed"
    return [CaseResult(c.id, params, metrics, f"session table; above it: {why}", {})] + cases
