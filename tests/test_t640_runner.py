"""The T640 replay: scenarios load, the two model modes agree, the RFC 2544
methods find the fabric's closed-form capacity, runs are deterministic, and
mistakes are reported as one line with file and line."""

from __future__ import annotations

import math
import shutil
import zlib

import pytest

from routertwin import _core
from routertwin.errors import ScenarioError
from routertwin.methods import rfc2544
from routertwin.progress import silent
from routertwin.results import record, to_json
from routertwin.runners import router
from routertwin.runners.router.analytic import zero_load_us
from routertwin.runners.router.platform import load_pipeline_latency, load_platform
from routertwin.runners.router.schema import Case
from routertwin.runners.router.tester import RouterTester
from routertwin.scenario_loader import load_scenario

from conftest import ROOT, run_cli

T640 = ROOT / "scenarios" / "t640"
PLATFORM = ROOT / "scenarios" / "platforms" / "t640.yaml"
FITTED = ROOT / "scenarios" / "platforms" / "fitted" / "t640.yaml"


@pytest.mark.parametrize("name", sorted(p.name for p in T640.glob("*.yaml")))
def test_every_t640_scenario_loads(name):
    sc = load_scenario(T640 / name)
    assert sc.kind == "router"


def test_theoretical_maximum_reproduces_the_report_exactly():
    th40 = 32 * _core.pos_theoretical_pps("OC-192", 40)
    th42 = 32 * _core.pos_theoretical_pps("OC-192", 42)
    assert round(100 * 780_069_874 / th40, 3) == 99.700
    assert round(100 * 749_981_330 / th42, 3) == 99.767
    # FCS-16 would make the same packet rate a different percentage.
    assert round(100 * 780_069_874 / (32 * _core.pos_theoretical_pps("OC-192", 40, 16)), 3) != 99.700


def test_pos_frame_escapes_flag_and_escape_octets():
    # Its FCS-32 is 3f 7d 16 aa on the wire: one escape comes from the FCS.
    ip = bytes([0x45, 0x7E, 0x7D, 0x21])
    f = _core.pos_frame(ip)
    # RFC 1662: address FF, control 03, protocol 0021, the packet, then the
    # FCS-32 (the CRC-32 of zlib, sent least significant octet first); every
    # 0x7E and 0x7D between the opening flag and the next is escaped.
    body = bytes([0xFF, 0x03, 0x00, 0x21]) + ip
    body += zlib.crc32(body).to_bytes(4, "little")
    stuffed = b"".join(bytes([0x7D, b ^ 0x20]) if b in (0x7E, 0x7D) else bytes([b]) for b in body)
    assert f["escapes"] == sum(b in (0x7E, 0x7D) for b in body)
    assert f["unstuffed_bytes"] == 1 + len(body)
    assert f["wire"] == b"\x7e" + stuffed


def _case(**kw) -> Case:
    return Case(case="t", **kw)


def test_packet_level_and_steady_state_agree_on_a_full_t640_window():
    sc = load_scenario(T640 / "t640-packet-1ms.yaml")
    res = {c.case: c for c in router.run(sc, silent())}
    p, s = res["40b-500k-packet"].metrics, res["40b-500k-steady"].metrics
    assert s["pps"] == pytest.approx(p["pps"], rel=1e-4)
    assert s["latency_avg"] == pytest.approx(p["latency_avg"], abs=0.1)
    assert p["lost_packets"] == 0
    # 32 ports at about 99.8 % of 24.45 Mpps each.
    assert p["pps"] > 0.99 * 32 * _core.pos_theoretical_pps("OC-192", 40)


def test_zero_loss_throughput_at_41_bytes_is_the_fabric_capacity(tmp_path):
    # Small buffers so that any overload shows within the trial; 8 ports
    # (4 PFEs) keep the search quick and change no per-PFE arithmetic.
    text = PLATFORM.read_text().replace("ingress_us: 100000", "ingress_us: 10")
    text = text.replace("\nports: 32\n", "\nports: 8\n")
    plat_path = tmp_path / "t640-small.yaml"
    plat_path.write_text(text)
    plat = load_platform(plat_path)
    dev = RouterTester(plat, _case(ip_bytes=41), pipeline_latency_us=load_pipeline_latency(FITTED, plat),
                       ip_bytes=41, duration_s=1.0, mode="steady", seed=1)
    res = rfc2544.throughput(dev, resolution=0.001)
    cells = math.ceil((41 + plat.fabric.internal_header_bytes) / plat.fabric.cell_bytes)
    cap_cells = plat.fabric.gbps_per_pfe * 1e9 / (8 * plat.fabric.cell_bytes)
    demand_at_full = plat.ports_per_pfe * cells * _core.pos_theoretical_pps("OC-192", 41)
    expected = min(1.0, cap_cells / demand_at_full)
    assert expected - 0.001 <= res.load <= expected + 1e-9
    assert res.trial.lost == 0


def test_same_seed_gives_identical_results_json():
    sc = load_scenario(T640 / "t640-packet-1ms.yaml", overrides=["duration_s=0.00005"])
    a = to_json(record(sc, router.run(sc, silent())))
    b = to_json(record(sc, router.run(sc, silent())))
    assert a == b


def test_unknown_platform_key_names_file_and_line(tmp_path):
    shutil.copy(T640 / "t640-5min.yaml", tmp_path / "s.yaml")
    (tmp_path / "platforms").mkdir()
    text = PLATFORM.read_text().replace("  cell_bytes: 64", "  cell_bytes: 64\n  cell_byte: 64")
    (tmp_path / "platforms" / "t640.yaml").write_text(text)
    s = (tmp_path / "s.yaml").read_text().replace("../platforms/t640.yaml", "platforms/t640.yaml")
    s = s.replace("../platforms/fitted/t640.yaml", str(FITTED))
    (tmp_path / "s.yaml").write_text(s)
    with pytest.raises(ScenarioError) as err:  # at load time (router.check), before any run
        load_scenario(tmp_path / "s.yaml")
    msg = str(err.value)
    assert "t640.yaml:" in msg and "cell_byte" in msg


def test_bad_case_key_is_one_line_with_exit_status_2(write):
    p = write("bad.yaml", f"""
        scenario: bad
        kind: router
        platform: {PLATFORM}
        fitted: {FITTED}
        cases:
          - case: x
            ip_byte: 40
        """)
    out = run_cli("run", p)
    assert out.returncode == 2
    assert "bad.yaml:7" in out.stderr and "ip_byte" in out.stderr
    assert "Traceback" not in out.stderr


def test_size_sweep_needs_sizes():
    with pytest.raises(ValueError):
        _case(method="size_sweep")


def test_fitted_pipeline_latency_plus_zero_load_parts_is_the_calibrate_minimum():
    plat = load_platform(PLATFORM)
    parts = zero_load_us(plat, 40)
    # 49 octets (40 + 9 of PPP/HDLC) at the STS-192c payload rate; one table
    # read at the lookup rate; one 64-byte cell slot of the PFE's fabric port.
    assert parts["serialization"] == pytest.approx(49 * 8 / 9_584.64e6 * 1e6, rel=1e-12)
    assert parts["lookup"] == pytest.approx(1e6 / plat.lookup.probes_per_second)
    assert parts["fabric"] == pytest.approx(64 * 8 / (plat.fabric.gbps_per_pfe * 1e9) * 1e6)
    pipe = load_pipeline_latency(FITTED, plat)
    assert pipe + sum(parts.values()) == pytest.approx(18.68, abs=1e-9)  # t640-40b-500k-lat-min
