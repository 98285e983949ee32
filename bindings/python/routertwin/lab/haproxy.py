"""`routertwin lab haproxy CONFIG...`: a real HAProxy (Debian's) beside the
twin, on the user's own configuration (docs/lab.md, "HAProxy beside the
twin").

For each CONFIG: import it with the existing importer (the twin's reading);
rewrite its `bind` and `server` addresses into 198.18.0.0/15 (every line
keeps its number, so `haproxy -c` errors name the user's line) and give it
the lab's own `global` section; start haproxy and one HTTP backend per
server in a network namespace the lab creates; drive the workload; replay
the same workload on the twin; compare under the criterion the scheduler
states before anything is measured (`criterion()`).

The measuring runs in a child process inside the namespace
(lab/haproxy_inside.py); the namespace is deleted afterwards (its processes
ended first) on success, error, Ctrl-C, SIGTERM and SIGHUP, and a run killed
with SIGKILL is cleaned up by the next one or by `--cleanup`
(lab/system.py, shared with the ZStack lab).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from routertwin.lab import system
from routertwin.lab.system import LabError, say

PREFIX = "rtlabha"
FRONT_ADDRESS = "198.18.0.1"
FRONT_PORT_BASE = 20000
BACKEND_PORT = 8080
# The namespace's loopback holds the whole benchmarking range (RFC 2544):
# every 198.18.x.y / 198.19.x.y is local there (a loopback routes its
# prefix as local), so backends and client sources need no further address,
# and no packet can leave the namespace.
LOOPBACK_PREFIX = "198.18.0.1/15"
NEEDS = "a network namespace (ip netns add) for haproxy, its backends and the clients"
WORKLOAD_LINE = re.compile(r"^\s*#\s*lab-workload:\s*(.*)$")

# --workload KEY=VALUE: type, bounds, default
WORKLOAD_KEYS: dict[str, tuple] = {
    "kind": (str, ("requests", "cookie", "failover"), None),  # None: from the configuration
    "service": (str, None, None),  # the frontend/listen the client uses (default: the first with a pool)
    "requests": (int, (1, 20000), 120),  # requests; cookie: rounds per client
    "concurrency": (int, (1, 64), 1),  # connections open at a time (requests)
    "clients": (int, (1, 5000), 1),  # distinct client source addresses 198.18.2.1, ...
    "paths": (int, (1, 100000), 1),  # distinct URIs /p/0 .. /p/N-1
    "delays_ms": (str, None, ""),  # per server of the pool, ':'-separated service delays
    "rate": (float, (1.0, 500.0), 50.0),  # failover: requests per second
    "seconds": (float, (1.0, 60.0), 4.0),  # failover: length of the run
    "kill_at_s": (float, (0.1, 59.0), 1.0),  # failover: when the server dies
    "kill": (str, None, None),  # failover: the server that dies (default: the pool's first usable)
    "kill_mode": (str, ("refuse", "silent"), "refuse"),  # failover: listener closed, or the host silent
    "seed": (int, (0, 2**31 - 1), 1),
}


class WorkloadError(LabError):
    pass


def parse_workload(text: str, shown: str, base: dict | None = None) -> dict:
    """`k=v,k=v` (or ';' separated) into typed workload keys; an unknown key
    or a bad value is one line naming it."""
    out = dict(base or {})
    for item in re.split(r"[,;]", text):
        item = item.strip()
        if not item:
            continue
        key, eq, value = item.partition("=")
        key = key.strip()
        if key not in WORKLOAD_KEYS:
            raise WorkloadError(f"{shown}: workload key '{key}': unknown; the keys are {', '.join(WORKLOAD_KEYS)}")
        if not eq:
            raise WorkloadError(f"{shown}: workload key '{key}': needs a value (KEY=VALUE)")
        typ, bounds, _ = WORKLOAD_KEYS[key]
        try:
            v = typ(value.strip())
        except ValueError:
            raise WorkloadError(f"{shown}: workload key '{key}': '{value}' is not {typ.__name__}") from None
        if isinstance(bounds, tuple) and typ is str and v not in bounds:
            raise WorkloadError(f"{shown}: workload key '{key}': '{v}' is not one of {', '.join(bounds)}")
        if isinstance(bounds, tuple) and typ is not str and not bounds[0] <= v <= bounds[1]:
            raise WorkloadError(f"{shown}: workload key '{key}': {v} is out of range {bounds[0]}..{bounds[1]}")
        out[key] = v
    return out


# ---------------------------------------------------------------- the configuration


@dataclass
class LabConfig:
    """A user's CONFIG as the lab runs it."""
    path: Path
    shown: str
    scenario: dict  # the importer's scenario (the twin's reading)
    text: str  # the lab's haproxy.cfg
    backends: list[dict]  # {pool, name, address, port, delay_ms, weight, backup, index}
    service: dict
    pool: dict
    front_port: int
    workload: dict
    not_modelled: list[str] = field(default_factory=list)
    criterion: dict = field(default_factory=dict)  # haproxy_twin.criterion(), fixed before measuring


_SECTION = re.compile(r"^\s*(global|defaults|frontend|backend|listen|peers|resolvers|userlist|mailers|program|"
                      r"http-errors|ring|cache|fcgi-app)\b(?:\s+(\S+))?")


def rewrite(lines: list[str], backend_address: dict, stats_dir: str) -> tuple[str, dict]:
    """The lab's haproxy.cfg: the user's `global` section commented out (its
    user, chroot, sockets and logging belong to their machine), every
    `bind` to FRONT_ADDRESS:<20000+k>, every `server` to its lab backend;
    the lab's global section appended. Line k stays line k."""
    out, binds = [], {}
    section, proxy, k = None, None, 0
    for line in lines:
        m = _SECTION.match(line)
        if m:
            section, proxy = m.group(1), m.group(2)
        if section == "global":
            out.append("# (lab) " + line if line.strip() else line)
            continue
        b = re.match(r"^(\s*bind\s+)(\S+)(.*)$", line)
        if b and section in ("frontend", "listen"):
            port = FRONT_PORT_BASE + k
            k += 1
            binds.setdefault(proxy, port)
            out.append(f"{b.group(1)}{FRONT_ADDRESS}:{port}{b.group(3)}")
            continue
        s = re.match(r"^(\s*server\s+)(\S+)(\s+)(\S+)(.*)$", line)
        if s and section in ("backend", "listen") and (proxy, s.group(2)) in backend_address:
            out.append(f"{s.group(1)}{s.group(2)}{s.group(3)}{backend_address[(proxy, s.group(2))]}{s.group(5)}")
            continue
        out.append(line)
    out += ["", "global  # (lab) the lab's own: one thread (deterministic schedulers), its stats socket",
            "    nbthread 1", f"    stats socket {stats_dir}/stats level admin", ""]
    return "\n".join(out), binds


def load_config(path: Path, workload_text: str = "", stats_dir: str = "/run/routertwin-lab-haproxy") -> LabConfig:
    """Imports CONFIG (FILE:LINE errors), picks the service and pool the
    workload uses, assigns lab backends, rewrites the file and checks it with
    the real `haproxy -c`."""
    from routertwin.importers import haproxy as importer
    from routertwin.importers._lbcommon import read_text

    shown = str(path)
    if not Path(path).is_file():
        raise LabError(f"{shown}: no such configuration file")
    imported = importer.import_file(path, shown)
    lines = read_text(Path(path), shown)
    workload = {k: v[2] for k, v in WORKLOAD_KEYS.items()}
    for no, line in enumerate(lines, 1):
        m = WORKLOAD_LINE.match(line)
        if m:
            workload = parse_workload(m.group(1), f"{shown}:{no}", workload)
    workload = parse_workload(workload_text, "--workload", workload)
    bal = imported.scenario["balancer"]
    pools = {p["name"]: p for p in bal["pools"]}
    services = [s for s in bal["services"] if s.get("pool") in pools and pools[s["pool"]]["servers"]]
    if workload["service"]:
        services = [s for s in services if s["name"] == workload["service"]]
        if not services:
            raise WorkloadError(f"--workload: service '{workload['service']}': no frontend or listen of that name "
                                f"with a backend that has servers in {shown}")
    if not services:
        raise LabError(f"{shown}: no frontend or listen section sends to a backend with servers: nothing to measure")
    service = services[0]
    pool = pools[service["pool"]]
    backends, address = [], {}
    for pi, p in enumerate(bal["pools"]):
        for si, srv in enumerate(p["servers"]):
            addr = f"198.18.{10 + pi}.{1 + si}"
            address[(p["name"], srv["name"])] = f"{addr}:{BACKEND_PORT}"
            backends.append({"pool": p["name"], "name": srv["name"], "address": addr, "port": BACKEND_PORT,
                             "delay_ms": 0.0, "index": si, "weight": srv.get("weight", 1),
                             "backup": bool(srv.get("backup")), "disabled": bool(srv.get("disabled"))})
    mine = [b for b in backends if b["pool"] == pool["name"]]
    if workload["delays_ms"]:
        try:
            delays = [float(x) for x in workload["delays_ms"].split(":")]
        except ValueError:
            raise WorkloadError(f"--workload: delays_ms '{workload['delays_ms']}': numbers separated by ':'") \
                from None
        if len(delays) != len(mine) or any(not 0 <= d <= 5000 for d in delays):
            raise WorkloadError(f"workload key 'delays_ms': one delay of 0..5000 ms per server of pool "
                                f"'{pool['name']}' ({len(mine)}), got {len(delays)}")
        for b, d in zip(mine, delays):
            b["delay_ms"] = d
    usable = [b for b in mine if not b["backup"] and not b["disabled"] and b["weight"] > 0]
    if workload["kind"] is None:
        cookie = pool.get("cookie")
        if any(s.get("check") for s in pool["servers"]):
            workload["kind"] = "failover"
        elif cookie and cookie.get("mode") == "insert":
            workload["kind"] = "cookie"
        else:
            workload["kind"] = "requests"
    if workload["kind"] == "failover":
        if workload["kill"] is None:
            if not usable:
                raise LabError(f"{shown}: pool '{pool['name']}' has no usable server to kill")
            workload["kill"] = usable[0]["name"]
        if workload["kill"] not in {b["name"] for b in mine}:
            raise WorkloadError(f"workload key 'kill': no server '{workload['kill']}' in pool '{pool['name']}'")
        if workload["kill_at_s"] >= workload["seconds"]:
            raise WorkloadError("workload key 'kill_at_s': must come before 'seconds' ends")
    if workload["kind"] == "cookie" and service["mode"] != "http":
        raise WorkloadError(f"workload kind 'cookie' needs mode http; service '{service['name']}' is {service['mode']}")
    _check_routing(service, shown, workload, importer.lab_routing(path, shown)[service["name"]])
    text, binds = rewrite(lines, address, stats_dir)
    if service["name"] not in binds:
        raise LabError(f"{shown}: service '{service['name']}' has no bind line the lab can rewrite")
    return LabConfig(Path(path), shown, imported.scenario, text, backends, service, pool, binds[service["name"]],
                     workload, [str(x) for x in imported.not_modelled])


def _check_routing(service: dict, shown: str, workload: dict, routing: dict) -> None:
    """The twin side models the service's default pool: every request the
    lab sends (GET /p/K or /, Host: lab; haproxy_inside.py) must reach that
    pool under the service's content switching, or the two sides would see
    different traffic. `routing` is importers.haproxy.lab_routing's for the
    service: a monitor-uri or stats page that answers one of the lab's
    requests, or rules the twin cannot evaluate, are refused."""
    paths = [f"/p/{k}" for k in range(workload["paths"])] if workload["kind"] == "requests" else ["/"]
    for line, kind, uri in routing["intercepts"]:
        hit = next((p for p in paths if (p == uri if kind == "monitor-uri" else p.startswith(uri))), None)
        if hit is not None:
            raise WorkloadError(f"{shown}:{line}: service '{service['name']}': the lab's request GET {hit} is "
                                f"answered by HAProxy's {kind} {uri}, not by the pool the lab measures")
    content = routing["content"]
    if content.get("rules_not_modelled"):
        raise LabError(f"{shown}: service '{service['name']}' routes by content the twin does not model: "
                       f"{content['rules_not_modelled']}")
    if not content.get("rules"):
        return
    from routertwin.runners.lb.balancer import Service
    from routertwin.runners.lb.content import Switch

    svc = Service.model_validate({**{k: v for k, v in service.items() if k != "rules_not_modelled"}, **content})
    switch = Switch(svc.acls, svc.rules, svc.pool)
    for path in paths:
        v = switch.route(path, "lab")
        if v.pool != svc.pool:
            raise WorkloadError(f"{shown}:{routing['rule_lines'][v.rule]}: service '{svc.name}': the lab's "
                                f"request GET {path} (Host: lab) goes to pool '{v.pool}' by rule {v.rule + 1}, "
                                f"not to its default pool '{svc.pool}' the lab measures")


def haproxy_check(cfg: LabConfig, directory: Path) -> None:
    """The real haproxy's verdict on the lab's file; its first alert, with
    the user's file and line, as one line."""
    lab_cfg = directory / "lab.cfg"
    lab_cfg.write_text(cfg.text)
    proc = system.run(["haproxy", "-c", "-f", str(lab_cfg)], check=False)
    if proc.returncode == 0:
        return
    text = (proc.stdout + proc.stderr).replace(str(lab_cfg), cfg.shown)
    alert = next((line for line in text.splitlines() if "[ALERT]" in line and "Fatal errors" not in line),
                 next((line for line in text.splitlines() if line.strip()), "no message"))
    message = re.sub(r"^\[ALERT\]\s*\(\d+\)\s*:\s*(config\s*:\s*)?", "", alert).strip()
    # haproxy names a line as "parsing [FILE:N] : ...", "[FILE:N] : ..." or "... (FILE:N) ..."
    m = re.search(r"[\[(]" + re.escape(cfg.shown) + r":(\d+)[\])]\s*:?\s*", message)
    if m:
        rest = message[m.end():] if message[:m.start()].strip() in ("", "parsing") else message
        raise LabError(f"{cfg.shown}:{m.group(1)}: haproxy -c rejects it: {rest}")
    raise LabError(f"{cfg.shown}: haproxy -c rejects it: {message}")


def require_programs() -> None:
    for program, package in (("ip", "iproute2"), ("haproxy", "haproxy")):
        if shutil.which(program) is None:
            raise LabError(f"routertwin lab haproxy: program '{program}' not found; install the Debian package "
                           f"'{package}' (bash scripts/setup.sh installs it)")


def haproxy_version() -> str:
    out = system.run(["haproxy", "-v"], check=False).stdout
    m = re.search(r"version (\S+)", out)
    return m.group(1) if m else "unknown"


# ---------------------------------------------------------------- running


@dataclass
class LabHaproxyParameters:
    configs: tuple[Path, ...]
    workload: str = ""
    seed: int = 1
    prefix: str = PREFIX
    twin: bool = True


@dataclass
class CaseOutcome:
    config: LabConfig
    measured: dict  # the inside run's JSON
    comparison: dict  # routertwin.lab.haproxy_twin.compare()


@dataclass
class LabHaproxyReport:
    parameters: LabHaproxyParameters
    cases: list[CaseOutcome]
    machine: dict
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.comparison["verdict"] in ("pass", "not modelled") for c in self.cases)


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _measure(cfg: LabConfig, ns: str, directory: Path, index: int, total: int) -> dict:
    spec_dir = directory / f"case{index}"
    spec_dir.mkdir()
    (spec_dir / "lab.cfg").write_text(cfg.text.replace(str(directory / "stats-dir"), str(spec_dir)))
    w = cfg.workload
    spec = {"config": str(spec_dir / "lab.cfg"), "stats_socket": str(spec_dir / "stats"),
            "haproxy_log": str(spec_dir / "haproxy.log"), "backends": cfg.backends, "pool": cfg.pool["name"],
            "front_address": FRONT_ADDRESS, "front_port": cfg.front_port, "kind": w["kind"], "workload": w,
            "kill": f"{cfg.pool['name']}/{w['kill']}" if w["kind"] == "failover" else None}
    (spec_dir / "spec.json").write_text(json.dumps(spec))
    if w["kind"] == "failover":
        bound = w["seconds"] + 60
    elif w["kind"] == "cookie":
        bound = 30 + w["requests"] * w["clients"] * 0.05
    else:
        delay = max([b["delay_ms"] for b in cfg.backends] + [0.0]) / 1000
        bound = 30 + w["requests"] * (0.05 + delay) / w["concurrency"]
    say(f"[{index}/{total}] {cfg.shown}: {w['kind']} workload on service '{cfg.service['name']}' -> pool "
        f"'{cfg.pool['name']}' ({cfg.pool.get('scheduler') or 'no twin scheduler'}), at most {bound:.0f} s")
    say(f"[{index}/{total}] pass criterion, fixed now: {cfg.criterion['text']}")
    inside = Path(__file__).with_name("haproxy_inside.py")
    proc = system.run(["ip", "netns", "exec", ns, sys.executable, str(inside), str(spec_dir / "spec.json")],
                      timeout=bound, check=False)
    if proc.returncode != 0:
        raise LabError(f"routertwin lab haproxy: {cfg.shown}: the measurement failed: "
                       f"{(proc.stderr or proc.stdout).strip().splitlines()[-1:] or ['no message']}")
    return json.loads(proc.stdout)


def cleanup(prefix: str = PREFIX) -> list[str]:
    """Removes namespaces of earlier runs that were killed (`--cleanup`)."""
    system.require_privileges("routertwin lab haproxy", NEEDS)
    with system.RunLock(say=say):
        return system.remove_leftovers(prefix, os.getpid(), say=say)


def run_lab_haproxy(params: LabHaproxyParameters, out: Path | None = None,
                    plots: bool = True) -> LabHaproxyReport:
    """Checks every CONFIG (nothing is built when one is bad), then measures
    each in turn in one namespace, tears it down, and puts the twin beside
    each. Results files are written only after a complete run."""
    from routertwin.lab import haproxy_twin

    if not params.configs:
        raise LabError("routertwin lab haproxy: name at least one CONFIG")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]{0,19}", params.prefix):
        raise LabError(f"routertwin lab haproxy: --prefix '{params.prefix}': a letter, then letters, digits and "
                       "'-', at most 20 in all")
    require_programs()
    directory = Path(tempfile.mkdtemp(prefix="rtlabha-"))
    try:
        configs = [load_config(Path(c), params.workload, str(directory / "stats-dir")) for c in params.configs]
        if any(c.workload["kind"] == "failover" and c.workload["kill_mode"] == "silent" for c in configs) \
                and shutil.which("iptables-restore") is None:
            raise LabError("routertwin lab haproxy: kill_mode=silent needs 'iptables-restore'; install the Debian "
                           "package 'iptables' (bash scripts/setup.sh installs it)")
        for cfg in configs:
            cfg.workload["seed"] = cfg.workload["seed"] if "seed" in params.workload else params.seed
            haproxy_check(cfg, directory)
            cfg.criterion = haproxy_twin.criterion(cfg.workload["kind"], cfg.pool.get("scheduler"), cfg.workload)
        system.require_privileges("routertwin lab haproxy", NEEDS)
        main_thread = threading.current_thread() is threading.main_thread()
        saved = {}
        if main_thread:
            for sig in (signal.SIGTERM, signal.SIGHUP):
                saved[sig] = signal.signal(sig, _raise_interrupt)
        machine = {"kernel": platform.release(), "machine": platform.machine(), "cpus": os.cpu_count(),
                   "haproxy": haproxy_version(), "python": platform.python_version()}
        measured = []
        try:
            with system.RunLock(say=say):
                system.remove_leftovers(params.prefix, os.getpid(), say=say)
                ns = f"{params.prefix}-{os.getpid()}-ha"
                machine["loadavg_before"] = float(Path("/proc/loadavg").read_text().split()[0])
                try:
                    system.make_loopback_namespace(ns, LOOPBACK_PREFIX)
                    say(f"namespace {ns}: loopback holds {LOOPBACK_PREFIX}")
                    for i, cfg in enumerate(configs, 1):
                        measured.append(_measure(cfg, ns, directory, i, len(configs)))
                finally:
                    if main_thread:
                        quiet = {s: signal.signal(s, signal.SIG_IGN)
                                 for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
                    try:
                        system.delete_namespaces([n for n in system.namespaces() if n == ns])
                        say(f"torn down: namespace {ns} deleted")
                    finally:
                        if main_thread:
                            for s, h in quiet.items():
                                signal.signal(s, h)
                machine["loadavg_after"] = float(Path("/proc/loadavg").read_text().split()[0])
        finally:
            for sig, handler in saved.items():
                signal.signal(sig, handler)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    cases = []
    for cfg, m in zip(configs, measured):
        comparison = haproxy_twin.compare(cfg, m, twin=params.twin)
        cases.append(CaseOutcome(cfg, m, comparison))
    report = LabHaproxyReport(params, cases, machine)
    if out is not None:
        from routertwin.lab.haproxy_report import write

        report.files = write(report, out, plots=plots)
    return report
