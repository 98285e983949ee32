"""Octeon study (seed 002): the mechanisms against hand arithmetic and closed
forms, calibration discipline of the study's fit, determinism of a replay."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import PLATFORMS, ROOT
from routertwin.assumptions import comment_block_above, line_comment
from routertwin.errors import ScenarioError, UserError
from routertwin.results import to_json
from routertwin.runners import pipeline
from routertwin.runners.pipeline.analytic import analytic, mva_closed
from routertwin.runners.pipeline.frame_cost import esp_tunnel
from routertwin.runners.pipeline.profiles import EspSpec, PlatformProfile, WorkloadProfile, load_fitted, load_profile
from routertwin.runners.pipeline.resolve import resolve
from routertwin.scenario_loader import load_scenario
from routertwin.progress import silent

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
    wl = load_profile(WORKLOADS / "ipsec-esp-aes128-sha1.yaml", WorkloadProfile)
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
    wl = load_profile(WORKLOADS / "ipfwd-se.yaml", WorkloadProfile)
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

# What counts as a citation of an assumed number (docs/octeon.md, DESIGN.md
# "every assumed number cited or marked as an assumption"): one of
CITATION = re.compile(
    # a seed file plus where in it: a section or table, or a named part and a quote
    r"\bseed 0\d\d\b[ ,]+(section\s*\d|table|\w+(\s\w+)?:|\"|\u201c)"
    # a standard
    r"|\bRFC\s?\d{3,4}\b|\bIEEE (Std )?\d{3}|\bJEDEC\b|\bJESD\d+|\bITU-T [A-Z]\.\d+"
    # a named datasheet, product brief or hardware manual (a model number, then the kind)
    r"|\b[\w-]*\d[\w-]*\b[^#]{0,40}\b(product brief|data ?sheet|hardware (reference )?(manual|guide))\b"
    # the issue that asked for it
    r"|\bissue \d+\b"
    # a Linux kernel source file or document of a named version (TCP defaults)
    r"|\bLinux [\d.]+ (include|net|Documentation|drivers)/[\w./-]+"
    # or an assumption with a reason of at least four words
    r"|\bassumption:\s*\S+(\s+\S+){3,}",
    re.IGNORECASE)
# Keys whose numbers are configuration of a run, not claims about a system,
# and need no citation. Any leaf below one of these keys is exempt.
UNCITED_KEYS = {
    "seed",         # the random seed of a run: bit-identical replays, nothing physical
    "sweep",        # the test conditions (frame sizes, core counts, flows) a scenario sweeps
    "cases",        # the same, listed case by case
    "duration_us",  # simulated time per case: a numerical setting of the packet engine
    "warmup_us",    # the unmeasured start of that window
    "packets",      # ops_per_packet.packets: counters are per packet, so 1 by definition
    "assumption_ranges",  # the plausible range of an assumed number: its `why` is its source,
                          # checked by routertwin.assumptions and tests/test_assumption_ranges.py
}
# Numbers of files that do not yet meet the rule, by dotted key. Listed so
# that the test still fails on any NEW uncited number; remove an entry once
# its file cites it. None at present.
KNOWN_UNCITED: dict[str, set[str]] = {}
NUMERIC_TEXT = re.compile(r"^[-+]?(\d[\d_]*)?\.?\d[\d_]*([eE][-+]?\d+)?$")


def _numeric_leaves(node, keys=(), anchors=()):
    """(dotted keys, value, 0-based line of the value, 0-based lines of the keys
    whose comments may cite it) for every scalar leaf of a round-trip YAML tree.
    A leaf inside a flow collection ({...} or [...]) may be cited at the key
    that holds the collection as well as at its own key."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        inherited = tuple(anchors) if node.fa.flow_style() else ()
        for k, v in node.items():
            at = inherited + (node.lc.key(k)[0],)
            if isinstance(v, (CommentedMap, CommentedSeq)):
                yield from _numeric_leaves(v, keys + (str(k),), at)
            else:
                yield keys + (str(k),), v, node.lc.value(k)[0], at
    elif isinstance(node, CommentedSeq):
        for i, v in enumerate(node):
            if isinstance(v, (CommentedMap, CommentedSeq)):
                yield from _numeric_leaves(v, keys + (f"[{i}]",), anchors)
            else:
                yield keys + (f"[{i}]",), v, node.lc.item(i)[0], anchors


def uncited_numbers(text: str) -> list[tuple[int, str, object]]:
    """(1-based line, dotted key, value) of every number in the YAML `text`
    that has no citation on its own line, on the line of its key, or in the
    comment block directly above its key."""
    from ruamel.yaml import YAML

    lines = text.splitlines()
    out = []
    for keys, value, line, anchors in _numeric_leaves(YAML().load(text)):
        numeric = (isinstance(value, (int, float)) and not isinstance(value, bool)) or \
            (isinstance(value, str) and NUMERIC_TEXT.match(value.strip()))
        if not numeric or UNCITED_KEYS & set(keys):
            continue
        places = [line_comment(lines[line])]
        for a in anchors:
            places.append(" ".join(comment_block_above(lines, a) + [line_comment(lines[a])]))
        if not any(CITATION.search(p) for p in places):
            out.append((line + 1, ".".join(k for k in keys if not k.startswith("[")), value))
    return out


def test_citation_check_flags_uncited_numbers_in_every_yaml_form():
    # The first eight lines after the header comment hold ten numbers without a
    # valid citation; the check must find exactly those ten, and pass the rest.
    text = """\
# seed 002 (a seed without a place in it is not a citation)
plain: 3
Key2Cap: 1.5e9   # just a comment
under_score: 1_000
flow_list: [64, 576]
flow_map: {bytes: 64, weight: 7}
quoted: "12"
vague: 5   # assumption: guess
old_style: 8e8   # seed 002 same header "800SCLK": the I/O clock
cited: 4   # seed 002 section 2.1 table header "4flow"
mixes:
  # issue 4: "7:4:1 of 64/576/1500 bytes"
  imix: [{bytes: 64, weight: 7}]
std: 20    # IEEE 802.3 preamble+SFD and inter-frame gap
why: 40    # assumption: an L2 hit costs about forty core cycles
brief: 4   # CN68xx product brief lists four controllers
seed: 1
"""
    assert [k for _, k, _ in uncited_numbers(text)] == [
        "plain", "Key2Cap", "under_score", "flow_list", "flow_list",
        "flow_map.bytes", "flow_map.weight", "quoted", "vague", "old_style"]
    assert [n for n, _, _ in uncited_numbers(text)][:3] == [2, 3, 4]


CITED_FILES = sorted([*PLATFORMS.glob("*.yaml"), *WORKLOADS.glob("*.yaml"),
                      *(ROOT / "scenarios" / "whatif").glob("*.yaml"),
                      *(ROOT / "scenarios" / "adx").glob("*.yaml")])


@pytest.mark.parametrize("path", CITED_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_assumed_number_cites_its_source_or_says_assumption(path):
    bad = [(n, k, v) for n, k, v in uncited_numbers(path.read_text(encoding="utf-8"))
           if k not in KNOWN_UNCITED.get(path.name, set())]
    assert not bad, "\n".join(f"{path.name}:{n}: {k} = {v}: no citation (seed 0NN + section, "
                              f"standard, named datasheet, issue N) or 'assumption: <reason>'"
                              for n, k, v in bad)


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
    wl = load_profile(WORKLOADS / f"{workload}.yaml", WorkloadProfile)
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


def test_esp_frame_mix_on_the_packet_engine_is_refused_clearly():
    with pytest.raises(UserError, match="one frame size per case for a path whose output frame grows"):
        run_cases(ROOT / "scenarios" / "whatif" / "imix-100g-cn78-ipsec.yaml", method="packet")
