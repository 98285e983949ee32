"""TCP throughput with iperf3 between two of the lab's namespaces.

The server runs one test (`-s -1 -J`) and reports, as the receiver, the bytes
of each interval; those are the lab's "timing records", like IxChariot's in
the seed: average = all bytes over all their time, minimum and maximum
over the intervals. iperf3's JSON (-J) fields used: `start.
connected[0].{local_host,remote_host}`, `start.tcp_mss_default`,
`intervals[].sum.{seconds,bytes,bits_per_second}`, `end.sum_sent.retransmits`, `end.cpu_utilization_percent`,
`end.sender_tcp_congestion`
(iperf3 3.12, src/iperf_api.c).
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field

from routertwin.lab.system import LabError, run

PORT = 5201
# IxChariot Throughput.scr as the seed ran it: one file of 999,999,999 bytes
# per timing record; its "response time" is that file's transfer time.
SEED_FILE_BYTES = 999_999_999


@dataclass
class Measurement:
    path: str
    intervals_bps: list[float]
    intervals_s: list[float]
    avg_bps: float
    client_connected_to: str
    server_local: str
    server_saw_client: str
    mss: int
    retransmits: int
    cpu_sender_pct: float
    cpu_receiver_pct: float
    congestion: str
    snat_seen_as: str = ""
    nat_rule_packets: dict[str, int] = field(default_factory=dict)

    @property
    def min_bps(self) -> float:
        return min(self.intervals_bps)

    @property
    def max_bps(self) -> float:
        return max(self.intervals_bps)

    def response_time_s(self, bps: float) -> float:
        """The seed's response time: one 999,999,999-byte file at `bps`."""
        return SEED_FILE_BYTES * 8 / bps


def _wait_listening(ns: str, server: subprocess.Popen, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise LabError(f"routertwin lab: iperf3 server in {ns} exited (status {server.returncode}): "
                           f"{server.stderr.read().strip() if server.stderr else ''}")
        out = run(["ip", "netns", "exec", ns, "ss", "-Hltn", f"sport = :{PORT}"], check=False).stdout
        if out.strip():
            return
        time.sleep(0.05)
    raise LabError(f"routertwin lab: iperf3 server in {ns} not listening on port {PORT} after {timeout_s:g} s")


def _server(ns: str, interval_s: float) -> subprocess.Popen:
    # The server reports at its own -i, not the client's.
    server = subprocess.Popen(["ip", "netns", "exec", ns, "iperf3", "-s", "-1", "-J", "-p", str(PORT),
                               "-i", f"{interval_s:g}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_listening(ns, server)
    except BaseException:
        _stop(server)
        raise
    return server


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _json(text: str, who: str) -> dict:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        raise LabError(f"routertwin lab: {who} printed no JSON: {text.strip()[:200]}") from None
    if doc.get("error"):
        raise LabError(f"routertwin lab: {who}: {doc['error']}")
    return doc


def transfer(client_ns: str, server_ns: str, target: str, *, seconds: float | None = None,
             nbytes: int | None = None, interval_s: float = 1.0, congestion: str = "") -> tuple[dict, dict]:
    """One iperf3 test from `client_ns` to `target` (served in `server_ns`),
    for `seconds` or `nbytes`; returns (client JSON, server JSON). Every step
    has a hard timeout."""
    server = _server(server_ns, interval_s)
    try:
        budget = (seconds if seconds is not None else 5.0) + 20.0
        length = ["-t", f"{seconds:g}"] if seconds is not None else ["-n", str(nbytes)]
        client = run(["ip", "netns", "exec", client_ns, "iperf3", "-c", target, "-p", str(PORT), *length,
                      "-i", f"{interval_s:g}", "-J", *(["-C", congestion] if congestion else [])],
                     timeout=budget, check=False)
        client_doc = _json(client.stdout, f"iperf3 client in {client_ns}")
        try:
            out, _ = server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            raise LabError(f"routertwin lab: iperf3 server in {server_ns} did not finish") from None
        server_doc = _json(out, f"iperf3 server in {server_ns}")
        return client_doc, server_doc
    finally:
        _stop(server)


def measure(path, client_ns: str, server_ns: str, seconds: float, interval_s: float,
            congestion: str = "") -> Measurement:
    client, server = transfer(client_ns, server_ns, path.target, seconds=seconds, interval_s=interval_s,
                              congestion=congestion)
    # A last interval much shorter than the rest (the test's tail) is noise, not a record.
    records = [i["sum"] for i in server["intervals"] if i["sum"]["seconds"] >= 0.5 * interval_s]
    if not records:
        raise LabError(f"routertwin lab: {path.name}: iperf3 reported no interval of {interval_s:g} s")
    cpu = client["end"].get("cpu_utilization_percent", {})
    return Measurement(
        path=path.name,
        intervals_bps=[r["bits_per_second"] for r in records],
        intervals_s=[r["seconds"] for r in records],
        # Over the same records as min and max (all bytes over all their
        # time), so min <= avg <= max; end.sum_received would also count the
        # moments before the first byte and the tail.
        avg_bps=8 * sum(r["bytes"] for r in records) / sum(r["seconds"] for r in records),
        client_connected_to=client["start"]["connected"][0]["remote_host"],
        server_local=server["start"]["connected"][0]["local_host"],
        server_saw_client=server["start"]["connected"][0]["remote_host"],
        mss=int(client["start"].get("tcp_mss_default", 0)),
        retransmits=int(client["end"]["sum_sent"].get("retransmits", 0)),
        cpu_sender_pct=float(cpu.get("host_total", 0.0)),
        cpu_receiver_pct=float(cpu.get("remote_total", 0.0)),
        congestion=str(client["end"].get("sender_tcp_congestion", "")),
    )


def snat_probe(vm_ns: str, client_ns: str, client_address: str) -> str:
    """The address the outside sees when the VM behind an EIP opens a
    connection itself (1 MB to an iperf3 server in `client_ns`): its EIP
    when SNAT works, its private address when it does not."""
    _, server = transfer(vm_ns, client_ns, client_address, nbytes=1_000_000, interval_s=1.0)
    return server["start"]["connected"][0]["remote_host"]


def iperf3_version() -> str:
    out = run(["iperf3", "--version"], check=False).stdout.splitlines()
    return out[0].strip() if out else "unknown"
