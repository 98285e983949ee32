"""`routertwin validate` on a small project: a study replaying three reference
rows with the textbook queue kind. Checks the table, the summaries, the rows
not yet replayed, the exit status, REPORT.md, the plots and the mapping errors."""

import shutil
import textwrap

import pytest

from conftest import run_cli
from routertwin.validation.reference import load_reference

# One M/M/c server per core, offered 99% of 3.3 Mpps per core: throughput is
# 0.99 * 3.3e6 * cores, which is within 2% of cn68-se-64b-1c (3.3 Mpps) and
# far (>5%) from cn68-se-64b-16c (41 Mpps): one pass, one fail by arithmetic.
SCENARIO = """
scenario: cores
kind: queue_analytic
seed: 1
model: mmc
service_rate: 3.3e6
servers: [1, 8, 16]
utilization: [0.99]
"""

MAPPING = """
study: teach
rows:
  cn68-se-64b-1c:
    scenario: scenarios/cores.yaml
    case: c1-u0.99
    metric: throughput
    tolerance_pct: 2
    reason: one core at 99% load
  cn68-se-64b-16c:
    scenario: scenarios/cores.yaml
    case: c16-u0.99
    metric: throughput
    tolerance_pct: 5
    reason: linear scaling, no shared ceiling
plots:
  - name: cores
    scenario: scenarios/cores.yaml
    x: servers
    y: throughput
"""


@pytest.fixture
def project(tmp_path, root):
    (tmp_path / "validation" / "mapping").mkdir(parents=True)
    (tmp_path / "scenarios").mkdir()
    shutil.copy(root / "validation" / "reference.csv", tmp_path / "validation" / "reference.csv")
    (tmp_path / "scenarios" / "cores.yaml").write_text(textwrap.dedent(SCENARIO).lstrip())
    return tmp_path


def mapping(project, text, name="teach"):
    path = project / "validation" / "mapping" / f"{name}.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def test_validate_reports_pass_fail_and_lists_unreplayed_rows_by_seed(project):
    mapping(project, MAPPING)
    proc = run_cli("--root", project, "validate", "--jobs", "1")
    assert proc.returncode == 1, proc.stderr  # cn68-se-64b-16c fails its tolerance
    out = proc.stdout
    ref = load_reference(project / "validation" / "reference.csv")
    octeon_rows = sum(r.seed == "002_2e27b0c2a734f3ea.txt" for r in ref.values())
    # 41 Mpps measured, 0.99 * 3.3e6 * 16 = 52.272 Mpps predicted: +27.5%
    assert f"teach: 2/{octeon_rows} rows replayed, 1 pass; predict median 27.5%, worst 27.5% (cn68-se-64b-16c)" in out
    assert f"overall: 2/{len(ref)} rows replayed, 1 pass" in out
    assert f"not yet replayed: {len(ref) - 2} rows" in out
    unreplayed = out.split("not yet replayed")[1]
    for rid, row in ref.items():
        if rid not in ("cn68-se-64b-1c", "cn68-se-64b-16c"):
            assert rid in unreplayed
    for seed in {r.seed for r in ref.values()}:
        assert seed in unreplayed
    report = (project / "build" / "validation" / "REPORT.md").read_text()
    assert "| cn68-se-64b-16c |" in report and "FAIL" in report
    assert f"## Not yet replayed ({len(ref) - 2} rows)" in report
    assert (project / "build" / "validation" / "plots" / "teach-scatter.png").stat().st_size > 0
    assert (project / "build" / "validation" / "plots" / "teach-cores.png").stat().st_size > 0
    assert (project / "build" / "validation" / "results" / "cores.json").is_file()


def test_validate_exits_0_when_every_replayed_row_passes(project):
    mapping(project, MAPPING.replace("tolerance_pct: 5", "tolerance_pct: 30"))
    proc = run_cli("--root", project, "validate", "--jobs", "1", "--no-plots")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 pass" in proc.stdout


def test_metric_the_runner_does_not_declare_is_a_mapping_error(project):
    mapping(project, MAPPING.replace("metric: throughput\n    tolerance_pct: 5", "metric: thruput\n    tolerance_pct: 5"))
    proc = run_cli("--root", project, "validate", "--jobs", "1", "--no-plots")
    assert proc.returncode == 2
    assert proc.stderr == ("validation/mapping/teach.yaml:12: key 'rows.cn68-se-64b-16c.metric': unknown metric "
                           "'thruput' for the runner of scenarios/cores.yaml; did you mean 'throughput'?\n")


def test_metric_missing_from_the_case_is_a_row_error_naming_mapping_line(project):
    # sim_wait_s is a metric of the kind, but only when the scenario simulates.
    mapping(project, MAPPING.replace("metric: throughput\n    tolerance_pct: 5", "metric: sim_wait_s\n    tolerance_pct: 5"))
    proc = run_cli("--root", project, "validate", "--jobs", "1", "--no-plots")
    assert proc.returncode == 1
    assert ("validation/mapping/teach.yaml:12: key 'rows.cn68-se-64b-16c.metric': case 'c16-u0.99' reports no "
            "metric 'sim_wait_s'") in proc.stdout
    assert "1 could not be replayed" in proc.stdout


@pytest.mark.parametrize("edit,line,key,message", [
    (("cn68-se-64b-16c:", "cn68-se-64b-61c:"), 9, "rows.cn68-se-64b-61c", "unknown reference row id; did you mean"),
    (("    tolerance_pct: 5\n", ""), 9, "rows.cn68-se-64b-16c", "give exactly one of 'tolerance_pct' and 'tolerance_abs'"),
    (("    reason: one core at 99% load\n", ""), 3, "rows.cn68-se-64b-1c.reason", "missing required key"),
    (("    case: c16-u0.99", "    cases: c16-u0.99"), 11, "rows.cn68-se-64b-16c.cases", "unknown key; did you mean 'case'?"),
    (("scenarios/cores.yaml\n    case: c16", "scenarios/core.yaml\n    case: c16"), 10, "rows.cn68-se-64b-16c.scenario",
     "scenario file not found: scenarios/core.yaml"),
    (("    y: throughput", "    y: throughput\n    colour: red"), 20, "plots[0].colour", "unknown key"),
    (("scenarios/cores.yaml\n    case: c16", "scenarios/cores.yaml\n    distribution_scenario: scenarios/twin.yaml\n"
      "    case: c16"), 11, "rows.cn68-se-64b-16c.distribution_scenario", "scenario file not found: scenarios/twin.yaml"),
])
def test_mapping_mistakes_are_one_line_with_file_line_key(project, edit, line, key, message):
    mapping(project, MAPPING.replace(*edit))
    proc = run_cli("--root", project, "validate", "--jobs", "1")
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(f"validation/mapping/teach.yaml:{line}: key '{key}': {message}")


def test_row_mapped_by_two_studies_is_an_error(project):
    mapping(project, MAPPING)
    mapping(project, MAPPING.replace("study: teach", "study: again"), name="again")
    proc = run_cli("--root", project, "validate")
    assert proc.returncode == 2
    assert "row already mapped at validation/mapping/again.yaml" in proc.stderr


def test_percentage_tolerance_on_zero_reference_is_rejected(project):
    mapping(project, """
        study: teach
        rows:
          t640-41b-drop:
            scenario: scenarios/cores.yaml
            case: c1-u0.99
            tolerance_pct: 1
            reason: zero-loss flag
        """)
    proc = run_cli("--root", project, "validate")
    assert proc.returncode == 2
    assert proc.stderr.startswith("validation/mapping/teach.yaml:6: key 'rows.t640-41b-drop.tolerance_pct': the reference value is 0")


def test_unknown_study_flag_suggests_closest(project):
    mapping(project, MAPPING)
    proc = run_cli("--root", project, "validate", "--study", "tech")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "--study tech: no validation/mapping/tech.yaml; did you mean 'teach'?"


def test_plot_where_keeps_only_matching_cases_and_sits_in_its_study_section(project):
    text = MAPPING + """  - name: one-server
    scenario: scenarios/cores.yaml
    x: arrival_rate
    y: throughput
    where: {servers: 1}
  - name: no-case
    scenario: scenarios/cores.yaml
    x: servers
    y: throughput
    where: {servers: 3}
"""
    mapping(project, text)
    run_cli("--root", project, "validate", "--jobs", "1")
    plots = project / "build" / "validation" / "plots"
    assert (plots / "teach-one-server.png").is_file()
    assert not (plots / "teach-no-case.png").exists()  # no case has servers == 3
    report = (project / "build" / "validation" / "REPORT.md").read_text()
    study = report.split("## Study teach")[1].split("## Not yet replayed")[0]
    assert "![teach-one-server.png](plots/teach-one-server.png)" in study
    assert "## Plots" not in report
