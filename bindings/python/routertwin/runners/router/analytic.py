"""Closed-form pieces of the router: the PPP/HDLC octets around a packet,
the tester's theoretical maximum frame rate over POS ports, and what the
fastest packet spends besides the fixed pipeline latency (zero-load
latency, by part)."""

from __future__ import annotations

from routertwin.runners.router.platform import RouterPlatform


def frame_overhead(plat: RouterPlatform) -> int:
    """PPP/HDLC octets around an IP packet with no escapes: flag (one when
    shared between frames), address and control, protocol, FCS (RFC 1662)."""
    f = plat.framing
    return (1 if f.shared_flag else 2) + (2 if f.address_control else 0) + f.protocol_bytes + f.fcs_bits // 8


def max_frame_rate(plat: RouterPlatform, ip_bytes: int) -> float:
    """Frames/s of all ports at 100 % offered load with no escapes (the
    report's theoretical maximum): SONET payload / frame octets
    (docs/t640.md section 1)."""
    from routertwin import _core

    return plat.ports * _core.sonet_payload_bps(plat.sonet) / (8.0 * (ip_bytes + frame_overhead(plat)))


def zero_load_us(plat: RouterPlatform, ip_bytes: int) -> dict[str, float]:
    """What the fastest packet of `ip_bytes` spends besides the fixed
    pipeline latency, by part (us): the latency the tester measures is taken
    as first bit sent to first bit received (ASSUMPTION: the seed does not
    say how the Agilent tester timestamps), so a store-and-forward router
    adds the ingress frame's serialization (no escapes: the fastest frame),
    one lookup-engine table read (the fewest any DIR-24-8 lookup makes), and
    one fabric slot per cell of the packet. The native model reports
    latency = fixed + queueing waits, so its fixed part is the pipeline
    latency plus these (native_config)."""
    from routertwin import _core

    fab = plat.fabric
    cells = -(-(ip_bytes + fab.internal_header_bytes) // fab.cell_bytes)
    return {
        "serialization": 8.0 * (ip_bytes + frame_overhead(plat)) / _core.sonet_payload_bps(plat.sonet) * 1e6,
        "lookup": 1.0 / plat.lookup.probes_per_second * 1e6,
        "fabric": cells * 8.0 * fab.cell_bytes / (fab.gbps_per_pfe * 1e9) * 1e6,
    }
