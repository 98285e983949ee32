"""The measuring side of `routertwin lab haproxy`, run inside the lab's
network namespace (`ip netns exec NS python3 haproxy_inside.py SPEC.json`):
HTTP backends, Debian's haproxy, the client workload. Prints one JSON
document on stdout: every request (when it started and ended, which server
answered, the status), and for a failover when HAProxy marked the killed
server DOWN.

Standard library only, and no routertwin import: it is run by file path so
that the package (and its compiled core) is not loaded in the namespace.
The HAProxy recorders in core/tests use its stats-socket helpers (loaded by
path, as recording_namespace.py loads netns.py). Every wait is bounded; the
parent deletes the namespace afterwards, which
ends haproxy and this process whatever state they are in.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

REQUEST_TIMEOUT_S = 15.0
STATS_POLL_S = 0.005


def now_ms() -> float:
    return time.monotonic() * 1000.0


class Backend:
    """One HTTP server: answers every request after `delay_ms` with its
    label ("pool/server") as the body, then closes (HTTP/1.0). kill()
    closes the listener: new connections are refused, as when the server's
    process dies; silence() makes its address drop every packet, as when
    its host dies."""

    def __init__(self, label: str, address: str, port: int, delay_ms: float):
        self.label, self.address, self.port, self.delay_s = label, address, port, delay_ms / 1000.0
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((address, port))
        s.listen(1024)
        self.sock = s
        self.silent = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        c.settimeout(REQUEST_TIMEOUT_S)
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = c.recv(4096)
                if not chunk:
                    break
                head += chunk
            if not head:  # a health check that connected and closed
                return
            if self.delay_s:
                time.sleep(self.delay_s)
            body = (self.label + "\n").encode()
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                      b"Connection: close\r\n\r\n%s" % (len(body), body))
        except OSError:
            pass
        finally:
            c.close()

    def kill(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

    def silence(self) -> None:
        """The host gone: the namespace's netfilter drops every TCP packet
        to and from the backend's address and port (both rules in one
        iptables-restore transaction), so a SYN gets no answer, no RST, and
        an open connection hears nothing more. The listener stays open: only
        the network says the host is gone."""
        self._drop_rules("-I")
        self.silent = True

    def _drop_rules(self, op: str) -> None:
        rules = (f"*filter\n{op} INPUT -d {self.address}/32 -p tcp --dport {self.port} -j DROP\n"
                 f"{op} INPUT -s {self.address}/32 -p tcp --sport {self.port} -j DROP\nCOMMIT\n")
        subprocess.run(["iptables-restore", "--noflush", "--wait"], input=rules, text=True, check=True,
                       capture_output=True, timeout=10)

    def unsilence(self) -> None:
        """The drop rules out again: the next configuration in the same
        namespace finds the address answering."""
        if self.silent:
            self._drop_rules("-D")
            self.silent = False


def http_get(front: tuple[str, int], source: str, path: str, cookie: str | None) -> dict:
    """One request on its own connection (Connection: close, so every
    request is a new connection the balancer schedules)."""
    t0 = now_ms()
    rec = {"t0_ms": t0, "source": source, "path": path, "status": 0, "server": None, "set_cookie": None}
    try:
        c = socket.socket()
        c.settimeout(REQUEST_TIMEOUT_S)
        c.bind((source, 0))
        c.connect(front)
        req = f"GET {path} HTTP/1.1\r\nHost: lab\r\nConnection: close\r\n"
        if cookie:
            req += f"Cookie: {cookie}\r\n"
        c.sendall((req + "\r\n").encode())
        data = read_to_end(c)
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        if lines and lines[0].startswith("HTTP/"):
            rec["status"] = int(lines[0].split()[1])
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "set-cookie":
                rec["set_cookie"] = value.strip().split(";")[0]
        if rec["status"] == 200:
            rec["server"] = body.decode().strip()
    except OSError as exc:
        rec["error"] = type(exc).__name__
    rec["t1_ms"] = now_ms()
    return rec


def read_to_end(c: socket.socket) -> bytes:
    """Everything the peer sends until it closes; closes the socket."""
    data = b""
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        data += chunk
    c.close()
    return data


def stats(sock_path: str, command: str) -> str:
    """One command on HAProxy's stats socket (management guide 9.3), its answer."""
    u = socket.socket(socket.AF_UNIX)
    u.settimeout(2.0)
    u.connect(sock_path)
    u.sendall(command.encode() + b"\n")
    return read_to_end(u).decode()


def server_status(sock_path: str, pool: str, server: str) -> str:
    """The server's status column of `show stat` ("UP", "DOWN 1/2", ...)."""
    for line in stats(sock_path, "show stat").splitlines():
        f = line.split(",")
        if len(f) > 17 and f[0] == pool and f[1] == server:
            return f[17]
    return "?"


def start_haproxy(spec: dict) -> subprocess.Popen:
    log = open(spec["haproxy_log"], "w")
    p = subprocess.Popen(["haproxy", "-db", "-f", spec["config"]], stdout=log, stderr=log)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise SystemExit("haproxy exited at start: " + open(spec["haproxy_log"]).read().strip())
        try:
            stats(spec["stats_socket"], "show info")
            return p
        except OSError:
            time.sleep(0.02)
    raise SystemExit("haproxy did not open its stats socket within 10 s")


def wait_all_up(spec: dict, limit_s: float = 10.0) -> None:
    """A checked pool starts with its servers up after the first checks
    pass: wait until every active server of the workload's pool is UP and
    in no transition, so every run starts from the same state."""
    deadline = time.monotonic() + limit_s
    pool = spec["pool"]
    # (a disabled one stays MAINT; a backup's check may be one the lab cannot answer, e.g. check-via-socks4)
    mine = [b for b in spec["backends"] if b["pool"] == pool and not b["disabled"] and not b["backup"]]
    states: list[str] = []
    while time.monotonic() < deadline:
        states = [server_status(spec["stats_socket"], pool, b["name"]) for b in mine]
        if all(s.startswith(("UP", "no check")) and "/" not in s for s in states):
            return
        time.sleep(0.05)
    raise SystemExit(f"the servers of pool '{pool}' were not all up within {limit_s:g} s: "
                     + ", ".join(f"{b['name']} {s}" for b, s in zip(mine, states)))


def source_of(k: int) -> str:
    """Client k's source address: 198.18.2.1 + k as one 32-bit number
    (198.18.2.1, ..., 198.18.2.255, 198.18.3.0, ...; the namespace's loopback
    holds 198.18.0.0/15), so the twin's failover model can number its
    clients the same way from one base address."""
    return socket.inet_ntoa(((198 << 24 | 18 << 16 | 2 << 8 | 1) + k).to_bytes(4, "big"))


def run_requests(spec: dict, front) -> list[dict]:
    """Request i comes from client i % clients with path /p/<i % paths>;
    `concurrency` connections are open at a time (one after the other with
    1, so the order is the workload's)."""
    w = spec["workload"]
    n, conc = w["requests"], w["concurrency"]
    out: list = [None] * n
    nxt = iter(range(n))
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                i = next(nxt, None)
            if i is None:
                return
            out[i] = http_get(front, source_of(i % w["clients"]), f"/p/{i % w['paths']}", None)
            out[i]["i"] = i

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(conc)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(REQUEST_TIMEOUT_S * (n // conc + 2))
    return [r for r in out if r is not None]


def run_cookie(spec: dict, front) -> list[dict]:
    """Rounds: in each, every client sends one request in turn; the first
    carries no cookie, the later ones the cookie HAProxy set."""
    w = spec["workload"]
    jar: dict[int, str | None] = {k: None for k in range(w["clients"])}
    out = []
    for rnd in range(w["requests"]):
        for k in range(w["clients"]):
            r = http_get(front, source_of(k), "/", jar[k])
            r.update(client=k, round=rnd, sent_cookie=jar[k])
            if r["set_cookie"]:
                jar[k] = r["set_cookie"]
            out.append(r)
    return out


def run_failover(spec: dict, front, backends: dict) -> tuple[list[dict], dict]:
    """A request every 1/rate s (each on its own thread: open loop) for
    `seconds`; at `kill_at_s` the killed server's listener closes (kill_mode
    refuse) or its address goes silent (silent: the kill time is when the
    drop rules are in, the iptables-restore returned); the stats socket is
    polled every 5 ms for its DOWN mark until it comes or every request
    has ended."""
    w = spec["workload"]
    victim = backends[spec["kill"]]
    pool, name = spec["pool"], spec["kill"].split("/", 1)[1]
    n = int(round(w["rate"] * w["seconds"]))
    out: list = [None] * n
    events: dict = {}

    def one(i):
        out[i] = http_get(front, source_of(i % w["clients"]), "/", None)
        out[i]["i"] = i

    def watch():
        while not finished.is_set() and now_ms() < t_start + (w["seconds"] + 10) * 1000:
            try:
                if server_status(spec["stats_socket"], pool, name).startswith("DOWN"):
                    events["down_ms"] = now_ms()
                    return
            except OSError:
                pass
            time.sleep(STATS_POLL_S)

    finished = threading.Event()
    t_start = now_ms()
    watcher = None
    threads = []
    for i in range(n):
        t_next = t_start + 1000.0 * i / w["rate"]
        if "kill_ms" not in events and t_next >= t_start + w["kill_at_s"] * 1000:
            while now_ms() < t_start + w["kill_at_s"] * 1000:
                time.sleep(0.0005)
            events["kill_started_ms"] = now_ms()
            if w.get("kill_mode") == "silent":
                victim.silence()
            else:
                victim.kill()
            events["kill_ms"] = now_ms()
            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
        while now_ms() < t_next:
            time.sleep(0.0005)
        th = threading.Thread(target=one, args=(i,), daemon=True)
        th.start()
        threads.append(th)
    for th in threads:
        th.join(REQUEST_TIMEOUT_S + 5)
    finished.set()
    if watcher:
        watcher.join(15)
    events["start_ms"] = t_start
    return [r for r in out if r is not None], events


def main(spec_path: str) -> int:
    spec = json.load(open(spec_path))
    backends = {b["pool"] + "/" + b["name"]: Backend(b["pool"] + "/" + b["name"], b["address"], b["port"],
                                                     b["delay_ms"]) for b in spec["backends"]}
    p = start_haproxy(spec)
    try:
        wait_all_up(spec)
        front = (spec["front_address"], spec["front_port"])
        events: dict = {}
        if spec["kind"] == "requests":
            recs = run_requests(spec, front)
        elif spec["kind"] == "cookie":
            recs = run_cookie(spec, front)
        else:
            recs, events = run_failover(spec, front, backends)
        stat = stats(spec["stats_socket"], "show stat")
    finally:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
        for b in backends.values():
            b.kill()
            b.unsilence()
    json.dump({"requests": recs, "events": events, "show_stat": stat,
               "haproxy_log": open(spec["haproxy_log"]).read()}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
