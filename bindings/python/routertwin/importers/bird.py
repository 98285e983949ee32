"""`routertwin import bird FILE`: BIRD 2's routing table as `birdc show
route all` prints it (text: a route line per route, `prefix type [protocol
time] * (preference)`, `*` marking the best, then tab-indented lines: next
hops `via ADDR on IFACE [weight N]` or `dev IFACE`, and attributes).

Imported: the best route (`*`) of every prefix of table `--table` (default
master4): `unicast` with its next hops (several: ECMP), `blackhole`,
`unreachable`, `prohibited` (-> prohibit). Other routes of a prefix are
not in the FIB (counted in the header). Listed as not modelled: IPv6
tables and prefixes, route types the model does not have, next-hop forms
it does not know (MPLS labels are dropped from the next hop and listed)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from routertwin.errors import UserError
from routertwin.importers import Imported
from routertwin.importers._routes import RouteSink, add_arguments as _router_arguments
from routertwin.importers._routes import load_port_map, parse_prefix, router_import

KIND = "bird"
HELP = "a BIRD 2 routing table: the text of `birdc show route all`"

# A route line: the prefix (absent on a further route of the same prefix),
# the route type, [protocol since...], the best-route star, (preference[/metric]).
_ROUTE = re.compile(r"^(?P<prefix>\S+)?\s+(?P<type>[a-z]+)\s+\[(?P<proto>[^\s\]]+)[^\]]*\]"
                    r"(?P<best>\s+\*)?\s+\((?P<pref>\d+)(?:/(?P<metric>\d+|\?))?\)")
_VIA = re.compile(r"^\s+via\s+(?P<gw>\S+)\s+on\s+(?P<dev>\S+)(?P<rest>.*)$")
_DEV = re.compile(r"^\s+dev\s+(?P<dev>\S+)\s*$")
_TYPES = {"unicast": None, "blackhole": "blackhole", "unreachable": "unreachable", "prohibited": "prohibit"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    _router_arguments(p)
    p.add_argument("--table", default="master4", help="the BIRD table to import (default master4)")


def convert(path: Path, args: argparse.Namespace) -> Imported:
    try:
        lines = path.read_text().splitlines()
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: offset {exc.start}: not UTF-8 text: not the output of `show route all`") from None
    sink = RouteSink(load_port_map(args), lambda no: f"{path}:{no}")
    unmodelled: list[str] = []
    table: str | None = None
    prefix: str | None = None
    current: dict | None = None  # the best route being read: prefix, type, hops, line
    others = 0
    seen_route = False

    def finish() -> None:
        nonlocal current
        if current is None:
            return
        parsed = parse_prefix(current["prefix"])
        kind = _TYPES[current["type"]]
        if kind is not None:
            sink.add(*parsed, kind, current["metric"], current["line"])
        elif not current["hops"]:
            raise UserError(f"{path}:{current['line']}: unicast route {current['prefix']} has no 'via' or 'dev' line")
        else:
            sink.add(*parsed, tuple(current["hops"]), current["metric"], current["line"])
        current = None

    for no, line in enumerate(lines, 1):
        if not line.strip() or re.match(r"^(BIRD \S+ ready\.|Access restricted|0000 |1007-)", line):
            continue
        if line.startswith("Table "):
            finish()
            table = line[6:].rstrip(":").strip()
            continue
        m = _ROUTE.match(line)
        if m:
            finish()
            seen_route = True
            if m["prefix"]:
                prefix = m["prefix"]
            if prefix is None:
                raise UserError(f"{path}:{no}: a further route before any prefix")
            if table not in (None, args.table) or ":" in prefix:
                if m["best"] and (":" in prefix or table != args.table):
                    why = "IPv6" if ":" in prefix else f"table {table}"
                    unmodelled.append(f"{path}:{no}: {prefix}: {why}: only IPv4 table {args.table} is imported")
                continue
            if parse_prefix(prefix) is None or "/" not in prefix:
                raise UserError(f"{path}:{no}: '{prefix}' is not an IPv4 prefix a.b.c.d/len (len 0..32)")
            if not m["best"]:
                others += 1
                continue
            if m["type"] not in _TYPES:
                unmodelled.append(f"{path}:{no}: {prefix}: route type '{m['type']}' is not modelled")
                continue
            metric = int(m["metric"]) if m["metric"] and m["metric"].isdigit() else 0
            current = {"prefix": prefix, "type": m["type"], "hops": [], "line": no, "metric": metric}
            continue
        if not line[0].isspace():
            raise UserError(f"{path}:{no}: expected a route line 'PREFIX TYPE [PROTOCOL ...] * (PREF)', a "
                            f"'Table NAME:' line or an indented detail line, got {line[:60]!r}: not the output "
                            "of `birdc show route all`")
        if current is None:
            continue  # details of a route not imported
        v = _VIA.match(line)
        if v:
            if parse_prefix(v["gw"]) is None:
                raise UserError(f"{path}:{no}: next hop '{v['gw']}' is not an IPv4 address")
            if "mpls" in v["rest"]:
                unmodelled.append(f"{path}:{no}: MPLS labels of next hop {v['gw']}: not modelled")
            current["hops"].append((v["gw"], v["dev"]))
            continue
        d = _DEV.match(line)
        if d:
            current["hops"].append((None, d["dev"]))
    finish()
    if not seen_route:
        raise UserError(f"{path}:1: no route line found: not the output of `birdc show route all`")
    return router_import(kind=KIND, source=path, args=args, sink=sink,
                         what=f"BIRD `show route all`, table {args.table}", unmodelled=unmodelled,
                         notes=[f"{others} routes were not the best of their prefix: not in the FIB, as in "
                                "BIRD's"] if others else [])
