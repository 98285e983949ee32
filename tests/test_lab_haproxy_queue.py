"""maxconn, queues, maxqueue and timeout queue: a real haproxy (Debian's
2.6) beside the timed twin (model/lb/helper/lb-timed.h) on the same
workload, replayed as a trace.

The criterion, written before the first measurement: a burst of 10 HTTP
requests 10 ms apart, each held 500 ms by its server,
  - `balance roundrobin` over 2 servers of maxconn 2, `timeout queue 700ms`:
    4 served at once, 4 dequeued when the first four end (they waited
    450-470 ms), the last 2 time out in the backend queue (they would wait
    about 920 ms): 8 answers 200, 2 answers 503, and HAProxy's backend qmax
    equals the twin's backend_queue_max (6);
  - `balance source` (one client address: one server) over 2 servers of
    maxconn 2 and maxqueue 3, `timeout queue 2s`: 2 served, 3 wait in that
    server's queue, the other 5 get a 503 at once (the queue holds
    maxqueue); the server's qmax equals the twin's server_queue_max (3);
  - (added after the two above had passed, criterion again before its first
    measurement) `cookie SRV insert`, every request carrying the cookie of
    server 0, maxconn 2 and maxqueue 3, `timeout queue 2s`: without `option
    redispatch` 2 served, 3 queued on server 0, 5 get a 503 at once; with
    it the 5 go back to round robin: 2 take server 1, 3 wait in the backend
    queue, and all 10 are served (server 0 takes its own queue's older
    requests first, then the backend's); server 0's qmax 3 and the backend's
    (0, then 3) equal the twin's;
the twin's counts of 200s and 503s equal HAProxy's exactly (the margins,
over 200 ms, dwarf a loaded machine's timer jitter)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import haproxy_command, in_namespace

HAPROXY = shutil.which("haproxy")
REQUESTS, SPACING_S, HOLD_MS = 10, 0.010, 500
CASES = {
    # name: (frontend port, backend lines, server options)
    "rr": (22990, "  balance roundrobin\n  timeout queue 700ms\n", "maxconn 2"),
    "source": (22991, "  balance source\n  timeout queue 2s\n", "maxconn 2 maxqueue 3"),
    "cookie": (22992, "  balance roundrobin\n  timeout queue 2s\n  cookie SRV insert indirect nocache\n",
               "maxconn 2 maxqueue 3"),
    "cookieredisp": (22993, "  balance roundrobin\n  timeout queue 2s\n  cookie SRV insert indirect nocache\n"
                            "  option redispatch\n", "maxconn 2 maxqueue 3"),
}


def _backend(port: int, echo_port: bool = False) -> socket.socket:
    """An HTTP server that holds each request /hold/<ms> that long, then
    answers 200 ("ok", or its own port with echo_port)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("198.18.0.1", port))
    s.listen(64)

    def handle(c):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = c.recv(4096)
            if not chunk:
                break
            data += chunk
        ms = int(data.split(b" ", 2)[1].rsplit(b"/", 1)[1])
        time.sleep(ms / 1000)
        body = str(port).encode() if echo_port else b"ok"
        try:
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        except OSError:
            pass  # the balancer cut the connection (shutdown sessions)
        c.close()

    def serve():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(c,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return s


def _request(port: int, out: list, k: int, cookie: str) -> None:
    c = socket.create_connection(("198.18.0.1", port), timeout=10)
    extra = f"Cookie: SRV={cookie}\r\n".encode() if cookie else b""
    c.sendall(b"GET /hold/%d HTTP/1.0\r\nHost: lab\r\n%s\r\n" % (HOLD_MS, extra))
    data = b""
    while chunk := c.recv(4096):
        data += chunk
    c.close()
    out[k] = int(data.split(b" ", 2)[1])


def _live(workdir: Path) -> dict:
    """Run inside the namespace: the config, haproxy, the bursts, show stat."""
    servers = [_backend(23000 + i) for i in range(2 * len(CASES))]
    sock_path = workdir / "stats.sock"
    conf = ["global\n  nbthread 1\n  stats socket %s level admin\n" % sock_path,
            "defaults\n  mode http\n  timeout connect 1s\n  timeout client 10s\n  timeout server 10s\n"]
    for i, (name, (port, lines, opts)) in enumerate(CASES.items()):
        conf.append(f"frontend f{name}\n  bind 198.18.0.1:{port}\n  default_backend {name}\n")
        conf.append(f"backend {name}\n{lines}" + "".join(
            f"  server {name}{j} 198.18.0.1:{23000 + 2 * i + j} {opts} cookie {name}{j}\n" for j in range(2)))
    (workdir / "q.cfg").write_text("".join(conf))
    proc = subprocess.Popen([HAPROXY, "-db", "-f", str(workdir / "q.cfg")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    statuses = {}
    try:
        for _ in range(100):
            if sock_path.exists():
                break
            time.sleep(0.05)
        for name, (port, _, _) in CASES.items():
            out = [0] * REQUESTS
            threads = []
            start = time.monotonic()
            for k in range(REQUESTS):
                time.sleep(max(0.0, start + k * SPACING_S - time.monotonic()))
                cookie = f"{name}0" if name.startswith("cookie") else ""
                t = threading.Thread(target=_request, args=(port, out, k, cookie))
                t.start()
                threads.append(t)
            for t in threads:
                t.join(timeout=15)
            statuses[name] = out
        shown = haproxy_command(sock_path, "show stat")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for s in servers:
            s.close()
    lines = shown.splitlines()
    head = lines[0][2:].split(",")
    qmax = {}
    for line in lines[1:]:
        row = dict(zip(head, line.split(",")))
        if row.get("pxname") in CASES:
            qmax[(row["pxname"], row["svname"])] = int(row["qmax"] or 0)
    return {"statuses": statuses, "qmax": {f"{p}/{s}": q for (p, s), q in qmax.items()}}


def _in_namespace(tag: str, live: str, workdir: Path) -> dict:
    """This module's function `live`(workdir) run in a network namespace made
    for it, its JSON answer."""
    return json.loads(in_namespace(tag, "test_lab_haproxy_queue", "json.dumps(t.%s(Path(%r)))" % (live, str(workdir))))


def _twin(scheduler: str, maxqueue: int, timeout_ms: int, **extra) -> dict:
    from routertwin import _core

    return _core.lb_timed({**extra,
        "scheduler": scheduler, "servers": 2, "maxconn": {"0": 2, "1": 2}, "maxqueue": {"0": maxqueue, "1": maxqueue},
        "timeout_queue_ms": timeout_ms, "action": "none", "warmup_s": 0.0, "at_s": 0.0, "settle_s": 0.0,
        "end_s": 5.0, "clients": 1,
        "arrivals_s": {str(k): k * SPACING_S for k in range(REQUESTS)},
        "lifetimes_ms": {str(k): float(HOLD_MS) for k in range(REQUESTS)}})


def test_twin_replays_the_bursts():
    """The twin alone, on the criterion's arithmetic (no haproxy needed)."""
    rr = _twin("roundrobin", 0, 700)
    assert (rr["served"], rr["queue_timeouts"], rr["queued"], rr["backend_queue_max"]) == (8, 2, 6, 6)
    src = _twin("source", 3, 2000)
    assert (src["served"], src["refused_maxqueue"], src["queued"], src["server_queue_max"]) == (5, 5, 3, 3)
    cookies = {str(k): 0 for k in range(REQUESTS)}
    ck = _twin("roundrobin", 3, 2000, cookies=cookies)
    assert (ck["served"], ck["refused_maxqueue"], ck["queued"], ck["server_queue_max"]) == (5, 5, 3, 3)
    ckr = _twin("roundrobin", 3, 2000, cookies=cookies, redispatch=True)
    assert (ckr["served"], ckr["redispatched_full"], ckr["queued"], ckr["server_queue_max"],
            ckr["backend_queue_max"]) == (10, 5, 6, 3, 3)


@pytest.mark.skipif(HAPROXY is None, reason="Debian's haproxy is not installed")
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for its network namespace")
def test_real_haproxy_queues_as_the_twin(tmp_path):
    live = _in_namespace("queuetest", "_live", tmp_path)
    rr, src = _twin("roundrobin", 0, 700), _twin("source", 3, 2000)
    st = live["statuses"]
    assert (st["rr"].count(200), st["rr"].count(503)) == (rr["served"], rr["queue_timeouts"]) == (8, 2), st
    assert live["qmax"]["rr/BACKEND"] == rr["backend_queue_max"], live["qmax"]
    assert (st["source"].count(200), st["source"].count(503)) == (src["served"], src["refused_maxqueue"]) == (5, 5), st
    assert max(live["qmax"][f"source/source{j}"] for j in range(2)) == src["server_queue_max"], live["qmax"]
    cookies = {str(k): 0 for k in range(REQUESTS)}
    ck = _twin("roundrobin", 3, 2000, cookies=cookies)
    ckr = _twin("roundrobin", 3, 2000, cookies=cookies, redispatch=True)
    assert (st["cookie"].count(200), st["cookie"].count(503)) == (ck["served"], ck["refused_maxqueue"]) == (5, 5), st
    assert (live["qmax"]["cookie/cookie0"], live["qmax"]["cookie/BACKEND"]) == (ck["server_queue_max"],
                                                                             ck["backend_queue_max"]) == (3, 0)
    assert st["cookieredisp"].count(200) == ckr["served"] == 10, st
    assert (live["qmax"]["cookieredisp/cookieredisp0"], live["qmax"]["cookieredisp/BACKEND"]) == (
        ckr["server_queue_max"], ckr["backend_queue_max"]) == (3, 3), live["qmax"]


# Drain and removal with a queue (added in review-7 after HAProxy 2.6's
# src/server.c showed srv_update_status calling pendconn_redistribute on
# entering drain, and src/stream.c stream_free serving a server's own queue
# whatever its state; the twin's expectations were worked out from those
# lines before this was first run). Four requests 10 ms apart carry server
# 0's cookie and are held 500 ms; maxconn 1 on both servers, so request 0
# runs on server 0 and 1-3 wait in its queue; at 100 ms server 0 is drained
# (`set server B/S state drain`) or removed (`state maint`, then `shutdown
# sessions server B/S`, the twin's `remove`). Measured on Debian's 2.6.12:
#   drain, redispatch:  s0 200 at 519 ms; s1 200 at 604, 1108, 1608 ms
#   drain:              s0 200 at 504, 1004, 1505, 2006 ms
#   remove:             502 (cut) at 109 ms; s0 200 at 612, 1117, 1617 ms
#   remove, redispatch: 502 (cut) at 101 ms; s1 200 at 602, 1106, 1607 ms
DRAIN_CASES = {
    # name: (frontend port, option redispatch, twin action, admin commands at 100 ms)
    "drainredisp": (22890, True, "drain", ["set server {b}/{b}0 state drain"]),
    "drainplain": (22891, False, "drain", ["set server {b}/{b}0 state drain"]),
    "removeplain": (22892, False, "remove", ["set server {b}/{b}0 state maint", "shutdown sessions server {b}/{b}0"]),
    "removeredisp": (22893, True, "remove",
                     ["set server {b}/{b}0 state maint", "shutdown sessions server {b}/{b}0"]),
}
DRAIN_REQUESTS, DRAIN_AT_S = 4, 0.1


def _drain_request(port: int, out: list, k: int, cookie: str) -> None:
    """One request with the cookie; out[k] = (status, the backend port that answered); status 0: cut."""
    c = socket.create_connection(("198.18.0.1", port), timeout=10)
    c.sendall(b"GET /hold/%d HTTP/1.0\r\nHost: lab\r\nCookie: SRV=%s\r\n\r\n" % (HOLD_MS, cookie.encode()))
    data = b""
    while chunk := c.recv(4096):
        data += chunk
    c.close()
    status = int(data.split(b" ", 2)[1]) if data else 0
    out[k] = (status, int(data.split(b"\r\n\r\n", 1)[1]) if status == 200 else None)


def _live_drain(workdir: Path) -> dict:
    """Run inside the namespace: per case, each request's (status, server index or None)."""
    ports = {name: (24000 + 2 * i, 24001 + 2 * i) for i, name in enumerate(DRAIN_CASES)}
    servers = [_backend(p, echo_port=True) for pair in ports.values() for p in pair]
    sock_path = workdir / "drain.sock"
    conf = ["global\n  nbthread 1\n  stats socket %s level admin\n" % sock_path,
            "defaults\n  mode http\n  timeout connect 1s\n  timeout client 10s\n  timeout server 10s\n"]
    for name, (port, redispatch, _, _) in DRAIN_CASES.items():
        conf.append(f"frontend f{name}\n  bind 198.18.0.1:{port}\n  default_backend {name}\n")
        conf.append(f"backend {name}\n  balance roundrobin\n  timeout queue 2s\n  cookie SRV insert indirect nocache\n"
                    + "  option redispatch\n" * redispatch + "".join(
                        f"  server {name}{j} 198.18.0.1:{ports[name][j]} maxconn 1 cookie {name}{j}\n"
                        for j in range(2)))
    (workdir / "drain.cfg").write_text("".join(conf))
    proc = subprocess.Popen([HAPROXY, "-db", "-f", str(workdir / "drain.cfg")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    got = {}
    try:
        for _ in range(100):
            if sock_path.exists():
                break
            time.sleep(0.05)
        for name, (port, _, _, commands) in DRAIN_CASES.items():
            out = [None] * DRAIN_REQUESTS
            threads = []
            start = time.monotonic()
            for k in range(DRAIN_REQUESTS):
                time.sleep(max(0.0, start + k * SPACING_S - time.monotonic()))
                t = threading.Thread(target=_drain_request, args=(port, out, k, f"{name}0"))
                t.start()
                threads.append(t)
            time.sleep(max(0.0, start + DRAIN_AT_S - time.monotonic()))
            for command in commands:
                haproxy_command(sock_path, command.format(b=name))
            for t in threads:
                t.join(timeout=15)
            got[name] = [(s, ports[name].index(p) if p is not None else None) for s, p in out]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for s in servers:
            s.close()
    return got


def _twin_drain(action: str, redispatch: bool) -> dict:
    from routertwin import _core

    trace = {str(k): k * SPACING_S for k in range(DRAIN_REQUESTS)}
    return _core.lb_timed({
        "scheduler": "roundrobin", "servers": 2, "maxconn": {"0": 1, "1": 1}, "timeout_queue_ms": 2000,
        "redispatch": redispatch, "action": action, "server": 0, "warmup_s": 0.0, "at_s": DRAIN_AT_S,
        "settle_s": 0.0, "end_s": 5.0, "arrivals_s": trace, "lifetimes_ms": {k: float(HOLD_MS) for k in trace},
        "cookies": {k: 0 for k in trace}})


def _twin_servers(o: dict) -> list[int]:
    """Connections each server opened over the run (before and after the action)."""
    return [round(o["before_new_per_s"][i] * DRAIN_AT_S + o["after_new_per_s"][i] * (5.0 - DRAIN_AT_S))
            for i in range(2)]


@pytest.mark.skipif(HAPROXY is None, reason="Debian's haproxy is not installed")
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for its network namespace")
def test_real_haproxy_drains_and_removes_a_queued_server_as_the_twin(tmp_path):
    live = _in_namespace("draintest", "_live_drain", tmp_path)
    for name, (_, redispatch, action, _) in DRAIN_CASES.items():
        twin = _twin_drain(action, redispatch)
        answered = [s for s, _ in live[name] if s == 200]
        by_server = [sum(1 for s, j in live[name] if s == 200 and j == i) for i in range(2)]
        assert len(answered) == twin["served"] - twin["broken"], (name, live[name])
        assert len(live[name]) - len(answered) == twin["broken"], (name, live[name])
        # the cut connection counts among the twin's opened ones on server 0
        assert [by_server[0] + twin["broken"], by_server[1]] == _twin_servers(twin), (name, live[name])
    assert _twin_servers(_twin_drain("drain", True)) == [1, 3]
    assert _twin_servers(_twin_drain("remove", False)) == [4, 0]
