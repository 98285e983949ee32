"""`routertwin import frr FILE`: FRR's RIB as `show ip route json` prints it
(vtysh -c 'show ip route json'): an object mapping each prefix to its
routes, each with protocol, selected, installed, distance, metric, table
and nexthops (zebra/zebra_vty.c, lib/nexthop.c nexthop_json_helper).

Imported: per prefix the route zebra installed in the kernel
(`installed: true`; a dump without that flag: the `selected` one), and of
its next hops those with `fib: true` (what the kernel forwards with: for a
recursive route these are its resolvers); several make an ECMP route. A
blackhole next hop (`unreachable: true`) is `blackhole` (`blackhole`, or
no type), `unreachable` (`reject`: ICMP unreachable) or `prohibit`
(`adminProhibited`). Routes not installed are counted in the
scenario's header; IPv6 prefixes are listed as not modelled."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from routertwin.errors import UserError
from routertwin.importers import Imported
from routertwin.importers._routes import RouteSink, add_arguments as _router_arguments
from routertwin.importers._routes import load_port_map, parse_prefix, router_import
from routertwin.importers.linux import load_json

KIND = "frr"
HELP = "an FRR routing table: the JSON of `show ip route json` (vtysh)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    _router_arguments(p)


def _discard(nh: dict) -> str | None:
    if not nh.get("unreachable"):
        return None
    if nh.get("reject"):
        return "unreachable"
    if nh.get("adminProhibited"):
        return "prohibit"
    return "blackhole"


def convert(path: Path, args: argparse.Namespace) -> Imported:
    doc = load_json(path, "the output of `show ip route json`")
    if not isinstance(doc, dict) or not all(isinstance(v, list) for v in doc.values()):
        raise UserError(f"{path}: expected the JSON object `show ip route json` prints (prefix -> list of "
                        "routes), got " + (f"a {type(doc).__name__}" if not isinstance(doc, dict) else
                                           "an object whose values are not lists of routes"))
    sink = RouteSink(load_port_map(args), lambda w: f"{path}: {w}")
    unmodelled: list[str] = []
    losers = 0
    for key, routes in doc.items():
        where = f"prefix '{key}'"
        if ":" in key:
            unmodelled.append(f"{path}: {where}: IPv6: the router model's FIB is IPv4 only")
            continue
        parsed = parse_prefix(key)
        if parsed is None or "/" not in key:
            raise UserError(f"{path}: {where}: not an IPv4 prefix a.b.c.d/len (len 0..32)")
        if not all(isinstance(r, dict) and isinstance(r.get("nexthops", []), list) for r in routes):
            raise UserError(f"{path}: {where}: expected a list of route objects with 'nexthops' lists")
        has_flag = any("installed" in r for r in routes)
        chosen = [r for r in routes if (r.get("installed") if has_flag else r.get("selected"))]
        losers += len(routes) - len(chosen[:1])
        if not chosen:
            continue
        r = chosen[0]
        nhs = [n for n in r.get("nexthops", []) if isinstance(n, dict)]
        fib_nhs = [n for n in nhs if n.get("fib")] or [n for n in nhs if n.get("active")]
        discards = {_discard(n) for n in fib_nhs} - {None}
        metric = r.get("metric", 0) if isinstance(r.get("metric", 0), int) else 0
        if discards:
            sink.add(*parsed, sorted(discards)[0], metric, where)
            continue
        hops = []
        for n in fib_nhs:
            ip, dev = n.get("ip"), n.get("interfaceName")
            if not isinstance(dev, (str, type(None))):
                raise UserError(f"{path}: {where}: 'interfaceName' must be a string, got {json.dumps(dev)[:40]}")
            if ip is not None and (not isinstance(ip, str) or parse_prefix(ip) is None or "/" in ip):
                if n.get("afi") == "ipv6":
                    unmodelled.append(f"{path}: {where}: IPv6 next hop {ip} (RFC 5549): imported by its "
                                      "interface only")
                    ip = None
                else:
                    raise UserError(f"{path}: {where}: next hop ip {ip!r} is not an IPv4 address")
            if ip is None and dev is None:
                raise UserError(f"{path}: {where}: next hop without 'ip' or 'interfaceName'")
            hops.append((ip, dev))
        if not hops:
            unmodelled.append(f"{path}: {where}: installed route without a next hop in the FIB")
            continue
        sink.add(*parsed, tuple(hops), metric, where)
    return router_import(kind=KIND, source=path, args=args, sink=sink, what="FRR `show ip route json`",
                         unmodelled=unmodelled,
                         notes=[f"{losers} routes were not installed (another route of their prefix won): "
                                "not in the FIB, as in FRR's"] if losers else [])
