"""The runner contract of kind pipeline: check (load time) and run."""

from __future__ import annotations

from routertwin.results import CaseResult
from routertwin.runners.pipeline.analytic import analytic
from routertwin.runners.pipeline.native import engine_config, run_packet
from routertwin.runners.pipeline.profiles import load_profiles
from routertwin.runners.pipeline.resolve import CaseError, resolve_case
from routertwin.runners.pipeline.schema import Schema, case_id, case_locs, expand_cases
from routertwin.scenario_loader import FieldError


# method both: the closed form's percentiles and loss under these names beside the engine's
ANALYTIC_BESIDE = {"latency_p50_us": "latency_analytic_p50_us", "latency_p99_us": "latency_analytic_p99_us",
                   "latency_p999_us": "latency_analytic_p999_us", "loss_pct": "loss_analytic_pct"}


def arrival_process(cfg: Schema) -> str:
    """The arrival process the closed form is told: the scenario's
    `arrivals.process` (constant by default), or "flow_level" when flows of
    random sizes make the packets (their starts follow the process)."""
    if cfg.flow_mix is not None and cfg.flow_mix.sizes != "none":
        return "flow_level"
    return cfg.arrivals.process if cfg.arrivals is not None else "constant"


def check(scenario) -> None:
    """Load-time checks (routertwin.scenario_loader calls them before any scenario
    runs): the profiles load, and every case resolves and has an analytic
    answer on them -- fitted costs present, cores within the platform's
    count, contention computable -- and, at packet level, is one frame size.
    Errors point at the scenario key to change (e.g. `sweep.cores[1]`)."""
    cfg: Schema = scenario.config
    plat, wl, fitted = load_profiles(cfg)
    for i, c in enumerate(expand_cases(cfg)):
        locs = case_locs(cfg, i, c)
        try:
            r = resolve_case(cfg, c, plat, wl, fitted)
            analytic(r, cfg.contention, arrival_process(cfg))
            if cfg.method != "analytic":
                engine_config(r, cfg, scenario.seed)
        except CaseError as exc:
            raise FieldError(locs.get(exc.key, (exc.key,)), str(exc)) from None


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    plat, wl, fitted = load_profiles(cfg)
    cases = expand_cases(cfg)
    ids = [case_id(c) for c in cases]
    progress.set_total(len(cases))
    out = []
    for c, cid in zip(cases, ids):
        r = resolve_case(cfg, c, plat, wl, fitted)
        res = analytic(r, cfg.contention, arrival_process(cfg))
        if cfg.method in ("packet", "both"):
            pkt = run_packet(r, cfg, seed=scenario.seed, source=scenario.path, case_id=cid)
            if cfg.method == "both":
                pkt.metrics["pps_analytic"] = res.metrics["pps"]
                pkt.metrics["latency_analytic_us"] = res.metrics["latency_avg_us"]
                # the closed form's distribution beside the engine's, where it has one
                for name in ANALYTIC_BESIDE:
                    if name in res.metrics:
                        pkt.metrics[ANALYTIC_BESIDE[name]] = res.metrics[name]
                if "latency_histogram" in res.distributions:
                    pkt.distributions["analytic_latency_histogram"] = res.distributions["latency_histogram"]
            res = pkt
        res.case = cid
        res.params = {
            "platform": plat.platform, "workload": wl.workload, "frame": c.frame, "cores": c.cores,
            "flows": r.flows, "tag_type": r.tag_type, "offered_load": r.offered_load,
            "port_gbps": plat.port.rate_bps / 1e9, "method": cfg.method,
        }
        if r.section_s > 0:
            res.params["flow_section_cycles"] = r.section_s * plat.cores.clock_hz
        out.append(res)
        progress.advance(status=cid)
    return out
