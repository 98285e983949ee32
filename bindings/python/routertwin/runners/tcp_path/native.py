"""The run_tcp_path config dict of a scenario (model/hosts/helper/
tcp-path-scenario.h documents every key) and the call."""

from __future__ import annotations

from pathlib import Path

from routertwin.runners.tcp_path.profiles import HostTcp, PathPlatform
from routertwin.runners.tcp_path.schema import LinkType, NodeType, Schema
from routertwin.scenario_loader import FieldError


def merged_tcp(cfg: Schema, plat: PathPlatform) -> HostTcp:
    """The platform's TCP with the scenario's `tcp` keys on top."""
    over = {k: v for k, v in cfg.tcp.model_dump().items() if v is not None}
    return plat.tcp.model_copy(update=over)


def types(cfg: Schema, plat: PathPlatform) -> tuple[dict[str, LinkType], dict[str, NodeType]]:
    """The link and node types a path may name: the platform's, then the scenario's."""
    return {**plat.link_types, **cfg.link_types}, {**plat.node_types, **cfg.node_types}


def resolve(cfg: Schema, plat: PathPlatform) -> tuple[list[tuple[str, NodeType]], list[tuple[str, str | None, LinkType]]]:
    """Each node's type and each link's type, blaming an unknown name on its key."""
    links, nodes = types(cfg, plat)
    out_nodes, out_links = [], []
    for i, h in enumerate(cfg.path):
        if h.type not in nodes:
            raise FieldError(("path", i, "type"), f"unknown node type '{h.type}' (known: {', '.join(sorted(nodes))})")
        out_nodes.append((h.node, nodes[h.type]))
        if i > 0:
            if h.link not in links:
                raise FieldError(("path", i, "link"),
                                 f"unknown link type '{h.link}' (known: {', '.join(sorted(links))})")
            out_links.append((h.link, h.wire, links[h.link]))
    return out_nodes, out_links


def config(cfg: Schema, plat: PathPlatform, seed: int, file_bytes: int, records: int) -> dict:
    nodes, links = resolve(cfg, plat)
    tcp = merged_tcp(cfg, plat)
    return {
        "seed": seed,
        "file_bytes": file_bytes,
        "records": records,
        "duration_s": float(cfg.transfer.duration_s or 0.0),
        "tcp": {
            "congestion": tcp.congestion, "mtu": tcp.mtu, "timestamps": tcp.timestamps, "sack": tcp.sack,
            "window_scaling": tcp.window_scaling, "snd_buf_bytes": tcp.snd_buf_bytes,
            "rcv_buf_bytes": tcp.rcv_buf_bytes, "initial_cwnd_segments": tcp.initial_cwnd_segments,
            "ack_every_segments": tcp.ack_every_segments, "delayed_ack_s": tcp.delayed_ack_ms * 1e-3,
            "min_rto_s": tcp.min_rto_ms * 1e-3,
        },
        "nodes": [
            {"name": name, "type": h.type, "cpu_per_packet_s": t.cpu_per_packet_us * 1e-6,
             "cpu_per_byte_s": t.cpu_per_byte_ns * 1e-9, "cpu_queue_packets": t.cpu_queue_packets,
             "latency_s": t.latency_us * 1e-6, "nat": t.nat, "nat_prices_ns": dict(t.nat_prices_ns)}
            for h, (name, t) in zip(cfg.path, nodes)
        ],
        "links": [
            {"type": name, "wire": wire or "", "rate_bps": float(t.rate_bps),
             "frame_overhead_bytes": t.frame_overhead_bytes, "per_frame_s": t.per_frame_us * 1e-6,
             "delay_s": t.delay_us * 1e-6, "queue_packets": t.queue_packets, "loss_rate": t.loss_rate}
            for name, wire, t in links
        ],
    }


def call(keys: dict, *, source: Path | None, case_id: str) -> dict:
    from routertwin import _core
    from routertwin.runners._shared.native import call_native

    # The seed reaches only the links' loss streams, which draw a number only
    # when a link's loss_rate is above zero (model/hosts PathServer::Finish;
    # the nodes' CPU servers get rate 0, and ns-3's own generators are not
    # seeded from it): a lossless path gives the same run for every seed.
    lossless = all(link["loss_rate"] == 0 for link in keys["links"])
    return call_native(_core.run_tcp_path, keys, source=source, case_id=case_id, engine="run_tcp_path",
                       unread=("seed",) if lossless else ())
