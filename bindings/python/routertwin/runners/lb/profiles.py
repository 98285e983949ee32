"""The lb platform profile (scenarios/platforms/adx8000.yaml) and the fitted
prices (scenarios/platforms/fitted/adx.yaml, written by `routertwin calibrate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt, field_validator

from routertwin import _core
from routertwin.runners._shared.profiles import load_profile
from routertwin.scenario_loader import ScenarioModel

# The counters a profile may price: the C core's, by name (dp_ops.h), from the core itself.
COUNTERS = tuple(_core.ops_counter_names())
Counter = Literal[COUNTERS]  # type: ignore[valid-type]

# Fitted parameters (routertwin.studies.adx): cycles per frame handled, per
# new connection beyond its counted work, and per header byte the core reads,
# writes or checksums (one price for bytes_parsed, bytes_written, checksum_bytes).
FITTED = ("fixed_cycles_per_frame", "connection_setup_cycles", "header_byte_cycles")
HEADER_BYTE_COUNTERS = ("bytes_parsed", "bytes_written", "checksum_bytes")


class LbPlatform(ScenarioModel):
    platform: str
    ports: PositiveInt
    port_rate_bps: PositiveFloat
    port_overhead_bytes: int = Field(ge=0)
    bp_modules: PositiveInt
    cores_per_module: PositiveInt
    fabric_modules: int = Field(ge=0)
    sessions_per_core: int = Field(ge=2, le=2**28)
    sessions_per_connection: Literal[1, 2]
    clock_hz: PositiveFloat
    services: int = Field(ge=1, le=256)
    servers_per_service: int = Field(ge=1, le=254)
    scheduler: str
    forwarding: Literal["fullnat", "dr", "tunnel"]
    core_queue_depth: int = Field(ge=0, le=2**24)
    step_gap_us: PositiveFloat
    response_bytes: int = Field(ge=0, le=1460)
    request_bytes: int = Field(ge=0, le=1460)
    prices: dict[Counter, NonNegativeFloat] = {}

    @field_validator("scheduler")
    @classmethod
    def _known_scheduler(cls, v: str) -> str:
        names = _core.lb_scheduler_names()
        if v not in names:
            raise ValueError(f"unknown scheduler '{v}' (dp_sched: {', '.join(names)})")
        return v

    @property
    def cores(self) -> int:
        return self.bp_modules * self.cores_per_module


def load_platform(path: Path) -> LbPlatform:
    return load_profile(Path(path), LbPlatform)


def load_prices(path: Path | None) -> dict[str, float]:
    """The fitted prices of a fitted file (all three), or zeros without one."""
    if path is None:
        return {name: 0.0 for name in FITTED}
    from routertwin.validation.calibration import load_fitted

    params = load_fitted(Path(path))
    return {name: float(params.get(name, 0.0)) for name in FITTED}
