#!/usr/bin/env python3
"""Records which server a real HAProxy (Debian's package) picks, for small
pools, to give the twin's HAProxy schedulers independent truth.

Each scenario: N tiny TCP servers on 198.18.0.1 answer their index and keep
the connection until the client closes it; haproxy (mode tcp, nbthread 1)
balances a frontend over them; the client opens connections (from a chosen
198.18.1.k source address), reads the index, and keeps or closes the
connection as the scenario says. Runtime state changes go through the stats
socket.

All traffic stays inside a network namespace this script creates (its own
loopback holding 198.18.0.0/16, the RFC 2544 benchmarking range), which it
deletes afterwards, also on error or Ctrl-C; the recording as a whole is
bounded by TIMEOUT_S. Needs root (ip netns) and haproxy in PATH.

The printed sequences are the expected values of the HaproxyRecorded tests
in sched-test.cc (recorded with Debian bookworm's haproxy 2.6.12). Each
haproxy it starts is stopped before the next scenario.
Usage (as root): python3 core/tests/haproxy_record.py
"""
import os, socket, subprocess, sys, tempfile, threading, time

import recording_namespace

BASE = 21000
SERVER_ADDR = "198.18.0.1"
# The namespace's loopback holds the whole /16: on a loopback device the
# kernel routes an address's prefix as local, so every 198.18.x.y can be a
# client source address without adding each one.
LOOPBACK_PREFIX = "198.18.0.1/16"
TIMEOUT_S = 300
INSIDE_FLAG = "--inside-namespace"

class Backends:
    def __init__(self, n, dead=()):
        """dead: indexes with no listening socket at all (connections refused)."""
        self.socks = []
        for i in range(n):
            if i in dead:
                continue
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((SERVER_ADDR, BASE + 5000 + i)); s.listen(512); self.socks.append(s)
            threading.Thread(target=self.serve, args=(s, i), daemon=True).start()
    def serve(self, s, i):
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            try:
                c.sendall(b"%d\n" % i)
            except OSError:
                pass
            threading.Thread(target=self.hold, args=(c,), daemon=True).start()
    def hold(self, c):
        try:
            while c.recv(64):
                pass
        except OSError:
            pass
        c.close()
    def close(self):
        for s in self.socks:
            s.close()

def run(name, balance, servers, actions, extra="", dead=()):
    """dead: servers nothing listens for (connections refused; no checks,
    so haproxy keeps them UP)."""
    global BASE
    BASE += 10
    be = Backends(len(servers), dead)
    d = tempfile.mkdtemp()
    sock = os.path.join(d, "stats")
    cfg = os.path.join(d, "h.cfg")
    lines = ["global", "  nbthread 1", "  stats socket %s level admin" % sock,
             "defaults", "  mode tcp", "  timeout connect 2s", "  timeout client 60s", "  timeout server 60s",
             "frontend f", "  bind %s:%d" % (SERVER_ADDR, BASE), "  default_backend b",
             "backend b", "  balance %s" % balance] + (["  " + extra] if extra else [])
    for i, opt in enumerate(servers):
        lines.append("  server s%d %s:%d %s" % (i, SERVER_ADDR, BASE + 5000 + i, opt))
    open(cfg, "w").write("\n".join(lines) + "\n")
    p = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        time.sleep(0.2)
        held, out = [], []
        for a in actions:
            if a[0] == "open":
                c = socket.socket(); c.bind((a[1], 0)); c.connect((SERVER_ADDR, BASE))
                f = c.makefile("rb"); line = f.readline().strip()
                out.append(int(line) if line else -1)
                held.append(c)
                if not a[2:] or a[2] != "keep":
                    c.close()
                    time.sleep(0.02)
            elif a[0] == "close":
                held[a[1]].close(); time.sleep(0.05)
            elif a[0] == "cmd":
                u = socket.socket(socket.AF_UNIX); u.connect(sock); u.sendall(a[1].encode() + b"\n")
                u.recv(4096); u.close(); time.sleep(0.05)
        print("%s: %s" % (name, " ".join(map(str, out))))
        sys.stdout.flush()
    finally:
        p.terminate(); p.wait()
        be.close()
        time.sleep(0.3)

def opens(n, src=SERVER_ADDR, keep=False):
    return [("open", src, "keep") if keep else ("open", src) for _ in range(n)]

def record():
    W = {"511": [5, 1, 1], "321": [3, 2, 1], "4321": [4, 3, 2, 1], "21": [2, 1], "111": [1, 1, 1],
         "7_3_2": [7, 3, 2]}
    for w in ([2, 3, 13, 2], [12, 16, 15], [9, 12, 13, 10]):
        run("roundrobin w=%s" % ",".join(map(str, w)), "roundrobin", ["weight %d" % x for x in w],
            opens(3 * sum(w)))
    for algo in ("roundrobin", "static-rr"):
        for k, w in W.items():
            run("%s w=%s" % (algo, k), algo, ["weight %d" % x for x in w], opens(2 * sum(w)))
    # roundrobin with a server disabled and re-enabled at run time
    run("roundrobin w=321 maint", "roundrobin", ["weight 3", "weight 2", "weight 1"],
        opens(4) + [("cmd", "set server b/s0 state maint")] + opens(5) + [("cmd", "set server b/s0 state ready")] + opens(12))
    run("roundrobin w=321 setweight", "roundrobin", ["weight 3", "weight 2", "weight 1"],
        opens(4) + [("cmd", "set weight b/s2 4")] + opens(20))
    # backups
    run("roundrobin backup", "roundrobin", ["weight 1", "weight 1 backup", "weight 1 backup"],
        opens(2) + [("cmd", "set server b/s0 state maint")] + opens(4))
    run("roundrobin allbackups", "roundrobin", ["weight 1", "weight 2 backup", "weight 1 backup"],
        opens(2) + [("cmd", "set server b/s0 state maint")] + opens(6), extra="option allbackups")
    # maxconn: held connections saturate servers
    run("roundrobin maxconn", "roundrobin", ["weight 1 maxconn 2", "weight 1 maxconn 1", "weight 1"],
        opens(6, keep=True))
    run("static-rr maxconn", "static-rr", ["weight 2 maxconn 1", "weight 1", "weight 1"],
        opens(6, keep=True))
    run("first maxconn", "first", ["maxconn 2", "maxconn 1", "maxconn 3"],
        opens(5, keep=True) + [("close", 0)] + opens(2, keep=True))
    # leastconn with held connections and closes
    run("leastconn w=111", "leastconn", ["weight 1", "weight 1", "weight 1"],
        opens(5, keep=True) + [("close", 1)] + opens(3, keep=True) + [("close", 0), ("close", 4)] + opens(4, keep=True))
    run("leastconn w=321", "leastconn", ["weight 3", "weight 2", "weight 1"], opens(12, keep=True))
    # source hashing from 198.18.1.k
    srcs = [("open", "198.18.1.%d" % k) for k in range(1, 41)]
    for ht in ("map-based", "consistent"):
        for k, w in (("111", [1, 1, 1]), ("321", [3, 2, 1])):
            run("source %s w=%s" % (ht, k), "source", ["weight %d" % x for x in w], srcs, extra="hash-type " + ht)
        run("source %s w=1111 s1 maint" % ht, "source", ["weight 1"] * 4,
            [("cmd", "set server b/s1 state maint")] + srcs, extra="hash-type " + ht)
    # Redispatch: a server refuses (no checks: it stays UP), retries 1 with
    # option redispatch, so the retry goes back to assign_server with the
    # refusing server as the one to avoid (src/backend.c); -1 is a request
    # that failed (the retry came back to the dead server).
    redisp = "retries 1\n  option redispatch"
    run("redispatch roundrobin w=321 s0 dead", "roundrobin", ["weight 3", "weight 2", "weight 1"], opens(12),
        extra=redisp, dead=(0,))
    run("redispatch roundrobin w=111 s1 dead", "roundrobin", ["weight 1"] * 3, opens(9), extra=redisp, dead=(1,))
    run("redispatch roundrobin w=4321 s2 dead", "roundrobin", ["weight 4", "weight 3", "weight 2", "weight 1"],
        opens(20), extra=redisp, dead=(2,))
    run("redispatch static-rr w=321 s0 dead", "static-rr", ["weight 3", "weight 2", "weight 1"], opens(12),
        extra=redisp, dead=(0,))
    run("redispatch leastconn w=111 s0 dead", "leastconn", ["weight 1"] * 3, opens(8, keep=True),
        extra=redisp, dead=(0,))
    run("redispatch first s0 dead", "first", ["maxconn 2", "maxconn 1", "maxconn 3"], opens(5, keep=True),
        extra=redisp, dead=(0,))
    for ht in ("map-based", "consistent"):
        run("redispatch source %s w=111 s1 dead" % ht, "source", ["weight 1"] * 3, srcs,
            extra="hash-type %s\n  %s" % (ht, redisp), dead=(1,))


if __name__ == "__main__":
    recording_namespace.main(__file__, "rt-haprec", LOOPBACK_PREFIX, INSIDE_FLAG, TIMEOUT_S, record)
