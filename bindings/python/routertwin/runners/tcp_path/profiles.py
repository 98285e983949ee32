"""The tcp_path platform profile (scenarios/platforms/zstack*.yaml, or a
lab's own): the end hosts' TCP and the catalog of link and node types a
scenario's path names."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from routertwin.runners._shared.profiles import load_profile
from routertwin.runners.tcp_path.schema import LinkType, NodeType, Tcp
from routertwin.scenario_loader import ScenarioModel


class HostTcp(Tcp):
    """The platform's TCP: every key required (a scenario's `tcp` overrides)."""

    congestion: Literal["cubic", "newreno"]
    mtu: int = Field(ge=576, le=9000)
    timestamps: bool
    sack: bool
    window_scaling: bool
    snd_buf_bytes: int = Field(ge=4096, le=2**30)
    rcv_buf_bytes: int = Field(ge=4096, le=2**30)
    initial_cwnd_segments: int = Field(ge=1, le=1000)
    ack_every_segments: int = Field(ge=1, le=64)
    delayed_ack_ms: float = Field(gt=0, le=1000)
    min_rto_ms: float = Field(gt=0, le=60000)


class PathPlatform(ScenarioModel):
    platform: str
    tcp: HostTcp
    link_types: dict[str, LinkType]
    node_types: dict[str, NodeType]


def load_platform(path: Path) -> PathPlatform:
    return load_profile(Path(path), PathPlatform)
