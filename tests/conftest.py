"""Shared helpers for the Python tests: the project root, scenario files
written into tmp_path, running the real CLI as a subprocess, and the live
HAProxy tests' network namespace and stats socket."""

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
PLATFORMS = ROOT / "scenarios" / "platforms"

# The smallest valid scenario: an M/M/1 queue at half load (closed form).
MM1_SCENARIO = """
scenario: q
kind: queue_analytic
seed: 1
model: mm1
service_rate: 100
utilization: [0.5]
"""


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def write(tmp_path):
    """write("name.yaml", text) -> path, with the text dedented."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return _write


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line of `text` containing `needle`."""
    return next(i for i, line in enumerate(text.strip("\n").splitlines(), 1) if needle in line)


def one_line(proc, out=None) -> str:
    """The one stderr line of a refused CLI run (exit status 2, no traceback,
    and no output folder `out` when given)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    if out is not None:
        assert not out.exists()
    return lines[0]


def run_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """`python -m routertwin ARGS` as a user runs it."""
    return subprocess.run([sys.executable, "-m", "routertwin", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def in_namespace(tag: str, module: str, expression: str) -> str:
    """What `expression` prints, evaluated (with `t` the test module `module`,
    `json` and `Path` imported) in a network namespace made for it
    (198.18.0.1/16 on its loopback); the namespace is deleted whatever happens."""
    ns = f"rt-{tag}-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "addr", "add", "198.18.0.1/16", "dev", "lo"]):
            subprocess.run(["ip", "netns", "exec", ns, *cmd], check=True)
        code = ("import sys, json; sys.path.insert(0, %r); from pathlib import Path; import %s as t; print(%s, end='')"
                % (str(Path(__file__).parent), module, expression))
        return subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120, check=True).stdout
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


def haproxy_command(sock_path, command: str) -> str:
    """One command on a live HAProxy's stats socket (management guide 9.3):
    its whole answer, read until HAProxy closes the connection."""
    u = socket.socket(socket.AF_UNIX)
    u.connect(str(sock_path))
    u.sendall(command.encode() + b"\n")
    data = b""
    while chunk := u.recv(65536):
        data += chunk
    u.close()
    return data.decode()


def write_scenario(tmp_path, head: str, body: str, name: str = "s.yaml"):
    """A scenario file in tmp_path: `head` (the keys every scenario of a
    test file shares) then `body`, both dedented; returns (path, text)."""
    text = textwrap.dedent(head).lstrip() + textwrap.dedent(body).lstrip("\n")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path, text


def run_cases(tmp_path, path) -> list[dict]:
    """`routertwin run PATH` as a user runs it (it must succeed): the cases
    of the JSON result it writes."""
    out = tmp_path / "out"
    proc = run_cli("run", path, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / f"{Path(path).stem}.json").read_text())["cases"]


ADX_FITTED = ROOT / "scenarios" / "platforms" / "fitted" / "adx.yaml"
ADX_HEAD = f"""
    scenario: s
    kind: lb
    seed: 1
    platform: {PLATFORMS / 'adx8000.yaml'}
    fitted: {ADX_FITTED}
"""


def adx_scenario(tmp_path, body: str, name: str = "s.yaml"):
    """An lb scenario on the ADX 8000 profile and its fitted prices: (path, text)."""
    return write_scenario(tmp_path, ADX_HEAD, body, name)


def run_adx(tmp_path, body: str) -> dict:
    """`routertwin run` of adx_scenario(body): its cases by id."""
    path, _ = adx_scenario(tmp_path, body)
    return {c["case"]: c for c in run_cases(tmp_path, path)}
