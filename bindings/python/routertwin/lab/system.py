"""What the live lab asks of the machine: root, a lock, bounded commands, and
the removal of namespaces an earlier run left behind.

Every command runs with a hard timeout; a command that fails names itself and
its stderr in a `LabError`. Namespaces are named `<prefix>-<pid>-<role>`, so
the namespaces of a run that was killed (SIGKILL, power loss) are recognised
by their dead pid and removed before the next run builds anything.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from routertwin.errors import UserError
from routertwin.lab import netns

# Linux capability numbers (include/uapi/linux/capability.h).
CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21  # `ip netns add` bind-mounts the namespace under /run/netns

LOCK_FILE = Path("/run/routertwin-lab.lock")
COMMAND_TIMEOUT_S = 30.0


class LabError(UserError):
    """The lab cannot run here or a step of it failed (one line, exit 2)."""


class NotPrivilegedError(LabError):
    """The process lacks CAP_NET_ADMIN / CAP_SYS_ADMIN."""


def effective_capabilities() -> int:
    """The CapEff bit mask of this process (proc(5))."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


ZSTACK_NEEDS = "network namespaces, veth pairs, bridges, iptables rules and tc shapers"


def require_privileges(command: str = "routertwin lab", needs: str = ZSTACK_NEEDS) -> None:
    caps = effective_capabilities()
    missing = [name for bit, name in ((CAP_NET_ADMIN, "CAP_NET_ADMIN"), (CAP_SYS_ADMIN, "CAP_SYS_ADMIN"))
               if not caps >> bit & 1]
    if missing:
        raise NotPrivilegedError(
            f"{command}: needs root: creating {needs} takes {' and '.join(missing)}, which this process does "
            f"not have; run it as root (e.g. sudo python3 -m {command})")


def require_programs() -> None:
    """iperf3, iptables and ebtables come from setup.sh's Debian packages; ip
    and tc from iproute2."""
    import shutil

    for program, package in (("ip", "iproute2"), ("tc", "iproute2"), ("iptables", "iptables"),
                             ("ebtables", "iptables"), ("iperf3", "iperf3")):
        if shutil.which(program) is None:
            raise LabError(f"routertwin lab: program '{program}' not found; install the Debian package "
                           f"'{package}' (bash scripts/setup.sh installs it)")


def run(cmd: list[str], *, timeout: float = COMMAND_TIMEOUT_S, check: bool = True) -> subprocess.CompletedProcess:
    """Runs `cmd` with a hard timeout. On failure (status, timeout, missing
    program) raises LabError naming the command, when `check`."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LabError(f"routertwin lab: '{' '.join(cmd)}' did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise LabError(f"routertwin lab: cannot run '{cmd[0]}': {exc.strerror}") from None
    if check and proc.returncode != 0:
        raise LabError(f"routertwin lab: '{' '.join(cmd)}' failed (status {proc.returncode}): "
                       f"{(proc.stderr or proc.stdout).strip()}")
    return proc


def namespaces() -> list[str]:
    """Names of the named network namespaces (`ip netns list`)."""
    out = run(["ip", "netns", "list"]).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def delete_namespaces(names: list[str]) -> None:
    """netns.delete_namespaces (its processes ended first), as a LabError
    when `ip` hangs."""
    try:
        netns.delete_namespaces(names, COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise LabError(f"routertwin lab: deleting namespaces {', '.join(names)} took more than "
                       f"{COMMAND_TIMEOUT_S:g} s") from None


def make_loopback_namespace(name: str, loopback_prefix: str) -> None:
    """netns.make_loopback_namespace; a failing step is a LabError naming it."""
    try:
        netns.make_loopback_namespace(name, loopback_prefix, COMMAND_TIMEOUT_S)
    except subprocess.CalledProcessError as exc:
        raise LabError(f"routertwin lab: '{' '.join(exc.cmd)}' failed (status {exc.returncode}): "
                       f"{(exc.stderr or '').strip()}") from None
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"routertwin lab: '{' '.join(exc.cmd)}' did not finish within {exc.timeout:g} s") from None


def stale_namespaces(prefix: str, own_pid: int) -> list[str]:
    """Namespaces `<prefix>-<pid>-*` whose run (pid) is no longer alive."""
    pattern = re.compile(rf"^{re.escape(prefix)}-(\d+)-")
    stale = []
    for name in namespaces():
        m = pattern.match(name)
        if m and int(m.group(1)) != own_pid and not _alive(int(m.group(1))):
            stale.append(name)
    return stale


def remove_leftovers(prefix: str, own_pid: int, say=None) -> list[str]:
    """Deletes the namespaces of dead earlier runs with this prefix; returns
    their names."""
    stale = stale_namespaces(prefix, own_pid)
    if stale and say:
        say(f"removing {len(stale)} namespace(s) left by an earlier run that was killed: {', '.join(stale)}")
    delete_namespaces(stale)
    return stale


class RunLock:
    """One lab run at a time on a machine: two runs would share the CPUs and
    measure each other. Waits at most `wait_s` for a running lab to finish."""

    def __init__(self, wait_s: float = 300.0, say=None):
        self.wait_s = wait_s
        self.say = say
        self._fd: int | None = None

    def __enter__(self) -> "RunLock":
        self._fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.wait_s
        told = False
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self._fd)
                    self._fd = None
                    raise LabError(f"routertwin lab: another lab run holds {LOCK_FILE} for more than "
                                   f"{self.wait_s:g} s") from None
                if not told and self.say:
                    self.say(f"waiting for another lab run to finish ({LOCK_FILE})")
                    told = True
                time.sleep(0.2)
        os.ftruncate(self._fd, 0)
        os.write(self._fd, f"{os.getpid()}\n".encode())
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def say(message: str) -> None:
    """One progress line on stderr."""
    print(f"[lab] {message}", file=sys.stderr, flush=True)
