"""A pipeline case as a device behind an RFC 2544 tester (the trial protocol
of routertwin.methods.tester): each trial one packet-level engine run at an
offered load, a burst one trial at line rate."""

from __future__ import annotations

from pathlib import Path

from routertwin.errors import UserError
from routertwin.runners._shared.ethernet import MAX_FRAME, MIN_FRAME, line_rate_pps
from routertwin.runners._shared.native import case_error, trial_result
from routertwin.runners.pipeline.native import engine_config, run_engine
from routertwin.runners.pipeline.profiles import FittedParameters, PlatformProfile, WorkloadProfile, load_profiles
from routertwin.runners.pipeline.resolve import resolve
from routertwin.runners.pipeline.schema import MAX_DURATION_US, Case, Schema, case_id, expand_cases


class PipelineTester:
    """One case as an RFC 2544 device: trial(offered_load) runs the packet-level
    engine (`_core.run_pipeline`) with the tester offering `offered_load` of the
    port's line rate (constant spacing) for `duration_s`, and reports the
    frames it sent and got back and their latencies. The engine runs until
    every frame is back or dropped, so tx - rx is exactly the frames lost."""

    def __init__(self, cfg: Schema, plat: PlatformProfile, wl: WorkloadProfile, fitted: FittedParameters,
                 case: Case, frame: int, *, duration_s: float, seed: int, source: Path | None = None):
        self.cfg, self.plat, self.wl, self.fitted, self.case = cfg, plat, wl, fitted, case
        self.frame, self.duration_s, self.seed = frame, duration_s, seed
        self.source = source  # the scenario file, named in errors

    def _keys(self, load: float, duration_s: float, warmup_s: float) -> dict:
        r = resolve(self.plat, self.wl, self.fitted, [(self.frame, 1.0)], self.case.cores,
                    self.case.flows or self.cfg.flows, self.case.tag_type or self.cfg.tag_type, load)
        keys = engine_config(r, self.cfg, self.seed)
        keys["duration_s"], keys["warmup_s"] = duration_s, warmup_s
        return keys

    def run(self, load: float, duration_s: float, warmup_s: float):
        # Trials of `routertwin rfc2544` (--duration, bursts) bypass the
        # scenario's bound on duration_us: hold them to it.
        if duration_s > MAX_DURATION_US * 1e-6:
            raise case_error(self.source, case_id(self.case), f"a trial of {duration_s:g} s is longer than the "
                             f"packet engine's limit of {MAX_DURATION_US * 1e-6:g} s")
        out = run_engine(self._keys(load, duration_s, warmup_s), self.source, case_id(self.case))
        extra = {
            "tx_fps": float(out["offered_pps"]),
            "rx_fps": float(out["forwarded_pps"]),
            "service_us": float(out["service_us"]),
            "bottleneck": str(out["bottleneck"]),
            "drops": dict(out["drops"]),
        }
        return trial_result(load, out, extra)

    def __call__(self, load: float):
        # The forwarded rate is measured after the scenario's warm-up share of
        # the trial; tx and rx count every frame of the trial.
        warm = self.duration_s * min(self.cfg.warmup_us / self.cfg.duration_us, 0.5)
        return self.run(load, self.duration_s, warm)

    def burst(self, frames: int):
        """`frames` frames back to back at line rate (a trial at 100 % lasting
        frames / line rate)."""
        return self.run(1.0, frames / line_rate_pps(self.frame, self.plat.port), 0.0)


def testers(scenario, *, duration_s: float | None = None):
    """Each case as a device behind an RFC 2544 tester (routertwin.methods.tester),
    always at packet level whatever the scenario's `method`; sizes are
    Ethernet frames incl. FCS on the platform's port. Frame-mix cases cannot
    be offered: the engine's tester sends one size."""
    from routertwin.methods.tester import TesterCase

    cfg: Schema = scenario.config
    plat, wl, fitted = load_profiles(cfg)
    dur = duration_s or cfg.duration_us * 1e-6
    out = []
    for c in expand_cases(cfg):
        cid = case_id(c)

        def trial_at(size: int, seed: int, c=c, cid=cid) -> PipelineTester:
            if not isinstance(c.frame, int):
                raise UserError(f"case '{cid}' is the frame mix '{c.frame}': the packet-level tester "
                                "offers one frame size")
            return PipelineTester(cfg, plat, wl, fitted, c, size, duration_s=dur, seed=seed, source=scenario.path)

        def burst_at(size: int, seed: int, trial_at=trial_at):
            return trial_at(size, seed).burst

        out.append(TesterCase(
            case=cid, size=c.frame if isinstance(c.frame, int) else 0,
            size_unit="Ethernet frame bytes (FCS incl.)", size_range=(MIN_FRAME, MAX_FRAME), duration_s=dur,
            trial_at=trial_at, burst_at=burst_at, max_frame_rate=lambda size: line_rate_pps(size, plat.port),
            describe=f"{plat.platform}, {wl.workload}, {c.cores} core(s), {plat.port.rate_bps / 1e9:g} Gbit/s port"))
    return out
