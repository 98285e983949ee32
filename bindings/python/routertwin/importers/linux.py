"""`routertwin import linux FILE`: the Linux kernel's routing table as
`ip -j route show table all` prints it (iproute2's JSON: a list of routes
with dst, gateway, dev, metric, table, type, nexthops).

Imported: IPv4 unicast routes of one table (`--table`, default main; ip
leaves "table" out for main), with a gateway or a device, ECMP routes
(`nexthops`: the set of next hops; weights are not modelled: the model
splits equally), `blackhole`, `unreachable` and `prohibit`, metrics (of two
routes to one prefix the lower metric wins, as in the kernel). Listed as not
modelled: IPv6 routes (the model's FIB is IPv4, dp_lpm), other tables (the
local table holds the box's own addresses), types local, broadcast,
multicast, throw, nat, unequal ECMP weights."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from routertwin.errors import UserError
from routertwin.importers import Imported
from routertwin.importers._routes import PortMap, RouteSink, add_arguments as _router_arguments
from routertwin.importers._routes import load_port_map, parse_prefix, router_import

KIND = "linux"
HELP = "a Linux routing table: the JSON of `ip -j route show table all` (IPv4; ECMP, blackhole, metrics)"

_DISCARD_TYPES = {"blackhole": "blackhole", "unreachable": "unreachable", "prohibit": "prohibit"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    _router_arguments(p)
    p.add_argument("--table", default="main", help="the routing table to import (default main)")


def load_json(path: Path, what: str):
    """The file's JSON; a syntax error names line and column."""
    try:
        text = path.read_text()
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: offset {exc.start}: not UTF-8 text: not {what}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg}): not {what}") from None


def read_routes(path: Path, table: str, ports: PortMap) -> tuple[RouteSink, list[str]]:
    """The sink holding the table's IPv4 routes, and what was not modelled."""
    doc = load_json(path, "the output of `ip -j route show`")
    what = "a route of `ip -j route show` (an object with 'dst')"
    if not isinstance(doc, list):
        raise UserError(f"{path}: expected the JSON list `ip -j route show` prints, got a {type(doc).__name__}")
    sink = RouteSink(ports, lambda i: f"{path}: route {i}")
    unmodelled: list[str] = []
    for i, r in enumerate(doc):
        if not isinstance(r, dict) or not isinstance(r.get("dst"), str):
            raise UserError(f"{path}: route {i}: expected {what}, got {json.dumps(r)[:80]}")
        dst = r["dst"]
        where = f"{path}: route {i} ({dst})"
        rtable = str(r.get("table", "main"))
        rtype = r.get("type", "unicast")
        if not isinstance(rtype, str):
            raise UserError(f"{where}: 'type' must be a string, got {json.dumps(rtype)[:40]}")
        if ":" in dst:
            unmodelled.append(f"{where}: IPv6 route: the router model's FIB is IPv4 only (dp_lpm); "
                              "import `ip -4 -j route show table all` to leave them out")
            continue
        if rtable != table:
            unmodelled.append(f"{where}: table {rtable}: only table {table} is imported (--table)")
            continue
        parsed = parse_prefix(dst)
        if parsed is None:
            raise UserError(f"{where}: 'dst' is not an IPv4 prefix a.b.c.d/0..32 or 'default'")
        if r.get("tos") not in (None, "0", 0, "default"):
            unmodelled.append(f"{where}: tos {r['tos']}: TOS-specific routes are not modelled")
            continue
        metric = r.get("metric", 0)
        if not isinstance(metric, int) or metric < 0:
            raise UserError(f"{where}: 'metric' must be a non-negative integer, got {metric!r}")
        if rtype in _DISCARD_TYPES:
            sink.add(*parsed, _DISCARD_TYPES[rtype], metric, i)
            continue
        if rtype != "unicast":
            unmodelled.append(f"{where}: type {rtype}: not a forwarding route the model holds")
            continue
        hops = r.get("nexthops") or [r]
        if not isinstance(hops, list):
            raise UserError(f"{where}: 'nexthops' must be a list, got {json.dumps(hops)[:40]}")
        nhs = []
        for h in hops:
            if not isinstance(h, dict):
                raise UserError(f"{where}: 'nexthops' must hold objects, got {json.dumps(h)[:60]}")
            gw, dev = h.get("gateway"), h.get("dev")
            if not isinstance(dev, (str, type(None))):
                raise UserError(f"{where}: 'dev' must be an interface name, got {json.dumps(dev)[:40]}")
            if gw is not None and (not isinstance(gw, str) or parse_prefix(gw) is None or "/" in gw):
                raise UserError(f"{where}: gateway {gw!r} is not an IPv4 address")
            if gw is None and dev is None:
                raise UserError(f"{where}: a unicast route needs a 'gateway' or a 'dev'")
            nhs.append((gw, dev))
        weights = {json.dumps(h.get("weight", 1)) for h in hops}
        if len(weights) > 1:
            unmodelled.append(f"{where}: ECMP weights {', '.join(sorted(weights))}: the model splits equally over the "
                              "next hops (imported with equal shares)")
        sink.add(*parsed, tuple(nhs), metric, i)
    return sink, unmodelled


def convert(path: Path, args: argparse.Namespace) -> Imported:
    sink, unmodelled = read_routes(path, args.table, load_port_map(args))
    return router_import(kind=KIND, source=path, args=args, sink=sink,
                         what=f"`ip -j route show`, table {args.table}", unmodelled=unmodelled)
