"""The closed form of a path's ceiling: every server's time per data
segment, counting each frame that crosses it (data one way, one ACK per
`ack_every_segments` segments the other way, on every traversal of a shared
wire or box), and the goodput of the busiest one. The packet-level run must
agree with it whenever the window does not limit TCP."""

from __future__ import annotations

from dataclasses import dataclass

from routertwin.runners.tcp_path.profiles import HostTcp
from routertwin.runners.tcp_path.schema import LinkType, NodeType

IPV4_TCP_HEADER = 40
TIMESTAMP_OPTION = 12  # RFC 7323 TSopt (10 bytes) padded to 4-byte words


@dataclass(frozen=True)
class Ceiling:
    goodput_bps: float
    server: str
    seconds_per_segment: dict[str, float]


def segment_bytes(tcp: HostTcp) -> int:
    return tcp.mtu - IPV4_TCP_HEADER - (TIMESTAMP_OPTION if tcp.timestamps else 0)


def ack_ip_bytes(tcp: HostTcp) -> int:
    return IPV4_TCP_HEADER + (TIMESTAMP_OPTION if tcp.timestamps else 0)


def link_seconds(t: LinkType, ip_bytes: int) -> float:
    per_byte = 8.0 / t.rate_bps if t.rate_bps > 0 else 0.0
    return t.per_frame_us * 1e-6 + (ip_bytes + t.frame_overhead_bytes) * per_byte


def node_seconds(t: NodeType, ip_bytes: int) -> float:
    return t.cpu_per_packet_us * 1e-6 + ip_bytes * t.cpu_per_byte_ns * 1e-9


def ceiling(nodes: list[tuple[str, NodeType]], links: list[tuple[str, str | None, LinkType]], tcp: HostTcp,
            nat_seconds: float = 0.0) -> Ceiling:
    """`nodes` and `links` as runners.tcp_path.native.resolve returns them;
    nat_seconds: the priced C-core work per packet at a NAT box (from a run)."""
    data, ack = tcp.mtu, ack_ip_bytes(tcp)
    k = tcp.ack_every_segments
    busy: dict[str, float] = {}
    for i, (link_name, wire, t) in enumerate(links):
        a, b = nodes[i][0], nodes[i + 1][0]
        # named as the native model names its servers: links crossing one
        # wire (a named one, or the same pair of boxes) add up on it
        label = f" {wire}" if wire else ""
        fwd, back = f"wire{label} {a}->{b} ({link_name})", f"wire{label} {b}->{a} ({link_name})"
        busy[fwd] = busy.get(fwd, 0.0) + link_seconds(t, data)
        busy[back] = busy.get(back, 0.0) + link_seconds(t, ack) / k
    for i, (name, t) in enumerate(nodes):
        cpu = node_seconds(t, data) if i > 0 else 0.0  # data arrives at every node but the sender
        cpu += node_seconds(t, ack) / k if i < len(nodes) - 1 else 0.0  # ACKs at every node but the receiver
        nat = nat_seconds * ((1 if i > 0 else 0) + (1 / k if i < len(nodes) - 1 else 0)) if t.nat == "dnat" else 0.0
        if cpu + nat > 0:
            key = f"cpu {name}"
            busy[key] = busy.get(key, 0.0) + cpu + nat
    worst = max(busy, key=busy.__getitem__)
    return Ceiling(segment_bytes(tcp) * 8.0 / busy[worst], worst, busy)
