"""`routertwin import mrt FILE`: an MRT RIB dump, TABLE_DUMP_V2 (RFC 6396
section 4.3), as BIRD (`protocol mrt`), GoBGP, Quagga/FRR and the route
collectors write it; gzip and bzip2 files are read as they are.

Two readers look at the file:
- the records are parsed by **pybgpkit-parser** (PyPI; BGPKIT's Rust
  bgpkit-parser behind a Python binding): prefixes, peers, next hops. It
  was chosen over mrtparse (pure Python) for speed: mrtparse decoded 50,000
  RIB records in 32 s here (1M routes would take ten minutes), against
  about 1.2 s of CPU for pybgpkit-parser; mrtparse's last release is from
  2022, bgpkit-parser is released monthly. scripts/setup.sh pins 0.6.2,
  the newest release PyPI carries as a CPython 3.11 wheel: later ones are
  source packages whose Rust build outlasted 25 minutes on these 2 cores;
- the framing is walked here first, byte by byte against RFC 6396 (common
  header, PEER_INDEX_TABLE, RIB entry lists, the length of every part),
  because bgpkit-parser logs and skips a record it cannot decode: a
  truncated or malformed dump is refused here with the byte offset of the
  bad record, and if bgpkit-parser then returns fewer IPv4 entries than the
  records hold, the import fails instead of losing routes.

Each prefix gets the next hop of its first RIB entry (`--select first`;
RFC 6396 gives the entries no order, so with several peers say which with
`--peer`), or
the distinct next hops of all its entries as one ECMP route (`--select
ecmp`); `--peer ADDR` keeps one peer's entries only (a collector's dump
holds every peer's table). Next hops become ports by the declared mapping
(`--ports`, `--port`; docs/import.md). Listed as not modelled: IPv6 and
multicast RIB subtypes, RIB_GENERIC records, entries without a NEXT_HOP
(BIRD writes its static and direct routes so: from an empty peer, no
attributes)."""

from __future__ import annotations

import argparse
import bz2
import gzip
import ipaddress
import socket
import struct
from dataclasses import dataclass
from pathlib import Path

from routertwin.errors import UserError
from routertwin.importers import Imported
from routertwin.importers._routes import RouteSink, add_arguments as _router_arguments
from routertwin.importers._routes import load_port_map, router_import

KIND = "mrt"
HELP = "an MRT TABLE_DUMP_V2 RIB dump (RFC 6396; BIRD, GoBGP, route collectors), read with pybgpkit-parser"

TABLE_DUMP_V2 = 13
PEER_INDEX_TABLE = 1
RIB_IPV4_UNICAST = 2
RIB_IPV4_UNICAST_ADDPATH = 8  # RFC 8050: each entry carries a path identifier
# Subtypes the model has no use for: IPv4 multicast, IPv6, generic, and
# their add-path forms (RFC 6396 4.3, RFC 8050 4).
OTHER_RIB = {3: "RIB_IPV4_MULTICAST", 4: "RIB_IPV6_UNICAST", 5: "RIB_IPV6_MULTICAST", 6: "RIB_GENERIC",
             9: "RIB_IPV4_MULTICAST_ADDPATH", 10: "RIB_IPV6_UNICAST_ADDPATH",
             11: "RIB_IPV6_MULTICAST_ADDPATH", 12: "RIB_GENERIC_ADDPATH"}
MRT_TYPES = {11: "OSPFv2", 12: "TABLE_DUMP", 16: "BGP4MP", 17: "BGP4MP_ET", 32: "ISIS", 33: "ISIS_ET",
             48: "OSPFv3", 49: "OSPFv3_ET"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    _router_arguments(p)
    p.add_argument("--select", choices=["first", "ecmp"], default="first",
                   help="per prefix: the first RIB entry's next hop (default), or every entry's as ECMP")
    p.add_argument("--peer", help="only the RIB entries of this peer address")


def read_bytes(path: Path) -> bytes:
    """The dump's bytes, decompressed when gzip or bzip2."""
    data = path.read_bytes()
    try:
        if data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        if data[:3] == b"BZh":
            return bz2.decompress(data)
    except (OSError, EOFError, ValueError) as exc:
        raise UserError(f"{path}: compressed data is corrupt: {exc}") from None
    return data


@dataclass
class Walk:
    """What the framing walk found: IPv4 unicast RIB records and entries,
    peers, and the records of other kinds (subtype name -> count)."""

    records: int = 0
    ipv4_entries: int = 0
    peers: list[str] | None = None
    others: dict[str, int] | None = None


def walk(path: Path, data: bytes) -> Walk:
    """Checks every record's framing (RFC 6396 2, 4.3.1, 4.3.2, 4.3.4);
    UserError `FILE: offset N: ...` at the first bad record."""
    w = Walk(others={})
    off, n = 0, len(data)
    unpack_from = struct.unpack_from
    if n == 0:
        raise UserError(f"{path}: offset 0: empty file: not an MRT dump")
    while off < n:
        if n - off < 12:
            raise UserError(f"{path}: offset {off}: truncated MRT header: {n - off} of 12 bytes")
        _ts, mtype, sub, length = unpack_from(">IHHI", data, off)
        b, end = off + 12, off + 12 + length
        if end > n:
            raise UserError(f"{path}: offset {off}: truncated record: its header gives {length} bytes, "
                            f"{n - b} remain")
        if mtype != TABLE_DUMP_V2:
            name = MRT_TYPES.get(mtype, f"unknown type {mtype}")
            raise UserError(f"{path}: offset {off}: MRT record of type {mtype} ({name}): not a TABLE_DUMP_V2 "
                            "RIB dump (type 13)")
        if sub == PEER_INDEX_TABLE:
            w.peers = _peer_table(path, data, off, b, end)
        elif sub in (RIB_IPV4_UNICAST, RIB_IPV4_UNICAST_ADDPATH):
            if w.peers is None:
                raise UserError(f"{path}: offset {off}: RIB record before the PEER_INDEX_TABLE (RFC 6396 4.3)")
            w.ipv4_entries += _rib_entries(path, data, off, b, end, len(w.peers), sub == RIB_IPV4_UNICAST_ADDPATH)
            w.records += 1
        elif sub in OTHER_RIB:
            w.others[OTHER_RIB[sub]] = w.others.get(OTHER_RIB[sub], 0) + 1
        else:
            raise UserError(f"{path}: offset {off}: TABLE_DUMP_V2 subtype {sub} is not defined (RFC 6396 4.3, "
                            "RFC 8050)")
        off = end
    if w.peers is None:
        raise UserError(f"{path}: offset 0: no PEER_INDEX_TABLE: not a TABLE_DUMP_V2 RIB dump")
    return w


def _need(path: Path, off: int, at: int, size: int, end: int, what: str) -> None:
    if at + size > end:
        raise UserError(f"{path}: offset {off}: malformed record: {what} at byte {at} runs past the record's end "
                        f"({end})")


def _peer_table(path: Path, data: bytes, off: int, b: int, end: int) -> list[str]:
    _need(path, off, b, 6, end, "collector id and view name length")
    (name_len,) = struct.unpack_from(">H", data, b + 4)
    at = b + 6 + name_len
    _need(path, off, at, 2, end, "peer count")
    (count,) = struct.unpack_from(">H", data, at)
    at += 2
    peers = []
    for i in range(count):
        _need(path, off, at, 1, end, f"peer {i}")
        ptype = data[at]
        addr_len = 16 if ptype & 1 else 4
        as_len = 4 if ptype & 2 else 2
        _need(path, off, at, 5 + addr_len + as_len, end, f"peer {i}")
        raw = data[at + 5:at + 5 + addr_len]
        peers.append(str(ipaddress.IPv6Address(raw) if addr_len == 16 else ipaddress.IPv4Address(raw)))
        at += 5 + addr_len + as_len
    if at != end:
        raise UserError(f"{path}: offset {off}: malformed PEER_INDEX_TABLE: {end - at} bytes after the last peer")
    return peers


def _rib_entries(path: Path, data: bytes, off: int, b: int, end: int, peers: int, addpath: bool) -> int:
    # Called once per record (a million times for a full table): the bounds
    # are compared inline and _need only words the error.
    if b + 5 > end:
        _need(path, off, b, 5, end, "sequence number and prefix length")
    plen = data[b + 4]
    if plen > 32:
        raise UserError(f"{path}: offset {off}: malformed record: IPv4 prefix length {plen} > 32")
    at = b + 5 + (plen + 7) // 8
    if at + 2 > end:
        _need(path, off, at, 2, end, "entry count")
    count = (data[at] << 8) | data[at + 1]
    at += 2
    head = 10 if addpath else 6  # peer index, originated time, [path id]
    for i in range(count):
        if at + head + 2 > end:
            _need(path, off, at, head + 2, end, f"RIB entry {i}")
        peer = (data[at] << 8) | data[at + 1]
        if peer >= peers:
            raise UserError(f"{path}: offset {off}: RIB entry {i} names peer {peer}; the PEER_INDEX_TABLE has "
                            f"{peers}")
        alen = (data[at + head] << 8) | data[at + head + 1]
        at += head + 2
        if at + alen > end:
            _need(path, off, at, alen, end, f"RIB entry {i}'s {alen} bytes of attributes")
        at += alen
    if at != end:
        raise UserError(f"{path}: offset {off}: malformed record: {end - at} bytes after the last RIB entry")
    return count


def _bgpkit_elems(path: Path):
    try:
        from pybgpkit_parser import Parser
    except ImportError:
        raise UserError("routertwin import mrt needs pybgpkit-parser (pip install pybgpkit-parser; "
                        "scripts/setup.sh installs it)") from None
    return Parser(url=str(path))


def entries(path: Path, walked: Walk | None = None):
    """Every IPv4 unicast RIB entry of the dump as (prefix 'a.b.c.d/len',
    peer address, next hop or None), in file order, decoded by
    pybgpkit-parser after the framing walk; UserError if the parser decodes
    fewer or more entries than the records hold."""
    w = walked or walk(path, read_bytes(path))
    n = 0
    for elem in _bgpkit_elems(path):
        prefix = elem.prefix
        if ":" in prefix:
            continue
        n += 1
        yield prefix, elem.peer_ip, elem.next_hop
    if n != w.ipv4_entries:
        raise UserError(f"{path}: the MRT parser decoded {n} IPv4 RIB entries where the records hold "
                        f"{w.ipv4_entries}: some records are malformed inside their attributes")


def convert(path: Path, args: argparse.Namespace) -> Imported:
    w = walk(path, read_bytes(path))
    ports = load_port_map(args)
    sink = RouteSink(ports, lambda where: f"{path}: prefix {where}")
    unmodelled = [f"{path}: {count} {name} records: only IPv4 unicast RIBs are imported"
                  for name, count in sorted(w.others.items())]
    if args.peer is not None and args.peer not in w.peers:
        raise UserError(f"--peer {args.peer}: not in the dump's PEER_INDEX_TABLE ({', '.join(w.peers[:8])}"
                        f"{', ...' if len(w.peers) > 8 else ''})")
    group_prefix, group_hops = None, []
    ecmp = args.select == "ecmp"
    one_hop: dict[str, tuple] = {}  # next hop -> its (reused) one-hop tuple: no tuple built per route

    def flush() -> None:
        if group_prefix is None or not group_hops:
            return
        addr, _, ln = group_prefix.partition("/")
        if ecmp:
            hops = tuple((nh, None) for nh in dict.fromkeys(group_hops))
        else:
            hops = one_hop.get(group_hops[0])
            if hops is None:
                hops = one_hop[group_hops[0]] = ((group_hops[0], None),)
        # inet_aton: the parser prints canonical dotted quads; 3x faster than ipaddress
        sink.add(int.from_bytes(socket.inet_aton(addr), "big"), int(ln), hops, 0, group_prefix)

    for prefix, peer, nh in entries(path, w):
        if args.peer is not None and peer != args.peer:
            continue
        if prefix != group_prefix:
            flush()
            group_prefix, group_hops = prefix, []
        if nh is None:
            # BIRD dumps its own static and direct routes as entries of an
            # empty peer without attributes: the dump does not say where they go.
            unmodelled.append(f"{path}: prefix {prefix} from peer {peer}: no NEXT_HOP attribute (a route of the "
                              "router itself, e.g. static): not imported")
            continue
        if ":" in nh:
            raise UserError(f"{path}: prefix {prefix} from peer {peer}: IPv6 next hop {nh} for an IPv4 route")
        group_hops.append(nh)
    flush()
    return router_import(kind=KIND, source=path, args=args, sink=sink,
                         what=f"MRT TABLE_DUMP_V2, {w.records} IPv4 RIB records from {len(w.peers)} peers, "
                              f"next hop per prefix: {args.select}"
                              + (f", peer {args.peer}" if args.peer else ""),
                         unmodelled=unmodelled)
