"""Counter prices from the core's own cost (issue 18): the instruction table,
derived prices, `routertwin profile import` of a cost-harness run (here one
taken under qemu, labelled emulated) and its refusals of bad input."""

import copy
import json
from pathlib import Path

import pytest

from routertwin import cost
from routertwin.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "cost"
PLATFORM = ROOT / "scenarios" / "platforms" / "cn68xx-1500-ddr3-1066.yaml"


@pytest.fixture(scope="module")
def rows():
    return cost.read_insn_table(ROOT)


def test_table_has_every_isa_and_operation_with_the_same_counters(rows):
    ops = {}
    for r in rows:
        ops.setdefault(r["op"], {})[r["isa"]] = {k: v for k, v in r.items() if k.endswith("_per_call")
                                                 and k != "insns_per_call"}
    assert {"parse", "ttl", "lpm_lookup_big", "session_lookup", "sched_maglev", "dns_answer",
            "path_ip4_fwd"} <= set(ops)
    for op, by_isa in ops.items():
        assert set(by_isa) == {"x86_64", "mips64", "aarch64"}, op
        assert by_isa["x86_64"] == by_isa["mips64"] == by_isa["aarch64"], op
    # The counters are the headers' contracts: dp_parse of a 64-byte UDP or
    # TCP frame walks 14 + 20 + 8 or 20 header bytes and sums 20 (dp_pkt.h).
    parse = cost.table_ops(rows)["parse"]
    assert parse["packets"] == 1 and parse["bytes_parsed"] == (42 + 54) / 2 and parse["checksum_bytes"] == 20


def test_fit_recovers_known_prices_exactly(rows):
    """Synthetic instruction counts built from known prices over the table's
    real counters: the relative least squares must give them back."""
    names = cost.counter_names()
    ops = cost.table_ops(rows)
    area = cost.table_area(rows)
    truth = {"call": 11.0, "bytes_parsed": 2.5, "checksum_bytes": 1.75, "csum_updates": 9.0, "table_probes": 14.0,
             "cache_lines": 3.0, "hashes": 40.0, "crypto_bytes": 6.0, "servers_examined": 7.0, "rules_evaluated": 4.0}
    ys = {o: truth["call"] + sum(truth.get(c, 0.0) * v for c, v in ops[o].items())
          for o in ops if area[o] != "path"}
    fit = cost.fit_prices(ys, ops, names, "derived", "synthetic")
    assert fit.call.value == pytest.approx(11.0, rel=1e-9)
    for c, v in truth.items():
        if c != "call":
            assert fit.per_counter[c].value == pytest.approx(v, rel=1e-9, abs=1e-9), c


def test_derived_prices_predict_the_held_out_paths(rows):
    fit = cost.derive_instruction_prices(rows, "mips64")
    insns, ops = cost.table_insns(rows, "mips64"), cost.table_ops(rows)
    # checksum bytes: about the slope between the two full checksums
    slope = (insns["csum_full_1480"] - insns["csum_full_20"]) / 1460
    assert fit.per_counter["checksum_bytes"].value == pytest.approx(slope, rel=0.25)
    for path, calls in cost.PATH_CALLS.items():
        assert fit.predict(ops[path], calls) == pytest.approx(insns[path], rel=0.5), path


def test_seed002_report_fitted_cycles_are_the_calibrate_rows_and_l2_is_unexplained():
    rep = {r["row"]: r for r in cost.seed002_report(ROOT)}
    # 1.5 GHz / 3.3 Mpps (calibrate row cn68-se-64b-1c) = 454.5 cycles = fixed + the priced cache line
    assert rep["cn68-se-64b-1c"]["fitted_cycles"] == pytest.approx(1.5e9 / 3.3e6, rel=2e-3)
    assert rep["cn78-l2-64b-1c"]["derived_cycles_mid"] == 0
    assert "work scheduling" in rep["cn78-l2-64b-1c"]["not_modelled"]
    se = rep["cn68-se-64b-1c"]
    assert se["derived_cycles_low"] < se["derived_cycles_mid"] < se["derived_cycles_high"]
    assert se["derived_pps_mid"] == pytest.approx(1.5e9 / se["derived_cycles_mid"])


def test_profile_derive_prints_prices_and_the_seed_rows(capsys):
    assert main(["--root", str(ROOT), "profile", "derive"]) == 0
    out = capsys.readouterr().out
    assert "checksum_bytes" in out and "cn68-se-64b-1c" in out and "derived-only pps" in out


def test_import_of_an_emulated_run_is_labelled_and_loads_as_a_profile(tmp_path, capsys):
    out = tmp_path / "cn68-from-qemu.yaml"
    assert main(["--root", str(ROOT), "profile", "import", str(DATA / "aarch64-qemu.json"),
                 "--platform", str(PLATFORM), "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "EMULATED RUN" in shown and "current profile" in shown and "cache_lines" in shown
    text = out.read_text()
    assert "EMULATED RUN" in text
    counter_lines = [ln for ln in text.split("counter_cycles:")[1].splitlines()[1:] if ln.startswith("  ")]
    assert counter_lines and all("emulated" in ln or "not identified" in ln for ln in counter_lines)
    assert "hashes" in text  # priced, even where the runner cannot use it yet
    from routertwin.runners._shared.profiles import load_profile
    from routertwin.runners.pipeline.profiles import PlatformProfile

    prof = load_profile(out, PlatformProfile)
    assert prof.platform == "cn68xx-1500-ddr3-1066" and set(prof.counter_cycles) <= set(cost.counter_names())


def _bad(tmp_path, doc, name="bad.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return p


@pytest.fixture(scope="module")
def good():
    return json.loads((DATA / "aarch64-qemu.json").read_text())


def _mutate(good, fn):
    d = copy.deepcopy(good)
    fn(d)
    return d


def _op(d, name):
    return next(o for o in d["ops"] if o["name"] == name)


BAD = {
    "unknown_isa": (lambda d: d.update(isa="sparc64"), "field 'isa': unknown ISA 'sparc64'"),
    "missing_op": (lambda d: d["ops"].remove(_op(d, "session_lookup")), "operation 'session_lookup' is missing"),
    "counters_mismatch": (lambda d: _op(d, "parse")["ops"].update(bytes_parsed=7 * 4096),
                          "ops.bytes_parsed': 7 per call, this core counts 48"),
    "counter_names": (lambda d: d["counters"].pop(), "field 'counters'"),
    "negative": (lambda d: _op(d, "ttl").update(ticks=-5), "(ttl).ticks': -5 is not a non-negative number"),
    "absurd": (lambda d: _op(d, "ttl").update(ticks=4096 * 1e9), "per call is absurd"),
    "format": (lambda d: d.update(format="routertwin-cost/0"), "field 'format'"),
    "calls": (lambda d: _op(d, "build").update(calls=0), "(build).calls': 0 is not a positive integer"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_results_exit_2_naming_field_and_file_and_write_nothing(tmp_path, capsys, good, case):
    fn, message = BAD[case]
    path = _bad(tmp_path, _mutate(good, fn))
    out = tmp_path / "profile.yaml"
    assert main(["--root", str(ROOT), "profile", "import", str(path), "--platform", str(PLATFORM),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and message in err
    assert not out.exists()


def test_not_json_and_untimed_emulator_runs_are_refused(tmp_path, capsys):
    out = tmp_path / "profile.yaml"
    p = _bad(tmp_path, "{not json")
    assert main(["--root", str(ROOT), "profile", "import", str(p), "--platform", str(PLATFORM),
                 "--out", str(out)]) == 2
    assert "not a JSON document" in capsys.readouterr().err
    # qemu-mips64's CP0 Count does not advance in user mode: every pass reads 0 ticks.
    assert main(["--root", str(ROOT), "profile", "import", str(DATA / "mips64-qemu.json"), "--platform",
                 str(PLATFORM), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "mips64-qemu.json" in err and "not a plausible measurement" in err
    assert not out.exists()


def test_validation_report_gets_a_derived_only_column_for_the_one_core_rows():
    from types import SimpleNamespace

    from routertwin.validation import replay

    def row(rid):
        ref = SimpleNamespace(id=rid, system="s", condition="c", value_text="3.3e6", unit="pps", role="calibrate")
        mapped = SimpleNamespace(consistency_check=False, tolerance_text=lambda: "1%", reason="r")
        return replay.RowResult(ref, mapped, twin=3.3e6, error_pct=0.0, status="pass")

    rows = [row("cn68-se-64b-1c"), row("cn68-se-64b-16c"), row("cn78-l2-64b-1c")]
    report = replay.Report({"octeon": rows}, {}, [])
    replay.add_derived(report, ROOT)
    assert "Mpps; explains" in rows[0].derived and rows[1].derived == ""
    assert "no code" in rows[2].derived
    md = replay.report_markdown(report, {}, [])
    assert replay.DERIVED_HEADER in md and rows[0].derived in md


def test_a_native_host_run_imports_as_a_measurement(tmp_path, rows):
    """The harness built by the project (build/release) runs here natively:
    its JSON passes every check and is not labelled emulated."""
    import subprocess

    exe = ROOT / "build" / "release" / "core" / "dp_cost"
    assert exe.exists(), f"{exe} missing: build the project (pip install . builds it)"
    doc = subprocess.run([str(exe), "--reps", "2"], capture_output=True, text=True, check=True, timeout=120).stdout
    path = tmp_path / "host.json"
    path.write_text(doc)
    res = cost.load_results(path, rows, 2.5e9)
    assert not res.emulated and res.doc["isa"] == "x86_64"
    assert set(res.cycles_per_call) >= set(cost.table_ops(rows))
