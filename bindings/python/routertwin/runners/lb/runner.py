"""The runner contract of kind lb: check (load time) and run."""

from __future__ import annotations

import math

from routertwin.methods.tolly import fit_line, run_to_saturation
from routertwin.results import CaseResult
from routertwin.runners.lb.metrics import UNIT_METRIC
from routertwin.runners.lb.native import SYN_FRAME_BYTES, call, fill_config, step_config
from routertwin.runners.lb.profiles import load_platform, load_prices
from routertwin.runners.lb.schema import Case, Schema
from routertwin.scenario import FieldError


def check(scenario) -> None:
    """The profiles load; every case's config is accepted by the native
    runner's key checks (a flood above the line rate of its ports, say),
    blamed on the case key to change."""
    cfg: Schema = scenario.config
    plat = load_platform(cfg.platform)
    prices = load_prices(cfg.fitted)
    for i, c in enumerate(cfg.cases):
        if c.cores is not None and c.cores > 4096:
            raise FieldError(("cases", i, "cores"), "at most 4096 cores")
        rates = [c.rate] if c.method == "step" else (c.steps or []) if c.method == "tolly" else []
        for j, r in enumerate(rates):
            try:
                _validate(step_config(cfg, plat, prices, scenario.seed, c, r))
            except ValueError as exc:
                loc = ("cases", i, "rate") if c.method == "step" else ("cases", i, "steps", j)
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
    unit = UNIT_METRIC[cfg.workload]
    m = {
        "rate": out["completed_rate"], unit: out["completed_rate"], "offered_rate": out["offered_rate"],
        "cpu_util": out["cpu_mean_pct"], "cpu_max": out["cpu_max_pct"], "cpu_closed_form": out["cpu_closed_form_pct"],
        "cycles_per_unit": out["cycles_per_unit"], "packets_per_unit": out["packets_per_unit"],
        "throughput_gbps": out["delivered_bps"] / 1e9, "connections_end": float(out["connections_end"]),
    }
    for i, u in enumerate(out["core_utilization_pct"]):
        m[f"core{i}_util"] = u
    if cfg.workload == "synflood":
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
    return {"workload": cfg.workload if c.method != "fill" else "fill", "method": c.method,
            "cores": keys["num_cores"], "syn_cookies": keys["syn_cookies"], "platform": plat.platform, **extra}


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    plat = load_platform(cfg.platform)
    prices = load_prices(cfg.fitted)
    progress.set_total(len(cfg.cases))
    results: list[CaseResult] = []
    for c in cfg.cases:
        if c.method == "fill":
            keys = fill_config(cfg, plat, prices, scenario.seed, c)
            out = call(keys, source=scenario.path, case_id=c.id)
            m = {"max_concurrent": float(out["max_concurrent"]), "concurrent": float(out["max_concurrent"]),
                 "connections_per_core": float(out["fill_connections_per_core"])}
            results.append(CaseResult(c.id, _params(cfg, plat, c, keys, sessions_per_core=keys["sessions_per_core"]),
                                      m, "session table", {"refused_full": float(out["refused_full"])}))
        elif c.method == "remap":
            results.append(_remap(scenario, plat, c))
        elif c.method == "step":
            keys = step_config(cfg, plat, prices, scenario.seed, c, c.rate)
            out = call(keys, source=scenario.path, case_id=c.id)
            m, bottleneck, drops = _step_metrics(cfg, plat, out, keys)
            results.append(CaseResult(c.id, _params(cfg, plat, c, keys, rate=c.rate, phase="step"), m, bottleneck,
                                      drops))
        else:
            results.extend(_tolly(scenario, cfg, plat, prices, c, progress))
        progress.advance(status=c.id)
    return results


def _remap(scenario, plat, c: Case) -> CaseResult:
    """Connections moved when server 0 of a pool fails (model/lb/helper/lb-remap.h)."""
    from routertwin import _core
    from routertwin.runners._shared.native import call_native

    keys = {"scheduler": c.scheduler or plat.scheduler, "servers": c.servers or 96, "failed": 0,
            "keys": c.keys or 100000, "seed": scenario.seed}
    out = call_native(_core.lb_remap, keys, source=scenario.path, case_id=c.id, engine="lb_remap")
    m = {"moved": float(out["moved"]), "moved_pct": 100.0 * out["moved"] / out["keys"],
         "on_failed_pct": 100.0 * out["on_failed"] / out["keys"]}
    if out["table_size"]:
        m["table_changes_pct"] = 100.0 * out["table_changes"] / out["table_size"]
    return CaseResult(c.id, {"method": "remap", "scheduler": keys["scheduler"], "servers": keys["servers"],
                             "keys": keys["keys"], "keyed": out["keyed"]}, m, "", {})


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
                                    m, bottleneck, drops))
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
                                                                         phase="saturation"), m, b, drops))
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
