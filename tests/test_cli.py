"""The command line as users meet it: module entry point, project discovery,
listing, and the exit statuses of user and internal errors."""

import io

import pytest

from conftest import DATA, run_cli
from routertwin import cli
from routertwin.progress import Progress


def test_run_prints_table_and_writes_files_via_python_m(tmp_path):
    proc = run_cli("run", DATA / "mmc_teaching.yaml", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mmc-teaching (queue_analytic, seed 7)" in proc.stdout
    assert "c4-u0.8" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mmc-teaching.csv", "mmc-teaching.json"]


def test_root_is_found_from_a_subfolder(root):
    proc = run_cli("list", cwd=root / "tests" / "data")
    assert proc.returncode == 0, proc.stderr
    assert "runner kinds:" in proc.stdout and "queue_analytic" in proc.stdout


def test_outside_a_project_commands_needing_it_exit_2(tmp_path):
    proc = run_cli("validate", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"{tmp_path.resolve()}: no RouterTwin project here or above "
                                        "(no validation/reference.csv); use --root DIR"]


def test_internal_error_is_short_without_debug_and_raises_with_it(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setitem(cli._COMMANDS, "list", broken)
    assert cli.main(["list"]) == 1
    err = capsys.readouterr().err
    assert err == "routertwin: internal error: RuntimeError: boom (rerun with --debug for the traceback)\n"
    with pytest.raises(RuntimeError):
        cli.main(["--debug", "list"])


def test_progress_prints_plain_status_lines_when_not_a_terminal():
    stream = io.StringIO()
    with Progress("sweep", 3, stream=stream, interval=0.0) as p:
        for case in ("a", "b", "c"):
            p.advance(status=case)
    assert stream.getvalue().splitlines() == ["sweep: 1/3 a", "sweep: 2/3 b", "sweep: 3/3 c"]


def test_silent_progress_prints_nothing():
    stream = io.StringIO()
    with Progress("x", 2, stream=stream, enabled=False) as p:
        p.advance()
    assert stream.getvalue() == ""
