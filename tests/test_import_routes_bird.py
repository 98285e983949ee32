"""The MRT and BIRD importers against real BGP software (independent truth).

Two BIRD 2 daemons (Debian's bird2) run in two network namespaces made
here, joined by two veth links (198.18.0.0/30 and 198.18.0.4/30). Router A
announces two overlapping sets of routes over two eBGP sessions; router B
receives both, adds static routes (ECMP, blackhole, unreachable, prohibit,
a device route), installs its best routes in its namespace's kernel and
writes its table as an MRT TABLE_DUMP_V2 RIB dump (`mrt dump`). Then:

- Debian's `bgpdump -m` and the MRT importer (framing walk +
  pybgpkit-parser) read the same dump: the same (prefix, peer, next hop)
  entries; and the FIB `routertwin import mrt --select ecmp` writes holds
  for every prefix exactly the next hops bgpdump lists;
- `birdc show route all` imported by the BIRD importer and `ip -j route
  show` of B's kernel (which BIRD itself filled) imported by the Linux
  importer give the same FIB (port numbers compared through the interface
  names).

Bounded in time (every command has a timeout, BGP must converge in 60 s);
the daemons are stopped and the namespaces removed afterwards.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from routertwin.fib import read_fib
from routertwin.importers import mrt

CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21
ROOT = Path(__file__).resolve().parents[1]
ROUTES_PER_SESSION = 3000  # /24s; 1000 of them announced over both sessions
TIMEOUT_S = 60


def _caps() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


pytestmark = [
    pytest.mark.skipif(not (_caps() >> CAP_NET_ADMIN & 1 and _caps() >> CAP_SYS_ADMIN & 1),
                       reason="needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root) to create network namespaces"),
    pytest.mark.skipif(not (shutil.which("bird") and shutil.which("birdc") and shutil.which("bgpdump")),
                       reason="needs bird2 and bgpdump (scripts/setup.sh)"),
]


def _run(*cmd: str, timeout: float = 30) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True).stdout


def _static(name: str, table: str, routes: list[str]) -> str:
    body = "\n".join(f"  route {r} blackhole;" for r in routes)
    return f"protocol static {name} {{ ipv4 {{ table {table}; }};\n{body}\n}}\n"


def _prefixes(first: int, count: int) -> list[str]:
    return [f"10.{i // 256}.{i % 256}.0/24" for i in range(first, first + count)]


def _config_a() -> str:
    # Two tables so a prefix in both sets is announced over both sessions.
    set1 = _prefixes(0, ROUTES_PER_SESSION) + ["10.0.0.0/16", "20.0.0.0/8", "10.0.0.128/25"]
    set2 = _prefixes(ROUTES_PER_SESSION - 1000, ROUTES_PER_SESSION) + ["10.8.0.0/14", "20.1.0.0/16"]
    return ("router id 198.18.0.1;\nipv4 table t1;\nipv4 table t2;\nprotocol device {}\n"
            + _static("s1", "t1", set1) + _static("s2", "t2", set2)
            + "".join(f"protocol bgp p{i} {{ local 198.18.0.{4 * i - 3} as 65001; neighbor 198.18.0.{4 * i - 2} "
                      f"as 65002; hold time 10; connect retry time 1;\n  ipv4 {{ table t{i}; import none; "
                      "export all; };\n}\n" for i in (1, 2)))


CONFIG_B = """router id 198.18.0.2;
protocol device {}
protocol kernel { ipv4 { export all; }; }
protocol static sb { ipv4;
  route 30.0.0.0/8 via 198.18.0.1 via 198.18.0.5;
  route 30.1.0.0/16 blackhole;
  route 30.2.0.0/16 unreachable;
  route 30.3.0.0/16 prohibit;
  route 30.4.0.0/16 via "bb1";
  route 10.0.7.0/24 via 198.18.0.5;
}
protocol bgp q1 { local 198.18.0.2 as 65002; neighbor 198.18.0.1 as 65001; hold time 10; connect retry time 1;
  ipv4 { import all; export none; }; }
protocol bgp q2 { local 198.18.0.6 as 65002; neighbor 198.18.0.5 as 65001; hold time 10; connect retry time 1;
  ipv4 { import all; export none; }; }
"""


@pytest.fixture
def two_birds(tmp_path):
    tag = f"rtbgp{os.getpid()}"
    ns = {r: f"{tag}-{r}" for r in "ab"}
    procs: list[subprocess.Popen] = []
    try:
        for name in ns.values():
            _run("ip", "netns", "add", name)
        for i in (0, 1):
            _run("ip", "link", "add", f"ba{i}", "netns", ns["a"], "type", "veth", "peer", "name", f"bb{i}",
                 "netns", ns["b"])
            _run("ip", "-n", ns["a"], "addr", "add", f"198.18.0.{4 * i + 1}/30", "dev", f"ba{i}")
            _run("ip", "-n", ns["b"], "addr", "add", f"198.18.0.{4 * i + 2}/30", "dev", f"bb{i}")
            _run("ip", "-n", ns["a"], "link", "set", f"ba{i}", "up")
            _run("ip", "-n", ns["b"], "link", "set", f"bb{i}", "up")
        for r, conf in (("a", _config_a()), ("b", CONFIG_B)):
            (tmp_path / f"{r}.conf").write_text(conf)
            log = open(tmp_path / f"{r}.log", "w")
            procs.append(subprocess.Popen(["ip", "netns", "exec", ns[r], "bird", "-f", "-c", str(tmp_path / f"{r}.conf"),
                                           "-s", str(tmp_path / f"{r}.ctl")], stdout=log, stderr=log))
        yield ns["b"], tmp_path / "b.ctl"
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        for name in ns.values():
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)


def _converged(ctl: Path, routes: int) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    out = ""
    while time.monotonic() < deadline:
        # birdc fails until BIRD has opened its control socket
        r = subprocess.run(["birdc", "-s", str(ctl), "show", "route", "count"], capture_output=True, text=True,
                           timeout=30)
        out = r.stdout + r.stderr
        if f"{routes} of {routes} routes" in out:
            return
        time.sleep(0.5)
    logs = {p.name: p.read_text()[-300:] for p in ctl.parent.glob("*.log")}
    pytest.fail(f"BGP did not converge in {TIMEOUT_S} s: {out} {logs}")


def _import(kind: str, path: Path, out: Path, *extra: str) -> None:
    r = subprocess.run([sys.executable, "-m", "routertwin", "--root", str(ROOT), "import", kind, str(path), "-o",
                        str(out), *extra], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def _by_device(fib) -> dict[str, str]:
    """prefix -> target with ports named by their interfaces."""
    dev = [sorted({part.split("dev ")[-1] for part in label.split("; ")}) for label in fib.ports]
    out = {}
    for i in range(len(fib)):
        prefix, t = fib.route(i)
        out[prefix] = t.discard or ",".join(sorted(d for p in t.ports for d in dev[p]))
    return out


def test_mrt_dump_of_bird_agrees_with_bgpdump_and_kernel(two_birds, tmp_path):
    ns_b, ctl = two_birds
    # B's table: 2 x 3000 BGP routes + 5 from A's extra prefixes, 6 static.
    total = 2 * (ROUTES_PER_SESSION + 2) + 1 + 6
    _converged(ctl, total)
    dump = tmp_path / "rib.mrt"
    _run("birdc", "-s", str(ctl), f'mrt dump table "master4" to "{dump}"')
    deadline = time.monotonic() + TIMEOUT_S
    while not (dump.exists() and dump.stat().st_size > 0) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)  # the dump is written in one go by BIRD's main loop

    # bgpdump (libbgpdump, Debian) and the importer read the same entries.
    truth = set()
    for line in _run("bgpdump", "-m", str(dump)).splitlines():
        f = line.split("|")
        # BIRD writes its static routes from peer :: without attributes;
        # bgpdump then prints its unset next hop, 255.255.255.255.
        truth.add((f[5], f[3], None if f[3] == "::" and f[8] == "255.255.255.255" else f[8]))
    ours = set(mrt.entries(dump))
    assert ours == truth
    assert len(truth) >= 2 * ROUTES_PER_SESSION
    assert len({p for p, _, _ in truth}) < len(truth)  # prefixes with entries from both peers

    # The FIB written with --select ecmp: each prefix -> exactly bgpdump's next hops.
    _import("mrt", dump, tmp_path / "mrt.yaml", "--select", "ecmp")
    fib = read_fib(tmp_path / "mrt.fib")
    gw = [label.removeprefix("via ") for label in fib.ports]
    want: dict[str, set[str]] = {}
    for prefix, _, nh in truth:
        if nh is not None:  # the static routes' entries: listed as not modelled
            want.setdefault(prefix, set()).add(nh)
    got = {}
    for i in range(len(fib)):
        prefix, t = fib.route(i)
        got[prefix] = {gw[p] for p in t.ports}
    assert got == want

    # BIRD's own text and the kernel table BIRD filled give one FIB.
    (tmp_path / "bird.txt").write_text(_run("birdc", "-s", str(ctl), "show", "route", "all"))
    (tmp_path / "kernel.json").write_text(_run("ip", "-n", ns_b, "-4", "-j", "route", "show", "table", "all"))
    _import("bird", tmp_path / "bird.txt", tmp_path / "bird.yaml")
    _import("linux", tmp_path / "kernel.json", tmp_path / "kernel.yaml")
    from_bird = _by_device(read_fib(tmp_path / "bird.fib"))
    from_kernel = _by_device(read_fib(tmp_path / "kernel.fib"))
    # The kernel also holds B's connected /30s, which BIRD does not (no direct protocol).
    connected = {"198.18.0.0/30": "bb0", "198.18.0.4/30": "bb1"}
    assert {p: t for p, t in from_kernel.items() if p not in connected} == from_bird
    assert {p: from_kernel[p] for p in connected} == connected
    assert from_bird["30.0.0.0/8"] == "bb0,bb1" and from_bird["30.3.0.0/16"] == "prohibit"
