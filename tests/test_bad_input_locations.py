"""A mistake is reported where the user must fix it -- the key and line of a
rule across keys, the profile a scenario uses, the --set flag, the
command-line flag -- before any scenario runs: one line, exit status 2, no
output file. Each test runs the CLI as a user would."""

from ruamel.yaml import YAML

from conftest import PLATFORMS, ROOT, line_of, one_line, run_cli

PLATFORM = PLATFORMS / "cn68xx-1500-ddr3-1066.yaml"

GOOD = f"""
scenario: p
kind: pipeline
seed: 1
platform: {PLATFORM}
workload: {ROOT}/scenarios/workloads/ipfwd-se.yaml
fitted: {PLATFORMS}/fitted/octeon.yaml
flows: 4
tag_type: ORDERED
method: packet
duration_us: 100
warmup_us: 20
sweep:
  frame: [64, 128]
  cores: [1, 2]
"""


def run(tmp_path, *args) -> str:
    out = tmp_path / "out"
    return one_line(run_cli("run", *args, "--out", out), out)


# ------------------------------------------------ rules across keys (3) --

def test_frame_size_out_of_range_points_at_the_sweep_item_and_its_line(write, tmp_path):
    text = GOOD.replace("frame: [64, 128]", "frame: [64, 10]")
    path = write("frame10.yaml", text)
    assert run(tmp_path, path) == (f"{path}:{line_of(text, 'frame:')}: key 'sweep.frame[1]': "
                                   "frame 10 bytes is outside 64..9216")


def test_frame_mix_not_defined_points_at_the_case_frame(write, tmp_path):
    text = GOOD.replace("sweep:\n  frame: [64, 128]\n  cores: [1, 2]\n",
                        "cases:\n  - {frame: 64, cores: 1}\n  - {frame: imix, cores: 1}\n")
    path = write("mix.yaml", text)
    assert run(tmp_path, path) == (f"{path}:{line_of(text, 'imix')}: key 'cases[1].frame': "
                                   "frame 'imix' is neither a frame size nor a mix defined in 'mixes' (nor a "
                                   "named mix: simple_imix, imix_570, spirent_imix, four_size_imix; nor a "
                                   "trace in 'traces')")


def test_warmup_not_below_duration_points_at_warmup_us(write, tmp_path):
    text = GOOD.replace("warmup_us: 20", "warmup_us: 250")
    path = write("warm.yaml", text)
    assert run(tmp_path, path) == (f"{path}:{line_of(text, 'warmup_us')}: key 'warmup_us': "
                                   "warmup_us 250 must be smaller than duration_us 100")


def test_cores_beyond_the_platform_are_refused_at_load_at_the_sweep_item(write, tmp_path):
    count = YAML(typ="safe").load(PLATFORM.read_text())["cores"]["count"]
    text = GOOD.replace("cores: [1, 2]", f"cores: [1, {count + 1}]")
    path = write("cores.yaml", text)
    platform = YAML(typ="safe").load(PLATFORM.read_text())["platform"]
    assert run(tmp_path, path) == (f"{path}:{line_of(text, 'cores:')}: key 'sweep.cores[1]': "
                                   f"{count + 1} cores asked of platform '{platform}', which has {count}")


def test_duplicate_case_ids_point_at_the_second_case(write, tmp_path):
    text = GOOD.replace("sweep:\n  frame: [64, 128]\n  cores: [1, 2]\n",
                        "cases:\n  - {id: a, frame: 64, cores: 1}\n  - {id: a, frame: 128, cores: 1}\n")
    path = write("dup.yaml", text)
    line = run(tmp_path, path)
    assert line.startswith(f"{path}:{line_of(text, 'frame: 128')}: key 'cases[1].id': case id 'a' appears twice")


def test_esp_frame_mix_at_packet_level_is_refused_at_load(write, tmp_path):
    text = GOOD.replace("sweep:\n  frame: [64, 128]\n  cores: [1, 2]\n",
                        "mixes:\n  imix: [{bytes: 64, weight: 7}, {bytes: 1518, weight: 1}]\n"
                        "cases:\n  - {frame: imix, cores: 1}\n").replace(
                            "ipfwd-se.yaml", "ipsec-esp-aes128-sha1.yaml").replace(
                            "cn68xx-1500-ddr3-1066", "cn68xx-1300-ddr3-1066")
    path = write("mixpkt.yaml", text)
    assert run(tmp_path, path).startswith(f"{path}:{line_of(text, 'frame: imix')}: key 'cases[0].frame': "
                                          "method 'packet' runs one frame size per case for a path whose output "
                                          "frame grows (ESP)")


# ------------------------------------------- profiles at load time (4) --

def test_bad_platform_profile_fails_before_any_scenario_runs(write, tmp_path):
    plat_text = PLATFORM.read_text().replace("  count: 32", "  count: .inf", 1)
    assert plat_text != PLATFORM.read_text()
    bad_plat = write("badplat.yaml", plat_text)
    good = write("good.yaml", GOOD)
    uses_bad = write("usesbadplat.yaml", GOOD.replace("scenario: p", "scenario: p2")
                     .replace(str(PLATFORM), str(bad_plat)))
    line = run(tmp_path, good, uses_bad)  # good.yaml first: it must not have run (no output folder)
    assert line.startswith(f"{bad_plat}:{line_of(plat_text, 'count: .inf')}: key 'cores.count': ")


def test_fitted_file_without_the_platform_costs_is_refused_at_load_at_key_fitted(write, tmp_path):
    fitted = write("fitted.yaml", "params:\n  lock.linux.hold_cycles: {value: 100}\n")
    text = GOOD.replace(f"{PLATFORMS}/fitted/octeon.yaml", str(fitted))
    path = write("nofit.yaml", text)
    assert run(tmp_path, path) == (f"{path}:{line_of(text, 'fitted:')}: key 'fitted': fitted parameters have no "
                                   "costs for platform 'cn68xx-1500-ddr3-1066', workload cost_key 'se': run "
                                   "`routertwin calibrate`")


def test_fitted_file_with_a_non_number_names_its_line(write, tmp_path):
    fitted_text = "study: x\nparams:\n  lock.linux.hold_cycles:\n    value: .inf\n"
    fitted = write("fitted.yaml", fitted_text)
    path = write("badfit.yaml", GOOD.replace(f"{PLATFORMS}/fitted/octeon.yaml", str(fitted)))
    assert run(tmp_path, path) == (f"{fitted}:4: key 'params.lock.linux.hold_cycles.value': expected a finite "
                                   "number (or a list of them) under 'value'")


def test_router_platform_with_odd_ports_is_refused_at_load_naming_the_profile(write, tmp_path):
    t640 = PLATFORMS / "t640.yaml"
    plat_text = t640.read_text().replace("ports: 32", "ports: 31", 1)
    bad_plat = write("t640bad.yaml", plat_text)
    path = write("r.yaml", f"""
        scenario: r
        kind: router
        platform: {bad_plat}
        fitted: {PLATFORMS}/fitted/t640.yaml
        cases: [{{case: c40}}]
        """)
    assert run(tmp_path, path).startswith(f"{bad_plat}:{line_of(plat_text, 'ports: 31')}: key 'ports': "
                                          "ports must be even")


# ------------------------------------------------------ --set errors (5) --

def test_set_below_a_plain_value_is_blamed_on_the_flag(write, tmp_path):
    path = write("good.yaml", GOOD)
    assert run(tmp_path, path, "--set", "tag_type.x=1") == (
        f"{path}: --set key 'tag_type.x': 'tag_type' is the value 'ORDERED', not a group of keys")


def test_set_into_a_list_item_is_blamed_on_the_flag(write, tmp_path):
    path = write("good.yaml", GOOD)
    assert run(tmp_path, path, "--set", "sweep.cores.0=2") == (
        f"{path}: --set key 'sweep.cores.0': 'sweep.cores' is a list, not a group of keys: "
        "set it whole (--set sweep.cores=[...])")


def test_set_of_an_infinite_warmup_is_blamed_on_the_flag(write, tmp_path):
    path = write("good.yaml", GOOD)
    assert run(tmp_path, path, "--set", "warmup_us=.inf") == (
        f"{path}: --set key 'warmup_us': Input should be a finite number (got inf)")


def test_set_that_breaks_a_rule_inside_a_group_is_blamed_on_the_flag(write, tmp_path):
    path = write("good.yaml", GOOD)
    assert run(tmp_path, path, "--set", "sweep.frame=[64, 9999]") == (
        f"{path}: --set key 'sweep.frame[1]': frame 9999 bytes is outside 64..9216")


# ------------------------------------------ duplicate scenario names (6) --

def test_two_scenarios_with_one_name_are_refused_naming_both_files(write, tmp_path):
    a = write("a.yaml", GOOD)
    b = write("b.yaml", GOOD.replace("cores: [1, 2]", "cores: [1]"))
    assert run(tmp_path, a, b) == (f"{b}: scenario 'p' is also the name of {a}; results are written under "
                                   "the name, so give each a distinct 'scenario:'")


# ------------------------------------------------------ flag errors (8) --

def test_jobs_zero_or_negative_is_refused(write, tmp_path):
    path = write("good.yaml", GOOD)
    for jobs in ("0", "-3"):
        assert run(tmp_path, path, "--jobs", jobs) == (
            f"routertwin run: argument --jobs: must be at least 1, got {int(jobs)} (see --help)")
    assert one_line(run_cli("validate", "--jobs", "0", cwd=ROOT)) == (
        "routertwin validate: argument --jobs: must be at least 1, got 0 (see --help)")
