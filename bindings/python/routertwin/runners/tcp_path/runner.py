"""The runner contract of kind tcp_path: check (load time) and run."""

from __future__ import annotations

import statistics

from routertwin.distributions import rtt_distribution
from routertwin.results import CaseResult
from routertwin.runners.tcp_path.analytic import ceiling, segment_bytes
from routertwin.runners.tcp_path.native import call, config, merged_tcp, resolve
from routertwin.runners.tcp_path.profiles import load_platform
from routertwin.runners.tcp_path.schema import Schema
from routertwin.scenario_loader import FieldError


def check(scenario) -> None:
    """The platform loads, every type the path names exists in it (or in
    the scenario's own link_types / node_types), and the path holds to the
    native runner's rules, each blamed on the path entry to change."""
    cfg: Schema = scenario.config
    plat = load_platform(cfg.platform)
    nodes, links = resolve(cfg, plat)
    nat_box = None
    for i, (name, t) in enumerate(nodes):
        if t.nat != "dnat":
            continue
        if i in (0, len(nodes) - 1):
            raise FieldError(("path", i, "type"), f"'{cfg.path[i].type}' does NAT: the sender and the receiver "
                                                  "cannot be the NAT box")
        if nat_box is not None and name != nat_box:
            raise FieldError(("path", i, "type"), f"at most one box does DNAT ('{nat_box}' already does)")
        nat_box = name
    seen: dict[tuple, str] = {}
    for i, (link_name, wire, t) in enumerate(links, start=1):
        if t.rate_bps == 0 and t.per_frame_us == 0:
            raise FieldError(("path", i, "link"), f"link type '{link_name}' has neither rate_bps nor per_frame_us: "
                                                  "it would serve in zero time")
        key = (wire or "", *sorted((nodes[i - 1][0], nodes[i][0])))
        if seen.setdefault(key, link_name) != link_name:
            raise FieldError(("path", i, "link"), f"this wire is already of link type '{seen[key]}'")
    for i, h in enumerate(cfg.path):
        for j in range(i):
            if cfg.path[j].node == h.node and nodes[j][1].nat != nodes[i][1].nat:
                raise FieldError(("path", i, "type"), f"box '{h.node}' appears with and without NAT")


def simulated_file_bytes(cfg: Schema) -> int:
    t = cfg.transfer
    return t.file_bytes if t.simulate == "full" else min(t.file_bytes, t.window_bytes)


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    plat = load_platform(cfg.platform)
    tcp = merged_tcp(cfg, plat)
    nodes, links = resolve(cfg, plat)
    t = cfg.transfer
    progress.set_total(1)
    duration = t.duration_s is not None
    sim_bytes = simulated_file_bytes(cfg)
    case_id = "duration" if duration else "ixchariot"
    out = call(config(cfg, plat, scenario.seed, sim_bytes, t.records), source=scenario.path, case_id=case_id)
    if not out["completed"]:
        from routertwin.runners._shared.native import case_error

        raise case_error(scenario.path, case_id,
                         f"the transfer did not finish in {out['simulated_seconds']:.0f} simulated seconds "
                         f"({len(out['record_seconds'])} of {t.records} records)")
    servers = out["servers"]
    busiest = max(servers, key=lambda s: s["utilization"])
    analytic = ceiling(nodes, links, tcp, nat_seconds=out["nat_ns_per_packet"] * 1e-9)
    metrics = {
        "ceiling_mbps": analytic.goodput_bps / 1e6,
        "rtt_mean_ms": out["rtt_mean_s"] * 1e3,
        "rtt_min_ms": out["rtt_min_s"] * 1e3,
        **{f"rtt_{q}_ms": out[f"rtt_{q}_us"] * 1e-3 for q in ("p50", "p99", "p999", "max")},
        "recoveries": float(out["recoveries"]),
        "timeouts": float(out["timeouts"]),
        "bottleneck_utilization": busiest["utilization"],
        "nat_ns_per_packet": out["nat_ns_per_packet"],
    }
    if duration:
        metrics["goodput_mbps"] = out["duration_goodput_bps"] / 1e6
        metrics["simulated_bytes"] = out["duration_goodput_bps"] * t.duration_s / 8
    else:
        # Each record's response time. In window mode each simulated record
        # (its own start-up: slow start and the first losses in record 1,
        # the confirm's round trip in every one) is extended to file_bytes
        # at the connection's steady goodput: the second half of the last
        # record, which is past every start-up transient when records >= 2.
        steady = [b * 8 / s for b, s in zip(out["half_bytes"], out["half_seconds"])]
        rest = t.file_bytes - sim_bytes
        times = [s + rest * 8 / steady[-1] for s in out["record_seconds"]]
        rates = [t.file_bytes * 8 / s / 1e6 for s in times]
        metrics.update({
            "throughput_mbps": statistics.fmean(rates), "throughput_min_mbps": min(rates),
            "throughput_max_mbps": max(rates), "response_time_s": statistics.fmean(times),
            "response_time_min_s": min(times), "response_time_max_s": max(times),
            "steady_goodput_mbps": steady[-1] / 1e6, "simulated_bytes": float(sim_bytes * t.records),
        })
    counters = {"nat_connections": float(out["nat_connections"]), "simulated_seconds": out["simulated_seconds"]}
    for s in servers:
        for reason in ("queue_full", "random_loss", "nat"):
            if s[f"drops_{reason}"]:
                counters[f"{s['name']}: {reason}"] = float(s[f"drops_{reason}"])
        counters[f"{s['name']}: utilization"] = s["utilization"]
    for name, v in out["nat_ops_per_packet"].items():
        counters[f"nat ops/packet: {name}"] = v
    params = {
        "path": " > ".join(h.node for h in cfg.path), "file_bytes": t.file_bytes, "records": t.records,
        "simulate": t.simulate, "simulated_file_bytes": sim_bytes, "mss": segment_bytes(tcp),
        "congestion": tcp.congestion, "ack_every_segments": tcp.ack_every_segments,
        "ceiling_server": analytic.server,
    }
    if duration:
        params["duration_s"] = t.duration_s
    bottleneck = f"{busiest['name']} ({100 * busiest['utilization']:.1f} % busy)"
    progress.advance(status=case_id)
    return [CaseResult(case_id, params, metrics, bottleneck, counters,
                       distributions=rtt_distribution(out))]


def unread_assumption(scenario, profile, dotted: str) -> bool:
    """True when the assumed number `dotted` of `profile` cannot reach this
    scenario's run: the run reads a node or link type's numbers only when
    its path names that type (native.config), so the numbers of the other
    types are unread. Interval runs skip varying them
    (routertwin.validation.intervals.scenario_inputs)."""
    parts = dotted.split(".")
    if len(parts) < 3 or parts[0] not in ("node_types", "link_types"):
        return False
    cfg: Schema = scenario.config
    used = {h.type for h in cfg.path} if parts[0] == "node_types" else {h.link for h in cfg.path[1:]}
    return parts[1] not in used
