#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_pcap_trace (corpus-pcap/): small traces in
each format the readers take (classic pcap in microseconds little-endian and
nanoseconds big-endian; pcapng in both byte orders with if_tsresol,
if_tsoffset, Enhanced and Simple Packet blocks, a skipped block and a second
section; raw-IP link types), written from the format descriptions
(draft-ietf-opsawg-pcap, draft-ietf-opsawg-pcapng), deterministic.

    python3 model/testers/fuzz/make_seeds.py
"""

from __future__ import annotations

import struct
from pathlib import Path

OUT = Path(__file__).resolve().parent / "corpus-pcap"


def udp_frame(length: int, host: int, port: int) -> bytes:
    """An Ethernet + IPv4 + UDP frame (no FCS) of `length` >= 38 bytes."""
    f = bytearray(length)
    f[12:14] = b"\x08\x00"
    f[14] = 0x45
    f[23] = 17
    f[26:30] = bytes([198, 18, 0, host])
    f[30:34] = bytes([198, 19, 0, 1])
    f[34:38] = struct.pack(">HH", port, 7)
    return bytes(f)


def pcap(order: str, nanos: bool, link: int = 1) -> bytes:
    magic = 0xA1B23C4D if nanos else 0xA1B2C3D4
    out = [struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 65535, link)]
    for i, length in enumerate((60, 590, 1514, 42, 100)):
        frame = udp_frame(length, i % 3, 1000 + i % 2)
        if link != 1:
            frame = frame[14:]
        out.append(struct.pack(order + "IIII", 1_700_000_000, 10 * i, len(frame), len(frame)) + frame)
    return b"".join(out)


def block(order: str, kind: int, body: bytes) -> bytes:
    body += b"\0" * (-len(body) % 4)
    return struct.pack(order + "II", kind, 12 + len(body)) + body + struct.pack(order + "I", 12 + len(body))


def options(order: str, opts: list[tuple[int, bytes]]) -> bytes:
    out = b""
    for code, value in opts:
        out += struct.pack(order + "HH", code, len(value)) + value + b"\0" * (-len(value) % 4)
    return out + (struct.pack(order + "HH", 0, 0) if opts else b"")


def pcapng(order: str) -> bytes:
    shb = block(order, 0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    out = [shb,
           block(order, 1, struct.pack(order + "HHI", 1, 0, 0) + options(order, [(9, bytes([9]))])),
           block(order, 1, struct.pack(order + "HHI", 101, 0, 128) +
                 options(order, [(9, bytes([0x80 | 20])), (14, struct.pack(order + "q", 5))]))]
    for i, length in enumerate((60, 590, 1514, 42)):
        frame = udp_frame(length, i % 3, 1000 + i % 2)
        iface = i % 2
        if iface == 1:
            frame = frame[14:]
        ts = 1_700_000_000_000_000_000 + 1000 * i if iface == 0 else (1 << 20) * i
        body = struct.pack(order + "IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(frame), len(frame)) + frame
        body += b"\0" * (-len(body) % 4) + options(order, [(1, b"seed")] if i == 1 else [])
        out.append(block(order, 6, body))
    out.append(block(order, 4, struct.pack(order + "HH", 0, 0)))  # name resolution: skipped
    out.append(block(order, 3, struct.pack(order + "I", 60) + udp_frame(60, 1, 1000)))
    out.append(shb)  # a second section: interfaces start again
    out.append(block(order, 1, struct.pack(order + "HHI", 1, 0, 0)))
    out.append(block(order, 6, struct.pack(order + "IIIII", 0, 0, 7, 60, 60) + udp_frame(60, 2, 1)))
    return b"".join(out)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    seeds = {
        "pcap-usec-le": pcap("<", False),
        "pcap-nsec-be": pcap(">", True),
        "pcap-raw-ip": pcap("<", False, link=101),
        "pcapng-le": pcapng("<"),
        "pcapng-be": pcapng(">"),
    }
    for name, data in seeds.items():
        (OUT / name).write_bytes(data)


if __name__ == "__main__":
    main()
