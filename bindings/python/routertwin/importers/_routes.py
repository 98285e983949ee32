"""What the routing-table importers share: the declared mapping of next hops
to the router's ports, the route sink that maps them as routes arrive, and
the router scenario plus FIB file they write (docs/import.md)."""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import os
import re
from pathlib import Path
from typing import Callable

from routertwin.errors import UserError
from routertwin.fib import DISCARDS, MAX_ECMP, Fib, FibBuilder, Target, format_fib, grow, lookup_cost
from routertwin.importers import Imported

# --grow: at most 4M routes (a what-if beyond today's 1M-route tables; the
# rule store of 4M routes is 96 MiB and the text FIB about 80 MB).
MAX_GROW = 4_000_000

# A next hop as the table names it: (gateway address or None, device or None).
NextHop = tuple[str | None, str | None]


def label(nh: NextHop) -> str:
    gw, dev = nh
    return " ".join(p for p in (f"via {gw}" if gw else "", f"dev {dev}" if dev else "") if p) or "?"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ports", type=Path, metavar="MAP.yaml",
                   help="next hop -> port mapping, one 'KEY: PORT' a line; KEY a gateway address, a prefix "
                        "holding gateways (198.18.4.0/24), or 'dev NAME' (default: each distinct next hop "
                        "its own port, in order of first appearance)")
    p.add_argument("--port", action="append", default=[], metavar="KEY=PORT",
                   help="one mapping entry on the command line (repeatable; before --ports entries)")
    p.add_argument("--platform", type=Path, metavar="PROFILE.yaml",
                   help="router platform profile the scenario runs on (default: the project's T640, "
                        "scenarios/platforms/t640.yaml)")
    p.add_argument("--fitted", type=Path, metavar="FITTED.yaml",
                   help="its fitted pipeline latency (default: scenarios/platforms/fitted/t640.yaml)")
    p.add_argument("--grow", type=int, metavar="ROUTES",
                   help="what-if: grow the table to ROUTES routes drawn like its own (prefix lengths and next "
                        "hops in its proportions; routertwin.fib.grow, docs/import.md)")


class PortMap:
    """The declared next hop -> port mapping: exact gateways, then the
    longest prefix holding the gateway, then the device; without a
    declaration every device (or gateway without one) gets the next free port."""

    def __init__(self, entries: list[tuple[str, int, str]]):
        self.declared = bool(entries)
        self.gateways: dict[str, int] = {}
        self.nets: list[tuple[ipaddress.IPv4Network, int]] = []
        self.devices: dict[str, int] = {}
        for key, port, where in entries:
            if key.startswith("dev "):
                self.devices[key[4:].strip()] = port
                continue
            try:
                net = ipaddress.IPv4Network(key, strict=True)
            except ValueError:
                raise UserError(f"{where}: key '{key}': not an IPv4 address, prefix or 'dev NAME'") from None
            if net.prefixlen == 32 and "/" not in key:
                self.gateways[key] = port
            else:
                self.nets.append((net, port))
        self.nets.sort(key=lambda np_: -np_[0].prefixlen)
        self.seen: dict[NextHop, int] = {}
        self.auto: dict[tuple[str, str], int] = {}

    def port(self, nh: NextHop) -> int | None:
        got = self.seen.get(nh)
        if got is not None:
            return got
        gw, dev = nh
        if not self.declared:
            # A router's ports are its interfaces: next hops through one
            # device share its port; a bare gateway (MRT) is its own.
            key = ("dev", dev) if dev is not None else ("via", gw)
            got = self.auto.setdefault(key, len(self.auto))
        elif gw is not None and gw in self.gateways:
            got = self.gateways[gw]
        elif gw is not None and any(ipaddress.IPv4Address(gw) in n for n, _ in self.nets):
            got = next(p for n, p in self.nets if ipaddress.IPv4Address(gw) in n)
        elif dev is not None and dev in self.devices:
            got = self.devices[dev]
        else:
            return None
        self.seen[nh] = got
        return got

    def labels(self) -> list[str]:
        """Each used port's next hops, for the FIB file's header."""
        by_port: dict[int, list[str]] = {}
        for nh, p in self.seen.items():
            by_port.setdefault(p, []).append(label(nh))
        n = max(by_port) + 1 if by_port else 0
        return ["; ".join(by_port.get(i, ["(unused)"])) for i in range(n)]


def load_port_map(args: argparse.Namespace) -> PortMap:
    entries: list[tuple[str, int, str]] = []
    for text in args.port:
        key, sep, port = text.rpartition("=")
        if not sep or not port.strip().isdigit():
            raise UserError(f"routertwin import: --port {text!r}: expected KEY=PORT")
        entries.append((key.strip(), int(port), f"--port {text}"))
    if args.ports is not None:
        try:
            lines = Path(args.ports).read_text().splitlines()
        except OSError as exc:
            raise UserError(f"{args.ports}: cannot read port mapping: {exc.strerror}") from None
        for no, line in enumerate(lines, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            key, sep, port = line.rpartition(":")
            key = key.strip().strip("'\"")
            if not sep or not key or not port.strip().isdigit():
                raise UserError(f"{args.ports}:{no}: expected 'KEY: PORT' (KEY a gateway, a prefix or "
                                f"'dev NAME'), got {line!r}")
            entries.append((key, int(port), f"{args.ports}:{no}"))
    return PortMap(entries)


class RouteSink:
    """Takes routes as an importer reads them and maps their next hops to
    ports at once; `locate(where)` turns the importer's position (a line, an
    entry index, a byte offset) into `FILE:LINE`-style text for errors."""

    def __init__(self, ports: PortMap, locate: Callable[[object], str]):
        self.ports = ports
        self.locate = locate
        self.fib = FibBuilder()
        self._targets: dict[tuple, Target] = {}

    def add(self, prefix: int, length: int, hops: tuple[NextHop, ...] | str, metric: int, where: object) -> None:
        target = self._targets.get(hops)
        if target is None:
            if isinstance(hops, str):
                if hops not in DISCARDS:
                    raise UserError(f"{self.locate(where)}: route type '{hops}' is not one of {', '.join(DISCARDS)}")
                target = Target(discard=hops)
            else:
                ports = []
                for nh in hops:
                    p = self.ports.port(nh)
                    if p is None:
                        raise UserError(f"{self.locate(where)}: next hop '{label(nh)}' is in no entry of the port "
                                        "mapping (--ports/--port)")
                    if p not in ports:
                        ports.append(p)
                if not ports:
                    raise UserError(f"{self.locate(where)}: route without a next hop")
                if len(ports) > MAX_ECMP:
                    raise UserError(f"{self.locate(where)}: {len(ports)} next hops; the router model takes at "
                                    f"most {MAX_ECMP} in one ECMP route")
                target = Target(ports=tuple(sorted(ports)))
            self._targets[hops] = target
        self.fib.add(prefix, length, target, metric)


def parse_prefix(text: str) -> tuple[int, int] | None:
    """'a.b.c.d/len', 'a.b.c.d' (a host route) or 'default' -> (prefix, len),
    host bits kept for the builder to mask and count; None if not IPv4."""
    if text == "default":
        return 0, 0
    addr, _, ln = text.partition("/")
    try:
        ip = int(ipaddress.IPv4Address(addr))
    except ValueError:
        return None
    if not _:
        return ip, 32
    if not ln.isdigit() or int(ln) > 32:
        return None
    return ip, int(ln)


def _project_file(args, attr: str, default: str, out: Path) -> str:
    given = getattr(args, attr)
    if given is not None:
        path = Path(given).resolve()
        if not path.is_file():
            raise UserError(f"--{attr} {given}: file not found")
    else:
        from routertwin.project import find_root

        try:
            root = find_root(Path.cwd(), explicit=getattr(args, "root", None))
        except UserError:
            if getattr(args, "root", None) is not None:
                raise
            try:
                root = find_root(out.resolve().parent)
            except UserError:
                raise UserError(f"routertwin import: no project root here to take the default {default} from; "
                                f"give --{attr}") from None
        path = root / default
    return Path(os.path.relpath(path, out.resolve().parent)).as_posix()


def scenario_name(out: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]", "-", out.stem).lstrip("._-")
    return name or "imported"


def router_import(*, kind: str, source: Path, args: argparse.Namespace, sink: RouteSink, what: str,
                  unmodelled: list[str], notes: list[str] = ()) -> Imported:
    """The scenario and FIB file of an imported table (the FIB beside the
    scenario, same name with .fib)."""
    out = Path(args.out) if args.out else Path(source.name).with_suffix(".yaml")
    if out.suffix not in (".yaml", ".yml"):
        raise UserError(f"-o {out}: the scenario file must end in .yaml")
    fib_path = out.with_suffix(".fib")
    platform = _project_file(args, "platform", "scenarios/platforms/t640.yaml", out)
    fitted = _project_file(args, "fitted", "scenarios/platforms/fitted/t640.yaml", out)
    from routertwin.runners.router.platform import load_platform

    plat = load_platform((out.resolve().parent / platform).resolve())
    labels = sink.ports.labels()
    if len(labels) > plat.ports:
        raise UserError(f"{source}: the table's next hops need {len(labels)} ports; platform '{plat.platform}' has "
                        f"{plat.ports}: map next hops onto fewer ports with --ports/--port, or use --platform")
    fib: Fib = sink.fib.build(labels)
    if len(fib) == 0:
        raise UserError(f"{source}: no IPv4 route to import")
    grown = ""
    if getattr(args, "grow", None):
        if args.grow > MAX_GROW:
            raise UserError(f"--grow {args.grow}: at most {MAX_GROW} routes (dp_lpm's rule store and the "
                            "router model's destinations are sized for it)")
        imported = len(fib)
        fib = grow(fib, args.grow)
        grown = f" (what-if: {imported} imported, grown to {len(fib)} by routertwin.fib.grow, seed 1)"
    c = fib.counts()
    cost = lookup_cost(fib)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    head = [f"Imported by `routertwin import {kind}` from {source.name} (sha256 {digest}...): {what}.",
            f"{c['routes']} IPv4 routes: {c['single_port']} to one port, {c['ecmp']} ECMP, "
            f"{c['blackhole']} blackhole, {c['unreachable']} unreachable, {c['prohibit']} prohibit; "
            f"{len(labels)} ports{grown}.",
            f"C core (dp_lpm, DIR-24-8): {cost['memory_bytes'] / 2**20:.1f} MiB, {cost['tbl8_groups']:.0f} "
            f"second-level groups, {cost['probes_per_lookup']:.3f} table reads per lookup of the routes' first "
            "addresses."]
    if sink.fib.masked:
        head.append(f"{sink.fib.masked} prefixes had host bits set beyond their length: written masked.")
    if sink.fib.shadowed:
        head.append(f"{sink.fib.shadowed} routes were hidden by another route of the same prefix with a lower "
                    "metric (or an equal one read earlier): the FIB keeps the winner only.")
    head += list(notes)
    fib_text = format_fib(fib, head + ["Format: 'a.b.c.d/len TARGET' a line; TARGET a port, ports 'p,q' (ECMP), "
                                       "blackhole, unreachable or prohibit (docs/import.md)."])
    lines = [f"# {h}" for h in head]
    lines += [f"# The routes are in {fib_path.name} (one 'prefix/len TARGET' a line, docs/import.md);",
              "# its ports stand for these next hops:"]
    lines += [f"#   port {i}: {lab}" for i, lab in enumerate(labels)]
    if unmodelled:
        lines.append(f"# Not modelled, not imported ({len(unmodelled)}):")
        lines += [f"#   {u}" for u in unmodelled[:50]]
        if len(unmodelled) > 50:
            lines.append(f"#   ... and {len(unmodelled) - 50} more (routertwin import prints them all)")
    lines += ["# Edit: the platform the table runs on, duration_s, ip_bytes, offered_load; the routes in the",
              "# FIB file. Traffic: each tester port sends to the first address of every ports-th route.",
              f"scenario: {scenario_name(out)}",
              "kind: router",
              f"description: routing table of {source.name} ({kind}) on platform {plat.platform}",
              "seed: 1",
              f"platform: {platform}",
              f"fitted: {fitted}",
              "# packet level: every packet looked up in the imported FIB (steady state does not look up)",
              "mode: packet",
              "duration_s: 0.0001",
              "cases:",
              "  - case: imported",
              "    method: frmol",
              "    ip_bytes: 40",
              "    routes_as_destinations: true",
              f"    route_file: {fib_path.name}"]
    summary = (f"{out}: {c['routes']} routes{grown} ({c['ecmp']} ECMP, "
               f"{c['blackhole'] + c['unreachable'] + c['prohibit']} discard) on {len(labels)} ports, "
               f"FIB in {fib_path}; dp_lpm {cost['memory_bytes'] / 2**20:.1f} MiB, "
               f"{cost['probes_per_lookup']:.3f} reads per lookup; {len(unmodelled)} not modelled")
    return Imported(files={out: "\n".join(lines) + "\n", fib_path: fib_text}, summary=summary,
                    unmodelled=unmodelled)
