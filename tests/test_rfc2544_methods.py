"""RFC 2544 methods against synthetic devices whose answers are known in
closed form."""

from __future__ import annotations

import math

import pytest

from routertwin.methods import rfc2544 as m

RATE = 1_000_000  # frames/s at 100 % load
SECONDS = 10


def capacity_device(capacity: float, base_us: float = 5.0):
    """Lossless below `capacity` (fraction of line rate), sheds the excess
    above it; latency base + M/D/1 waiting time at utilisation load/capacity."""
    service_us = 1e6 / (capacity * RATE)

    def trial(load: float) -> m.TrialResult:
        tx = round(load * RATE * SECONDS)
        rx = min(tx, round(capacity * RATE * SECONDS))
        rho = min(load / capacity, 0.999)
        wait = rho * service_us / (2 * (1 - rho))
        return m.TrialResult(load, tx, rx, base_us, base_us + wait, base_us + 10 * wait)

    return trial


@pytest.mark.parametrize("capacity", [0.1, 0.3337, 0.5, 0.777, 0.9995])
def test_throughput_is_within_resolution_below_capacity(capacity):
    res = m.throughput(capacity_device(capacity), resolution=0.001)
    assert capacity - 0.001 <= res.load <= capacity
    assert res.trial.lost == 0
    # Bisection from [0, 1]: about log2(1/resolution) trials plus the first.
    assert len(res.trials) <= math.ceil(math.log2(1 / 0.001)) + 2


def test_throughput_of_a_line_rate_device_is_one_trial():
    res = m.throughput(capacity_device(1.0))
    assert res.load == 1.0
    assert len(res.trials) == 1


def test_latency_at_throughput_averages_the_trials():
    dev = capacity_device(0.5)
    lat = m.latency_at_throughput(dev, 0.25, repeats=20)
    # M/D/1 at rho = 0.5 with a 2 us service time: W = rho S / (2 (1 - rho)) = 1 us.
    assert lat.avg_us == pytest.approx(5.0 + 1.0)
    assert lat.repeats == 20 and len(lat.trials) == 20


def test_frame_loss_curve_steps_down_until_two_clean_trials():
    curve = m.frame_loss_curve(capacity_device(0.75), step=0.1)
    loads = [round(r.offered_load, 3) for r in curve]
    assert loads == [1.0, 0.9, 0.8, 0.7, 0.6]
    for r in curve[:3]:
        assert r.loss_ratio == pytest.approx(1 - 0.75 / r.offered_load, abs=1e-6)
    assert [r.lost for r in curve[3:]] == [0, 0]
    with pytest.raises(ValueError):
        m.frame_loss_curve(capacity_device(0.5), step=0.2)


@pytest.mark.parametrize("num,den,buffer", [(1, 2, 100), (3, 4, 64), (0, 1, 10)])
def test_back_to_back_finds_buffer_over_one_minus_service_ratio(num, den, buffer):
    # A burst of n frames at line rate into a port that serves num/den of
    # line rate: the queue peaks at n - floor(n num/den) frames.
    def burst(n: int) -> m.TrialResult:
        peak = n - (n * num) // den
        return m.TrialResult(1.0, n, n - max(0, peak - buffer))

    res = m.back_to_back(burst, max_frames=100_000, repeats=3)
    assert res.frames == buffer * den / (den - num)


def test_ndr_and_pdr_bracket_the_capacity():
    cap = 0.8
    res = m.ndr_pdr(capacity_device(cap), resolution=0.001)
    assert cap - 0.001 <= res.ndr.load <= cap
    # Loss 1 - cap/load <= 0.5 %  <=>  load <= cap / 0.995.
    assert cap / 0.995 - 0.001 <= res.pdr.load <= cap / 0.995
    assert res.ndr.load <= res.pdr.load
    # The shared cache means fewer trials than two independent searches.
    assert res.trials < len(m.throughput(capacity_device(cap)).trials) * 2


def test_frame_size_sweep_stops_at_the_first_loss_free_size():
    def trial_at(size):
        return capacity_device(1.0 if size >= 42 or size == 40 else 0.99)

    res = m.frame_size_sweep(trial_at, range(41, 60))
    assert res.first_zero_loss_bytes == 42
    assert [s for s, _ in res.trials] == [41, 42]


def test_tables_and_plots(tmp_path):
    curve = m.frame_loss_curve(capacity_device(0.75))
    df = m.table(curve)
    assert list(df["lost"])[-2:] == [0, 0]
    png = m.plot_loss_vs_load(curve, tmp_path / "loss.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sweep = m.frame_size_sweep(lambda s: capacity_device(1.0 if s >= 42 else 0.99), range(40, 45))
    png2 = m.plot_size_sweep(sweep, tmp_path / "sweep.png")
    assert png2.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_resolution_is_rejected():
    with pytest.raises(ValueError):
        m.throughput(capacity_device(0.5), resolution=0)
