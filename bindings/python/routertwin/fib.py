"""An IPv4 forwarding table (FIB) as the router model holds it, and its file.

A FIB is a list of routes `prefix/length -> target`; a target is one port of
the router, several ports (ECMP: the model picks one per flow by
hash-threshold, RFC 2992), or a discard: `blackhole`, `unreachable` or
`prohibit` (each dropped with its own named counter). `routertwin import`
writes one from a real routing table (routertwin.importers) and the router
kind reads it (scenario key `route_file`).

The FIB file (`.fib`) is text, one route a line, `#` starts a comment line:

    # port 0: via 198.18.0.2 dev eth1
    10.0.0.0/8 0
    10.1.0.0/16 0,3
    192.0.2.0/24 blackhole

Prefix bits beyond the length are ignored (importers write them zero). When a prefix appears twice the later line wins (the model's dp_lpm_add
replaces). docs/import.md documents the format.

`Fib.lookup` answers with the C core's DIR-24-8 table (`routertwin._core.Lpm`,
core/include/dp/dp_lpm.h), the same code the router model forwards with.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from routertwin.errors import UserError

DISCARDS = ("blackhole", "unreachable", "prohibit")

# The router model's limits (model/router/model/router-model.cc): at most 64
# next hops in one ECMP route, ports < 256 (RouterConfig).
MAX_ECMP = 64
MAX_PORTS = 256


@dataclass(frozen=True)
class Target:
    """Where a route sends a packet: ports (ECMP when several), or a discard."""

    ports: tuple[int, ...] = ()
    discard: str | None = None

    def text(self) -> str:
        return self.discard if self.discard else ",".join(str(p) for p in self.ports)


@dataclass
class Fib:
    """Routes as arrays (host-order prefixes, lengths, target indexes) and
    the distinct targets they use; `ports` labels each port (what next hop
    of the imported table it stands for)."""

    prefixes: np.ndarray
    lengths: np.ndarray
    target_ids: np.ndarray
    targets: list[Target]
    ports: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.prefixes.size)

    def route(self, i: int) -> tuple[str, Target]:
        """Route i as ('a.b.c.d/len', Target)."""
        return (f"{ipaddress.IPv4Address(int(self.prefixes[i]))}/{int(self.lengths[i])}",
                self.targets[int(self.target_ids[i])])

    def lpm(self):
        """The C core's dp_lpm table of these routes (next hop = target index)."""
        from routertwin import _core

        return _core.Lpm(self.prefixes, self.lengths, self.target_ids)

    def lookup(self, addresses, table=None) -> list[Target | None]:
        """The target each address (str, int or ipaddress) matches, None where
        no route does, answered by the C core's LPM (`table`: a prebuilt
        `lpm()`, to look up several batches)."""
        from routertwin import _core

        table = table or self.lpm()
        ips = np.array([int(ipaddress.IPv4Address(a)) for a in addresses], dtype=np.uint32)
        return [None if h == _core.LPM_MISS else self.targets[h] for h in table.lookup(ips)]

    def counts(self) -> dict[str, int]:
        """Routes by what their target is: ports, ecmp, and each discard."""
        n = np.bincount(self.target_ids, minlength=len(self.targets))
        out = {"routes": len(self), "single_port": 0, "ecmp": 0, **{d: 0 for d in DISCARDS}}
        for t, c in zip(self.targets, n):
            key = t.discard or ("ecmp" if len(t.ports) > 1 else "single_port")
            out[key] += int(c)
        return out


class FibBuilder:
    """Collects routes; `build()` returns the Fib. A prefix added twice keeps
    the route of lowest metric (the kernel's and the daemons' rule among
    routes of one table; equal metrics: the first, as the kernel keeps
    the first inserted)."""

    def __init__(self) -> None:
        self._routes: dict[tuple[int, int], tuple[int, int]] = {}  # (prefix, len) -> (metric, target id)
        self._targets: list[Target] = []
        self._target_ids: dict[Target, int] = {}
        self.masked = 0  # prefixes that had host bits set
        self.shadowed = 0  # routes hidden by one of lower metric for the same prefix

    def add(self, prefix: int, length: int, target: Target, metric: int = 0) -> None:
        mask = 0 if length == 0 else (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF
        if prefix & ~mask & 0xFFFFFFFF:
            self.masked += 1
            prefix &= mask
        tid = self._target_ids.get(target)
        if tid is None:
            tid = self._target_ids[target] = len(self._targets)
            self._targets.append(target)
        key = (prefix, length)
        old = self._routes.get(key)
        if old is not None:
            self.shadowed += 1
            if old[0] <= metric:
                return
        self._routes[key] = (metric, tid)

    def build(self, ports: list[str]) -> Fib:
        keys = sorted(self._routes, key=lambda k: (k[1], k[0]))  # shorter first: readable, and deterministic
        n = len(keys)
        prefixes = np.fromiter((k[0] for k in keys), dtype=np.uint32, count=n)
        lengths = np.fromiter((k[1] for k in keys), dtype=np.uint8, count=n)
        tids = np.fromiter((self._routes[k][1] for k in keys), dtype=np.uint32, count=n)
        return Fib(prefixes, lengths, tids, list(self._targets), list(ports))


def format_fib(fib: Fib, header: list[str]) -> str:
    """The FIB file's text: `header` lines as comments, the port labels, then
    one route a line."""
    lines = [f"# {h}" if h else "#" for h in header]
    lines += [f"# port {i}: {label}" for i, label in enumerate(fib.ports)]
    texts = [t.text() for t in fib.targets]
    pre = fib.prefixes.astype(np.uint64)
    quads = [(pre >> s) & 0xFF for s in (24, 16, 8, 0)]
    for a, b, c, d, ln, t in zip(*(q.tolist() for q in quads), fib.lengths.tolist(), fib.target_ids.tolist()):
        lines.append(f"{a}.{b}.{c}.{d}/{ln} {texts[t]}")
    return "\n".join(lines) + "\n"


def _parse_target(word: str, ports: int | None) -> Target | None:
    if word in DISCARDS:
        return Target(discard=word)
    parts = word.split(",")
    if not all(p.isdigit() and len(p) <= 3 for p in parts):
        return None
    nums = tuple(int(p) for p in parts)
    if len(set(nums)) != len(nums) or len(nums) > MAX_ECMP or max(nums) >= (ports or MAX_PORTS):
        return None
    return Target(ports=nums)


def read_fib(path: str | Path, ports: int | None = None) -> Fib:
    """Reads a FIB file; a bad line raises UserError `FILE:LINE: ...` (the
    same rules as the router model's reader; `ports` bounds the port numbers)."""
    path = Path(path)
    b = FibBuilder()
    labels: dict[int, str] = {}
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read FIB file: {exc}") from None
    for no, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            if line.startswith("# port ") and ":" in line:
                num, _, label = line[7:].partition(":")
                if num.strip().isdigit():
                    labels[int(num)] = label.strip()
            continue
        words = line.split()
        target = _parse_target(words[1], ports) if len(words) == 2 else None
        try:
            net = ipaddress.IPv4Network(words[0], strict=False)
        except (ValueError, IndexError):
            net = None
        if net is None or target is None or "/" not in words[0]:
            raise UserError(f"{path}:{no}: expected 'a.b.c.d/len TARGET', TARGET a port "
                            f"< {ports or MAX_PORTS}, distinct ports 'p,q,...' (at most {MAX_ECMP}), "
                            f"{', '.join(DISCARDS)}; got {line!r}")
        b._routes.pop((int(net.network_address), net.prefixlen), None)  # later line wins, as in the model
        b.add(int(net.network_address), net.prefixlen, target)
    n = max(labels) + 1 if labels else 0
    return b.build([labels.get(i, "") for i in range(n)])


def grow(fib: Fib, routes: int, seed: int = 1) -> Fib:
    """The what-if "the table grows to `routes` routes": `fib` plus new
    routes drawn like its own (prefix lengths and targets in the table's
    proportions; prefixes uniform over 1.0.0.0-223.255.255.255, distinct
    from every existing one). Deterministic for a seed. The model's cost of
    a route depends only on its length (a /25../32 splits a /24 into a
    second-level group) and on nothing else, so the proportions carry the
    cost; where the new prefixes fall does not."""
    if routes <= len(fib):
        raise UserError(f"--grow {routes}: the table already has {len(fib)} routes")
    rng = np.random.default_rng(seed)
    have = set(zip(fib.prefixes.tolist(), fib.lengths.tolist()))
    need = routes - len(fib)
    new_p, new_l = [], []
    lengths_pool = fib.lengths
    while len(new_p) < need:
        n = (need - len(new_p)) * 2 + 1024
        lens = rng.choice(lengths_pool, size=n).astype(np.uint64)
        lens[lens == 0] = 8  # a second default route is not growth
        addr = rng.integers(0x01000000, 0xE0000000, size=n, dtype=np.uint64)
        mask = (np.uint64(0xFFFFFFFF) << (np.uint64(32) - lens)) & np.uint64(0xFFFFFFFF)
        addr &= mask
        for a, ln in zip(addr.tolist(), lens.tolist()):
            if (a, ln) not in have:
                have.add((a, ln))
                new_p.append(a)
                new_l.append(ln)
                if len(new_p) == need:
                    break
    tids = rng.choice(fib.target_ids, size=need)
    return Fib(np.concatenate([fib.prefixes, np.array(new_p, dtype=np.uint32)]),
               np.concatenate([fib.lengths, np.array(new_l, dtype=np.uint8)]),
               np.concatenate([fib.target_ids, tids.astype(np.uint32)]), list(fib.targets), list(fib.ports))


def lookup_cost(fib: Fib) -> dict[str, float]:
    """The C core's cost of this FIB: memory of the dp_lpm table, its
    second-level groups, and table reads per lookup over the destinations
    the router model sends to (each route's first host address)."""
    table = fib.lpm()
    dst = np.where(fib.lengths < 31, fib.prefixes + np.uint32(1), fib.prefixes).astype(np.uint32)
    table.lookup(dst)
    s = table.stats()
    return {"memory_bytes": float(s["memory_bytes"]), "tbl8_groups": float(s["tbl8_groups_used"]),
            "probes_per_lookup": s["lookup_table_probes"] / max(1, s["lookups"])}
