"""Network namespaces for the labs and the HAProxy recorders: made with
only a loopback that holds a whole prefix, and deleted with every process
inside them ended first.

Standard library only and no routertwin import, so the recorders in
core/tests (run with any Python, without the compiled core) load this file
by its path (core/tests/recording_namespace.py) and the lab imports it as
routertwin.lab.netns: one copy of the code that creates and removes them.
"""

from __future__ import annotations

import os
import subprocess


def make_loopback_namespace(name: str, loopback_prefix: str, timeout_s: float = 30.0) -> None:
    """A namespace whose only device is its loopback, up and holding
    `loopback_prefix`: a loopback routes its whole prefix as local, so every
    address of it can be a server or a client without adding each one, and
    no packet can leave. Raises CalledProcessError / TimeoutExpired."""
    for cmd in (["ip", "netns", "add", name], ["ip", "-n", name, "link", "set", "lo", "up"],
                ["ip", "-n", name, "addr", "add", loopback_prefix, "dev", "lo"]):
        subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout_s)


def namespace_pids(names: list[str]) -> dict[str, list[int]]:
    """The processes inside each named namespace, found as `ip netns pids`
    finds them (a process whose /proc/PID/ns/net is the same inode as
    /run/netns/NAME), in one pass over /proc instead of one `ip` per name."""
    wanted = {}
    for name in names:
        try:
            st = os.stat(f"/run/netns/{name}")
        except OSError:
            continue
        wanted[(st.st_dev, st.st_ino)] = name
    found: dict[str, list[int]] = {name: [] for name in names}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            st = os.stat(f"/proc/{entry}/ns/net")
        except OSError:  # gone, or a kernel thread
            continue
        name = wanted.get((st.st_dev, st.st_ino))
        if name is not None:
            found[name].append(int(entry))
    return found


def delete_namespaces(names: list[str], timeout_s: float = 30.0) -> None:
    """Ends the processes inside the named namespaces (a namespace with a
    process in it outlives `ip netns delete`) and deletes them with one
    `ip -batch`. Links inside them (veth ends, bridges), their
    iptables/ebtables rules and tc qdiscs go with them; the peer end of each
    veth pair goes too. Raises TimeoutExpired when `ip` hangs."""
    if not names:
        return
    for pids in namespace_pids(names).values():
        for pid in pids:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
    subprocess.run(["ip", "-batch", "-"], input="".join(f"netns delete {n}\n" for n in names),
                   capture_output=True, text=True, timeout=timeout_s)
