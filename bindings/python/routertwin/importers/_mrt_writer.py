"""Writes MRT TABLE_DUMP_V2 RIB dumps (RFC 6396 4.3) from routes: the
benchmark's 1M-route table and the tests' malformed files are made with it.
It shares no code with the reader (importers/mrt.py and pybgpkit-parser)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable


def _attributes(next_hop: int, as_path: tuple[int, ...]) -> bytes:
    # ORIGIN IGP, AS_PATH (one AS_SEQUENCE of 4-byte ASNs: TABLE_DUMP_V2
    # always encodes 4-byte ASNs, RFC 6396 4.3.4), NEXT_HOP; transitive flags.
    seg = bytes([2, len(as_path)]) + b"".join(struct.pack(">I", a) for a in as_path)
    return (bytes([0x40, 1, 1, 0]) + bytes([0x40, 2, len(seg)]) + seg
            + bytes([0x40, 3, 4]) + struct.pack(">I", next_hop))


def peer_index_table(peers: list[tuple[int, int]], collector: int = 0xC6120001) -> bytes:
    """The PEER_INDEX_TABLE record of IPv4 peers (address, AS), 4-byte ASNs."""
    body = struct.pack(">IH", collector, 0) + struct.pack(">H", len(peers))
    for addr, asn in peers:
        body += bytes([0x02]) + struct.pack(">III", addr, addr, asn)
    return struct.pack(">IHHI", 0, 13, 1, len(body)) + body


def rib_record(seq: int, prefix: int, length: int, entries: list[tuple[int, int, tuple[int, ...]]]) -> bytes:
    """One RIB_IPV4_UNICAST record: entries are (peer index, next hop, AS path)."""
    body = struct.pack(">IB", seq, length) + struct.pack(">I", prefix)[:(length + 7) // 8]
    body += struct.pack(">H", len(entries))
    for peer, nh, path in entries:
        attrs = _attributes(nh, path)
        body += struct.pack(">HIH", peer, 0, len(attrs)) + attrs
    return struct.pack(">IHHI", 0, 13, 2, len(body)) + body


def write_rib(path: Path, peers: list[tuple[int, int]],
              routes: Iterable[tuple[int, int, list[tuple[int, int, tuple[int, ...]]]]]) -> int:
    """Writes the dump; routes are (prefix, length, entries). Returns the records written."""
    n = 0
    with open(path, "wb") as f:
        f.write(peer_index_table(peers))
        chunk = []
        for prefix, length, entries in routes:
            chunk.append(rib_record(n, prefix, length, entries))
            n += 1
            if len(chunk) >= 65536:
                f.write(b"".join(chunk))
                chunk = []
        f.write(b"".join(chunk))
    return n
