"""`routertwin lab haproxy` for real: Debian's haproxy in a network namespace
the lab creates, beside the twin (docs/lab.md, "HAProxy beside the twin").

The truths are independent of the lab's and the twin's code: the weights'
arithmetic (roundrobin and static-rr deal whole cycles), HAProxy's
map-based source hash of an IPv4 address (the address modulo the total
weight: get_server_sh in src/backend.c), cookie stickiness by definition,
the health-check closed form (manual 5.2: DOWN between (fall-1) x
fastinter and inter + (fall-1) x fastinter after the death), the number of
requests a round robin sends to a dead server until then, and the
machine's own namespace list before and after, also when the run is
interrupted or killed. One short run of the lab's eight cases (about 30 s);
the tests skip only without root or without haproxy.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import one_line, run_cli
from test_lab import _ended, _start, _wait_for, needs_netns, own_prefix

CASES = Path(__file__).resolve().parents[1] / "scenarios" / "lab" / "haproxy"
needs_haproxy = pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy (Debian package) not installed")
# the module's fixtures may run on both xdist workers at once, and each checks
# that its run left no namespace of its prefix behind
PREFIX = own_prefix("rtlabhat")


def _namespaces(prefix: str) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30).stdout
    return sorted(line.split()[0] for line in out.splitlines() if line.startswith(prefix + "-"))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    out = tmp_path_factory.mktemp("labha")
    before = _namespaces(PREFIX)
    names = ["roundrobin-weights", "static-rr", "leastconn", "source", "cookie", "failover", "failover-redispatch",
             "uri"]
    proc = run_cli("lab", "haproxy", *[CASES / f"{n}.cfg" for n in names], "--prefix", PREFIX, "--out", out)
    files = sorted(out.glob("lab-haproxy-*.json"))
    assert files, proc.stdout + proc.stderr
    doc = json.loads(files[0].read_text())
    return {"proc": proc, "doc": doc, "out": out, "before": before,
            "cases": {Path(c["config"]).stem: c for c in doc["cases"]}}


DEBIAN_SW = "/usr/share/doc/haproxy/examples/content-sw-sample.cfg"


def _served(case) -> Counter:
    return Counter(r["server"].split("/")[1] for r in case["measured"]["requests"] if r["server"])


@needs_netns
@needs_haproxy
def test_weighted_round_robins_deal_exact_shares(lab):
    rr, srr = lab["cases"]["roundrobin-weights"], lab["cases"]["static-rr"]
    # 60 requests over weights 3:2:1 (10 cycles of 6) and 70 over 4:2:1 (10 cycles of 7)
    assert _served(rr) == {"a": 30, "b": 20, "c": 10}
    assert _served(srr) == {"a": 40, "b": 20, "c": 10}
    for case in (rr, srr):
        assert case["comparison"]["verdict"] == "pass"
        assert {r["server"]: r["twin"] for r in case["comparison"]["rows"]} == _served(case)


@needs_netns
@needs_haproxy
def test_leastconn_sends_less_to_the_slow_server(lab):
    case = lab["cases"]["leastconn"]
    served = _served(case)
    assert sum(served.values()) == 150
    # six connections held for 40 ms on "slow" and 5 ms on the others: least
    # connections keeps their counts level, so each server's share follows its
    # rate, 1/40 against 1/5 per connection: slow far below a third
    assert served["slow"] < 0.2 * 150 < served["fast1"] and served["fast2"] > 0.2 * 150
    rows = case["comparison"]["rows"]
    tol = case["comparison"]["criterion"]["tolerance_pct"]
    assert all((abs(r["measured_pct"] - r["twin_pct"]) <= tol) == r["ok"] for r in rows)


@needs_netns
@needs_haproxy
def test_source_hash_is_the_address_modulo_the_weight(lab):
    case = lab["cases"]["source"]
    server_of = {}
    for r in case["measured"]["requests"]:
        server_of.setdefault(r["source"], set()).add(r["server"])
    assert len(server_of) == 40 and all(len(s) == 1 for s in server_of.values())  # every client sticks
    # map-based: server = map[h % total weight], h the address as one 32-bit
    # word (198.18.2.k: k mod 4 with four servers of weight 1): the residues
    # name four distinct servers
    by_residue = {}
    for src, servers in server_of.items():
        by_residue.setdefault(int(src.split(".")[3]) % 4, set()).update(servers)
    assert len(by_residue) == 4 and all(len(s) == 1 for s in by_residue.values())
    assert len(set().union(*by_residue.values())) == 4
    assert sorted(_served(case).values()) == [20, 20, 20, 20]
    assert case["comparison"]["verdict"] == "pass" and case["comparison"]["same_server_pct"] == 100.0


@needs_netns
@needs_haproxy
def test_cookie_insert_keeps_every_client(lab):
    case = lab["cases"]["cookie"]
    reqs = case["measured"]["requests"]
    assert len(reqs) == 9 * 4
    first = [r for r in reqs if r["round"] == 0]
    assert all(r["set_cookie"] == f"SRV={r['server'].split('/')[1]}" for r in first)  # names the server
    assert all(r["set_cookie"] is None for r in reqs if r["round"] > 0)  # indirect: a valid cookie is not set again
    for k in range(9):
        assert len({r["server"] for r in reqs if r["client"] == k}) == 1
    assert _served(case) == {"a": 12, "b": 12, "c": 12}  # 9 first requests round-robined, each client 4 times
    assert case["comparison"]["verdict"] == "pass" and case["comparison"]["twin_sticky_pct"] == 100.0


@needs_netns
@needs_haproxy
def test_failover_detection_and_failed_requests(lab):
    inter, fastinter, fall, rate, servers = 500, 100, 3, 50, 3
    plain, redisp = lab["cases"]["failover"]["comparison"], lab["cases"]["failover-redispatch"]["comparison"]
    for c in (plain, redisp):
        det = c["measured_detection_ms"]
        assert (fall - 1) * fastinter - 20 <= det <= inter + (fall - 1) * fastinter + 60, det
        assert c["twin_window_ms"] == [(fall - 1) * fastinter, inter + (fall - 1) * fastinter]
        assert c["requests"] == 200
    # without redispatch every request the round robin gives the dead server
    # between the kill and the DOWN mark fails (its retries go back there)
    assert abs(plain["failed"] - plain["measured_detection_ms"] * rate / 1000 / servers) <= 2
    assert plain["verdict"] == "pass"
    # with it, round robin over three servers up: HAProxy 2.6 redispatches
    # the first retry at once, avoiding the dead server: none fails
    assert redisp["failed"] == 0


@pytest.fixture(scope="module")
def silent_lab(tmp_path_factory):
    """The silent-host, no-check and redispatch-interval cases, one run."""
    out = tmp_path_factory.mktemp("labhasilent")
    before = _namespaces(PREFIX)
    names = ["failover-silent", "failover-silent-redispatch", "failover-nocheck", "failover-redispatch-interval"]
    proc = run_cli("lab", "haproxy", *[CASES / f"{n}.cfg" for n in names], "--prefix", PREFIX, "--out", out,
                   "--no-plots")
    files = sorted(out.glob("lab-haproxy-*.json"))
    assert files, proc.stdout + proc.stderr
    doc = json.loads(files[0].read_text())
    return {"proc": proc, "before": before, "cases": {Path(c["config"]).stem: c for c in doc["cases"]}}


# a request's time is a whole number of waits (connect timeouts, turn-arounds)
# plus the machine's own; below 0.9 of one more wait it is not one more
NO_EXTRA_WAIT = 0.9
# HAProxy arms each wait on its millisecond clock, read when its poller last
# woke (ticks.h, clock.c): a wait ends up to one tick early on the client's
# clock (measured: three 1 s turn-arounds in 2999.9 ms)
HAPROXY_TICK_MS = 1.0


def _took(r) -> float:
    return r["t1_ms"] - r["t0_ms"]


def _waited(r, waits: int, each_ms: float) -> bool:
    """The request took `waits` HAProxy waits of `each_ms`, and not one more."""
    return waits * (each_ms - HAPROXY_TICK_MS) <= _took(r) < (waits + NO_EXTRA_WAIT) * each_ms


@needs_netns
@needs_haproxy
def test_a_silent_host_costs_connect_timeouts_and_slower_checks(silent_lab):
    """The host drops every packet (no RST). Without timeout check a check's
    connection gets inter (configuration.txt "timeout check"), and the next
    check starts fastinter after a failed one ends (process_chk_conn): DOWN
    fall x inter + (fall - 1) x fastinter = 1700 ms after the first failing
    check, which comes 0..inter after the death. A request meeting the host
    waits timeout connect (1 s) per attempt: without redispatch it fails
    after 1 + retries = 4 of them (its retries stay on the server: a third
    of the requests until the DOWN mark); with it, its first retry goes
    elsewhere at once and it is served one connect timeout late."""
    inter, fastinter, fall, rate, servers, connect, retries = 500, 100, 3, 50, 3, 1000, 3
    plain = silent_lab["cases"]["failover-silent"]
    redisp = silent_lab["cases"]["failover-silent-redispatch"]
    for case in (plain, redisp):
        c = case["comparison"]
        lo = fall * inter + (fall - 1) * fastinter
        assert c["twin_window_ms"] == [lo, lo + inter]
        assert lo - 20 <= c["measured_detection_ms"] <= lo + inter + 60, c["measured_detection_ms"]
    c = plain["comparison"]
    failed = [r for r in plain["measured"]["requests"] if r["status"] != 200]
    assert abs(len(failed) - c["measured_detection_ms"] * rate / 1000 / servers) <= 2
    assert all(_waited(r, 1 + retries, connect) for r in failed)
    assert c["verdict"] == "pass", c
    c = redisp["comparison"]
    slow = [r for r in redisp["measured"]["requests"] if _took(r) >= 0.9 * connect]
    # each redispatch, a connect timeout after its request, takes a round-robin
    # turn (past the dead server: "0 2 0 2" in HaproxyRecorded), so the dead
    # server gets between a third and a half of the requests until its DOWN mark
    seconds = c["measured_detection_ms"] / 1000
    assert c["failed"] == 0 and seconds * rate / servers - 2 <= len(slow) <= seconds * rate / 2 + 2
    kill, down = c["kill_at_ms"], c["down_at_ms"]
    start = redisp["measured"]["events"]["start_ms"]
    assert all(kill - 1 <= r["t0_ms"] - start <= down + 1 and _waited(r, 1, connect)
               for r in slow)
    assert c["verdict"] == "pass", c


@needs_netns
@needs_haproxy
def test_a_server_without_check_is_never_marked_down(silent_lab):
    """a has no check: HAProxy's stats say "no check" to the end, the round
    robin gives it a third of the requests after its death, and each fails
    after 3 retries 1 s apart (the turn-around): (4 - 1) s x 50/s / 3 = 50."""
    case = silent_lab["cases"]["failover-nocheck"]
    c = case["comparison"]
    assert c["measured_detection_ms"] is None and c["twin_window_ms"] == [-1, -1]
    stat = {f[1]: f[17] for f in (line.split(",") for line in case["measured"]["show_stat"].splitlines())
            if len(f) > 17 and f[0] == "app"}
    assert stat["a"].startswith("no check") and stat["b"].startswith("UP")
    failed = [r for r in case["measured"]["requests"] if r["status"] != 200]
    assert abs(len(failed) - 50) <= 2 and all(_waited(r, 3, 1000) for r in failed)
    assert c["verdict"] == "pass", c


@needs_netns
@needs_haproxy
def test_option_redispatch_2_redispatches_the_second_retry(silent_lab):
    """option redispatch 2, retries 3, a consistent source hash (no early
    redispatch), a refusing: the first retry goes back to a after the
    turn-around min(timeout connect, 1 s) = 300 ms, the second past it on
    the ring at once: a's clients are served 300 ms late (600 with plain
    option redispatch), none fails."""
    case = silent_lab["cases"]["failover-redispatch-interval"]
    c = case["comparison"]
    late = [r for r in case["measured"]["requests"] if _took(r) >= 200]
    assert c["failed"] == 0 and late and all(_waited(r, 1, 300) for r in late)
    assert c["twin_max_delay_ms"] == [300, 300]
    assert c["verdict"] == "pass", c
    assert _namespaces(PREFIX) == silent_lab["before"]


@needs_netns
@needs_haproxy
@pytest.mark.skipif(not Path(DEBIAN_SW).exists(), reason="Debian's haproxy examples are not installed")
def test_debian_content_switching_sample_redispatches_like_haproxy(tmp_path):
    """content-sw-sample.cfg, pool dynamic (4 servers, check inter 1000,
    retries 2, option redispatch): dynsrv1's listener closes while the
    checks still have it up for 2 to 3 s. HAProxy serves every request
    (assign_server avoids the server that failed); so must the twin, in
    every check phase (before the twin's redispatch avoided it: 3 failed)."""
    proc = run_cli("lab", "haproxy", DEBIAN_SW, "--prefix", PREFIX, "--out", tmp_path)
    files = sorted(tmp_path.glob("lab-haproxy-*.json"))
    assert files, proc.stdout + proc.stderr
    (case,) = json.loads(files[0].read_text())["cases"]
    c = case["comparison"]
    assert 2000 - 20 <= c["measured_detection_ms"] <= 3000 + 60
    assert c["failed"] == 0 and c["twin_failed"] == [0, 0] and c["twin_redispatched"][0] > 0
    assert c["verdict"] == "pass" and proc.returncode == 0


@needs_netns
@needs_haproxy
def test_uri_hash_sends_each_uri_to_one_server(lab):
    case = lab["cases"]["uri"]
    by_path = {}
    for r in case["measured"]["requests"]:
        by_path.setdefault(r["path"], set()).add(r["server"])
    assert len(by_path) == 30 and all(len(s) == 1 for s in by_path.values())
    # map-based: server = map[sdbm(path) % total weight] (get_server_uh in
    # src/backend.c, gen_hash's default sdbm, no avalanche): paths of one
    # residue share a server, the three residues name three servers
    def sdbm(text):
        h = 0
        for ch in text.encode():
            h = (ch + (h << 6) + (h << 16) - h) & 0xFFFFFFFF
        return h

    by_residue = {}
    for path, servers in by_path.items():
        by_residue.setdefault(sdbm(path) % 3, set()).update(servers)
    assert all(len(s) == 1 for s in by_residue.values()) and len(set().union(*by_residue.values())) == 3
    c = case["comparison"]
    if c["scheduler"] is None:  # the twin has no uri scheduler: said, never faked
        assert c["verdict"] == "not modelled" and all("twin" not in r for r in c["rows"])
        assert "not modelled in the twin" in lab["proc"].stdout or "not modelled" in lab["proc"].stdout
    else:
        assert c["verdict"] == "pass"


@needs_netns
@needs_haproxy
def test_results_record_the_run_and_nothing_is_left(lab):
    doc = lab["doc"]
    assert doc["machine"]["haproxy"].startswith("2.") and doc["machine"]["kernel"] == os.uname().release
    assert doc["seed"] == 1 and len(doc["parameters"]["configs"]) == 8
    assert all(c["workload"]["seed"] == 1 for c in doc["cases"])
    assert {p.suffix for p in lab["out"].iterdir()} == {".json", ".csv", ".png"}
    assert "verdict: pass" in lab["proc"].stdout and "criterion (fixed before measuring)" in lab["proc"].stdout
    # every address the lab gave haproxy is in 198.18.0.0/15
    for c in doc["cases"]:
        assert all(b["address"].startswith("198.18.") for b in c["backends"])
        assert "bind 198.18.0.1:" in c["lab_config"]
    assert _namespaces(PREFIX) == lab["before"]


def _start_long_run(prefix, tmp_path):
    """A 30 s failover run, 1.5 s into its measurement: the process, its
    namespaces and the processes inside them."""
    proc, lines = _start("lab", "haproxy", CASES / "failover.cfg", "--workload", "seconds=30,kill_at_s=20",
                         "--prefix", prefix, "--out", tmp_path, "--no-plots")
    try:
        _wait_for(lines, "[1/1]")
    except AssertionError:
        proc.kill()
        raise
    time.sleep(1.5)
    live = _namespaces(prefix)
    inside = [int(p) for n in live for p in subprocess.run(["ip", "netns", "pids", n], capture_output=True,
                                                           text=True, timeout=30).stdout.split()]
    return proc, live, inside


@needs_netns
@needs_haproxy
def test_ctrl_c_mid_run_tears_down(tmp_path):
    prefix = own_prefix("rtlabhaint")
    proc, live, inside = _start_long_run(prefix, tmp_path)
    try:
        assert len(live) == 1 and inside  # the measuring process and haproxy
        proc.send_signal(signal.SIGINT)
        status = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            run_cli("lab", "haproxy", "--cleanup", "--prefix", prefix)
    assert status == 130
    assert _namespaces(prefix) == []
    assert all(_ended(pid) for pid in inside)
    assert list(tmp_path.iterdir()) == []


@needs_netns
@needs_haproxy
def test_a_killed_run_is_cleaned_up(tmp_path):
    prefix = own_prefix("rtlabhakill")
    proc, left, inside = _start_long_run(prefix, tmp_path)
    try:
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert left == [f"{prefix}-{proc.pid}-ha"] and _namespaces(prefix) == left and inside
    done = run_cli("lab", "haproxy", "--cleanup", "--prefix", prefix)
    assert done.returncode == 0 and f"removed 1 leftover namespace(s): {left[0]}" in done.stdout
    assert _namespaces(prefix) == []
    assert all(_ended(pid) for pid in inside)


BAD_MODE = """defaults
    timeout connect 1s
    timeout client 1s
    timeout server 1s
frontend web
    mode http
    bind 192.0.2.10:80
    default_backend app
backend app
    mode tcp
    server a 10.0.0.1:80
"""


@needs_haproxy
@pytest.mark.parametrize("make, extra, message", [
    (None, [], "no such configuration file"),
    (BAD_MODE, [], "bad.cfg:5: haproxy -c rejects it: http frontend 'web'"),
    (BAD_MODE.replace("server a", "server a 10.0.0.1:80 frobnicate #"), [], "bad.cfg:11: "),
    ("", ["--workload", "requets=3"], "workload key 'requets': unknown"),
    ("", ["--workload", "requests=0"], "workload key 'requests': 0 is out of range"),
    ("", ["--workload", "delays_ms=5:5"], "one delay of 0..5000 ms per server"),
    ("", ["--workload", "kill_mode=unplug"], "workload key 'kill_mode': 'unplug' is not one of refuse, silent"),
])
def test_bad_input_exits_2_with_one_line_and_leaves_nothing(tmp_path, make, extra, message):
    cfg = tmp_path / "bad.cfg"
    if make is not None:
        cfg.write_text(make or (CASES / "roundrobin-weights.cfg").read_text())
    prefix = own_prefix("rtlabhabad")
    before = _namespaces(prefix)
    proc = run_cli("lab", "haproxy", cfg, *extra, "--prefix", prefix, "--out", tmp_path / "o")
    line = one_line(proc, tmp_path / "o")
    assert message in line, line
    assert _namespaces(prefix) == before


@needs_haproxy
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) not found")
def test_without_root_exits_2_with_the_reason(tmp_path):
    drop = ["setpriv", "--bounding-set", "-net_admin,-sys_admin"] if os.geteuid() == 0 else []
    proc = subprocess.run([*drop, sys.executable, "-m", "routertwin", "lab", "haproxy", CASES / "source.cfg",
                           "--out", tmp_path / "o"], capture_output=True, text=True, timeout=120)
    line = one_line(proc, tmp_path / "o")
    assert "needs root" in line


# ---------------------------------------------------------------- the twin's side, without root


def test_sched_pool_replays_haproxys_recorded_order():
    """SchedPool is the C scheduler, request by request: the orders Debian's
    haproxy 2.6.12 was recorded dealing (core/tests/haproxy_record.py, the
    HaproxyRecorded tests of sched-test.cc)."""
    from routertwin import _core

    def order(algo, weights, n):
        pool = _core.SchedPool(algo, weights)
        return " ".join(str(pool.pick(0xC6120001)) for _ in range(n))

    assert order("roundrobin", [3, 2, 1], 12) == "0 1 0 2 0 1 0 1 0 2 0 1"
    assert order("static-rr", [3, 2, 1], 12) == "0 0 1 0 1 2 0 0 1 0 1 2"
    assert order("roundrobin", [5, 1, 1], 14) == "0 0 0 1 0 0 2 0 0 0 1 0 0 2"
    with pytest.raises(ValueError, match="key 'scheduler'"):
        _core.SchedPool("roundrobinn", [1])


def test_concurrent_replay_of_leastconn_follows_the_service_rates():
    """Closed form: 2 connections kept open, one server of 10 ms and one of
    30 ms (+1 ms per request): leastconn keeps one on each, so they serve at
    1/11 and 1/31 per ms; the slow one takes 11/42 of the requests."""
    from routertwin.lab.haproxy import LabConfig
    from routertwin.lab.haproxy_twin import replay_requests

    backends = [{"pool": "p", "name": n, "delay_ms": d, "weight": 1, "backup": False, "disabled": False}
                for n, d in (("fast", 10.0), ("slow", 30.0))]
    w = {"requests": 4200, "concurrency": 2, "clients": 1, "paths": 1, "seed": 1}
    pool = {"name": "p", "mode": "http", "scheduler": "leastconn",
            "servers": [{"name": b["name"], "address": "198.18.10.1", "port": 8080} for b in backends]}
    cfg = LabConfig(Path("x.cfg"), "x.cfg", {}, "", backends, {}, pool, 0, w)
    picks = Counter(replay_requests(cfg))
    assert abs(picks["slow"] - 4200 * 11 / 42) <= 2 and picks["fast"] + picks["slow"] == 4200


def test_the_failover_twin_keeps_stick_tables_and_the_lab_clients():
    """failover-stick.cfg's twin: the stick table stays (only a cookie,
    which the lab's client never sends, is dropped), the clients are the
    lab's nine, numbered from 198.18.2.1 as haproxy_inside addresses them;
    a sticky request on the dead server is redispatched only at the last
    of retries 3, after two turn-arounds of min(timeout connect 1 s, 1 s):
    served 2000 ms late, none failed."""
    import socket

    from routertwin import _core
    from routertwin.lab.haproxy import load_config
    from routertwin.lab.haproxy_inside import source_of
    from routertwin.lab.haproxy_twin import failover_keys

    cfg = load_config(CASES / "failover-stick.cfg")
    keys, notes = failover_keys(cfg)
    assert keys["persistence"] == "stick_src" and keys["clients"] == 9 and not notes
    assert [socket.inet_ntoa(int(keys["client_ip_base"] + k).to_bytes(4, "big")) for k in (0, 254, 255)] == \
        [source_of(k) for k in (0, 254, 255)] == ["198.18.2.1", "198.18.2.255", "198.18.3.0"]
    r = _core.run_lb_failover(dict(keys, kill_at_s=1.0, duration_s=8.0))
    assert r["failed"] == 0 and r["max_delay_ms"] == 2000 and r["sticky_clients_moved"] == 3
