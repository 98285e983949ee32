"""The router's platform profile (scenarios/platforms/<router>.yaml) and
its fitted fixed pipeline latency (scenarios/platforms/fitted/<study>.yaml,
written by `routertwin calibrate`, routertwin.studies.t640)."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, PositiveFloat, PositiveInt, field_validator, model_validator

from routertwin.errors import ScenarioError
from routertwin.runners._shared.profiles import load_profile
from routertwin.scenario_loader import FieldError, ScenarioModel

if TYPE_CHECKING:
    from routertwin.runners.router.schema import Schema


class Framing(ScenarioModel):
    fcs_bits: Literal[16, 32]
    shared_flag: bool
    address_control: bool = True
    protocol_bytes: Literal[1, 2] = 2


class Lookup(ScenarioModel):
    probes_per_second: PositiveFloat
    queue_us: PositiveFloat


class Fabric(ScenarioModel):
    # Cells and the header added to each packet are at most a jumbo frame
    # (9216 bytes; a cell needs 16 for the native model's own header).
    cell_bytes: int = Field(ge=16, le=9216)
    internal_header_bytes: int = Field(ge=0, le=9216)
    gbps_per_pfe: PositiveFloat
    queueing: Literal["fifo", "voq"] = "voq"
    scheduler: Literal["islip", "fifo_random", "fifo_rr"] = "islip"
    # iSLIP converges in at most N iterations for N ports (McKeown 1999,
    # "The iSLIP scheduling algorithm", IEEE/ACM ToN 7(2)); the model has at
    # most 256 ports. Speedup: assumption, 16 is far above any fabric (the
    # T640's is not published; docs/t640.md).
    islip_iterations: int = Field(default=1, ge=1, le=256)
    speedup: int = Field(default=1, ge=1, le=16)


class Buffers(ScenarioModel):
    ingress_us: PositiveFloat
    egress_us: PositiveFloat


class RouterPlatform(ScenarioModel):
    """scenarios/platforms/<router>.yaml: the hardware (each number cited or
    marked as an assumption in the file's comments)."""

    platform: str
    # The native model pairs port p with p + ports/2 and keeps per-port state
    # for at most 256 ports (RouterConfig::Validate).
    ports: int = Field(ge=2, le=256)
    ports_per_pfe: PositiveInt
    sonet: str
    framing: Framing
    lookup: Lookup
    fabric: Fabric
    buffers: Buffers
    route_first_prefix: str = "16.0.0.0"

    @field_validator("sonet")
    @classmethod
    def _known_sonet(cls, v: str) -> str:
        from routertwin import _core

        _core.sonet_payload_bps(v)  # ValueError names the rates it knows
        return v

    @field_validator("route_first_prefix")
    @classmethod
    def _ipv4(cls, v: str) -> str:
        try:
            ipaddress.IPv4Address(v)
        except ValueError:
            raise ValueError(f"not an IPv4 address: {v!r}") from None
        return v

    @model_validator(mode="after")
    def _pairs_and_pfes(self):
        if self.ports % 2:
            raise FieldError(("ports",), f"ports must be even (port p is paired with p + ports/2), got {self.ports}")
        if self.ports % self.ports_per_pfe:
            raise FieldError(("ports_per_pfe",), f"ports_per_pfe {self.ports_per_pfe} must divide ports {self.ports}")
        return self

    def free_slash24s(self) -> int:
        """/24 prefixes from route_first_prefix to the end of the IPv4 space:
        generated routes are consecutive /24s from there."""
        return (2**32 - (int(ipaddress.IPv4Address(self.route_first_prefix)) & 0xFFFFFF00)) // 256


def load_platform(path: Path) -> RouterPlatform:
    """The router platform profile (errors name file, line and key)."""
    return load_profile(path, RouterPlatform)


def pipeline_latency_param(plat: RouterPlatform) -> str:
    """The fitted parameter name of a platform's fixed pipeline latency."""
    return f"latency.{plat.platform}.pipeline_us"


def load_pipeline_latency(fitted: Path, plat: RouterPlatform) -> float:
    """The platform's fixed pipeline latency (us) from a fitted file written
    by `routertwin calibrate` (routertwin.studies.t640)."""
    from routertwin.validation.calibration import load_fitted

    name = pipeline_latency_param(plat)
    values = load_fitted(fitted)
    if name not in values:
        raise ScenarioError(f"{fitted}: no fitted parameter '{name}' for platform '{plat.platform}' "
                            "(run `routertwin calibrate`)")
    return float(values[name])


def load_profiles(cfg: Schema) -> tuple[RouterPlatform, float]:
    """The scenario's platform profile and its fixed pipeline latency (us)
    from the fitted file; errors name the file and line."""
    plat = load_platform(cfg.platform)
    return plat, load_pipeline_latency(cfg.fitted, plat)
