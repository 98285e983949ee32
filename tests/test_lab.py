"""`routertwin lab` for real: namespaces, veth, bridges, iptables NAT, tc
shaping, iperf3 (docs/lab.md).

The truths are independent of the lab's code: TCP goodput at 1 Gbit/s from
Ethernet and TCP/IP header arithmetic, the addresses the seed's topology
gives (what the server must see through DNAT and SNAT), and the machine's
own lists of namespaces, links and iptables rules before and after a run,
also when the run is interrupted or killed. Runs are short (2 s per path);
the tests skip only where the machine cannot create network namespaces.
"""

from __future__ import annotations

import ipaddress
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import one_line, run_cli
from routertwin.lab.system import RunLock

CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21


def _caps() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


needs_netns = pytest.mark.skipif(
    not (_caps() >> CAP_NET_ADMIN & 1 and _caps() >> CAP_SYS_ADMIN & 1),
    reason="needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root) to create network namespaces")

# The lab's link names: none may appear in the machine's own namespace.
LAB_LINK_NAMES = {"vnet106", "up106", "p106", "up107", "p107", "up99", "p99", "up108", "p108", "vnet107",
                  "vnet108", "eip108-gw", "eip108-pub", "vnet109", "vr-priv", "vr-pub", "br106", "br107",
                  "br108", "br109", "br99"}

WIRE_RATE = 1e9
MTU = 1500
# Bytes a full-size TCP segment's frame takes on a GbE wire beyond the IP
# packet: Ethernet header 14 + FCS 4 + preamble/SFD 8 + inter-frame gap 12
# (IEEE 802.3).
ETHERNET_WIRE_OVERHEAD = 14 + 4 + 8 + 12


def _cmd(*args) -> str:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30).stdout


def host_state(prefix: str) -> dict:
    """What a lab run may not leave behind in the machine's own namespace."""
    links = {line.split(":")[1].strip().split("@")[0] for line in _cmd("ip", "-o", "link", "show").splitlines()}
    # a chain's [packets:bytes] is no rule: iptables-legacy counts the machine's own
    # traffic there (a policy's packets; iptables-nft keeps [0:0]), which goes on
    # during a run (the other xdist worker's Dask cluster on 127.0.0.1)
    rules = [re.sub(r" \[\d+:\d+\]$", "", line) for line in _cmd("iptables-save").splitlines()
             if not line.startswith("#")]
    return {
        "namespaces": sorted(n.split()[0] for n in _cmd("ip", "netns", "list").splitlines()
                             if n.startswith(prefix + "-")),
        "lab_links": sorted(links & LAB_LINK_NAMES),
        "iptables": rules,
        "ebtables": _cmd("ebtables", "-L"),
    }


def own_prefix(prefix: str) -> str:
    """A namespace prefix of this pytest process alone: another pytest (an
    xdist worker, or a second checkout's suite on the same machine) may run
    the same test at once, and each test counts and removes the namespaces
    of its prefix."""
    return f"{prefix}{os.getpid()}"


def goodput_ceiling(mss: int) -> float:
    """TCP payload per second when every wire bit at 1 Gbit/s carries
    full-size segments: MSS of every MTU + 38 bytes."""
    return WIRE_RATE * mss / (MTU + ETHERNET_WIRE_OVERHEAD)


@pytest.fixture(scope="module")
def lab_run(tmp_path_factory):
    """One short run of all three paths (2 s each, 0.5 s intervals)."""
    if not (_caps() >> CAP_NET_ADMIN & 1 and _caps() >> CAP_SYS_ADMIN & 1):
        pytest.skip("needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root) to create network namespaces")
    out = tmp_path_factory.mktemp("lab")
    prefix = own_prefix("rtlabt")  # each xdist worker may run this fixture
    before = host_state(prefix)
    proc = run_cli("lab", "--seconds", 2, "--interval", 0.5, "--prefix", prefix, "--out", out, "--no-plots",
                   "--twin-seconds", 0.05)
    after = host_state(prefix)
    assert proc.returncode == 0, proc.stderr
    (doc_path,) = out.glob("lab-*.json")
    return {"proc": proc, "doc": json.loads(doc_path.read_text()), "before": before, "after": after, "out": out}


@needs_netns
def test_throughput_is_within_the_shaped_links_goodput(lab_run):
    doc = lab_run["doc"]
    assert sorted(doc["measurements"]) == ["flat-direct", "flat-eip", "vpc-eip"]
    for path, runs in doc["measurements"].items():
        (m,) = runs
        # 1448 with TCP timestamps (IP 20 + TCP 20 + 12); MTU 1500 is veth's default
        assert m["mss"] in (1448, 1460), m["mss"]
        ceiling = goodput_ceiling(m["mss"])
        # tbf's 128 KiB bucket starts full: that much may pass above the rate
        burst_bits = 128 * 1024 * 8
        # The link bounds the bytes delivered up to any moment, not what the receiver reads in one
        # interval (a receiver that was not scheduled catches up from its socket buffer, faster
        # than the wire): every prefix of the records, and so the average, stays under the line.
        delivered = elapsed = 0.0
        for bps, seconds in zip(m["intervals_bps"], m["intervals_s"]):
            delivered += bps * seconds
            elapsed += seconds
            assert delivered <= ceiling * elapsed * 1.002 + burst_bits, (path, m["intervals_bps"], ceiling)
        assert m["avg_bps"] <= ceiling * 1.002 + burst_bits / elapsed, (path, m["avg_bps"], ceiling)
        # Unshaped, a veth path here carries several Gbit/s; shaped, TCP fills most of the link
        # even on a busy machine (780-920 Mbit/s measured at load average 19 on 2 cores).
        assert m["avg_bps"] >= 0.3 * ceiling, (path, m["avg_bps"])
        assert min(m["intervals_bps"]) <= m["avg_bps"] <= max(m["intervals_bps"])
        assert len(m["intervals_bps"]) >= 3  # 2 s in 0.5 s records (the short tail dropped)
        assert m["congestion"] == "cubic"  # set in the endpoints, whatever the machine's default


@needs_netns
def test_nat_translates_both_directions(lab_run):
    """DNAT: the client connects to the EIP, the server accepts on the VM's
    private address, from the client's real address. SNAT: a connection the
    VM opens arrives from its EIP. The seed's addresses, in 198.18/15."""
    doc = lab_run["doc"]
    eips = {"flat-eip": ("198.18.99.102", "198.18.108.102"), "vpc-eip": ("198.18.99.101", "198.18.109.101")}
    for path, (eip, private) in eips.items():
        (m,) = doc["measurements"][path]
        assert m["client_connected_to"] == eip
        assert m["server_local"] == private
        assert m["server_saw_client"] == "198.18.106.101"
        assert m["snat_seen_as"] == eip
        # iperf3 opens a control and a data connection; a NAT rule sees each one's first packet
        assert m["nat_rule_packets"]["DNAT"] >= 2 and m["nat_rule_packets"]["SNAT"] >= 2
    (direct,) = doc["measurements"]["flat-direct"]
    assert direct["client_connected_to"] == direct["server_local"] == "198.18.107.101"
    for m in (x for runs in doc["measurements"].values() for x in runs):
        for address in (m["client_connected_to"], m["server_local"], m["server_saw_client"]):
            assert ipaddress.ip_address(address) in ipaddress.ip_network("198.18.0.0/15")


@needs_netns
def test_run_leaves_nothing_behind(lab_run):
    assert lab_run["after"] == lab_run["before"]
    assert lab_run["after"]["namespaces"] == [] and lab_run["after"]["lab_links"] == []


@needs_netns
def test_results_record_run_and_machine(lab_run):
    doc = lab_run["doc"]
    assert doc["parameters"]["seconds"] == 2 and doc["parameters"]["interval_s"] == 0.5
    assert doc["parameters"]["tbf_rate_bps"] == round(1e9 * 1514 / 1538)
    assert doc["git_commit"] and doc["routertwin_version"] and doc["machine"]["kernel"] == os.uname().release
    assert "seed" in doc
    roles = {r["path"]: r["role"] for r in doc["rows"]}
    assert roles == {"flat-direct": "calibrate", "flat-eip": "predict", "vpc-eip": "predict"}
    (csv_path,) = lab_run["out"].glob("lab-*.csv")
    assert len(csv_path.read_text().splitlines()) == 4
    stdout = lab_run["proc"].stdout
    assert "calibrated on flat-direct: lab-vm.cpu_per_byte_ns" in stdout


@needs_netns
def test_the_twin_is_fitted_on_flat_direct_and_predicts_the_rest(lab_run):
    """The fitted endpoint cost reaches the ns-3 runs: the calibration
    path's packet-level twin lands on its own measurement (or, when the
    link bound it, on the wire's goodput ceiling), within 1 %."""
    doc = lab_run["doc"]
    tw = doc["twin"]
    assert tw["available"], tw["reason"]
    (fitted,) = tw["calibrated"]
    assert fitted["from_path"] == "flat-direct" and fitted["name"] == "lab-vm.cpu_per_byte_ns"
    assert tw["overrides"]["node_types"]["lab-vm"]["cpu_per_byte_ns"] == fitted["value"]
    assert tw["overrides"]["tcp"]["congestion"] == "cubic"
    (direct,) = doc["measurements"]["flat-direct"]
    target = min(direct["avg_bps"], goodput_ceiling(direct["mss"]))
    assert tw["predictions_bps"]["flat-direct"] == pytest.approx(target, rel=0.01)
    rows = {r["path"]: r for r in doc["rows"]}
    for path in ("flat-eip", "vpc-eip"):
        r = rows[path]
        assert r["twin_mbps"] == pytest.approx(tw["predictions_bps"][path] / 1e6)
        assert r["error_pct"] == pytest.approx(100 * (r["twin_mbps"] - r["measured_avg_mbps"]) / r["measured_avg_mbps"])


def _start(*args) -> tuple[subprocess.Popen, "queue.Queue[str]"]:
    # As a shell starts a foreground command: SIGINT at its default. A pytest-xdist
    # worker ignores SIGINT, and an ignored signal stays ignored across exec (Python
    # then installs no KeyboardInterrupt handler), so Ctrl-C would not reach the lab.
    proc = subprocess.Popen([sys.executable, "-m", "routertwin", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: "queue.Queue[str]" = queue.Queue()

    def pump():
        for line in proc.stderr:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def _wait_for(lines, needle: str, timeout_s: float = 60.0) -> str:
    """The first stderr line holding `needle`, within `timeout_s` of the
    start, or of the lab's word that it waits for another lab run's lock
    (the other xdist worker's lab, itself bounded: RunLock gives up after
    its wait_s)."""
    deadline = time.monotonic() + timeout_s
    seen = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            continue
        seen.append(line)
        if needle in line:
            return line
        if "waiting for another lab run to finish" in line:
            deadline = time.monotonic() + RunLock().wait_s + timeout_s
        if line == "":
            break
    raise AssertionError(f"no '{needle}' on stderr: {''.join(seen)}")


@needs_netns
def test_ctrl_c_mid_measurement_tears_down(tmp_path):
    prefix = own_prefix("rtlabint")
    before = host_state(prefix)
    proc, lines = _start("lab", "--paths", "flat-direct", "--seconds", 120, "--prefix", prefix, "--out", tmp_path,
                         "--no-twin", "--no-plots")
    try:
        _wait_for(lines, "flat-direct: iperf3")
        time.sleep(1.0)  # iperf3 is sending (for 120 s: the checks below cannot outlast it)
        live = host_state(prefix)["namespaces"]
        assert len(live) == 9, "the run's namespaces should exist while it measures"
        # every address the kernel holds in them (but loopback) is in the benchmarking range
        addresses = [a["local"] for ns in live
                     for dev in json.loads(_cmd("ip", "-n", ns, "-j", "-4", "addr", "show"))
                     for a in dev.get("addr_info", [])]
        outside = [a for a in addresses if not ipaddress.ip_address(a).is_loopback]
        assert len(outside) == 11  # vm106 1, switch 3, vm107-109 1 each, eip108 2, vrouter 2
        assert all(ipaddress.ip_address(a) in ipaddress.ip_network("198.18.0.0/15") for a in outside), outside
        proc.send_signal(signal.SIGINT)
        status = proc.wait(timeout=60)  # teardown on a machine at load 20 can take seconds
    finally:
        if proc.poll() is None:
            proc.kill()
            run_cli("lab", "--cleanup", "--prefix", prefix)
    assert status == 130
    assert host_state(prefix) == before
    assert list(tmp_path.iterdir()) == []  # an interrupted run writes no results


@needs_netns
def test_a_killed_runs_leftovers_are_removed_by_the_next_run(tmp_path):
    prefix = own_prefix("rtlabkill")
    proc, lines = _start("lab", "--paths", "flat-direct", "--seconds", 120, "--prefix", prefix, "--out", tmp_path,
                         "--no-twin", "--no-plots")
    try:
        _wait_for(lines, "flat-direct: iperf3")
        time.sleep(0.5)
        proc.kill()  # SIGKILL: no handler runs, the namespaces stay
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    left = host_state(prefix)["namespaces"]
    assert len(left) == 9 and all(n.startswith(f"{prefix}-{proc.pid}-") for n in left)
    inside = [int(p) for n in left for p in _cmd("ip", "netns", "pids", n).split()]
    assert inside  # the killed run's iperf3 server and client
    again = run_cli("lab", "--paths", "flat-direct", "--seconds", 1, "--interval", 0.5, "--prefix", prefix,
                    "--out", tmp_path, "--no-twin", "--no-plots")
    assert again.returncode == 0, again.stderr
    assert "removing 9 namespace(s) left by an earlier run that was killed" in again.stderr
    assert host_state(prefix)["namespaces"] == []
    for pid in inside:  # ended with their namespaces
        assert _ended(pid), pid


@needs_netns
def test_cleanup_removes_only_namespaces_of_dead_runs(capsys):
    from routertwin.cli import main

    prefix = own_prefix("rtlabclean")
    dead = subprocess.Popen(["true"])  # its pid is certainly dead after wait()
    dead.wait()
    stale, live = f"{prefix}-{dead.pid}-vm106", f"{prefix}-{os.getpid()}-vm106"
    for name in (stale, live):
        subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
    try:
        assert main(["lab", "--cleanup", "--prefix", prefix]) == 0
        assert f"removed 1 leftover namespace(s): {stale}" in capsys.readouterr().out
        assert host_state(prefix)["namespaces"] == [live]  # a live run's namespaces are its own
    finally:
        for name in (stale, live):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)


def _ended(pid: int, wait_s: float = 5.0) -> bool:
    """The process is gone, or a zombie (dead, its new parent not yet
    reaped it)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) not found")
def test_without_net_admin_exits_2_with_the_reason(tmp_path):
    """Root without CAP_NET_ADMIN / CAP_SYS_ADMIN (dropped from the bounding
    set, so the exec'd Python cannot have them), or any non-root user."""
    drop = ["setpriv", "--bounding-set", "-net_admin,-sys_admin"] if os.geteuid() == 0 else []
    proc = subprocess.run([*drop, sys.executable, "-m", "routertwin", "lab", "--seconds", "2", "--out", tmp_path / "o"],
                          capture_output=True, text=True, timeout=120)
    line = one_line(proc, tmp_path / "o")
    assert "needs root" in line and "CAP_NET_ADMIN" in line


@pytest.mark.parametrize("args, message", [
    (["--paths", "flat-direct,flat-eipp"], "unknown path 'flat-eipp'"),
    (["--rate", "0"], "--rate 0 bit/s"),
    (["--rate", "1e12"], "--rate 1e+12 bit/s"),
    (["--seconds", "0.5"], "--seconds 0.5"),
    (["--calibrate", "vpc-eip", "--paths", "flat-direct"], "--calibrate 'vpc-eip'"),
])
def test_bad_input_exits_2_before_touching_the_network(tmp_path, capsys, args, message):
    from routertwin.cli import main

    assert main(["lab", *args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "o").exists()


@needs_netns
def test_missing_iperf3_is_named(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("ip", "tc", "iptables", "ebtables", "git"):
        if shutil.which(program):
            os.symlink(shutil.which(program), bin_dir / program)
    proc = subprocess.run([sys.executable, "-m", "routertwin", "lab", "--out", tmp_path / "o"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PATH": str(bin_dir)})
    line = one_line(proc, tmp_path / "o")
    assert "'iperf3' not found" in line and "iperf3" in line
