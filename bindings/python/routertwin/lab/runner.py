"""`routertwin lab`: build seed 004's three paths from namespaces, measure
each with iperf3, put the twin's prediction beside each, tear down.

Teardown happens on success, on any failure and on Ctrl-C / SIGTERM / SIGHUP
(signal handlers turn the last two into KeyboardInterrupt; `finally` tears
down with those signals ignored so a second Ctrl-C cannot cut it short).
Namespaces of an earlier run that was killed are removed before building.
"""

from __future__ import annotations

import os
import platform
import re
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from routertwin.lab import iperf, system, topology
from routertwin.lab.system import LabError, say

MIN_RATE_BPS = 1e6
# Above ~10 Gbit/s a veth path on a small machine is CPU-bound, not shaped:
# the lab would measure the CPU and call it a link.
MAX_RATE_BPS = 10e9
MAX_SECONDS = 600.0


@dataclass
class LabParameters:
    paths: tuple[str, ...] = tuple(topology.PATHS)
    seconds: float = 10.0
    interval_s: float = 1.0
    wire_rate_bps: float = 1e9
    rounds: int = 1
    calibrate: str = "flat-direct"
    prefix: str = "rtlab"
    seed: int = 1
    twin: bool = True
    twin_seconds: float = 0.5  # simulated seconds per path (routertwin.lab.twin.TWIN_SECONDS)

    def check(self) -> None:
        unknown = [p for p in self.paths if p not in topology.PATHS]
        if unknown:
            raise LabError(f"routertwin lab: unknown path '{unknown[0]}'; the paths are "
                           f"{', '.join(topology.PATHS)}")
        if len(set(self.paths)) != len(self.paths) or not self.paths:
            raise LabError("routertwin lab: --paths: name each path once (at least one)")
        if self.calibrate not in self.paths:
            raise LabError(f"routertwin lab: --calibrate '{self.calibrate}' is not one of the measured paths "
                           f"({', '.join(self.paths)})")
        if not MIN_RATE_BPS <= self.wire_rate_bps <= MAX_RATE_BPS:
            raise LabError(f"routertwin lab: --rate {self.wire_rate_bps:g} bit/s: the shaped link must be between "
                           f"{MIN_RATE_BPS:g} and {MAX_RATE_BPS:g} bit/s")
        if not 1.0 <= self.seconds <= MAX_SECONDS:
            raise LabError(f"routertwin lab: --seconds {self.seconds:g}: between 1 and {MAX_SECONDS:g}")
        if not 0.1 <= self.interval_s <= self.seconds / 2:
            raise LabError(f"routertwin lab: --interval {self.interval_s:g}: between 0.1 s and half of --seconds "
                           "(min and max need at least two intervals)")
        if not 0.01 <= self.twin_seconds <= 10:
            raise LabError(f"routertwin lab: --twin-seconds {self.twin_seconds:g}: between 0.01 and 10 (simulated "
                           "seconds of ns-3 per path)")
        if not 1 <= self.rounds <= 20:
            raise LabError(f"routertwin lab: --rounds {self.rounds}: between 1 and 20")
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]{0,19}", self.prefix):
            raise LabError(f"routertwin lab: --prefix '{self.prefix}': a letter, then letters, digits and '-', "
                           "at most 20 in all")


@dataclass
class PathResult:
    path: str
    role: str  # "calibrate" or "predict"
    runs: list[iperf.Measurement] = field(default_factory=list)

    @property
    def intervals_bps(self) -> list[float]:
        return [x for m in self.runs for x in m.intervals_bps]

    @property
    def avg_bps(self) -> float:
        return sum(m.avg_bps for m in self.runs) / len(self.runs)

    @property
    def min_bps(self) -> float:
        return min(self.intervals_bps)

    @property
    def max_bps(self) -> float:
        return max(self.intervals_bps)


@dataclass
class LabReport:
    parameters: LabParameters
    results: dict[str, PathResult]
    twin: "object"  # routertwin.lab.twin.TwinOutcome
    machine: dict
    files: dict[str, Path] = field(default_factory=dict)


class _Interrupted(KeyboardInterrupt):
    pass


def _raise_interrupt(signum, _frame):
    raise _Interrupted(f"signal {signal.Signals(signum).name}")


def machine_facts() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"kernel": platform.release(), "machine": platform.machine(), "cpu": cpu, "cpus": os.cpu_count(),
            "iperf3": iperf.iperf3_version()}


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def cleanup(prefix: str = "rtlab") -> list[str]:
    """Removes namespaces of earlier lab runs that are no longer alive
    (`routertwin lab --cleanup`)."""
    system.require_privileges()
    with system.RunLock(say=say):
        return system.remove_leftovers(prefix, os.getpid(), say=say)


def run_lab(params: LabParameters, root: Path | None = None, out: Path | None = None,
            plots: bool = True) -> LabReport:
    """Builds the lab, measures every path `rounds` times (paths interleaved,
    so a change in the machine's load hits every path alike), tears down,
    then calibrates the twin on `params.calibrate` and predicts the rest.
    Writes results only when everything succeeded."""
    params.check()
    system.require_privileges()
    system.require_programs()
    main_thread = threading.current_thread() is threading.main_thread()
    saved = {}
    if main_thread:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            saved[sig] = signal.signal(sig, _raise_interrupt)
    lab = topology.Lab(params.prefix, os.getpid(), params.wire_rate_bps)
    results = {p: PathResult(p, "calibrate" if p == params.calibrate else "predict") for p in params.paths}
    machine = machine_facts()
    try:
        with system.RunLock(say=say):
            system.remove_leftovers(params.prefix, os.getpid(), say=say)
            machine["loadavg_before"] = loadavg()
            t0 = time.monotonic()
            try:
                lab.build(say)
                machine["tcp"] = lab.tcp_settings(topology.CLIENT)
                machine["bridge_nf_call_iptables"] = system.run(
                    ["ip", "netns", "exec", lab.ns("host2"), "cat", "/proc/sys/net/bridge/bridge-nf-call-iptables"],
                    check=False).stdout.strip() or "absent"
                total = params.rounds * len(params.paths)
                done = 0
                for r in range(params.rounds):
                    for name in params.paths:
                        path = topology.PATHS[name]
                        done += 1
                        say(f"[{done}/{total}] {name}: iperf3 {lab.ns(topology.CLIENT)} -> {path.target} "
                            f"for {params.seconds:g} s")
                        m = iperf.measure(path, lab.ns(topology.CLIENT), lab.ns(path.server), params.seconds,
                                          params.interval_s, congestion=topology.CONGESTION_CONTROL)
                        if path.nat:
                            m.snat_seen_as = iperf.snat_probe(lab.ns(path.server), lab.ns(topology.CLIENT),
                                                              topology.CLIENT_ADDRESS)
                            m.nat_rule_packets = lab.nat_counters(path.nat)
                        results[name].runs.append(m)
                        say(f"[{done}/{total}] {name}: {m.avg_bps / 1e6:.1f} Mbit/s "
                            f"(min {m.min_bps / 1e6:.1f}, max {m.max_bps / 1e6:.1f})")
            finally:
                if main_thread:
                    quiet = {s: signal.signal(s, signal.SIG_IGN)
                             for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
                try:
                    removed = lab.teardown()
                    say(f"torn down: {len(removed)} namespaces deleted")
                finally:
                    if main_thread:
                        for s, h in quiet.items():
                            signal.signal(s, h)
            machine["loadavg_after"] = loadavg()
            machine["measure_wall_s"] = round(time.monotonic() - t0, 1)
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    from routertwin.lab import twin

    # The sender's congestion control is the socket's (iperf3 -C), not the namespace default.
    sysctls = {**machine.get("tcp", {}), "tcp_congestion_control": results[params.calibrate].runs[0].congestion}
    outcome = twin.predict(params, results, root, sysctls) if params.twin else twin.TwinOutcome.unavailable(
        "not requested (--no-twin)")
    report = LabReport(params, results, outcome, machine)
    if out is not None:
        from routertwin.lab.report import write

        report.files = write(report, out, root, plots=plots)
    return report
