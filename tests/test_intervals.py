"""Intervals on twin values (routertwin.validation.intervals) against
independent truth: a closed form of an assumed parameter, and the known
variance of a sample mean."""

from __future__ import annotations

import math
import shutil
import statistics
from pathlib import Path

import pytest

from routertwin.errors import ScenarioError
from routertwin.parallel import Job, run_jobs
from routertwin.validation import intervals as iv

ROOT = Path(__file__).resolve().parents[1]

# OC-192c SONET payload rate (ITU-T G.707: 9.95328 Gbit/s line, 87/90 of the
# SPE columns less path overhead = 9.58464 Gbit/s), PPP/HDLC octets per frame
# (RFC 1662 with a shared flag, address+control, 2-byte protocol, FCS-32: 9),
# the J-cell size (64 octets), and the calibrate row the T640 fit reads.
OC192_PAYLOAD_BPS = 9.58464e9
PPP_OCTETS = 9
CELL_BYTES = 64
LAT_MIN_40B_US = 18.68  # validation/reference.csv t640-40b-500k-lat-min


def closed_form_latency_min_us(ip_bytes: int, gbps_per_pfe: float, header_bytes: int) -> float:
    """Minimum latency of an `ip_bytes` packet with the T640's fixed pipeline
    part fitted from the 40-byte calibrate row: the row's latency plus the
    difference of serialization and of fabric slots between the two sizes
    (the lookup's one table read appears in both and cancels)."""
    def ser(b):
        return 8.0 * (b + PPP_OCTETS) / OC192_PAYLOAD_BPS * 1e6

    def fabric(b):
        cells = -(-(b + header_bytes) // CELL_BYTES)
        return cells * 8.0 * CELL_BYTES / (gbps_per_pfe * 1e9) * 1e6

    return LAT_MIN_40B_US + ser(ip_bytes) - ser(40) + fabric(ip_bytes) - fabric(40)


TOY = """\
scenario: toy-latency
kind: router
seed: 1
platform: ../platforms/t640.yaml
fitted: ../platforms/fitted/t640.yaml
mode: packet
duration_s: 0.0001
cases:
  - {case: 40b, method: load, ip_bytes: 40, offered_load: 0.1}
  - {case: 1500b, method: load, ip_bytes: 1500, offered_load: 0.1}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the project's scenarios and validation tables with a small
    router scenario (latency at 10 % load of 40- and 1500-byte packets) and
    a toy predict row whose reference lies just outside the 1500-byte twin
    value's tolerance, but inside what one end of an assumption's range gives."""
    root = tmp_path_factory.mktemp("proj")
    shutil.copytree(ROOT / "scenarios", root / "scenarios")
    (root / "validation" / "mapping").mkdir(parents=True)
    ref = (ROOT / "validation" / "reference.csv").read_text(encoding="utf-8")
    ref += ("toy-1500b-lat-min,001_b3935037e3a23ce0.txt,Juniper T640,toy,1500-byte IP at 10 % load,"
            "latency_min,20.2,us,predict,test row\n")
    (root / "validation" / "reference.csv").write_text(ref, encoding="utf-8")
    (root / "scenarios" / "t640" / "toy.yaml").write_text(TOY, encoding="utf-8")
    (root / "validation" / "mapping" / "toy.yaml").write_text("""\
study: toy
rows:
  t640-40b-500k-lat-min:
    scenario: scenarios/t640/toy.yaml
    case: 40b
    tolerance_pct: 1
    reason: "calibrate row: the fit reproduces it"
  toy-1500b-lat-min:
    scenario: scenarios/t640/toy.yaml
    case: 1500b
    tolerance_pct: 0.2
    reason: "a test row: twin 20.142 is 0.29 % below 20.2"
""", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def replayed(project):
    """The toy study replayed without and with intervals (quick)."""
    from routertwin.validation.replay import replay

    plain = replay(project, jobs=2)
    fitted_before = (project / "scenarios" / "platforms" / "fitted" / "t640.yaml").read_bytes()
    with_iv = replay(project, jobs=2, intervals="quick", workdir=project / "build")
    return plain, with_iv, fitted_before


def _row(rep, rid):
    return next(r for rows in rep.report.by_study.values() for r in rows if r.ref.id == rid)


def test_interval_ends_equal_the_closed_form_at_the_ends_of_the_range(replayed):
    _, rep, _ = replayed
    row = _row(rep, "toy-1500b-lat-min")
    assert row.twin == pytest.approx(closed_form_latency_min_us(1500, 48.4, 24), rel=1e-9)
    effects = {e.assumption.path: e for e in row.interval.effects}
    g = effects["fabric.gbps_per_pfe"]
    assert (g.assumption.low, g.assumption.high) == (40.0, 60.0)
    assert g.low == pytest.approx(closed_form_latency_min_us(1500, 40.0, 24), rel=1e-9)
    assert g.high == pytest.approx(closed_form_latency_min_us(1500, 60.0, 24), rel=1e-9)
    h = effects["fabric.internal_header_bytes"]
    assert h.low == pytest.approx(closed_form_latency_min_us(1500, 48.4, 0), rel=1e-9)
    assert h.high == pytest.approx(closed_form_latency_min_us(1500, 48.4, 32), rel=1e-9)
    # The lookup rate enters the fitted pipeline latency and the run alike:
    # refitted, it cancels; without the refit it would move the value by
    # 1/4e7 - 1/1e8 s = 0.015 us at the low end.
    p = effects["lookup.probes_per_second"]
    assert p.low == pytest.approx(row.twin, abs=1e-9) and p.high == pytest.approx(row.twin, abs=1e-9)
    assert p.refitted == ["t640"]
    lo, hi = row.interval.assumption_range
    assert lo == pytest.approx(min(closed_form_latency_min_us(1500, 60.0, 24),
                                   closed_form_latency_min_us(1500, 48.4, 32)), rel=1e-9)
    assert hi == pytest.approx(closed_form_latency_min_us(1500, 40.0, 24), rel=1e-9)


def test_the_refit_keeps_the_calibrate_row_and_never_writes_the_project(replayed, project):
    _, rep, before = replayed
    row = _row(rep, "t640-40b-500k-lat-min")
    for e in row.interval.effects:
        for v in (e.low, e.high):
            assert v == pytest.approx(LAT_MIN_40B_US, abs=1e-9), e.assumption.name
    assert (project / "scenarios" / "platforms" / "fitted" / "t640.yaml").read_bytes() == before
    assert not list((project / "build").glob(".routertwin-variants-*"))  # shadow projects removed


def test_pass_fail_is_unchanged_with_intervals_on(replayed):
    plain, with_iv, _ = replayed
    status = {r.ref.id: (r.status, r.twin) for rows in plain.report.by_study.values() for r in rows}
    assert status == {r.ref.id: (r.status, r.twin) for rows in with_iv.report.by_study.values() for r in rows}
    assert plain.report.summaries == with_iv.report.summaries
    # The toy row misses at the nominal value, and an end of the fabric
    # rate's range would pass it: it stays a miss, the report says which end.
    from routertwin.validation.replay import passes
    from routertwin.validation.sensitivity import study_sensitivity

    row = _row(with_iv, "toy-1500b-lat-min")
    assert row.status == "FAIL"
    assert passes(row.ref, row.mapped, row.interval.assumption_range[1])
    flips = {s.name: s.flipping for s in study_sensitivity(with_iv.report.by_study["toy"])}
    assert flips["t640.yaml:fabric.gbps_per_pfe"] == [("toy-1500b-lat-min", ["low"])]


def test_the_report_shows_intervals_and_records_seeds_and_variants(replayed, project):
    from routertwin.validation.replay import report_markdown

    _, rep, _ = replayed
    text = report_markdown(rep.report, {}, [])
    assert "| seeds (R=3) | assumptions | moved most by |" in text
    assert "## Sensitivity: the next measurement to ask for" in text
    rec = iv.record(rep.intervals, project)
    assert rec["mode"] == "quick" and rec["replications"] == 3
    assert rec["seeds"]["scenarios/t640/toy.yaml"] == iv.replication_seeds(1, 3)
    ends = {(v["path"], v["end"]): v for v in rec["variants"]}
    assert ends[("fabric.gbps_per_pfe", "low")]["value"] == 40.0
    assert "latency.juniper-t640.pipeline_us" in ends[("fabric.gbps_per_pfe", "low")]["refitted"]["t640"]


MM1 = """\
scenario: mm1-low-load
kind: queue_analytic
seed: 7
model: mm1
service_rate: 1000
utilization: [1.0e-7]
simulate: {customers: 4000, warmup: 1}
"""


def test_replication_spread_of_a_poisson_arrival_queue_matches_its_known_variance(tmp_path):
    # M/M/1 at a load of 1e-7: Poisson arrivals 10 s apart on average meet an
    # empty server (P(wait) = rho), so each sojourn is one exponential service
    # of mean 1/mu, independent of the others, and the mean of n of them has
    # standard deviation 1/(mu sqrt(n)). Over R replications the sample
    # standard deviation s has s^2 / sigma^2 ~ chi^2(R-1): with R = 40,
    # s/sigma lies in [0.62, 1.38] with probability above 0.998.
    path = tmp_path / "mm1.yaml"
    path.write_text(MM1, encoding="utf-8")
    r = 40
    p = iv.plan(tmp_path, [path], "quick", tmp_path / "work", replications=r)
    assert len(p.jobs) == r - 1 and not p.variants  # no profile: no assumption runs
    nominal = run_jobs([Job(str(path))], jobs=1)[0]
    p.fill(run_jobs(p.jobs, jobs=2), {path: nominal})
    (case, metric, interval), = [x for x in iv.case_intervals(p.runs[path]) if x[1] == "sim_sojourn_s"]
    n = 4000 - 1
    sigma = 1 / 1000 / math.sqrt(n)
    assert len(set(interval.seeds)) == r and len(interval.rep_values) == r
    assert 0.62 < interval.rep_sd / sigma < 1.38
    assert abs(statistics.mean(interval.rep_values) - 1e-3) < 4 * sigma / math.sqrt(r)
    # The analytic value of the same case is deterministic: no spread at all.
    (_, _, exact), = [x for x in iv.case_intervals(p.runs[path]) if x[1] == "sojourn_s"]
    assert exact.rep_range[0] == exact.rep_range[1] and exact.rep_sd == 0.0


def test_replication_seeds_are_the_scenarios_own_then_distinct_and_reproducible():
    s = iv.replication_seeds(1, 5)
    assert s[0] == 1 and len(set(s)) == 5 and s == iv.replication_seeds(1, 5)
    assert all(1 <= x < 2**31 for x in s)


def test_a_fitted_file_takes_no_assumption_ranges(tmp_path):
    from routertwin.validation.calibration import load_fitted

    p = tmp_path / "f.yaml"
    p.write_text("study: s\nparams:\n  a:\n    value: 1.0\n    rows: [r]\nassumption_ranges:\n"
                 "  a: {low: 0, high: 2, why: \"four words of reason\"}\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"f.yaml:6: key 'assumption_ranges': a fitted file takes no assumption"):
        load_fitted(p)


def test_routertwin_run_intervals_prints_and_writes_every_metrics_interval(project, tmp_path):
    import csv
    import json
    import subprocess
    import sys

    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "routertwin", "--root", str(project), "run",
                           str(project / "scenarios" / "t640" / "toy.yaml"), "--intervals", "quick", "--jobs", "2",
                           "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "toy-latency: intervals (quick)" in proc.stdout and "seeds (R=3)" in proc.stdout
    rows = {(r["case"], r["metric"]): r for r in csv.DictReader(
        (out / "toy-latency.intervals.csv").open(encoding="utf-8"))}
    r = rows[("1500b", "latency_min")]
    assert float(r["assumption_max"]) == pytest.approx(closed_form_latency_min_us(1500, 40.0, 24), rel=1e-9)
    assert r["moved_most_by"] == "t640.yaml:fabric.gbps_per_pfe"
    rec = json.loads((out / "toy-latency.intervals.json").read_text(encoding="utf-8"))
    assert rec["seeds"] == {"scenarios/t640/toy.yaml": iv.replication_seeds(1, 3)}
    assert rec["routertwin_version"] and rec["git_commit"]
    # the plain result files are those of a run without intervals
    assert json.loads((out / "toy-latency.json").read_text(encoding="utf-8"))["seed"] == 1


@pytest.mark.parametrize("name", ["zstack-flat-direct", "zstack-flat-eip", "zstack-vpc-eip"])
def test_assumptions_a_path_never_reads_are_not_varied(name):
    """The tcp_path runner names the node and link types its path does not
    use as unread (issue 15: 48 of ZStack's interval runs reran the nominal
    case). Checked independently: each such assumption, set to either end
    of its range, leaves the native config of the run -- everything the
    model is given -- unchanged, while every kept node/link assumption is
    one the path names."""
    from routertwin.runners.tcp_path.native import config
    from routertwin.runners.tcp_path.profiles import PathPlatform, load_platform
    from routertwin.scenario_loader import load_scenario

    path = ROOT / "scenarios" / "zstack" / f"{name}.yaml"
    sc = load_scenario(path)
    kept = {a.path for a in iv.scenario_inputs(path).assumptions}
    profile = Path(sc.config.platform)
    all_asm = iv.profile_assumptions(profile)
    skipped = [a for a in all_asm if a.path not in kept]
    types = {h.type for h in sc.config.path} | {h.link for h in sc.config.path[1:]}
    assert skipped, "each ZStack path leaves out the EIP host or the virtual router"
    assert all(a.path.split(".")[1] not in types for a in skipped)
    assert all(a.path.split(".")[1] in types for a in all_asm if a.path in kept and "_types." in a.path)
    plat = load_platform(profile)
    nominal = config(sc.config, plat, 1, 1000, 1)
    for a in skipped:
        for end in (a.low, a.high):
            d = plat.model_dump()
            node = d
            *head, last = a.path.split(".")
            for k in head:
                node = node[k]
            node[last] = end
            assert config(sc.config, PathPlatform.model_validate(d), 1, 1000, 1) == nominal, a.path


def test_a_single_web_switch_never_reads_the_pairs_failover_interval(tmp_path):
    """behaviour.failover_advert_interval_s is read by a redundant pair only
    (kind webswitch_pair), so a single switch's interval runs do not vary it.
    Checked independently: the NCTU L4 NAT replay gives the same numbers
    with the interval at either end of its range in every product."""
    import routertwin

    path = ROOT / "scenarios" / "nctu" / "nctu-l4-nat.yaml"
    kept = {a.path for a in iv.scenario_inputs(path).assumptions}
    assert "behaviour.failover_advert_interval_s" not in kept
    assert any(p.startswith("costs.") for p in kept)  # the switch's costs still are varied

    def replay(interval: str) -> list:
        shutil.copytree(ROOT / "scenarios" / "platforms", tmp_path / interval / "platforms")
        shutil.copytree(ROOT / "scenarios" / "workloads", tmp_path / interval / "workloads")
        (tmp_path / interval / "nctu").mkdir()
        shutil.copy(path, tmp_path / interval / "nctu" / path.name)
        for profile in (tmp_path / interval / "platforms").glob("nctu-*.yaml"):
            text = profile.read_text(encoding="utf-8")
            assert "failover_advert_interval_s: 1.0" in text
            profile.write_text(text.replace("failover_advert_interval_s: 1.0",
                                            f"failover_advert_interval_s: {interval}"), encoding="utf-8")
        res = routertwin.run(routertwin.load(tmp_path / interval / "nctu" / path.name))
        return [(c.case, c.metrics) for c in res.runs[0].cases]

    assert replay("0.1") == replay("3.0")
