"""A router case as a device behind an RFC 2544 tester (the trial protocol
of routertwin.methods.tester): each trial one run of the native model."""

from __future__ import annotations

from pathlib import Path

from routertwin.distributions import loss_clustering, percentile_metrics, queue_metrics, router_distributions
from routertwin.methods import rfc2544
from routertwin.methods.tester import TesterCase
from routertwin.runners._shared.native import case_error, trial_result
from routertwin.runners.router.analytic import max_frame_rate
from routertwin.runners.router.metrics import FLOW_CHURN, TESTER_WAIT
from routertwin.runners.router.native import native_config, run_native
from routertwin.runners.router.platform import RouterPlatform, load_profiles
from routertwin.runners.router.schema import Case, RouterTrace, Schema, router_arrival_keys, trial_too_long


class RouterTester:
    """The model as an RFC 2544 device: trial(load) -> TrialResult."""

    def __init__(self, plat: RouterPlatform, case: Case, *, pipeline_latency_us: float, ip_bytes: int,
                 duration_s: float, mode: str, seed: int, progress=None, source: Path | None = None,
                 mix: list[tuple[int, float]] | None = None, mix_order: str = "random",
                 trace: RouterTrace | None = None, arrivals: dict | None = None,
                 packet_window_s: float | None = None):
        self.plat, self.case, self.pipeline_latency_us = plat, case, pipeline_latency_us
        self.packet_window_s = packet_window_s  # steady state: also a packet-level window of this length
        self.ip_bytes, self.duration_s, self.mode, self.seed = ip_bytes, duration_s, mode, seed
        self.mix, self.mix_order = mix, mix_order  # an IP mix: ip_bytes is its smallest size
        self.trace = trace  # a trace replayed (mix is then its sizes)
        self.arrivals = arrivals or {}  # native keys of a random arrival process (router_arrival_keys)
        self.progress = progress
        self.source = source  # the scenario file, named in errors

    def __call__(self, load: float) -> rfc2544.TrialResult:
        # Trials of `routertwin rfc2544` (--duration, bursts, other sizes) bypass
        # the scenario's load-time check: hold each to the same limits.
        too_long = trial_too_long(self.plat, self.mode, self.duration_s, self.ip_bytes)
        if too_long:
            raise case_error(self.source, self.case.case, too_long)
        r = run_native(self._config(load, self.duration_s, self.mode), source=self.source, case_id=self.case.case)
        if self.progress is not None:
            self.progress.advance(0, status=f"{self.case.case} {self.ip_bytes}B load {load:.4f}")
        extra = {k: r[k] for k in ("tx_pps", "rx_pps", "theoretical_pps", "tx_pct", "rx_pct",
                                    "throughput_gbps", "mean_ip_bytes", "mean_ingress_escapes", "mean_egress_escapes",
                                    "fabric_load", "lookup_load", "bottleneck")}
        extra.update({k: r[k] for k in TESTER_WAIT + FLOW_CHURN if k in r})
        extra["tx_fps"], extra["rx_fps"] = r["tx_pps"], r["rx_pps"]  # the tester protocol's names
        extra["drops"] = dict(r["drops"])
        extra.update(percentile_metrics(r))
        extra["distributions"] = router_distributions(r)
        return trial_result(load, r, extra)

    def _config(self, load: float, duration_s: float, mode: str) -> dict:
        cfg = native_config(self.plat, self.case, pipeline_latency_us=self.pipeline_latency_us,
                            load=load, ip_bytes=self.ip_bytes, duration_s=duration_s, mode=mode, seed=self.seed,
                            mix=self.mix, mix_order=self.mix_order, trace=self.trace)
        cfg.update(self.arrivals)
        return cfg

    def packet_window(self, load: float) -> dict | None:
        """A steady-state trial's per-packet distributions: the same trial
        (case, load, seed) at packet level over the first `packet_window_s`
        of tester time, from empty queues. The steady-state mode histograms
        Lindley blocks at their mean wait and keeps no queue lengths; this
        window has every packet's latency, each egress port's queue over
        time and the drops per port and time bin -- of its own window only
        (a queue that grows over the whole run, like the T640's egress
        random walk over 30 s, has not grown yet). None in packet mode or
        without a window: {"duration_s", "metrics", "distributions"}."""
        if not self.packet_window_s or self.mode == "packet":
            return None
        too_long = trial_too_long(self.plat, "packet", self.packet_window_s, self.ip_bytes)
        if too_long:
            raise case_error(self.source, self.case.case, "packet_window_s: " + too_long)
        r = run_native(self._config(load, self.packet_window_s, "packet"), source=self.source,
                       case_id=self.case.case)
        dist = router_distributions(r)
        metrics = {"latency_min": float(r["latency_min_us"]), "latency_avg": float(r["latency_avg_us"]),
                   "latency_max": float(r["latency_max_us"]), **percentile_metrics(r),
                   "lost_packets": float(r["lost_packets"]), **loss_clustering(dist["loss_timeline"])}
        if "egress_queue" in dist:
            metrics.update(queue_metrics(dist["egress_queue"], "egress_queue"))
        return {"duration_s": self.packet_window_s, "metrics": metrics, "distributions": dist}


def testers(scenario, *, duration_s: float | None = None) -> list[TesterCase]:
    """Each case as a device behind an RFC 2544 tester (routertwin.methods.tester):
    the case's routes, destinations and mode, at any IP packet size. A burst
    of N frames is one trial at 100 % load lasting N / max_frame_rate."""
    cfg: Schema = scenario.config
    plat, pipe_us = load_profiles(cfg)
    out = []
    for case in cfg.cases:
        mode = case.mode or cfg.mode
        dur = duration_s or case.duration_s or cfg.duration_s

        def trial_at(size: int, seed: int, case=case, mode=mode, dur=dur) -> RouterTester:
            return RouterTester(plat, case, pipeline_latency_us=pipe_us, ip_bytes=size, duration_s=dur,
                                mode=mode, seed=seed, source=scenario.path,
                                arrivals=router_arrival_keys(cfg.arrivals, cfg.flow_mix))

        def burst_at(size: int, seed: int, case=case, mode=mode):
            def burst(frames: int) -> rfc2544.TrialResult:
                dev = RouterTester(plat, case, pipeline_latency_us=pipe_us, ip_bytes=size,
                                   duration_s=frames / max_frame_rate(plat, size), mode=mode, seed=seed,
                                   source=scenario.path,
                                   arrivals=router_arrival_keys(cfg.arrivals, cfg.flow_mix))
                return dev(1.0)
            return burst

        routes = f"{case.routes} routes" + (" as destinations" if case.routes_as_destinations else "")
        out.append(TesterCase(
            case=case.case, size=case.ip_bytes, size_unit="IP packet bytes", size_range=(32, 9000),
            duration_s=dur, trial_at=trial_at, burst_at=burst_at,
            max_frame_rate=lambda size: max_frame_rate(plat, size),
            describe=f"{plat.platform}, {plat.ports} x {plat.sonet} POS, {routes}, {mode} mode"))
    return out
