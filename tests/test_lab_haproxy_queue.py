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
import sys
import threading
import time
from pathlib import Path

import pytest

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


def _backend(port: int) -> socket.socket:
    """An HTTP server that holds each request /hold/<ms> that long, then answers 200."""
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
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
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
        u = socket.socket(socket.AF_UNIX)
        u.connect(str(sock_path))
        u.sendall(b"show stat\n")
        data = b""
        while chunk := u.recv(65536):
            data += chunk
        u.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for s in servers:
            s.close()
    lines = data.decode().splitlines()
    head = lines[0][2:].split(",")
    qmax = {}
    for line in lines[1:]:
        row = dict(zip(head, line.split(",")))
        if row.get("pxname") in CASES:
            qmax[(row["pxname"], row["svname"])] = int(row["qmax"] or 0)
    return {"statuses": statuses, "qmax": {f"{p}/{s}": q for (p, s), q in qmax.items()}}


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
    ns = f"rt-queuetest-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "addr", "add", "198.18.0.1/16", "dev", "lo"]):
            subprocess.run(["ip", "netns", "exec", ns, *cmd], check=True)
        code = ("import sys, json; sys.path.insert(0, %r); from pathlib import Path; "
                "import test_lab_haproxy_queue as t; print(json.dumps(t._live(Path(%r))))"
                % (str(Path(__file__).parent), str(tmp_path)))
        out = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120, check=True).stdout
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    live = json.loads(out)
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
