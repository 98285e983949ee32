"""The lb case at packet (descriptor) level: the run_lb config dict
(model/lb/helper/lb-scenario.h documents every key) and the call."""

from __future__ import annotations

from pathlib import Path

from routertwin.runners.lb.profiles import HEADER_BYTE_COUNTERS, LbPlatform
from routertwin.runners.lb.schema import Case, Schema

# Seed 000, 测试方法 每秒第4层交易数: "模拟96个用户，每个用户20条TCP连接" (96 users,
# 20 TCP connections each): the IxLoad population of the HTTP/1.1 tests.
IXLOAD_USERS = 96
IXLOAD_CONNS_PER_USER = 20
# 64-byte SYN frames (seed 000, DDoS SYN泛滥攻击: "64字节SYN数据包") and the
# IEEE 802.3 preamble+SFD and inter-frame gap: 84 bytes on the wire each.
SYN_FRAME_BYTES = 64


def base_config(cfg: Schema, plat: LbPlatform, prices: dict[str, float], seed: int, case: Case) -> dict:
    """Keys every run of the case shares (not the rate)."""
    counter_prices = {k: float(v) for k, v in plat.prices.items()}
    for k in HEADER_BYTE_COUNTERS:
        counter_prices[k] = counter_prices.get(k, 0.0) + prices["header_byte_cycles"]
    return {
        "seed": seed,
        "num_cores": case.cores or plat.cores,
        "clock_hz": plat.clock_hz,
        "services": plat.services,
        "servers_per_service": plat.servers_per_service,
        "scheduler": plat.scheduler,
        "forwarding": case.forwarding or plat.forwarding,
        "syn_cookies": cfg.syn_cookies if case.syn_cookies is None else case.syn_cookies,
        "fixed_cycles_per_packet": prices["fixed_cycles_per_frame"],
        "connection_setup_cycles": prices["connection_setup_cycles"],
        "counter_prices": counter_prices,
        "ports": plat.ports,
        "port_bit_rate": plat.port_rate_bps,
        "core_queue_depth": plat.core_queue_depth,
    }


# The workload each RFC 3511 / 9411 method offers, whatever the scenario's.
METHOD_WORKLOAD = {"max-cps": "http10", "max-tps": "http11"}


def step_config(cfg: Schema, plat: LbPlatform, prices: dict[str, float], seed: int, case: Case,
                rate: float) -> dict:
    keys = base_config(cfg, plat, prices, seed, case)
    keys.update({
        # rate tests keep at most a few thousand connections open: a small
        # table has the same (near-empty) probe counts as the ADX's 8M
        "sessions_per_core": case.sessions_per_core or cfg.rate_table_sessions_per_core,
        "workload": METHOD_WORKLOAD.get(case.method, cfg.workload),
        "rate": float(rate),
        "legit_rate": float(cfg.legit_rate if case.legit_rate is None else case.legit_rate),
        "flood_ports": cfg.flood_ports,
        "users": IXLOAD_USERS,
        "conns_per_user": IXLOAD_CONNS_PER_USER,
        "request_bytes": plat.request_bytes,
        "response_bytes": plat.response_bytes if case.response_bytes is None else case.response_bytes,
        "step_gap_s": plat.step_gap_us * 1e-6,
        "arrivals": cfg.arrivals,
        "duration_s": cfg.duration_us * 1e-6,
        "warmup_s": cfg.warmup_us * 1e-6,
        "time_wait_s": cfg.time_wait_s,
        "fin_wait_s": cfg.fin_wait_s,
        "occupancy_sample_s": cfg.occupancy_sample_us * 1e-6,
        "level": cfg.level,
        "link_delay_s": cfg.link_delay_ns * 1e-9,
    })
    for side, sizes in (("request", cfg.request_sizes), ("response", cfg.response_sizes)):
        if sizes is not None:
            keys.update(sizes.native_keys(side))
    keys["mss"] = cfg.mss
    if cfg.tcp_window is not None:
        keys.update(cfg.tcp_window.native_keys())
    if cfg.flow_mix is not None:
        keys.update(cfg.flow_mix.native_keys())
    if cfg.trace is not None:
        keys.update(trace_file=str(cfg.trace.file), trace_rescale=cfg.trace.rescale)
    if cfg.arrivals == "onoff":
        keys.update(burst_mean_units=cfg.burst_mean_units, burst_peak_ratio=cfg.burst_peak_ratio)
    elif cfg.arrivals == "mmpp":
        keys.update(mmpp_rate_ratio=cfg.mmpp_rate_ratio, mmpp_high_fraction=cfg.mmpp_high_fraction,
                    mmpp_cycle_s=cfg.mmpp_cycle_us * 1e-6)
    return keys


def fill_config(cfg: Schema, plat: LbPlatform, prices: dict[str, float], seed: int, case: Case,
                limit: int = 0, validate: bool = False) -> dict:
    """One core's shard filled until it refuses (or `limit` connections);
    with `validate`, a data segment then goes over every connection held."""
    keys = base_config(cfg, plat, prices, seed, case)
    keys.update({"workload": "fill", "sessions_per_core": case.sessions_per_core or plat.sessions_per_core,
                 "request_bytes": plat.request_bytes, "fill_limit": int(limit), "fill_validate": validate})
    return keys


# Keys of a fill config (fill_config) that the fill provably does not read:
# model/lb/helper/lb-scenario.cc RunFill offers its SYN, SYN-ACK and ACK to the
# balancer's C core directly (L4Balancer::Process), never to the cores' queues
# (core_queue_depth) or the egress line (ports x port_bit_rate), which only
# MakeDevice's PipelineEngine reads, and nothing in it draws a random number
# (seed). Interval runs that differ only there share one result (NativeMemo):
# adx-conc's replications and its core_queue_depth variants.
FILL_UNREAD = ("seed", "core_queue_depth", "ports", "port_bit_rate")


def call(config: dict, *, source: Path | None, case_id: str) -> dict:
    from routertwin import _core
    from routertwin.runners._shared.native import call_native

    unread = FILL_UNREAD if config["workload"] == "fill" else ()
    return call_native(_core.run_lb, config, source=source, case_id=case_id, engine="run_lb", unread=unread)
