"""The runner contract of kind router: check (load time) and run, each case
one RFC 2544 method over the native model."""

from __future__ import annotations

from routertwin.errors import ScenarioError
from routertwin.methods import rfc2544
from routertwin.results import CaseResult
from routertwin.runners.router.metrics import case_result
from routertwin.runners.router.platform import load_profiles
from routertwin.runners.router.schema import Case, Schema, case_trace, ip_mix, router_arrival_keys, trial_too_long
from routertwin.runners.router.tester import RouterTester
from routertwin.scenario_loader import FieldError


def check(scenario) -> None:
    """Load-time checks that need the platform profile and the fitted file:
    both load (their own errors name their file and line), generated routes
    fit in the IPv4 space after the platform's first prefix, and a packet-mode
    run fits in memory."""
    cfg: Schema = scenario.config
    plat, _ = load_profiles(cfg)
    for i, case in enumerate(cfg.cases):
        if case.routes > plat.free_slash24s():
            raise FieldError(("cases", i, "routes"),
                             f"{case.routes} routes do not fit: consecutive /24s from the platform's "
                             f"route_first_prefix {plat.route_first_prefix} give at most {plat.free_slash24s()}")
        trace = case_trace(cfg, case)
        if trace is not None and trace.ports is not None:
            for port in trace.ports:
                if not 0 <= port < plat.ports:
                    raise FieldError(("traces", case.ip_mix, "ports", port),
                                     f"port {port} is not one of the platform's ports 0..{plat.ports - 1}")
        dur = case.duration_s or cfg.duration_s
        mix = ip_mix(cfg, case)
        smallest = min(b for b, _ in mix) if mix else (case.sizes[0] if case.sizes else case.ip_bytes)
        too_long = trial_too_long(plat, case.mode or cfg.mode, dur, smallest)
        if too_long:
            raise FieldError(("cases", i, "duration_s") if case.duration_s else ("duration_s",),
                             too_long + ": shorten duration_s or use mode: steady")
        too_long = cfg.packet_window_s and trial_too_long(plat, "packet", cfg.packet_window_s, smallest)
        if too_long:
            raise FieldError(("packet_window_s",), too_long + ": shorten packet_window_s")


def _params(case: Case, ip_bytes: int, load: float, duration_s: float, mode: str) -> dict:
    return {
        "method": case.method, "ip_bytes": case.ip_mix or ip_bytes, "routes": case.routes,
        "routes_as_destinations": case.routes_as_destinations, "offered_load": load,
        "duration_s": duration_s, "mode": mode,
    }


def run(scenario, progress) -> list[CaseResult]:
    cfg: Schema = scenario.config
    plat, pipe_us = load_profiles(cfg)
    out: list[CaseResult] = []
    progress.set_total(len(cfg.cases))
    for case in cfg.cases:
        mode = case.mode or cfg.mode
        dur = case.duration_s or cfg.duration_s

        mix = ip_mix(cfg, case)

        def tester(size: int, mix=None) -> RouterTester:
            return RouterTester(plat, case, pipeline_latency_us=pipe_us, ip_bytes=size, duration_s=dur,
                                mode=mode, seed=scenario.seed, progress=progress, source=scenario.path,
                                mix=mix, mix_order=cfg.mix_order, trace=case_trace(cfg, case),
                                arrivals=router_arrival_keys(cfg.arrivals, cfg.flow_mix),
                                packet_window_s=cfg.packet_window_s)

        dev = tester(min(b for b, _ in mix), mix) if mix else tester(case.ip_bytes)
        if case.method == "frmol":
            t = rfc2544.frmol(dev)
            out.append(case_result(case.case, _params(case, case.ip_bytes, 1.0, dur, mode), t,
                                   window=dev.packet_window(1.0)))
        elif case.method == "load":
            t = dev(case.offered_load)
            out.append(case_result(case.case, _params(case, case.ip_bytes, case.offered_load, dur, mode), t,
                                   window=dev.packet_window(case.offered_load)))
        elif case.method == "throughput":
            s = rfc2544.throughput(dev, resolution=case.resolution)
            if s.trial is None:
                raise ScenarioError(f"case '{case.case}': no offered load is loss-free")
            out.append(case_result(case.case, _params(case, case.ip_bytes, s.load, dur, mode), s.trial,
                                   {"throughput_load": s.load, "trials": float(len(s.trials))},
                                   window=dev.packet_window(s.load)))
        elif case.method == "ndr_pdr":
            r = rfc2544.ndr_pdr(dev, resolution=case.resolution, pdr_loss_ratio=case.pdr_loss_pct / 100)
            for name, s in (("ndr", r.ndr), ("pdr", r.pdr)):
                if s.trial is None:
                    raise ScenarioError(f"case '{case.case}': no {name.upper()} load found")
                out.append(case_result(f"{case.case}-{name}", _params(case, case.ip_bytes, s.load, dur, mode),
                                       s.trial, {f"{name}_load": s.load}, window=dev.packet_window(s.load)))
        elif case.method == "loss_curve":
            for t in rfc2544.frame_loss_curve(dev, step=case.step):
                pct = round(100 * t.offered_load, 6)
                out.append(case_result(f"{case.case}-{pct:g}pct",
                                       _params(case, case.ip_bytes, t.offered_load, dur, mode), t,
                                       window=dev.packet_window(t.offered_load)))
        elif case.method == "size_sweep":
            first, last = case.sizes
            sweep = rfc2544.frame_size_sweep(tester, range(first, last + 1))
            for size, t in sweep.trials:
                first_ok = float(sweep.first_zero_loss_bytes or 0)
                out.append(case_result(f"{case.case}-{size}b", _params(case, size, 1.0, dur, mode), t,
                                       {"first_zero_loss_bytes": first_ok}, window=tester(size).packet_window(1.0)))
        progress.advance(1, status=f"{case.case} done")
    return out
