"""What one frame costs the pipeline: the growth of an ESP tunnel-mode frame
(RFC 4303) and the core cycles per packet (fitted + priced C-core counters
+ per byte + per crypto byte)."""

from __future__ import annotations

from dataclasses import dataclass

from routertwin.runners._shared.ethernet import ETH_FCS_BYTES, ETH_HEADER_BYTES, MIN_FRAME
from routertwin.runners.pipeline.profiles import CostSet, EspSpec, PlatformProfile, WorkloadProfile


@dataclass(frozen=True)
class EspTunnel:
    """ESP tunnel-mode encapsulation of one Ethernet frame."""

    inner_ip: int  # the original IP packet (frame - Ethernet header - FCS)
    pad: int  # padding so that inner_ip + pad + trailer is a multiple of the block
    encrypted: int  # bytes through the cipher: inner_ip + pad + trailer
    authenticated: int  # bytes through the MAC: ESP header + IV + encrypted
    out_ip: int  # outer IP packet: outer header + ESP header + IV + encrypted + ICV
    out_frame: int  # the frame on the wire out (incl. Ethernet header and FCS)

    @property
    def crypto_bytes(self) -> int:
        return self.encrypted + self.authenticated


def esp_tunnel(frame: int, esp: EspSpec, min_frame: int = MIN_FRAME) -> EspTunnel:
    """Frame growth of ESP tunnel mode (RFC 4303 section 2.4: the padding
    makes payload + pad + 2-byte trailer a multiple of the cipher block)."""
    inner = frame - ETH_HEADER_BYTES - ETH_FCS_BYTES
    pad = (-(inner + esp.trailer_bytes)) % esp.block_bytes
    encrypted = inner + pad + esp.trailer_bytes
    authenticated = esp.esp_header_bytes + esp.iv_bytes + encrypted
    out_ip = esp.outer_ip_bytes + authenticated + esp.icv_bytes
    out_frame = max(min_frame, ETH_HEADER_BYTES + out_ip + ETH_FCS_BYTES)
    return EspTunnel(inner, pad, encrypted, authenticated, out_ip, out_frame)


@dataclass(frozen=True)
class FrameCost:
    """One frame size through one workload on one platform."""

    frame: int
    weight: float
    out_frame: int
    cycles: float  # core cycles per packet when the core is alone (fitted + priced)
    crypto_bytes: int


def frame_cost(frame: int, weight: float, plat: PlatformProfile, wl: WorkloadProfile, cost: CostSet) -> FrameCost:
    """Per-packet cycles = fixed + priced C-core counters + per frame byte + per crypto byte."""
    ops = dict(wl.ops_per_packet)
    out_frame = frame
    crypto = 0
    if wl.esp is not None:
        t = esp_tunnel(frame, wl.esp, plat.port.min_frame_bytes)
        out_frame, crypto = t.out_frame, t.crypto_bytes
        ops["crypto_bytes"] = ops.get("crypto_bytes", 0) + crypto
    priced = sum(plat.counter_cycles.get(k, 0.0) * v for k, v in ops.items() if k != "crypto_bytes")
    cycles = (cost.fixed_cycles + priced + cost.per_byte_cycles * frame
              + cost.crypto_byte_cycles * ops.get("crypto_bytes", 0))
    return FrameCost(frame, weight, out_frame, cycles, crypto)
