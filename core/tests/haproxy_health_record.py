#!/usr/bin/env python3
"""Records what a real HAProxy (Debian bookworm's 2.6.12) does with health
checks and cookie persistence, to give dp_health and dp_persist independent
truth (the HaproxyRecorded tests of health-test.cc and persist-test.cc hold
the printed values).

Pass criteria, written before measuring (the script checks them and exits
1 when one fails):
  checks  (mode tcp; 3 servers "check inter 600 fastinter 150 downinter
          900 rise 2 fall 3"; server s1 killed mid-run, revived later):
    C1 check phase: the first checks of s1 and s2 come m*1/3 and m*2/3
       after s0's, m = 150 (the initial "yet unchecked" interval is
       fastinter, below the 1000 ms spread threshold): 50 and 100 ms,
       each within 15 ms;
    C2 while up, consecutive checks of a server are inter = 600 ms apart
       (each within 15 ms);
    C3 the time HAProxy marks s1 DOWN equals the twin's prediction from the
       last check s1 answered (t_last): t_last + inter + (fall-1) *
       fastinter = t_last + 900 ms, within 40 ms (the stats socket is
       polled every 5 ms; the machine is shared);
    C4 after s1 is revived, its first answered check comes downinter after
       the failing one before it (so within 900 ms of the revival), the
       next one fastinter = 150 ms later (within 15 ms), and HAProxy marks
       it UP at that second check (within 40 ms): rise = 2;
  cookie  (mode http; "cookie SRV insert indirect nocache"; 3 servers
          with cookies a, b, c; roundrobin):
    K1 a request without the cookie gets "Set-Cookie: SRV=<server's
       cookie>" naming the server that answered, and "Cache-Control:
       private" (nocache);
    K2 a request carrying a valid cookie goes to that server every time,
       gets no Set-Cookie, and the server does not see the SRV cookie
       (indirect);
    K3 after "set server b/s1 health down", a request whose cookie names
       s1 goes to another server and gets a new Set-Cookie naming it;
       cookies of s0 and s2 still stick.

All traffic stays inside a network namespace this script creates (its own
loopback holding 198.18.0.0/16, the RFC 2544 benchmarking range), deleted
afterwards, also on error or Ctrl-C; the whole run is bounded by TIMEOUT_S.
Needs root (ip netns) and haproxy in PATH.
Usage (as root): python3 core/tests/haproxy_health_record.py
"""
import http.client, http.server, os, socket, socketserver, subprocess, sys, tempfile, threading, time

SERVER_ADDR = "198.18.0.1"
LOOPBACK_PREFIX = "198.18.0.1/16"
TIMEOUT_S = 90
INSIDE_FLAG = "--inside-namespace"
FRONT_PORT = 22000
BACK_PORT = 27000
INTER, FASTINTER, DOWNINTER, RISE, FALL = 600, 150, 900, 2, 3
failures = []


def check(name, ok, detail):
    print("  %-3s %s  %s" % (name, "pass" if ok else "FAIL", detail))
    if not ok:
        failures.append(name)


def now_ms():
    return time.monotonic() * 1000.0


class CheckTarget:
    """A TCP server that records when each connection (a health check)
    arrives; kill() closes the listener so checks are refused, revive()
    listens again on the same port."""

    def __init__(self, port):
        self.port, self.accepts, self.sock = port, [], None
        self.revive()

    def revive(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((SERVER_ADDR, self.port))
        s.listen(64)
        self.sock = s
        threading.Thread(target=self.serve, args=(s,), daemon=True).start()

    def serve(self, s):
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            self.accepts.append(now_ms())
            c.close()

    def kill(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def start_haproxy(lines, d):
    cfg = os.path.join(d, "h.cfg")
    open(cfg, "w").write("\n".join(lines) + "\n")
    p = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "log"), "w"))
    sock = os.path.join(d, "stats")
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.01)
    return p, sock


def stats_cmd(sock, cmd):
    u = socket.socket(socket.AF_UNIX)
    u.connect(sock)
    u.sendall(cmd.encode() + b"\n")
    out = b""
    while True:
        b = u.recv(65536)
        if not b:
            break
        out += b
    u.close()
    return out.decode()


def server_status(sock, name):
    for line in stats_cmd(sock, "show stat").splitlines():
        f = line.split(",")
        if len(f) > 17 and f[0] == "b" and f[1] == name:
            return f[17]
    return "?"


def wait_status(sock, name, want, limit_ms):
    t_end = now_ms() + limit_ms
    while now_ms() < t_end:
        st = server_status(sock, name)
        if st.startswith(want):
            return now_ms()
        time.sleep(0.005)
    return None


def record_checks():
    print("checks: inter %d fastinter %d downinter %d rise %d fall %d" % (INTER, FASTINTER, DOWNINTER, RISE, FALL))
    targets = [CheckTarget(BACK_PORT + i) for i in range(3)]
    d = tempfile.mkdtemp()
    lines = ["global", "  nbthread 1", "  stats socket %s/stats level admin" % d,
             "defaults", "  mode tcp", "  timeout connect 1s", "  timeout client 10s", "  timeout server 10s",
             "frontend f", "  bind %s:%d" % (SERVER_ADDR, FRONT_PORT), "  default_backend b",
             "backend b", "  balance roundrobin"]
    for i in range(3):
        lines.append("  server s%d %s:%d check inter %d fastinter %d downinter %d rise %d fall %d" %
                     (i, SERVER_ADDR, BACK_PORT + i, INTER, FASTINTER, DOWNINTER, RISE, FALL))
    p, sock = start_haproxy(lines, d)
    try:
        time.sleep(2.0)
        first = [t.accepts[0] for t in targets]
        off = [first[1] - first[0], first[2] - first[0]]
        print("  first checks of s1, s2 after s0's: %.1f %.1f ms" % tuple(off))
        check("C1", abs(off[0] - 50) <= 15 and abs(off[1] - 100) <= 15, "want 50, 100 (+-15)")
        gaps = [b - a for t in targets for a, b in zip(t.accepts[1:], t.accepts[2:])]
        print("  gaps between checks while up: %s ms" % " ".join("%.1f" % g for g in gaps))
        check("C2", all(abs(g - INTER) <= 15 for g in gaps), "want %d (+-15)" % INTER)
        # Kill s1 right after one of its checks, a third of an interval on.
        t_kill = targets[1].accepts[-1] + INTER / 3.0
        while now_ms() < t_kill:
            time.sleep(0.001)
        targets[1].kill()
        t_kill = now_ms()
        t_last = targets[1].accepts[-1]
        t_down = wait_status(sock, "s1", "DOWN", 5000)
        predicted = t_last + INTER + (FALL - 1) * FASTINTER
        print("  s1 killed %.1f ms after its last answered check; DOWN %.1f ms after the kill" %
              (t_kill - t_last, (t_down or 0) - t_kill))
        print("  recorded: last_check_to_down_ms %.1f  twin_predicts %d" % ((t_down or 0) - t_last, predicted - t_last))
        check("C3", t_down is not None and abs(t_down - predicted) <= 40, "want last + %d (+-40)" %
              (INTER + (FALL - 1) * FASTINTER))
        # Revive a little after the first down-interval check is due.
        time.sleep(0.3)
        n_before = len(targets[1].accepts)
        t_revive = now_ms()
        targets[1].revive()
        t_up = wait_status(sock, "s1", "UP", 5000)
        acc = targets[1].accepts[n_before:]
        ok = t_up is not None and len(acc) >= 2
        if ok:
            print("  revived; first answered check %.1f ms later, second %.1f ms after it; UP %.1f ms after the second" %
                  (acc[0] - t_revive, acc[1] - acc[0], t_up - acc[1]))
            print("  recorded: revive_first_check_ms %.1f  rise_gap_ms %.1f" % (acc[0] - t_revive, acc[1] - acc[0]))
            ok = (acc[0] - t_revive <= DOWNINTER + 15 and abs(acc[1] - acc[0] - FASTINTER) <= 15 and
                  abs(t_up - acc[1]) <= 40)
        check("C4", ok, "want first <= %d, gap %d (+-15), UP at the second (+-40)" % (DOWNINTER, FASTINTER))
    finally:
        p.terminate()
        p.wait()
        for t in targets:
            t.kill()


class CookieServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def cookie_handler(index):
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self):
            saw = "SRV=" in (self.headers.get("Cookie") or "")
            body = ("s%d %s\n" % (index, "saw" if saw else "clean")).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass
    return H


def get(cookie=None):
    c = http.client.HTTPConnection(SERVER_ADDR, FRONT_PORT + 1, timeout=5)
    c.request("GET", "/", headers={"Cookie": cookie} if cookie else {})
    r = c.getresponse()
    body = r.read().decode().split()
    out = (body[0], body[1] == "saw", r.getheader("Set-Cookie"), r.getheader("Cache-Control"))
    c.close()
    return out


def record_cookies():
    print("cookie: SRV insert indirect nocache, servers s0..s2 cookies a b c")
    servers = [CookieServer((SERVER_ADDR, BACK_PORT + 10 + i), cookie_handler(i)) for i in range(3)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    d = tempfile.mkdtemp()
    lines = ["global", "  nbthread 1", "  stats socket %s/stats level admin" % d,
             "defaults", "  mode http", "  timeout connect 1s", "  timeout client 10s", "  timeout server 10s",
             "frontend f", "  bind %s:%d" % (SERVER_ADDR, FRONT_PORT + 1), "  default_backend b",
             "backend b", "  balance roundrobin", "  cookie SRV insert indirect nocache"]
    names = "abc"
    for i in range(3):
        lines.append("  server s%d %s:%d cookie %s" % (i, SERVER_ADDR, BACK_PORT + 10 + i, names[i]))
    p, sock = start_haproxy(lines, d)
    try:
        time.sleep(0.2)
        clients = []
        k1 = True
        for _ in range(9):
            srv, saw, setc, cc = get()
            want = "SRV=%s" % names[int(srv[1])]
            k1 &= bool(setc) and setc.split(";")[0] == want and (cc or "").startswith("private")
            clients.append((srv, setc.split(";")[0] if setc else None))
        print("  fresh requests went to: %s" % " ".join(s for s, _ in clients))
        check("K1", k1, "Set-Cookie names the answering server; Cache-Control: private")
        k2 = True
        for srv, ck in clients:
            for _ in range(3):
                s2, saw, setc, _cc = get(ck)
                k2 &= s2 == srv and setc is None and not saw
        check("K2", k2, "valid cookie: same server, no Set-Cookie, server saw no SRV cookie")
        stats_cmd(sock, "set server b/s1 health down")
        time.sleep(0.05)
        k3, moved = True, []
        for srv, ck in clients:
            s2, saw, setc, _cc = get(ck)
            if srv == "s1":
                k3 &= s2 != "s1" and setc is not None and setc.split(";")[0] == "SRV=%s" % names[int(s2[1])]
                moved.append(s2)
            else:
                k3 &= s2 == srv and setc is None
        print("  after s1 health down, s1's clients went to: %s" % " ".join(moved))
        check("K3", k3, "s1's cookies re-balanced with a new Set-Cookie; others stick")
    finally:
        p.terminate()
        p.wait()
        for s in servers:
            s.shutdown()
            s.server_close()


def record():
    record_checks()
    record_cookies()
    print("criteria failed: %s" % (" ".join(failures) if failures else "none"))
    return 1 if failures else 0


def in_own_namespace():
    """Creates a namespace, runs the recording inside it (bounded by
    TIMEOUT_S) and deletes the namespace whatever happens."""
    ns = "rt-hahealth-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "addr", "add", LOOPBACK_PREFIX, "dev", "lo"]):
            subprocess.run(["ip", "netns", "exec", ns] + cmd, check=True)
        return subprocess.run(["ip", "netns", "exec", ns, sys.executable, os.path.abspath(__file__), INSIDE_FLAG],
                              timeout=TIMEOUT_S).returncode
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


if __name__ == "__main__":
    if INSIDE_FLAG in sys.argv[1:]:
        sys.exit(record())
    if os.geteuid() != 0:
        sys.exit("haproxy_health_record.py: needs root to create its network namespace (ip netns add)")
    try:
        sys.exit(in_own_namespace())
    except KeyboardInterrupt:
        sys.exit(130)
