"""The keys of a tcp_path scenario (`Schema`): one TCP transfer (IxChariot
Throughput.scr) from the first node of a chain to the last, through every
hop named in `path`.

The keys the live lab also states (docs/zstack.md "Scenario schema"): link
rates, per-hop costs and queues (`link_types`, `node_types`, overriding the
platform's), MTU and TCP settings (`tcp`, overriding the platform's), the
transfer size or a duration (`transfer`). The schema is a contract: keys are
added, never renamed.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, NonNegativeFloat, PositiveInt, model_validator

from routertwin.scenario_loader import FieldError, ScenarioModel, ScenarioPath

NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
# A chain of at most 64 nodes: the ZStack paths have 7 to 11, a namespace
# lab fewer; ns-3 nodes and routes grow with it.
MAX_NODES = 64
# 999,999,999 bytes is IxChariot's largest file_size (the seed's "调整到最大
# 999999999"); at most 10^12 bytes keeps byte counts exact in doubles.
MAX_FILE_BYTES = 10**12


class LinkType(ScenarioModel):
    """One direction of a link is a FIFO server: a frame of the IP packet's
    bytes + frame_overhead_bytes takes per_frame_us + 8 x bytes / rate_bps
    (rate_bps 0: no per-byte time), waits in a queue of queue_packets, and
    arrives delay_us after it left."""

    # 0 (a memory copy priced per frame only) to 1.6 Tbit/s (IEEE 802.3's fastest).
    rate_bps: float = Field(ge=0, le=1.6e12)
    # Bytes each frame adds to the IP packet on this link (Ethernet: 14
    # header + 4 FCS + 8 preamble/SFD + 12 IFG = 38, +4 with an 802.1Q tag).
    frame_overhead_bytes: int = Field(default=0, ge=0, le=1024)
    # Fixed time per frame of the server (a vhost thread's work); at most 1 s.
    per_frame_us: float = Field(default=0.0, ge=0, le=1e6)
    # Propagation / fixed latency; at most 1 s.
    delay_us: float = Field(default=0.0, ge=0, le=1e6)
    # Frames waiting for the server (qdisc + ring); 1..10^6.
    queue_packets: PositiveInt = Field(default=1000, le=10**6)
    # Random loss of frames on this link, each direction (tests, what-ifs).
    loss_rate: float = Field(default=0.0, ge=0, lt=1)
    note: str = ""


class NodeType(ScenarioModel):
    """A box's CPU: every packet it receives (any interface, either
    direction) is served FIFO in cpu_per_packet_us + cpu_per_byte_ns x IP
    bytes (+ the priced C-core operations of its NAT), from a queue of
    cpu_queue_packets; then latency_us of pipelined delay (a switch ASIC)."""

    cpu_per_packet_us: float = Field(default=0.0, ge=0, le=1e6)
    cpu_per_byte_ns: float = Field(default=0.0, ge=0, le=1e6)
    cpu_queue_packets: PositiveInt = Field(default=1000, le=10**6)
    latency_us: float = Field(default=0.0, ge=0, le=1e6)
    # dnat: the node holds the EIP; connections to it are DNATed to the last
    # node's address (conntrack in the C core's dp_flow, rewrite by dp_nat),
    # replies SNATed back.
    nat: Literal["none", "dnat"] = "none"
    # Price of each C-core operation counter (dp_ops names) in ns, for nat nodes.
    nat_prices_ns: dict[str, NonNegativeFloat] = {}
    note: str = ""


class Tcp(ScenarioModel):
    """End-host TCP (both ends), every key optional here: unset keys come
    from the platform's `tcp`."""

    congestion: Literal["cubic", "newreno"] | None = None
    # IP MTU of the end hosts' interfaces; 576 (RFC 791 minimum reassembly) .. 9000 (jumbo).
    mtu: int | None = Field(default=None, ge=576, le=9000)
    timestamps: bool | None = None
    sack: bool | None = None
    window_scaling: bool | None = None
    # Socket buffers (tcp_wmem[2], tcp_rmem[2]); 4 KiB .. 1 GiB.
    snd_buf_bytes: int | None = Field(default=None, ge=4096, le=2**30)
    rcv_buf_bytes: int | None = Field(default=None, ge=4096, le=2**30)
    initial_cwnd_segments: int | None = Field(default=None, ge=1, le=1000)
    # Delayed ACK: one ACK per this many full segments, or after delayed_ack_ms.
    ack_every_segments: int | None = Field(default=None, ge=1, le=64)
    delayed_ack_ms: float | None = Field(default=None, gt=0, le=1000)
    min_rto_ms: float | None = Field(default=None, gt=0, le=60000)


class Transfer(ScenarioModel):
    """IxChariot Throughput.scr: `records` timing records, each one send of
    file_bytes on one connection and the receiver's confirmation.
    simulate: full runs every byte in ns-3; window runs window_bytes per
    record and extends each record to file_bytes at the steady goodput
    measured in its own second half (docs/zstack.md)."""

    file_bytes: int = Field(default=999_999_999, ge=1, le=MAX_FILE_BYTES)
    records: int = Field(default=3, ge=1, le=100)
    simulate: Literal["full", "window"] = "window"
    # At least 1 MB so a second half holds hundreds of segments; at most 10 GB.
    window_bytes: int = Field(default=40_000_000, ge=1_000_000, le=10**10)
    # duration_s instead of file_bytes: one send lasting this long (iperf3 -t),
    # its goodput reported; at most an hour of simulated time.
    duration_s: float | None = Field(default=None, gt=0, le=3600)


class Hop(ScenarioModel):
    """One node of the chain. Two entries with the same `node` name are the
    same box (one CPU); two links between the same pair of names are the
    same wire (one server per direction, shared by both traversals)."""

    node: str = Field(pattern=NAME)
    type: str = Field(pattern=NAME)
    # The link from the previous entry to this one (not on the first entry).
    link: str | None = Field(default=None, pattern=NAME)
    # The physical wire that link is, when two links join the same pair of
    # boxes over different wires (a router VM's two virtio NICs); links with
    # one wire name share its servers. Default: the pair of box names.
    wire: str | None = Field(default=None, pattern=NAME)


class Schema(ScenarioModel):
    platform: ScenarioPath
    path: list[Hop] = Field(min_length=2, max_length=MAX_NODES)
    tcp: Tcp = Tcp()
    transfer: Transfer = Transfer()
    # Types added to or replacing the platform's, by name.
    link_types: dict[str, LinkType] = {}
    node_types: dict[str, NodeType] = {}

    @model_validator(mode="after")
    def _chain(self):
        for key in ("link", "wire"):
            if getattr(self.path[0], key) is not None:
                raise FieldError(("path", 0, key), "the first node has no link before it")
        for i, h in enumerate(self.path[1:], start=1):
            if h.link is None:
                raise FieldError(("path", i, "link"), f"node '{h.node}' needs 'link', the link type from "
                                                      f"'{self.path[i - 1].node}'")
            if h.link is None and h.wire is not None:
                raise FieldError(("path", i, "wire"), "'wire' names the link before a node; give 'link' too")
            if h.node == self.path[i - 1].node:
                raise FieldError(("path", i, "node"), f"node '{h.node}' follows itself")
        if self.path[0].node == self.path[-1].node:
            raise FieldError(("path", len(self.path) - 1, "node"), "the receiver must differ from the sender")
        for key in (*self.link_types, *self.node_types):
            if not re.match(NAME, key):
                raise FieldError(("link_types" if key in self.link_types else "node_types", key),
                                 f"type name '{key}' must match {NAME}")
        return self
