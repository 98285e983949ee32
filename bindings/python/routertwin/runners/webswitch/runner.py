"""The runner contract of kind webswitch: check (load time) and run."""

from __future__ import annotations

from routertwin.results import CaseResult
from routertwin.runners.webswitch.model import Case, evaluate
from routertwin.runners.webswitch.profiles import load_webswitch
from routertwin.runners.webswitch.schema import Schema
from routertwin.runners.webswitch.testbed import load_testbed
from routertwin.scenario_loader import FieldError


def product_key(platform: str) -> str:
    """The case-id prefix of a product: its profile name without 'nctu-'."""
    return platform.removeprefix("nctu-")


def check(scenario) -> None:
    """Every profile loads; in mode l7 every product does URL switching,
    and in mode l4 with dr every product offers direct routing (table 4)."""
    cfg: Schema = scenario.config
    load_testbed(cfg.testbed)
    seen: dict[str, int] = {}
    for i, path in enumerate(cfg.products):
        p = load_webswitch(path)
        if p.platform in seen:
            raise FieldError(("products", i), f"product '{p.platform}' is listed twice")
        seen[p.platform] = i
        if cfg.mode == "l7" and not p.features.l7.url_switching:
            raise FieldError(("products", i), f"{p.product.vendor} {p.product.name} does no URL switching "
                                              "(its features.l7.url_switching): it has no L7 mode")
        if cfg.mode == "l4" and cfg.forwarding == "dr" and not p.features.l4.direct_routing:
            raise FieldError(("products", i), f"{p.product.vendor} {p.product.name} offers no direct routing "
                                              "(its features.l4.direct_routing)")


def case_id(key: str, mode: str, forwarding: str, http: str, rules: int) -> str:
    head = f"{key}-{mode}-{forwarding}-http{http.replace('.', '')}"
    return head if mode == "l4" else f"{head}-r{rules}"


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    tb = load_testbed(cfg.testbed)
    products = [load_webswitch(p) for p in cfg.products]
    progress.set_total(len(products) * len(cfg.http) * len(cfg.rules))
    out: list[CaseResult] = []
    for p in products:
        key = product_key(p.platform)
        rate: dict[tuple[str, int], float] = {}
        for http in cfg.http:
            for rules in cfg.rules:
                case = Case(p, cfg.mode, cfg.forwarding, http, rules, cfg.clients, cfg.servers)
                r = evaluate(case, tb)
                sol = r.solution
                rate[http, rules] = r.requests_per_s
                cid = case_id(key, cfg.mode, cfg.forwarding, http, rules)
                counters = {f"utilization.{k}": v for k, v in sol.utilization.items()
                            if k.startswith(("switch", "uplink")) or k in (sol.bottleneck,)}
                counters.update({"switch.packets_per_request": r.work.packets,
                                 "switch.control_packets_per_request": r.work.control_packets,
                                 "switch.connections_per_request": r.work.connections,
                                 "switch.rules_per_request": r.work.rules,
                                 "switch.redirects_per_request": r.work.redirects,
                                 "switch.cycles_per_request": r.work.cycles})
                out.append(CaseResult(
                    case=cid,
                    params={"product": p.platform, "mode": cfg.mode, "forwarding": cfg.forwarding, "http": http,
                            "rules": rules, "clients": cfg.clients, "servers": cfg.servers,
                            "threads": cfg.clients * tb.client.threads},
                    metrics={"requests_per_s": r.requests_per_s, "latency_avg": r.latency_ms,
                             "throughput_mbps": r.response_mbps,
                             "switch_utilization": sol.utilization["switch.cpu"],
                             "switch_us_per_request": p.us(r.work.cycles)},
                    bottleneck=sol.bottleneck, counters=counters))
                progress.advance(status=cid)
        # the paper's ratios between cases of one product (figures 9 and 11)
        if len(cfg.http) == 2:
            for rules in cfg.rules:
                gain = (rate["1.1", rules] / rate["1.0", rules] - 1.0) * 100.0
                out.append(CaseResult(case=f"{key}-{cfg.mode}-r{rules}-http11-gain",
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
