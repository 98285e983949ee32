"""A result file says what produced it: the git commit of the project and
the sha256 of every file the scenario refers to, so results of different
inputs never look alike -- while the same scenario and seed in the same tree
still give byte-identical files."""

import hashlib
import json
import shutil
import subprocess

import pytest

from conftest import MM1_SCENARIO, PLATFORMS, ROOT, run_cli

QUEUE = MM1_SCENARIO


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def git(folder, *args) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def project(tmp_path):
    """A RouterTwin project (the reference table is its marker) that is a git
    checkout with one commit, holding a pipeline scenario and its profiles."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    proj = tmp_path / "proj"
    (proj / "validation").mkdir(parents=True)
    shutil.copy(ROOT / "validation" / "reference.csv", proj / "validation" / "reference.csv")
    for rel in ("platforms/cn68xx-1500-ddr3-1066.yaml", "platforms/fitted/octeon.yaml", "workloads/ipfwd-se.yaml"):
        (proj / "scenarios" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "scenarios" / rel, proj / "scenarios" / rel)
    (proj / "scenarios" / "p.yaml").write_text("""
scenario: p
kind: pipeline
seed: 1
platform: platforms/cn68xx-1500-ddr3-1066.yaml
workload: workloads/ipfwd-se.yaml
fitted: platforms/fitted/octeon.yaml
method: analytic
sweep: {frame: [64], cores: [1]}
""")
    git(proj, "init", "-q")
    git(proj, "-c", "user.name=t", "-c", "user.email=t@example.org", "add", ".")
    git(proj, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "project")
    return proj


def run_in(proj, out):
    proc = run_cli("run", "scenarios/p.yaml", "--out", out, cwd=proj)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "p.json").read_text())


def test_json_records_git_commit_and_sha256_of_every_referenced_file(project, tmp_path):
    doc = run_in(project, tmp_path / "a")
    head = git(project, "rev-parse", "HEAD")
    assert head.startswith(doc["git_commit"]) and len(doc["git_commit"]) >= 7
    s = project / "scenarios"
    assert doc["input_files"] == {
        "scenarios/p.yaml": sha256(s / "p.yaml"),
        "scenarios/platforms/cn68xx-1500-ddr3-1066.yaml": sha256(s / "platforms" / "cn68xx-1500-ddr3-1066.yaml"),
        "scenarios/workloads/ipfwd-se.yaml": sha256(s / "workloads" / "ipfwd-se.yaml"),
        "scenarios/platforms/fitted/octeon.yaml": sha256(s / "platforms" / "fitted" / "octeon.yaml"),
    }


def test_same_tree_same_seed_is_byte_identical(project, tmp_path):
    run_in(project, tmp_path / "a")
    run_in(project, tmp_path / "b")
    for name in ("p.json", "p.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_changed_profile_changes_the_json_even_when_every_metric_is_equal(project, tmp_path):
    before = run_in(project, tmp_path / "a")
    plat = project / "scenarios" / "platforms" / "cn68xx-1500-ddr3-1066.yaml"
    plat.write_text(plat.read_text() + "# an edit that changes no number\n")
    after = run_in(project, tmp_path / "b")
    assert before["cases"] == after["cases"]
    key = "scenarios/platforms/cn68xx-1500-ddr3-1066.yaml"
    assert after["input_files"][key] == sha256(plat) != before["input_files"][key]
    assert after["git_commit"] == before["git_commit"] + "-dirty"  # a tracked file changed


def test_router_route_file_is_hashed_too(write, tmp_path):
    routes = write("routes.txt", "10.0.0.0/8 0\n")
    path = write("r.yaml", f"""
        scenario: r
        kind: router
        platform: {PLATFORMS}/t640.yaml
        fitted: {PLATFORMS}/fitted/t640.yaml
        duration_s: 0.001
        cases: [{{case: c40, route_file: routes.txt}}]
        """)
    from routertwin.results import provenance
    from routertwin.scenario_loader import load_scenario

    files = provenance(load_scenario(path))["input_files"]
    assert files[str(routes)] == sha256(routes)
    assert files[str(PLATFORMS / "t640.yaml")] == sha256(PLATFORMS / "t640.yaml")
    assert len(files) == 4  # scenario, platform, fitted, route file


def test_outside_a_project_the_commit_is_unknown(write, tmp_path):
    path = write("q.yaml", QUEUE)
    proc = run_cli("run", path, "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "out" / "q.json").read_text())
    assert doc["git_commit"] == "unknown"
    assert doc["input_files"] == {str(path): sha256(path)}
