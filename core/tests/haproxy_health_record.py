#!/usr/bin/env python3
"""Records what a real HAProxy (Debian bookworm's 2.6.12) does with health
checks and cookie persistence, to give dp_health and dp_persist independent
truth (the HaproxyRecorded tests of health-test.cc and persist-test.cc hold
the printed values).

Pass criteria, written before measuring (the script checks them and exits
1 when one fails). A check "ends" when the server has sent its "OK" and
the next one is due an interval after that end (HAProxy's process_chk), so
gaps are measured from the end of one check to the start (accept) of the
next. (The first version of these criteria measured start to start and
failed by the check durations: 610-665 ms gaps for inter 600 on this
loaded machine; the rule, not the tolerance, was wrong.)
  phase   (3 servers "check inter 3000", no fastinter):
    C1 the first checks of s1 and s2 come m*1/3 and m*2/3 after s0's, m =
       3000 (the initial interval is inter, >= the 1000 ms spread
       threshold): 1000 and 2000 ms, each within 40 ms;
  checks  (mode tcp; "option tcp-check" expecting "OK"; 3 servers "check
          inter 600 fastinter 150 downinter 900 rise 2 fall 3"; server s1
          killed mid-run, revived later):
    C2 while up, a check starts inter = 600 ms after the previous one of
       that server ended (each within 15 ms);
    C3 HAProxy marks s1 DOWN at the twin's time from the end of the last
       check s1 answered: + inter + (fall-1) * fastinter = + 900 ms,
       within 40 ms (the stats socket is polled every 5 ms);
    C4 after s1 is revived, its first answered check comes within
       downinter of the revival, the next starts fastinter = 150 ms after
       it ended (within 15 ms), and HAProxy marks it UP when that second
       check ends (within 40 ms): rise = 2;
  redispatch (mode tcp; the checks above; "retries 3", "timeout connect
          1s"; a client opens a connection every 20 ms and reads the
          server's "OK"; s1 is killed):
    R1 without "option redispatch", the requests that get no answer are
       those the round robin sent to s1 between the kill and the DOWN
       mark: (DOWN - kill) x 50/s / 3, within 2 (the twin's count: every
       retry goes back to the dead server, as RunLbFailover does);
    R2 with "option redispatch", no request fails (the last retry goes to
       another server);
  cookie  (mode http; "cookie SRV insert indirect nocache"; 3 servers
          with cookies a, b, c; roundrobin):
    K1 a request without the cookie gets "Set-Cookie: SRV=<server's
       cookie>" naming the server that answered; "Cache-Control: private"
       (nocache) is added when the response is cacheable (the server sends
       Last-Modified) and not to a bare 200. (The first version expected
       it on every response and failed: the manual says "a cacheable
       response will be tagged non-cacheable"; dp_persist now takes the
       response's cacheability.)
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
import http.client, http.server, os, socket, socketserver, subprocess, tempfile, threading, time

import recording_namespace

SERVER_ADDR = "198.18.0.1"
LOOPBACK_PREFIX = "198.18.0.1/16"
TIMEOUT_S = 90
INSIDE_FLAG = "--inside-namespace"
FRONT_PORT = 22000
BACK_PORT = 27000
INTER, FASTINTER, DOWNINTER, RISE, FALL = 600, 150, 900, 2, 3
PHASE_INTER = 3000
failures = []


def check(name, ok, detail):
    print("  %-3s %s  %s" % (name, "pass" if ok else "FAIL", detail))
    if not ok:
        failures.append(name)


def now_ms():
    return time.monotonic() * 1000.0


class CheckTarget:
    """A TCP server that records when each connection (a health check)
    arrives and answers "OK"; kill() closes the listener so checks are
    refused, revive() listens again on the same port. (A plain connect
    check is closed by HAProxy before a user-space accept() sees it, so the
    check expects the "OK": "option tcp-check" + "tcp-check expect string
    OK", a content check.)"""

    def __init__(self, port):
        self.port, self.accepts, self.answers, self.sock = port, [], [], None
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
            try:
                c.sendall(b"OK\n")
            except OSError:
                pass
            self.answers.append(now_ms())
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


# the lab's stats-socket helpers (routertwin/lab/haproxy_inside.py)
_haproxy = recording_namespace.lab_module("haproxy_inside")
stats_cmd = _haproxy.stats


def server_status(sock, name):
    return _haproxy.server_status(sock, "b", name)


def wait_status(sock, name, want, limit_ms):
    t_end = now_ms() + limit_ms
    while now_ms() < t_end:
        st = server_status(sock, name)
        if st.startswith(want):
            return now_ms()
        time.sleep(0.005)
    return None


def check_lines(d, servers):
    lines = ["global", "  nbthread 1", "  stats socket %s/stats level admin" % d,
             "defaults", "  mode tcp", "  timeout connect 1s", "  timeout client 10s", "  timeout server 10s",
             "frontend f", "  bind %s:%d" % (SERVER_ADDR, FRONT_PORT), "  default_backend b",
             "backend b", "  balance roundrobin", "  option tcp-check", "  tcp-check expect string OK"]
    for i, opts in enumerate(servers):
        lines.append("  server s%d %s:%d check %s" % (i, SERVER_ADDR, BACK_PORT + i, opts))
    return lines


def record_phase():
    print("check phase: 3 servers, inter %d (no fastinter)" % PHASE_INTER)
    targets = [CheckTarget(BACK_PORT + i) for i in range(3)]
    d = tempfile.mkdtemp()
    p, _sock = start_haproxy(check_lines(d, ["inter %d" % PHASE_INTER] * 3), d)
    try:
        time.sleep(PHASE_INTER * 0.85 / 1000.0)
        if not all(t.accepts for t in targets):
            raise SystemExit("no health checks arrived; haproxy said: " + open(os.path.join(d, "log")).read())
        first = [t.accepts[0] for t in targets]
        off = [first[1] - first[0], first[2] - first[0]]
        print("  recorded: phase_offsets_ms %.1f %.1f" % tuple(off))
        want = [PHASE_INTER // 3, 2 * PHASE_INTER // 3]
        check("C1", all(abs(o - w) <= 40 for o, w in zip(off, want)), "want %d, %d (+-40)" % tuple(want))
    finally:
        p.terminate()
        p.wait()
        for t in targets:
            t.kill()


def record_checks():
    print("checks: inter %d fastinter %d downinter %d rise %d fall %d" % (INTER, FASTINTER, DOWNINTER, RISE, FALL))
    targets = [CheckTarget(BACK_PORT + i) for i in range(3)]
    d = tempfile.mkdtemp()
    opts = "inter %d fastinter %d downinter %d rise %d fall %d" % (INTER, FASTINTER, DOWNINTER, RISE, FALL)
    p, sock = start_haproxy(check_lines(d, [opts] * 3), d)
    try:
        time.sleep(2.0)
        if not all(t.accepts for t in targets):
            raise SystemExit("no health checks arrived; haproxy said: " + open(os.path.join(d, "log")).read())
        # A check ends when HAProxy reads the "OK" (answers[k]); the next one
        # starts inter later (process_chk: expire = now + srv_getinter()).
        gaps = [t.accepts[k + 1] - t.answers[k] for t in targets for k in range(len(t.answers) - 1)
                if k + 1 < len(t.accepts)]
        print("  recorded: up_gaps_ms %s" % " ".join("%.1f" % g for g in gaps))
        durations = [b - a for t in targets for a, b in zip(t.accepts, t.answers)]
        print("  check durations seen by the server (accept to answer): max %.1f ms" % max(durations))
        check("C2", all(abs(g - INTER) <= 15 for g in gaps), "end of one check to start of the next: %d (+-15)" % INTER)
        # Kill s1 a third of an interval after one of its checks.
        t_kill = targets[1].answers[-1] + INTER / 3.0
        while now_ms() < t_kill:
            time.sleep(0.001)
        targets[1].kill()
        t_kill = now_ms()
        t_last = targets[1].answers[-1]
        t_down = wait_status(sock, "s1", "DOWN", 5000)
        twin = INTER + (FALL - 1) * FASTINTER
        print("  s1 killed %.1f ms after its last check ended; DOWN %.1f ms after the kill" %
              (t_kill - t_last, (t_down or 0) - t_kill))
        print("  recorded: last_check_end_to_down_ms %.1f  twin %d" % ((t_down or 0) - t_last, twin))
        check("C3", t_down is not None and abs(t_down - t_last - twin) <= 40, "want %d (+-40)" % twin)
        time.sleep(0.3)
        n_before = len(targets[1].accepts)
        t_revive = now_ms()
        targets[1].revive()
        t_up = wait_status(sock, "s1", "UP", 5000)
        acc, ans = targets[1].accepts[n_before:], targets[1].answers[n_before:]
        ok = t_up is not None and len(acc) >= 2 and len(ans) >= 2
        if ok:
            print("  revived; first answered check %.1f ms later; second starts %.1f ms after the first ended;"
                  " UP %.1f ms after the second ended" % (acc[0] - t_revive, acc[1] - ans[0], t_up - ans[1]))
            print("  recorded: rise_gap_ms %.1f  second_end_to_up_ms %.1f" % (acc[1] - ans[0], t_up - ans[1]))
            ok = (acc[0] - t_revive <= DOWNINTER + 15 and abs(acc[1] - ans[0] - FASTINTER) <= 15 and
                  abs(t_up - ans[1]) <= 40)
        check("C4", ok, "first <= %d after revival, next %d later (+-15), UP at its end (+-40)" % (DOWNINTER, FASTINTER))
    finally:
        p.terminate()
        p.wait()
        for t in targets:
            t.kill()


def tcp_request(out, i):
    try:
        c = socket.create_connection((SERVER_ADDR, FRONT_PORT + 2), timeout=10)
        data = c.recv(16)
        c.close()
        out[i] = data.startswith(b"OK")
    except OSError:
        out[i] = False


def record_redispatch(redispatch):
    name = "R2" if redispatch else "R1"
    print("redispatch %s: retries 3, timeout connect 1s, a request every 20 ms" % ("on" if redispatch else "off"))
    ports = [BACK_PORT + 20 + i for i in range(3)]
    targets = [CheckTarget(p) for p in ports]
    d = tempfile.mkdtemp()
    opts = "inter %d fastinter %d downinter %d rise %d fall %d" % (INTER, FASTINTER, DOWNINTER, RISE, FALL)
    lines = ["global", "  nbthread 1", "  stats socket %s/stats level admin" % d,
             "defaults", "  mode tcp", "  retries 3", "  timeout connect 1s", "  timeout client 20s",
             "  timeout server 20s"] + (["  option redispatch"] if redispatch else []) + [
             "frontend f", "  bind %s:%d" % (SERVER_ADDR, FRONT_PORT + 2), "  default_backend b",
             "backend b", "  balance roundrobin", "  option tcp-check", "  tcp-check expect string OK"]
    for i, port in enumerate(ports):
        lines.append("  server s%d %s:%d check %s" % (i, SERVER_ADDR, port, opts))
    p, sock = start_haproxy(lines, d)
    threads, results, sent = [], {}, {}
    try:
        time.sleep(1.0)
        t_kill = targets[1].answers[-1] + INTER / 3.0
        while now_ms() < t_kill:
            time.sleep(0.001)
        targets[1].kill()
        t_kill = now_ms()
        t_down = None
        for i in range(100):  # 2 s of requests at 50/s
            t_next = t_kill + 20.0 * i
            while now_ms() < t_next:
                time.sleep(0.001)
            sent[i] = now_ms()
            th = threading.Thread(target=tcp_request, args=(results, i), daemon=True)
            th.start()
            threads.append(th)
            if t_down is None and i % 2 == 1 and server_status(sock, "s1").startswith("DOWN"):
                t_down = now_ms()
        for th in threads:
            th.join(15)
        if t_down is None:
            t_down = wait_status(sock, "s1", "DOWN", 3000)
        failed = sum(1 for v in results.values() if not v)
        predicted = ((t_down or t_kill) - t_kill) * 50.0 / 1000.0 / 3.0
        print("  recorded: kill_to_down_ms %.1f  failed %d of %d  twin_predicts %.1f" %
              ((t_down or 0) - t_kill, failed, len(sent), predicted if not redispatch else 0.0))
        if redispatch:
            check(name, failed == 0, "no request fails")
        else:
            check(name, abs(failed - predicted) <= 2, "failed = (DOWN - kill) x 50 / 3 (+-2)")
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
            if self.path == "/cacheable":
                self.send_header("Last-Modified", "Mon, 23 Nov 2026 00:00:00 GMT")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass
    return H


def get(cookie=None, path="/"):
    c = http.client.HTTPConnection(SERVER_ADDR, FRONT_PORT + 1, timeout=5)
    c.request("GET", path, headers={"Cookie": cookie} if cookie else {})
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
        for i in range(9):
            cacheable = i % 2 == 1
            srv, saw, setc, cc = get(path="/cacheable" if cacheable else "/")
            want = "SRV=%s" % names[int(srv[1])]
            k1 &= bool(setc) and setc.split(";")[0] == want and (cc == "private" if cacheable else cc is None)
            print("    %s cacheable=%d Set-Cookie: %s Cache-Control: %s" % (srv, cacheable, setc, cc))
            clients.append((srv, setc.split(";")[0] if setc else None))
        print("  fresh requests went to: %s" % " ".join(s for s, _ in clients))
        check("K1", k1, "Set-Cookie names the answering server; Cache-Control: private iff cacheable")
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
    record_phase()
    record_checks()
    record_redispatch(False)
    record_redispatch(True)
    record_cookies()
    print("criteria failed: %s" % (" ".join(failures) if failures else "none"))
    return 1 if failures else 0


if __name__ == "__main__":
    recording_namespace.main(__file__, "rt-hahealth", LOOPBACK_PREFIX, INSIDE_FLAG, TIMEOUT_S, record)
