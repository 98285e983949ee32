"""RFC 2544 benchmarking methods (and the NDR/PDR searches of FD.io CSIT)
over any device that offers a tester.

The device protocol is one callable, `trial(offered_load) -> TrialResult`:
offered_load is the fraction of the theoretical maximum frame rate (0, 1];
the result says how many frames were sent and received and, optionally, the
latency statistics of the trial. Back-to-back tests use a second callable,
`burst(frames) -> TrialResult`, a burst of that many frames at the maximum
rate. Runners (routertwin.runners.router) wrap their native model in these;
tests wrap closed-form synthetic devices. docs/rfc2544.md describes every
method and its stopping rule.

Methods:
- frmol: forwarding rate at maximum offered load (one trial at load 1).
- throughput: RFC 2544 26.1, the highest load with no loss (or loss up to
  `loss_ratio`), by binary search down to `resolution`.
- latency_at_throughput: RFC 2544 26.2, trials at the throughput rate,
  averaged over `repeats`.
- frame_loss_curve: RFC 2544 26.3, loss ratio from 100 % down in steps until
  two successive loss-free trials.
- back_to_back: RFC 2544 26.4, the longest burst without loss, binary search
  on the burst length, repeated `repeats` times and averaged.
- ndr_pdr: NDR (loss 0) and PDR (loss <= 0.5 %) by binary searches that share
  one cache of trials (plain bisection, not CSIT's MLRsearch; see the doc).
- frame_size_sweep: BT's method in seed 001, FRMOL at each size in 1-byte
  steps until the first size with no loss.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence


@dataclass(frozen=True)
class TrialResult:
    offered_load: float
    tx: int
    rx: int
    latency_min_us: float | None = None
    latency_avg_us: float | None = None
    latency_max_us: float | None = None
    extra: dict = field(default_factory=dict)  # device-specific metrics of the trial

    @property
    def lost(self) -> int:
        return self.tx - self.rx

    @property
    def loss_ratio(self) -> float:
        return (self.tx - self.rx) / self.tx if self.tx else 0.0


Trial = Callable[[float], TrialResult]
Burst = Callable[[int], TrialResult]


def _check_resolution(resolution: float) -> None:
    if not (0 < resolution < 1):
        raise ValueError(f"resolution must be in (0, 1), not {resolution}")


class _Cache:
    """Trials by offered load, so searches that revisit a load reuse it."""

    def __init__(self, trial: Trial):
        self._trial = trial
        self.trials: dict[float, TrialResult] = {}

    def __call__(self, load: float) -> TrialResult:
        key = round(load, 12)
        if key not in self.trials:
            r = self._trial(load)
            if r.tx <= 0:
                raise ValueError(f"device sent no frames at offered load {load}")
            self.trials[key] = r
        return self.trials[key]


@dataclass(frozen=True)
class SearchResult:
    load: float  # highest passing load found (0 when none passes)
    trial: TrialResult | None  # the trial at that load
    resolution: float
    loss_ratio_allowed: float
    trials: tuple[TrialResult, ...]  # in the order they were run


def frmol(trial: Trial) -> TrialResult:
    """Forwarding rate at maximum offered load: one trial at 100 %."""
    return trial(1.0)


def _bisect(cache: _Cache, loss_ratio: float, resolution: float, lo: float, hi: float,
            order: list[TrialResult]) -> tuple[float, TrialResult | None]:
    def run(load: float) -> TrialResult:
        before = len(cache.trials)
        r = cache(load)
        if len(cache.trials) != before:
            order.append(r)
        return r

    def passes(r: TrialResult) -> bool:
        return r.loss_ratio <= loss_ratio

    top = run(hi)
    if passes(top):
        return hi, top
    best: TrialResult | None = None
    best_load = 0.0
    if lo > 0:
        r = run(lo)
        if not passes(r):
            return 0.0, None
        best, best_load = r, lo
    # Invariant: lo passes (or is 0), hi fails; stop when they are within
    # `resolution` of each other: the answer is then within resolution of
    # the true boundary for a device whose loss is monotone in load.
    while hi - lo > resolution:
        mid = 0.5 * (lo + hi)
        r = run(mid)
        if passes(r):
            lo, best, best_load = mid, r, mid
        else:
            hi = mid
    return best_load, best


def throughput(trial: Trial, *, resolution: float = 0.001, loss_ratio: float = 0.0,
               lo: float = 0.0, hi: float = 1.0) -> SearchResult:
    """RFC 2544 26.1: the highest offered load whose trial loses no frame
    (loss_ratio 0) -- or at most `loss_ratio` of them -- by binary search
    between lo and hi until the bracket is narrower than `resolution`."""
    _check_resolution(resolution)
    if not (0 <= lo < hi <= 1):
        raise ValueError("need 0 <= lo < hi <= 1")
    cache = _Cache(trial)
    order: list[TrialResult] = []
    load, best = _bisect(cache, loss_ratio, resolution, lo, hi, order)
    return SearchResult(load, best, resolution, loss_ratio, tuple(order))


@dataclass(frozen=True)
class LatencyResult:
    load: float
    repeats: int
    min_us: float
    avg_us: float  # mean of the trials' averages
    max_us: float
    trials: tuple[TrialResult, ...]


def latency_at_throughput(trial: Trial, load: float, *, repeats: int = 20) -> LatencyResult:
    """RFC 2544 26.2: latency at the throughput rate, `repeats` trials (the
    RFC asks for at least 20) averaged."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    rs = tuple(trial(load) for _ in range(repeats))
    if any(r.latency_avg_us is None for r in rs):
        raise ValueError("device reports no latency")
    return LatencyResult(
        load, repeats,
        min(r.latency_min_us for r in rs),
        sum(r.latency_avg_us for r in rs) / repeats,
        max(r.latency_max_us for r in rs),
        rs,
    )


def frame_loss_curve(trial: Trial, *, step: float = 0.1, start: float = 1.0) -> list[TrialResult]:
    """RFC 2544 26.3: trials from `start` down in steps of `step` (the RFC
    allows at most 10 %) until two successive trials lose nothing."""
    if not (0 < step <= 0.1 + 1e-12):
        raise ValueError("RFC 2544 26.3 steps are at most 10 % of the maximum rate")
    out: list[TrialResult] = []
    clean = 0
    k = 0
    while True:
        load = round(start - k * step, 12)
        if load <= 0:
            break
        r = trial(load)
        out.append(r)
        clean = clean + 1 if r.lost == 0 else 0
        if clean == 2:
            break
        k += 1
    return out


@dataclass(frozen=True)
class BackToBackResult:
    frames: float  # mean over repeats of the longest loss-free burst
    per_repeat: tuple[int, ...]


def back_to_back(burst: Burst, *, max_frames: int, repeats: int = 50) -> BackToBackResult:
    """RFC 2544 26.4: the longest burst at maximum rate with no loss; binary
    search on the burst length in [1, max_frames], `repeats` times (the RFC
    asks for 50), averaged."""
    if max_frames < 1 or repeats < 1:
        raise ValueError("max_frames and repeats must be at least 1")
    found = []
    for _ in range(repeats):
        if burst(max_frames).lost == 0:
            found.append(max_frames)
            continue
        lo, hi = 0, max_frames  # lo passes (0 trivially), hi fails
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if burst(mid).lost == 0:
                lo = mid
            else:
                hi = mid
        found.append(lo)
    return BackToBackResult(sum(found) / len(found), tuple(found))


@dataclass(frozen=True)
class NdrPdrResult:
    ndr: SearchResult
    pdr: SearchResult
    trials: int  # distinct trials run for both searches


def ndr_pdr(trial: Trial, *, resolution: float = 0.001, pdr_loss_ratio: float = 0.005) -> NdrPdrResult:
    """Non-drop rate (loss 0) and partial-drop rate (loss <= 0.5 %, CSIT's
    default) by two bisections sharing one trial cache: PDR first, then NDR
    searched inside the bracket the PDR trials already established (NDR <= PDR
    for a device whose loss grows with load)."""
    _check_resolution(resolution)
    cache = _Cache(trial)
    order: list[TrialResult] = []
    pdr_load, pdr_trial = _bisect(cache, pdr_loss_ratio, resolution, 0.0, 1.0, order)
    pdr = SearchResult(pdr_load, pdr_trial, resolution, pdr_loss_ratio, tuple(order))
    order_ndr: list[TrialResult] = []
    # The PDR search already bracketed the NDR: start from the highest
    # loss-free load seen and the lowest lossy load above it.
    clean = [load for load, r in cache.trials.items() if r.lost == 0]
    lo = max(clean, default=0.0)
    lossy = [load for load, r in cache.trials.items() if r.lost > 0 and load > lo]
    hi = min(lossy, default=1.0)
    ndr_load, ndr_trial = _bisect(cache, 0.0, resolution, lo, hi, order_ndr)
    if ndr_load > pdr_load and pdr_trial is not None:
        ndr_load, ndr_trial = pdr_load, pdr_trial
    ndr = SearchResult(ndr_load, ndr_trial, resolution, 0.0, tuple(order + order_ndr))
    return NdrPdrResult(ndr, pdr, len(cache.trials))


@dataclass(frozen=True)
class SizeSweepResult:
    first_zero_loss_bytes: int | None  # None when no size in the range was loss-free
    trials: tuple[tuple[int, TrialResult], ...]


def frame_size_sweep(trial_at: Callable[[int], Trial], sizes: Iterable[int]) -> SizeSweepResult:
    """Seed 001's method: FRMOL at each size in turn (1-byte steps) until the
    first size at which nothing is lost."""
    out = []
    for size in sizes:
        r = frmol(trial_at(size))
        out.append((size, r))
        if r.lost == 0:
            return SizeSweepResult(size, tuple(out))
    return SizeSweepResult(None, tuple(out))


# ------------------------------------------------------------ tables, plots --

def table(trials: Sequence[TrialResult]):
    """Trials as a pandas DataFrame, one row per trial."""
    import pandas as pd

    rows = []
    for r in trials:
        d = {k: v for k, v in asdict(r).items() if k != "extra"}
        d.update(r.extra)
        d["lost"] = r.lost
        d["loss_pct"] = 100.0 * r.loss_ratio
        rows.append(d)
    return pd.DataFrame(rows)


def plot_loss_vs_load(trials: Sequence[TrialResult], path: Path, title: str = "") -> Path:
    """Frame loss rate (%) against offered load (%), PNG."""
    from routertwin.validation.plots import pyplot, save_png

    plt = pyplot()

    pts = sorted((100 * r.offered_load, 100 * r.loss_ratio) for r in trials)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o")
    ax.set_xlabel("offered load (% of theoretical maximum)")
    ax.set_ylabel("frame loss (%)")
    ax.set_title(title or "RFC 2544 frame loss rate")
    ax.grid(True, alpha=0.3)
    return save_png(fig, path, dpi=100, metadata={"Software": None})  # no version tag: same trials, same bytes


def plot_size_sweep(sweep: SizeSweepResult, path: Path, title: str = "") -> Path:
    """Loss (%) at maximum offered load against frame size, PNG."""
    from routertwin.validation.plots import pyplot, save_png

    plt = pyplot()

    xs = [s for s, _ in sweep.trials]
    ys = [100 * r.loss_ratio for _, r in sweep.trials]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(xs, ys, color=["tab:red" if y > 0 else "tab:green" for y in ys])
    ax.set_xlabel("IP packet size (bytes)")
    ax.set_ylabel("frame loss at max offered load (%)")
    ax.set_xticks(xs)
    ax.set_title(title or "frame-size sweep (FRMOL, 1-byte steps)")
    return save_png(fig, path, dpi=100, metadata={"Software": None})  # no version tag: same trials, same bytes
