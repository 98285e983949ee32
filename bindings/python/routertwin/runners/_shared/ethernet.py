"""Ethernet on the wire: frame sizes, the port profile, the bytes a frame
occupies on the wire and the line rate in frames per second."""

from __future__ import annotations

from typing import Literal

from pydantic import NonNegativeInt, PositiveFloat, PositiveInt

from routertwin.scenario_loader import ScenarioModel

ETH_HEADER_BYTES = 14
ETH_FCS_BYTES = 4

# Ethernet frames incl. FCS: 64 bytes (IEEE 802.3 minimum) to 9216 (the
# common jumbo limit of switch ports).
MIN_FRAME, MAX_FRAME = 64, 9216


class Port(ScenarioModel):
    type: Literal["ethernet"]
    rate_bps: PositiveFloat
    overhead_bytes: NonNegativeInt  # preamble + SFD + inter-frame gap per frame
    min_frame_bytes: PositiveInt


def wire_bytes(frame: float, port: Port) -> float:
    """Bytes a frame occupies on the wire: the frame plus preamble/SFD/IFG."""
    return frame + port.overhead_bytes


def line_rate_pps(frame: float, port: Port) -> float:
    """Frames per second of `frame` bytes at the port's line rate."""
    return port.rate_bps / (8.0 * wire_bytes(frame, port))
