"""The lab's twin side (routertwin.lab.twin): the endpoint cost fitted to the
calibration path alone, checked against hand arithmetic, and the
calibration discipline (predicted paths' measurements never move it). No
namespaces needed: measurements are given."""

from __future__ import annotations

import pytest

from conftest import ROOT
from routertwin.lab import twin
from routertwin.lab.iperf import Measurement
from routertwin.lab.runner import LabParameters, PathResult

MSS = 1500 - 40 - 12  # timestamps on
SYSCTLS = {"tcp_congestion_control": "cubic", "tcp_wmem": "4096 16384 4194304",
           "tcp_rmem": "4096 131072 6291456", "tcp_timestamps": "1", "tcp_sack": "1", "tcp_window_scaling": "1"}


def _results(mbps: dict[str, float]) -> dict[str, PathResult]:
    out = {}
    for path, value in mbps.items():
        m = Measurement(path, [value * 1e6] * 4, [0.5] * 4, value * 1e6, "", "", "", MSS, 0, 0.0, 0.0, "cubic")
        out[path] = PathResult(path, "calibrate" if path == "flat-direct" else "predict", [m])
    return out


def test_endpoint_cost_is_the_per_byte_time_that_gives_the_measurement():
    """At 800 Mbit/s, one 1448-byte segment every 14.48 us; the receiving
    endpoint serves its 1500-byte IP packet in that time: 9.6533 ns/byte
    (the sender's endpoint only sees ACKs, a 26th of that)."""
    params = LabParameters()
    _, final, fitted, notes = twin.fit(params, _results({"flat-direct": 800, "flat-eip": 700, "vpc-eip": 900}),
                                       ROOT, SYSCTLS)
    assert fitted.from_path == "flat-direct" and fitted.name == "lab-vm.cpu_per_byte_ns"
    assert fitted.value == pytest.approx(MSS * 8 / 800e6 / 1500 * 1e9, rel=1e-9)
    assert final["node_types"]["lab-vm"]["cpu_per_byte_ns"] == fitted.value
    assert final["tcp"] == {"congestion": "cubic", "timestamps": True, "sack": True, "window_scaling": True,
                            "snd_buf_bytes": 4194304, "rcv_buf_bytes": 6291456}
    assert notes == []


def test_predicted_paths_measurements_never_move_the_fit():
    params = LabParameters()
    a = twin.fit(params, _results({"flat-direct": 800, "flat-eip": 700, "vpc-eip": 900}), ROOT, SYSCTLS)[2]
    b = twin.fit(params, _results({"flat-direct": 800, "flat-eip": 700 * 1.37 + 11, "vpc-eip": 5}), ROOT,
                 SYSCTLS)[2]
    assert a == b


def test_the_closed_form_of_every_path_gives_back_the_calibrated_rate():
    """The endpoint is the busiest server on every path (the hops cost a
    few hundredths of a microsecond per frame), so the closed form of each
    path at the fitted cost is the calibration path's measurement."""
    params = LabParameters()
    base, final, fitted, _ = twin.fit(params, _results({"flat-direct": 800, "flat-eip": 1, "vpc-eip": 1}),
                                      ROOT, SYSCTLS)
    for path in ("flat-direct", "flat-eip", "vpc-eip"):
        assert twin.closed_form_bps(base[path].with_(final)) == pytest.approx(800e6, rel=1e-6)


def test_a_link_limited_calibration_fits_nothing_and_says_so():
    """At or above the wire's ceiling (1 Gbit/s x 1448/1538 = 941.5 Mbit/s)
    no endpoint cost is needed: 0, and the note says it is only bounded."""
    params = LabParameters()
    _, _, fitted, _ = twin.fit(params, _results({"flat-direct": 941.5, "flat-eip": 1, "vpc-eip": 1}), ROOT,
                               SYSCTLS)
    assert fitted.value == 0.0 and "only bounded" in fitted.note
    assert "941.5" in fitted.note


def test_tcp_the_twin_cannot_follow_is_named():
    over, notes = twin.tcp_overrides({**SYSCTLS, "tcp_congestion_control": "bbr"})
    assert "congestion" not in over and "bbr" in notes[0]


def test_the_twins_wire_queue_is_tbfs_queue_in_full_frames():
    """tbf's limit = latency x rate + burst: 5 ms at 984.4 Mbit/s is
    615,247 bytes, + 131,072 = 746,319 bytes = 493 frames of 1514 bytes
    (the value the platform states for 1 Gbit/s); at 100 Mbit/s, 61,525 +
    131,072 = 192,597 bytes = 127 frames."""
    from routertwin.runners.tcp_path.profiles import load_platform

    platform = load_platform(ROOT / "scenarios" / "platforms" / "lab-netns.yaml")
    gig, _ = twin.run_overrides(platform, 1e9, SYSCTLS, 1)
    assert gig["link_types"]["lab-wire"]["queue_packets"] == 493 == platform.link_types["lab-wire"].queue_packets
    fast_ethernet, _ = twin.run_overrides(platform, 1e8, SYSCTLS, 1)
    assert fast_ethernet["link_types"]["lab-wire"]["queue_packets"] == 127
    assert fast_ethernet["link_types"]["lab-wire"]["rate_bps"] == 1e8
