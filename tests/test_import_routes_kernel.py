"""The Linux importer against the kernel's own FIB (independent truth).

A network namespace made here gets a real FIB of more than 100k IPv4 routes
(random overlapping prefixes /8../32, ECMP routes of 2-4 next hops,
blackhole, unreachable and prohibit routes, and prefixes with two routes of
different metrics), loaded with `ip -batch`. `ip -j route show table all`
is imported by `routertwin import linux`; then for 100k+ addresses (half
inside random routes, half anywhere) the C core's LPM over the imported
FIB file (`routertwin._core.Lpm`) must give what the kernel's
`ip route get fibmatch` gives (batched with `ip -batch`): the same set of
next hops (the kernel picks one ECMP member per flow; fibmatch returns the
whole route it matched), the same discard kind, or no route for both.

Nothing is sent: `ip route get` only looks up, and the routes live inside
the namespace, whose only interfaces are veth pairs with 198.18.0.0/15
addresses. The namespace is removed afterwards, also on failure.
"""

from __future__ import annotations

import ipaddress
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from routertwin.fib import Target, read_fib

CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21
DEVICES = 8  # veth d0..d7, d_i holding 198.18.i.1/24; gateways 198.18.i.2
ROUTES = 110_000
ADDRESSES = 110_000
TIMEOUT_S = 240


def _caps() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


pytestmark = pytest.mark.skipif(not (_caps() >> CAP_NET_ADMIN & 1 and _caps() >> CAP_SYS_ADMIN & 1),
                                reason="needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root) to create network namespaces")


def _ip(ns: str, *args: str, input_file=None, check=True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "-n", ns, *args] if ns else ["ip", *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=check)


@pytest.fixture
def netns():
    name = f"rtfib-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
    try:
        for i in range(DEVICES):
            _ip(name, "link", "add", f"d{i}", "type", "veth", "peer", "name", f"e{i}")
            _ip(name, "link", "set", f"d{i}", "up")
            _ip(name, "link", "set", f"e{i}", "up")
            _ip(name, "addr", "add", f"198.18.{i}.1/24", "dev", f"d{i}")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], timeout=30)


def _excluded(a: int) -> bool:
    """Addresses kept out of the random routes and queries: 0/8, 127/8
    (the local table's loopback), 198.18.0.0/15 (the interfaces' own
    connected routes) and class D/E."""
    return a >> 24 in (0, 127) or (a & 0xFFFE0000) == 0xC6120000 or a >= 0xE0000000


def _random_routes(rng: random.Random) -> tuple[list[str], list[tuple[int, int]]]:
    """`ip -batch` lines of ROUTES routes: random prefixes, a third nested
    inside earlier ones (so lookups meet overlapping prefixes), 5 % ECMP,
    3 % discards, 1 % with a second route of higher metric."""
    lengths = [8] * 1 + [12] * 2 + [16] * 8 + [20] * 10 + [22] * 10 + [24] * 40 + [26] * 6 + [28] * 5 + [32] * 4
    seen: set[tuple[int, int]] = set()
    prefixes: list[tuple[int, int]] = []
    lines = []
    while len(prefixes) < ROUTES:
        if prefixes and rng.random() < 0.33:
            base, blen = prefixes[rng.randrange(len(prefixes))]
            if blen >= 32:
                continue
            length = rng.randint(blen + 1, min(32, blen + 8))
            addr = base | rng.getrandbits(32 - blen) & ((1 << (32 - blen)) - 1)
        else:
            length = rng.choice(lengths)
            addr = rng.getrandbits(32)
        mask = (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF
        addr &= mask
        if _excluded(addr) or _excluded(addr | ~mask & 0xFFFFFFFF) or (addr, length) in seen:
            continue
        seen.add((addr, length))
        prefixes.append((addr, length))
        net = f"{ipaddress.IPv4Address(addr)}/{length}"
        u = rng.random()
        if u < 0.01:
            lines.append(f"route add blackhole {net}")
        elif u < 0.02:
            lines.append(f"route add unreachable {net}")
        elif u < 0.03:
            lines.append(f"route add prohibit {net}")
        elif u < 0.08:
            gws = rng.sample(range(DEVICES), rng.randint(2, 4))
            lines.append(f"route add {net} " + " ".join(f"nexthop via 198.18.{g}.2" for g in gws))
        else:
            lines.append(f"route add {net} via 198.18.{rng.randrange(DEVICES)}.2")
            if u > 0.99:  # a second route to the prefix: the lower metric must win
                lines[-1] += " metric 50"
                lines.append(f"route add {net} via 198.18.{rng.randrange(DEVICES)}.2 metric 20")
    return lines, prefixes


def _addresses(rng: random.Random, prefixes) -> list[int]:
    out = []
    while len(out) < ADDRESSES:
        if len(out) % 2:
            base, length = prefixes[rng.randrange(len(prefixes))]
            a = base | rng.getrandbits(32) & ((1 << (32 - length)) - 1)
        else:
            a = rng.getrandbits(32)
        if not _excluded(a):
            out.append(a)
    return out


# `ip route get` errors of the discard types (kernel: fib_props[] errors of
# RTN_BLACKHOLE -EINVAL, RTN_UNREACHABLE -EHOSTUNREACH, RTN_PROHIBIT -EACCES)
# and of a miss (-ENETUNREACH), as iproute2 prints them.
KERNEL_ERRORS = {"Invalid argument": "blackhole", "No route to host": "unreachable",
                 "Permission denied": "prohibit", "Network is unreachable": None}


def test_import_matches_kernel_lookups(netns, tmp_path):
    rng = random.Random(20)
    lines, prefixes = _random_routes(rng)
    batch = tmp_path / "routes.batch"
    batch.write_text("\n".join(lines) + "\n")
    _ip(netns, "-batch", str(batch))
    dump = tmp_path / "table.json"
    dump.write_text(_ip(netns, "-j", "route", "show", "table", "all").stdout)

    out = tmp_path / "imported.yaml"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-m", "routertwin", "--root", root, "import", "linux", str(dump),
                        "-o", str(out)], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert r.returncode == 0, r.stderr
    fib = read_fib(out.with_suffix(".fib"))
    assert len(fib) >= 100_000
    counts = fib.counts()
    assert counts["ecmp"] > 1000 and counts["blackhole"] > 500 and counts["unreachable"] > 500
    assert counts["prohibit"] > 500
    # The default mapping: each interface its port; the header names them.
    port_of_dev = {label.split("dev ")[-1]: i for i, label in enumerate(fib.ports)}
    assert sorted(port_of_dev) == [f"d{i}" for i in range(DEVICES)]

    addrs = _addresses(rng, prefixes)
    queries = tmp_path / "get.batch"
    queries.write_text("".join(f"route get fibmatch {ipaddress.IPv4Address(a)}\n" for a in addrs))
    k = _ip(netns, "-j", "-force", "-batch", str(queries), check=False)
    failed: dict[int, str] = {}
    message = None
    for line in k.stderr.splitlines():
        if line.startswith("RTNETLINK answers: "):
            message = line[len("RTNETLINK answers: "):]
        elif line.startswith("Command failed ") and message is not None:
            failed[int(line.rsplit(":", 1)[1])] = message
            message = None
    assert set(failed.values()) <= set(KERNEL_ERRORS), set(failed.values())
    answers = iter(k.stdout.splitlines())
    kernel: list[Target | None] = []
    for no in range(1, len(addrs) + 1):
        if no in failed:
            kind = KERNEL_ERRORS[failed[no]]
            kernel.append(Target(discard=kind) if kind else None)
            continue
        (route,) = json.loads(next(answers))
        hops = route.get("nexthops") or [route]
        kernel.append(Target(ports=tuple(sorted({port_of_dev[h["dev"]] for h in hops}))))
    assert next(answers, None) is None

    table = fib.lpm()
    got = table.lookup(np.array(addrs, dtype=np.uint32))
    from routertwin import _core

    twin = [None if h == _core.LPM_MISS else fib.targets[h] for h in got]
    mismatches = [(str(ipaddress.IPv4Address(a)), t, kt) for a, t, kt in zip(addrs, twin, kernel) if t != kt]
    assert mismatches == [], f"{len(mismatches)} of {len(addrs)} differ, first: {mismatches[:5]}"
    # Every kind of answer was exercised.
    kinds = {("miss" if t is None else t.discard or ("ecmp" if len(t.ports) > 1 else "port")) for t in kernel}
    assert kinds == {"miss", "port", "ecmp", "blackhole", "unreachable", "prohibit"}
    assert table.stats()["lookups"] == len(addrs)
