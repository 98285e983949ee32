"""A bad scenario is one line naming file, line and key, exit status 2, no
traceback -- for every kind of mistake, at every depth of the document."""

import types
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from conftest import DATA, run_cli
from routertwin import runners
from routertwin.errors import ScenarioError
from routertwin.scenario_loader import ScenarioPath, load_scenario

GOOD = """
scenario: q
kind: queue_analytic
description: test queue
seed: 3
model: mmc
service_rate: 1000
servers: [1, 2]
utilization: [0.5]
simulate:
  customers: 1000
  warmup: 100
"""


def error_of(path, **kw) -> str:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(path, **kw)
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_misspelled_key_exits_2_with_one_stderr_line_naming_file_line_key(write, tmp_path):
    path = write("bad.yaml", GOOD.replace("service_rate:", "servce_rate:"))
    proc = run_cli("run", path, "--out", tmp_path / "out")
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{path}:6: key 'servce_rate': unknown key")
    assert "did you mean 'service_rate'?" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_nested_key_error_names_nested_key_and_its_line(write):
    path = write("bad.yaml", GOOD.replace("  warmup: 100", "  warmup: lots"))
    msg = error_of(path)
    assert msg.startswith(f"{path}:11: key 'simulate.warmup': ")
    assert "integer" in msg and "'lots'" in msg


def test_unknown_nested_key_suggests_sibling(write):
    path = write("bad.yaml", GOOD.replace("  customers: 1000", "  customer: 1000"))
    msg = error_of(path)
    assert msg.startswith(f"{path}:10: key 'simulate.customer': unknown key; did you mean 'customers'?")


def test_list_item_error_names_index_and_line(write):
    path = write("bad.yaml", GOOD.replace("servers: [1, 2]", "servers:\n  - 1\n  - -2"))
    msg = error_of(path)
    assert msg.startswith(f"{path}:9: key 'servers[1]': ")
    assert "greater than 0" in msg


def test_yaml_syntax_error_names_line(write):
    path = write("bad.yaml", GOOD.replace("utilization: [0.5]", "utilization: [0.5\nfoo: 1"))
    msg = error_of(path)
    assert msg.startswith(f"{path}:9: YAML syntax error:")


def test_duplicate_key_is_an_error_with_its_line(write):
    path = write("bad.yaml", GOOD + "seed: 4\n")
    msg = error_of(path)
    assert msg.startswith(f"{path}:12: ") and "seed" in msg


def test_missing_required_key_is_named(write):
    path = write("bad.yaml", GOOD.replace("model: mmc\n", ""))
    assert error_of(path) == f"{path}:1: key 'model': missing required key"


def test_unknown_kind_suggests_closest(write):
    path = write("bad.yaml", GOOD.replace("kind: queue_analytic", "kind: queue_analytc"))
    msg = error_of(path)
    assert msg.startswith(f"{path}:2: key 'kind': unknown kind 'queue_analytc'; did you mean 'queue_analytic'?")


def test_cross_field_rule_is_reported_at_the_document(write):
    path = write("bad.yaml", GOOD.replace("utilization: [0.5]", "utilization: [0.5]\narrival_rate: [10]"))
    msg = error_of(path)
    assert "give exactly one of 'utilization' and 'arrival_rate'" in msg
    assert msg.startswith(f"{path}:")


def test_set_override_error_names_the_flag(write):
    path = write("ok.yaml", GOOD)
    msg = error_of(path, overrides=["simulate.customerz=5"])
    assert msg == f"{path}: --set key 'simulate.customerz': unknown key; did you mean 'customers'?"


def test_bad_seed_flag_is_named(write):
    path = write("ok.yaml", GOOD)
    assert error_of(path, seed=-1).startswith(f"{path}: --seed key 'seed': Input should be greater than or equal to 0")


def test_set_override_and_seed_replace_file_values(write):
    path = write("ok.yaml", GOOD)
    sc = load_scenario(path, seed=9, overrides=["servers=[4]", "simulate.warmup=10"])
    assert sc.seed == 9
    assert sc.config.servers == [4]
    assert sc.config.simulate.warmup == 10
    assert sc.parameters["servers"] == [4]


def test_missing_scenario_file_is_one_line(tmp_path):
    proc = run_cli("run", tmp_path / "nope.yaml")
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1
    assert "nope.yaml: cannot read scenario" in proc.stderr


def test_bad_flag_is_one_line_exit_2():
    proc = run_cli("run", DATA / "mmc_teaching.yaml", "--sed", "3")
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1
    assert "--sed" in proc.stderr


# A kind with a file path and a list of nested models, to check path
# resolution and line mapping inside list items.
class Port(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    speed_gbps: float


class PathSchema(BaseModel):
    model_config = ConfigDict(extra="forbid")
    platform: ScenarioPath
    ports: list[Port]


@pytest.fixture
def path_kind(monkeypatch):
    module = types.SimpleNamespace(Schema=PathSchema, run=None)
    real_get = runners.get
    monkeypatch.setattr(runners, "get", lambda kind: module if kind == "paths" else real_get(kind))


PATHS = """
scenario: p
kind: paths
seed: 1
platform: profiles/box.yaml
ports:
  - name: a
    speed_gbps: 10
  - name: b
    speed_gbps: fast
"""


def test_paths_resolve_against_the_scenario_folder(write, path_kind, tmp_path):
    write("sub/profiles/box.yaml", "clock_hz: 1\n")
    path = write("sub/s.yaml", PATHS.replace("fast", "40"))
    sc = load_scenario(path)
    assert sc.config.platform == (tmp_path / "sub" / "profiles" / "box.yaml")
    assert sc.parameters["platform"] == "profiles/box.yaml"  # as written, for results files


def test_missing_referenced_file_names_its_key_and_line(write, path_kind):
    path = write("s.yaml", PATHS.replace("fast", "40"))
    msg = error_of(path)
    assert msg.startswith(f"{path}:4: key 'platform': file not found: ")
    assert msg.endswith(str(Path(path).parent / "profiles" / "box.yaml"))


def test_error_in_second_list_item_maps_to_its_line(write, path_kind):
    write("profiles/box.yaml", "clock_hz: 1\n")
    path = write("s.yaml", PATHS)
    msg = error_of(path)
    assert msg.startswith(f"{path}:9: key 'ports[1].speed_gbps': ")


def test_unknown_key_in_list_item_suggests_field(write, path_kind):
    write("profiles/box.yaml", "clock_hz: 1\n")
    path = write("s.yaml", PATHS.replace("fast", "40").replace("  - name: b", "  - nme: b"))
    msg = error_of(path)
    assert msg.startswith(f"{path}:8: key 'ports[1].nme': unknown key; did you mean 'name'?")


def test_union_member_tags_are_not_reported_as_keys(write, monkeypatch):
    class Union(BaseModel):
        model_config = ConfigDict(extra="forbid")
        frames: int | list[int]

    module = types.SimpleNamespace(Schema=Union, run=None)
    monkeypatch.setattr(runners, "get", lambda kind: module)
    path = write("u.yaml", "scenario: u\nkind: union\nframes: [64, big]\n")
    msg = error_of(path)
    assert msg.startswith(f"{path}:3: key 'frames")
    assert ".int" not in msg and "list[int]" not in msg


def test_set_of_a_new_nested_key_names_the_flag_and_the_key(write):
    path = write("ok.yaml", GOOD)
    msg = error_of(path, overrides=["warmpu.customers=5"])
    assert msg.startswith(f"{path}: --set key 'warmpu': unknown key")
