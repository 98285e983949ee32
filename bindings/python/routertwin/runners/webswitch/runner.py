"""The runner contract of kind webswitch: check (load time) and run."""

from __future__ import annotations

from routertwin.distributions import latency_distribution, percentile_metrics
from routertwin.results import CaseResult
from routertwin.runners.webswitch.model import Case, evaluate
from routertwin.runners.webswitch.profiles import load_webswitch
from routertwin.runners.webswitch.schema import Ns3Options, Schema
from routertwin.runners.webswitch.testbed import Testbed, cookie_testbed, load_testbed
from routertwin.scenario_loader import FieldError


def http_trace(path) -> list[dict]:
    """The HTTP requests of a capture, connection by connection, as the
    trace replay sends them (`_core.read_http_trace`: target, Host, version,
    keep-alive, sizes, packet index). A malformed or truncated file, or a
    request head the C core's HTTP parser refuses, is a UserError naming
    the file and the packet."""
    from routertwin import _core
    from routertwin.errors import UserError

    try:
        return _core.read_http_trace(str(path))
    except ValueError as exc:
        raise UserError(str(exc)) from None


def product_key(platform: str) -> str:
    """The case-id prefix of a product: its profile name without 'nctu-'."""
    return platform.removeprefix("nctu-")


def check(scenario) -> None:
    """Every profile loads; in mode l7 every product does URL switching,
    and in mode l4 with dr every product offers direct routing (table 4)."""
    cfg: Schema = scenario.config
    tb = load_testbed(cfg.testbed)
    if cfg.open_loop is not None and cfg.open_loop.trace is not None:
        # a malformed or truncated capture, or a request that is not HTTP: one
        # line naming it and the packet, before any case runs
        http_trace(cfg.open_loop.trace.file)
    if cfg.persistence == "cookie" and tb.cookie_test is None:
        raise FieldError(("persistence",), f"testbed {cfg.testbed} has no cookie_test section")
    seen: dict[str, int] = {}
    for i, path in enumerate(cfg.products):
        p = load_webswitch(path)
        if p.platform in seen:
            raise FieldError(("products", i), f"product '{p.platform}' is listed twice")
        seen[p.platform] = i
        if cfg.persistence == "cookie":
            if not p.features.l7.cookie_persistence:
                raise FieldError(("products", i), f"{p.product.vendor} {p.product.name} has no cookie persistence "
                                                  "(its features.l7.cookie_persistence)")
            if p.costs.l7_packet_cycles is None:
                raise FieldError(("products", i), f"{p.product.vendor} {p.product.name}: its profile prices no L7 "
                                                  "operation (costs.l7_packet_cycles and the rest), which cookie "
                                                  "persistence needs")
        elif cfg.mode == "l7" and not p.features.l7.url_switching:
            raise FieldError(("products", i), f"{p.product.vendor} {p.product.name} does no URL switching "
                                              "(its features.l7.url_switching): it has no L7 mode")
        if cfg.mode == "l4" and cfg.forwarding == "dr" and not p.features.l4.direct_routing:
            raise FieldError(("products", i), f"{p.product.vendor} {p.product.name} offers no direct routing "
                                              "(its features.l4.direct_routing)")


def case_id(key: str, mode: str, forwarding: str, http: str, rules: int, mix: int | None = None,
            cookie_method: str | None = None) -> str:
    head = f"{key}-{mode}-{forwarding}-http{http.replace('.', '')}"
    if cookie_method is not None:
        head = f"{head}-cookie-{cookie_method}"
    elif mode == "l7":
        head = f"{head}-r{rules}"
    return head if mix is None else f"{head}-c{mix}"


def case_result(cid: str, case: Case, tb: Testbed) -> tuple[CaseResult, float]:
    """One case's result and its requests per second."""
    r = evaluate(case, tb)
    sol = r.solution
    p = case.product
    counters = {f"utilization.{k}": v for k, v in sol.utilization.items()
                if k.startswith(("switch", "uplink")) or k == sol.bottleneck}
    counters.update({"switch.packets_per_request": r.work.packets,
                     "switch.control_packets_per_request": r.work.control_packets,
                     "switch.connections_per_request": r.work.connections,
                     "switch.rules_per_request": r.work.rules,
                     "switch.rule_bytes_per_request": r.work.rule_bytes,
                     "switch.redirects_per_request": r.work.redirects,
                     "switch.cycles_per_request": r.work.cycles})
    result = CaseResult(
        case=cid,
        params={"product": p.platform, "mode": case.mode, "forwarding": case.forwarding, "http": case.http,
                "rules": case.rules, "persistence": case.persistence,
                "cookie_method": p.behaviour.cookie_method_tested if case.persistence == "cookie" else None, "clients": case.clients, "servers": case.servers,
                "threads": case.clients * tb.client.threads},
        metrics={"requests_per_s": r.requests_per_s, "latency_avg": r.latency_ms,
                 "throughput_mbps": r.response_mbps, "switch_utilization": sol.utilization["switch.cpu"],
                 "switch_us_per_request": p.us(r.work.cycles)},
        bottleneck=sol.bottleneck, counters=counters)
    return result, r.requests_per_s


def ns3_config(case: Case, profile_path, tb: Testbed, options: Ns3Options, seed: int,
               open_keys: dict | None = None) -> dict:
    """The ns-3 engine's configuration of one case: the same testbed and
    workload numbers as the MVA (webbench-nctu.yaml), nothing fitted.

    The cookie test (figure 12) runs the MVA's cookie testbed
    (testbed.cookie_testbed) with two differences in what is padded: the
    request head is padded to the testbed's request_bytes and the client's
    Cookie header, the real one it was sent, comes on top (the MVA adds
    cookie_bytes); a response head is padded to response_header_bytes plus
    one set_cookie_bytes, the page's own cookie inside it, and the
    switch's inserted Set-Cookie comes on top with its real length (the
    MVA adds a second set_cookie_bytes)."""
    net = tb.network
    extra = {}
    if case.persistence == "cookie":
        page = cookie_testbed(tb, switch_inserts=False)
        tb = page.model_copy(update={"request_bytes": tb.request_bytes})
        extra = {"cookie_method": case.product.behaviour.cookie_method_tested}
    return {
        **extra,
        "profile": str(profile_path),
        "mode": case.mode, "forwarding": case.forwarding, "http11": case.http == "1.1", "rules": case.rules,
        "client_hosts": case.clients, "threads_per_host": tb.client.threads, "servers": case.servers,
        "files": [{"name": f.name, "bytes": f.bytes, "share": f.share, "group": f.group} for f in tb.file_classes],
        "url_prefix": tb.url_prefix, "request_bytes": tb.request_bytes,
        "response_header_bytes": tb.response_header_bytes,
        "client_cpu_per_request_s": tb.client.cpu_per_request_us * 1e-6,
        "client_cpu_per_connection_s": tb.client.cpu_per_connection_us * 1e-6,
        "server_cpu_per_request_s": tb.server.cpu_per_request_us * 1e-6,
        "server_cpu_per_connection_s": tb.server.cpu_per_connection_us * 1e-6,
        "host_link_bps": net.host_link_bps, "uplink_bps": net.uplink_bps,
        "frame_overhead_bytes": net.frame_overhead_bytes, "mss_bytes": net.mss_bytes,
        "ack_every_segments": net.ack_every_segments, "l2_latency_s": net.l2_switch_latency_us * 1e-6,
        "host_round_trip_s": net.host_round_trip_us * 1e-6,
        "warmup_s": options.warmup_s, "duration_s": options.duration_s, "seed": seed,
        **({**open_keys, "drain_s": options.drain_s} if open_keys else {}),
    }


def case_result_ns3(cid: str, case: Case, profile_path, tb: Testbed, options: Ns3Options,
                    seed: int, open_keys: dict | None = None) -> tuple[CaseResult, float]:
    """One case on the ns-3 engine: the same metrics as case_result, and the
    distribution behind latency_avg (p50/p99/p99.9/max in us from the
    model's Boost.Histogram, as routertwin.distributions reads the other
    kinds'): closed loop, every request completed in the window, its
    WebBench cycle (client CPU to the response's last byte). Open loop
    (open_keys, OpenLoop.native_keys): also the offered rate, the response
    times of the requests arrived in the window (latency_avg their mean)
    and the shares of them refused or still unanswered after the drain.
    Its `loss_timeline` distribution holds the switch's refusals and
    absorbed segments per time bin by drop name, and those requests at
    their arrival (routertwin.distributions)."""
    from routertwin import _core

    r = _core.run_webbench_testbed(ns3_config(case, profile_path, tb, options, seed, open_keys))
    p = case.product
    util = r["utilization"]
    bottleneck = max(util, key=lambda k: (util[k], k))
    counters = {f"utilization.{k}": v for k, v in util.items()
                if k.startswith(("switch", "uplink")) or k == bottleneck}
    counters.update({"switch.packets_per_request": r["switch_packets_per_request"],
                     "switch.connections_per_request": r["connection_sides_per_request"],
                     "switch.rules_per_request": r["rules_per_request"],
                     "switch.redirects_per_request": r["redirects_per_request"],
                     "switch.cookie_hits_per_request": r["cookie_hits_per_request"],
                     "switch.cookies_inserted_per_request": r["cookies_inserted_per_request"],
                     "switch.cookies_learned_per_request": r["cookies_learned_per_request"],
                     "switch.cycles_per_request": r["switch_cycles_per_request"],
                     "requests_measured": r["requests"], "ns3_events": r["events"]})
    counters.update({f"drops.{k}": v for k, v in r["drops"].items()})
    result = CaseResult(
        case=cid,
        params={"product": p.platform, "mode": case.mode, "forwarding": case.forwarding, "http": case.http,
                "rules": case.rules, "persistence": case.persistence,
                "cookie_method": p.behaviour.cookie_method_tested if case.persistence == "cookie" else None,
                "clients": case.clients, "servers": case.servers, "threads": case.clients * tb.client.threads,
                "engine": "ns3"},
        metrics={"requests_per_s": r["requests_per_s"], "latency_avg": r["latency_ms"],
                 "throughput_mbps": r["response_mbps"], "switch_utilization": r["switch_utilization"],
                 "switch_us_per_request": p.us(r["switch_cycles_per_request"])},
        bottleneck=bottleneck, counters=counters)
    if open_keys:
        offered = r.get("offered", 0)
        result.params["offered_rps"] = open_keys["offered_rps"]
        result.params["arrivals"] = open_keys["arrivals"]
        result.params["popularity"] = open_keys["popularity"]
        result.params["threads"] = None  # no WebBench threads: requests arrive by themselves
        result.counters.update({"offered_requests": float(offered), "answered_requests": float(r.get("answered", 0)),
                                "refused_requests": float(r.get("refused", 0)),
                                "unanswered_requests": float(r.get("unanswered", 0))})
        result.metrics["offered_rps"] = offered / options.duration_s
        result.metrics["refused_pct"] = 100.0 * r.get("refused", 0) / offered if offered else 0.0
        result.metrics["unanswered_pct"] = 100.0 * r.get("unanswered", 0) / offered if offered else 0.0
        if not offered:
            return result, r["requests_per_s"]
    if r["latency_histogram"]["count"]:
        # the distribution behind latency_avg (issue 15): the closed loop's
        # cycle times, the open loop's response times
        result.metrics.update(percentile_metrics(r, "_us"))
        result.metrics["latency_max_us"] = float(r["latency_max_us"])
    # with the switch's refusals over time by reason (and the open loop's
    # refused and unanswered requests at their arrival)
    result.distributions = latency_distribution(r)
    return result, r["requests_per_s"]


def open_case_id(key: str, mode: str, forwarding: str, rules: int, rps: float) -> str:
    return f"{case_id(key, mode, forwarding, '1.0', rules)}-o{rps:g}"


def run_open_loop(scenario, progress, tb: Testbed, products) -> list[CaseResult]:
    """Every product, rule count and offered rate of an open_loop scenario."""
    cfg: Schema = scenario.config
    ol = cfg.open_loop
    progress.set_total(len(products) * len(cfg.rules) * len(ol.offered_rps))
    out: list[CaseResult] = []
    for path, p in zip(cfg.products, products):
        for rules in cfg.rules:
            for rps in ol.offered_rps:
                cid = open_case_id(product_key(p.platform), cfg.mode, cfg.forwarding, rules, rps)
                case = Case(p, cfg.mode, cfg.forwarding, "1.0", rules, cfg.clients, cfg.servers, cfg.persistence)
                result, _ = case_result_ns3(cid, case, path, tb, cfg.ns3 or Ns3Options(), scenario.seed,
                                            ol.native_keys(rps))
                out.append(result)
                progress.advance(status=cid)
    return out


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    tb = load_testbed(cfg.testbed)
    products = [load_webswitch(p) for p in cfg.products]
    if cfg.open_loop is not None:
        return run_open_loop(scenario, progress, tb, products)
    mixes = cfg.mixes or [None]  # None: one mix of every client PC, no case-id suffix
    progress.set_total(len(products) * len(cfg.http) * len(cfg.rules) * len(mixes))
    out: list[CaseResult] = []
    for path, p in zip(cfg.products, products):
        key = product_key(p.platform)
        cookie = p.behaviour.cookie_method_tested if cfg.persistence == "cookie" else None
        rate: dict[tuple[str, int], float] = {}  # at the largest mix
        for http in cfg.http:
            for rules in cfg.rules:
                for mix in mixes:
                    pcs = cfg.clients if mix is None else mix
                    cid = case_id(key, cfg.mode, cfg.forwarding, http, rules, mix, cookie)
                    case = Case(p, cfg.mode, cfg.forwarding, http, rules, pcs, cfg.servers, cfg.persistence)
                    if cfg.engine == "ns3":
                        result, rate[http, rules] = case_result_ns3(cid, case, path, tb, cfg.ns3 or Ns3Options(),
                                                                    scenario.seed)
                    else:
                        result, rate[http, rules] = case_result(cid, case, tb)
                    out.append(result)
                    progress.advance(status=cid)
        # the paper's ratios between cases of one product (figures 9 and 11)
        if len(cfg.http) == 2:
            for rules in cfg.rules:
                gain = (rate["1.1", rules] / rate["1.0", rules] - 1.0) * 100.0
                what = "cookie" if cookie else f"r{rules}"
                out.append(CaseResult(case=f"{key}-{cfg.mode}-{what}-http11-gain",
                                      params={"product": p.platform, "rules": rules},
                                      metrics={"gain": gain}))
        if len(cfg.rules) >= 2:
            lo, hi = min(cfg.rules), max(cfg.rules)
            for http in cfg.http:
                drop = (1.0 - rate[http, hi] / rate[http, lo]) * 100.0
                out.append(CaseResult(case=f"{key}-{cfg.mode}-http{http.replace('.', '')}-rules-drop",
                                      params={"product": p.platform, "http": http, "rules_low": lo, "rules_high": hi},
                                      metrics={"drop": drop}))
    return out


def unread_assumption(scenario, profile, dotted: str) -> bool:
    """True when the assumed number `dotted` of `profile` cannot reach a
    single switch's run: the failover advertisement interval is read only by
    a redundant pair (kind webswitch_pair). Interval runs skip varying it
    (routertwin.validation.intervals.scenario_inputs)."""
    return dotted == "behaviour.failover_advert_interval_s"
