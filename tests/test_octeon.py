"""Octeon study (seed 002): the mechanisms against hand arithmetic and closed
forms, calibration discipline of the study's fit, determinism of a replay."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from routertwin.errors import ScenarioError, UserError
from routertwin.results import to_json
from routertwin.runners import pipeline
from routertwin.runners.pipeline import (EspSpec, PlatformProfile, analytic, esp_tunnel,
                                         load_fitted, load_profile, mva_closed, resolve)
from routertwin.scenario import load_scenario
from routertwin.progress import silent

ROOT = Path(__file__).resolve().parents[1]
PLATFORMS = ROOT / "scenarios" / "platforms"
WORKLOADS = ROOT / "scenarios" / "workloads"
OCTEON = ROOT / "scenarios" / "octeon"

# RFC 4303 tunnel mode with AES-128-CBC (RFC 3602) and HMAC-SHA1-96 (RFC 2404)
ESP = EspSpec(outer_ip_bytes=20, esp_header_bytes=8, iv_bytes=16, block_bytes=16,
              trailer_bytes=2, icv_bytes=12)


def run_cases(path: Path, only: str | None = None, **overrides) -> dict:
    """Cases of a scenario by id; `only` ("64b-16c-4f-atomic") runs just that case."""
    sets = [f"{k}={v}" for k, v in overrides.items()]
    if only is not None:
        frame, cores, *rest = only.split("-")
        case = f"id: {only}, frame: {frame[:-1]}, cores: {cores[:-1]}"
        for part in rest:
            case += f", flows: {part[:-1]}" if part.endswith("f") else f", tag_type: {part.upper()}"
        sets += ["sweep=null", f"cases=[{{{case}}}]"]
    sc = load_scenario(path, overrides=sets)
    return {c.case: c for c in pipeline.run(sc, silent())}


# ----------------------------------------------------------- ESP growth --

@pytest.mark.parametrize(
    "frame, inner, pad, encrypted, out_frame",
    [
        # 64: IP 64-14-4 = 46; 46+2 = 48 is a multiple of 16: no pad; ESP = 8+16+48+12 = 84;
        # outer IP 20+84 = 104; frame 14+104+4 = 122
        (64, 46, 0, 48, 122),
        # 100: IP 82; 82+2 = 84 -> pad 12 to 96; frame 14+20+8+16+96+12+4 = 170
        (100, 82, 12, 96, 170),
        # 1450: IP 1432; 1434 -> pad 6 to 1440; frame 14+20+8+16+1440+12+4 = 1514 (fits 1518)
        (1450, 1432, 6, 1440, 1514),
        # 1518: IP 1500; 1502 -> pad 2 to 1504; frame 14+20+8+16+1504+12+4 = 1578 (> 1518: would fragment)
        (1518, 1500, 2, 1504, 1578),
    ],
)
def test_esp_tunnel_growth_matches_hand_arithmetic(frame, inner, pad, encrypted, out_frame):
    t = esp_tunnel(frame, ESP)
    assert (t.inner_ip, t.pad, t.encrypted, t.out_frame) == (inner, pad, encrypted, out_frame)
    assert t.authenticated == 8 + 16 + encrypted  # HMAC covers ESP header, IV, ciphertext
    assert t.encrypted % 16 == 0


def test_esp_workload_file_is_aes128_sha1_tunnel():
    wl = load_profile(WORKLOADS / "ipsec-esp-aes128-sha1.yaml", pipeline.WorkloadProfile)
    assert wl.esp == ESP


# ------------------------------------------------------------ line rate --

def test_cn68_1518_byte_one_core_is_40g_line_rate_not_a_fitted_constant():
    # 40e9 / (8 * (1518 + 8 preamble/SFD + 12 IFG)) = 3,250,975.29 pps
    case = run_cases(OCTEON / "cn68-se.yaml", "1518b-1c", method="analytic")["1518b-1c"]
    assert case.metrics["pps"] == pytest.approx(40e9 / (8 * 1538), rel=1e-12)
    assert case.bottleneck == "line_rate_in"


def test_cn78_1518_byte_four_cores_is_100g_line_rate():
    # 100e9 / (8 * 1538) = 8,127,438.23 pps
    case = run_cases(OCTEON / "cn78-se.yaml", "1518b-4c", method="analytic")["1518b-4c"]
    assert case.metrics["pps"] == pytest.approx(100e9 / (8 * 1538), rel=1e-12)


def test_esp_output_line_rate_binds_on_the_grown_frame():
    # CN78 IPsec 1450B on 32 cores: cores could do 32 x 0.27 M; the 1514-byte
    # ESP frame on 100G allows 100e9 / (8 * 1534) = 8,148,631 pps.
    case = run_cases(OCTEON / "cn78-ipsec.yaml", "1450b-32c", method="analytic")["1450b-32c"]
    assert case.metrics["pps"] == pytest.approx(100e9 / (8 * 1534), rel=1e-12)
    assert case.bottleneck == "line_rate"


# ------------------------------------------------------ queueing / ordering --

def test_mva_single_station_matches_machine_repairman_closed_form():
    # One customer: X = 1 / (Z + D). Two customers, exponential single server
    # (Kleinrock vol. 1, finite-source M/M/1): X(2) = 2 / (Z + D (1 + X(1) D)).
    z, d = 300e-9, 25e-9
    x1, _ = mva_closed(1, z, {"io": d})
    assert x1 == pytest.approx(1 / (z + d))
    x2, _ = mva_closed(2, z, {"io": d})
    assert x2 == pytest.approx(2 / (z + d * (1 + x1 * d)))
    # Far beyond the knee the station saturates: X -> 1 / D.
    xn, _ = mva_closed(200, z, {"io": d})
    assert xn == pytest.approx(1 / d, rel=1e-6)


def test_atomic_tags_limit_busy_cores_to_the_flow_count():
    fitted = load_fitted(PLATFORMS / "fitted" / "octeon.yaml")
    plat = load_profile(PLATFORMS / "cn78xx-1800-ddr4-1866.yaml", PlatformProfile)
    wl = load_profile(WORKLOADS / "ipfwd-se.yaml", pipeline.WorkloadProfile)
    per_core = analytic(resolve(plat, wl, fitted, [(64, 1.0)], 1, 4, "ATOMIC", 1.0)).metrics["pps"]
    for flows in (4, 8):
        r = resolve(plat, wl, fitted, [(64, 1.0)], 16, flows, "ATOMIC", 1.0)
        res = analytic(r)
        assert res.metrics["pps"] == pytest.approx(flows * per_core)
        assert res.bottleneck == "ordering"
    ordered = analytic(resolve(plat, wl, fitted, [(64, 1.0)], 16, 4, "ORDERED", 1.0))
    assert ordered.metrics["pps"] == pytest.approx(16 * per_core)


# ------------------------------------------------------------ calibration --

def test_octeon_fit_provenance_lists_only_calibrate_rows():
    from routertwin.studies import octeon
    from routertwin.validation.calibration import CalibrationData, run_fit
    from routertwin.validation.reference import load_reference, reference_path

    ref = load_reference(reference_path(ROOT))
    fits = run_fit("octeon", CalibrationData(ref, ROOT))
    cited = {rid for f in fits.values() for rid in f.rows}
    assert cited and all(ref[rid].role == "calibrate" for rid in cited)
    assert cited == set(octeon.CALIBRATE_ROWS)
    # every Octeon calibrate row of seed 002 is used, no predict row is
    octeon_calibrate = {r.id for r in ref.values()
                        if r.seed.startswith("002_") and r.role == "calibrate"}
    assert cited == octeon_calibrate


def test_octeon_fit_ignores_predict_values():
    from routertwin.validation.calibration import CalibrationData, run_fit
    from routertwin.validation.reference import load_reference, reference_path
    import dataclasses

    ref = load_reference(reference_path(ROOT))
    base = run_fit("octeon", CalibrationData(ref, ROOT))
    bent = {k: (dataclasses.replace(r, value=r.value * 3.0) if r.role == "predict" else r)
            for k, r in ref.items()}
    assert run_fit("octeon", CalibrationData(bent, ROOT)) == base


# ------------------------------------------------------------ profiles --

NUMBER_LINE = re.compile(r"^\s*[a-z_]+:\s*[-+0-9.e]+\s*(#.*)?$")


@pytest.mark.parametrize("path", sorted(PLATFORMS.glob("cn*.yaml")), ids=lambda p: p.name)
def test_every_platform_number_cites_the_seed_or_says_assumption(path):
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if NUMBER_LINE.match(line):
            comment = line.partition("#")[2]
            assert re.search(r"seed 002|assumption:|IEEE 802\.3|by definition|same assumption", comment), \
                f"{path.name}:{i}: number without a citation or 'assumption:': {line.strip()}"


def test_unknown_key_in_a_platform_profile_names_file_and_line(tmp_path):
    text = (PLATFORMS / "cn68xx-1500-ddr3-1066.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("  clock_hz: 1.5e9", "  clock_hz: 1.5e9\n  clokc_ghz: 1.5"), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bad\.yaml:\d+: key 'cores\.clokc_ghz': unknown key"):
        load_profile(bad, PlatformProfile)


# ------------------------------------------------------------ determinism --

def test_a_short_replay_gives_the_same_json_twice():
    sc = load_scenario(OCTEON / "cn68-se-1core.yaml")
    one = to_json({"cases": [c.__dict__ for c in pipeline.run(sc, silent())]})
    two = to_json({"cases": [c.__dict__ for c in pipeline.run(sc, silent())]})
    assert one == two


# ------------------------------------------------- packet level vs analytic --

@pytest.mark.parametrize(
    "scenario, case, bottleneck",
    [
        ("octeon/cn68-se.yaml", "64b-1c", "cores"),
        ("octeon/cn78-se.yaml", "64b-48c", "packet_input"),
        ("octeon/cn68-linux.yaml", "64b-32c", "lock"),
        ("octeon/cn68-se.yaml", "1518b-1c", "line_rate_in"),
        ("octeon/cn78-ipsec.yaml", "1450b-32c", "line_rate"),
        ("whatif/flows-ordering.yaml", "64b-16c-4f-atomic", "ordering"),
    ],
)
def test_packet_engine_agrees_with_the_closed_form_bound(scenario, case, bottleneck):
    c = run_cases(ROOT / "scenarios" / scenario, case, method="both", duration_us=400, warmup_us=100)[case]
    # the engine rounds service cycles to whole cycles and counts packets in
    # a finite window: agreement within 0.5%
    assert c.metrics["pps"] == pytest.approx(c.metrics["pps_analytic"], rel=5e-3)
    assert c.bottleneck == bottleneck


@pytest.mark.parametrize("workload", ["ipfwd-se", "ipfwd-linux", "ipfwd-linux-offload"])
def test_ipv4_workload_ops_equal_what_the_c_core_counts(workload):
    # The engine runs the C core's parse + LPM + TTL on the tester's frames;
    # the workload file's ops_per_packet (used by the fit) must be the same.
    wl = load_profile(WORKLOADS / f"{workload}.yaml", pipeline.WorkloadProfile)
    scenario = {"ipfwd-se": "cn68-se.yaml", "ipfwd-linux": "cn68-linux.yaml",
                "ipfwd-linux-offload": "cn68-linuxoff.yaml"}[workload]
    c = run_cases(OCTEON / scenario, "64b-1c", method="packet", duration_us=100, warmup_us=25)["64b-1c"]
    core_ops = {k[4:]: v for k, v in c.counters.items() if k.startswith("ops.") and v}
    assert core_ops == pytest.approx({k: float(v) for k, v in wl.ops_per_packet.items()})


# ------------------------------------------------------------ bad input --

def test_mistyped_tag_type_is_one_error_line_with_file_and_line(tmp_path):
    import subprocess
    import sys

    text = (OCTEON / "cn68-se-1core.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("tag_type: ORDERED", "tag_type: ORDRED")
                   .replace("../platforms/", str(PLATFORMS) + "/")
                   .replace("../workloads/", str(WORKLOADS) + "/"), encoding="utf-8")
    line = next(i for i, l in enumerate(bad.read_text().splitlines(), 1) if l.startswith("tag_type"))
    proc = subprocess.run([sys.executable, "-m", "routertwin", "--root", str(ROOT), "run", str(bad),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and f"bad.yaml:{line}: key 'tag_type':" in err[0] and "Traceback" not in proc.stderr


def test_frame_mix_on_the_packet_engine_is_refused_clearly():
    with pytest.raises(UserError, match="one frame size per case; use method: analytic"):
        run_cases(ROOT / "scenarios" / "whatif" / "imix-100g-cn78-se.yaml", method="packet")
