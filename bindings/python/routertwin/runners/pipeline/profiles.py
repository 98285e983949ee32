"""Profile files of a pipeline scenario: the platform (what the chip is), the
workload (what the software does to a packet) and the fitted parameters
(written by `routertwin calibrate`, routertwin.studies.octeon)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, field_validator

from routertwin import _core
from routertwin.errors import ScenarioError
from routertwin.runners._shared.ethernet import Port
from routertwin.runners._shared.profiles import load_profile
from routertwin.scenario_loader import ScenarioModel

if TYPE_CHECKING:
    from routertwin.runners.pipeline.schema import Schema

# At most 4096 cores (assumption: far above any network processor; seed 002's
# CN78xx has 48); check() holds each case to its platform's cores.count.
CoreCount = Annotated[int, Field(ge=1, le=4096)]

# dp_ops_t field names (core/include/dp/dp_ops.h), in order: the keys a
# workload's ops_per_packet and a platform's counter_cycles may use.
# The C core's operation counters, by name, as dp_ops.h defines them.
OPS_COUNTERS = tuple(_core.ops_counter_names())


def _known_counters(value: dict) -> dict:
    unknown = sorted(set(value) - set(OPS_COUNTERS))
    if unknown:
        raise ValueError(f"unknown operation counter {unknown[0]!r}; counters: {', '.join(OPS_COUNTERS)}")
    return value


class Cores(ScenarioModel):
    count: CoreCount
    clock_hz: PositiveFloat


class Memory(ScenarioModel):
    type: str
    transfers_per_s: PositiveFloat
    controllers: PositiveInt
    bytes_per_transfer: PositiveInt
    efficiency: float = Field(gt=0, le=1)

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.transfers_per_s * self.controllers * self.bytes_per_transfer * self.efficiency


class PlatformProfile(ScenarioModel):
    """scenarios/platforms/<name>.yaml: what the chip is (cited or assumed)."""

    platform: str
    family: str
    cores: Cores
    sclk_hz: PositiveFloat
    memory: Memory
    port: Port
    stages_ns: dict[str, NonNegativeFloat]
    input_buffer_packets: int = Field(ge=1, le=2**32 - 1)  # the engine's queue depth is a 32-bit count
    counter_cycles: dict[str, NonNegativeFloat] = {}

    _check_counters = field_validator("counter_cycles")(_known_counters)


class EspSpec(ScenarioModel):
    """ESP tunnel-mode encapsulation sizes (RFC 4303)."""

    outer_ip_bytes: PositiveInt
    esp_header_bytes: PositiveInt
    iv_bytes: NonNegativeInt
    block_bytes: PositiveInt
    trailer_bytes: PositiveInt
    icv_bytes: NonNegativeInt


class WorkloadProfile(ScenarioModel):
    """scenarios/workloads/<name>.yaml: what the software does to a packet."""

    workload: str
    description: str = ""
    cost_key: str
    path: Literal["ipv4_forward", "l2_passthrough", "ipsec_esp_tunnel"]  # what the packet goes through
    ops_per_packet: dict[str, NonNegativeInt]
    esp: EspSpec | None = None
    lock: str = "none"

    _check_counters = field_validator("ops_per_packet")(_known_counters)


class CostSet(ScenarioModel):
    fixed_cycles: NonNegativeFloat
    per_byte_cycles: NonNegativeFloat = 0.0
    crypto_byte_cycles: NonNegativeFloat = 0.0


class IoCeiling(ScenarioModel):
    sclk_cycles_per_packet: PositiveFloat


class LockHold(ScenarioModel):
    hold_cycles: PositiveFloat


@dataclass
class FittedParameters:
    """Fitted values, structured. In a fitted file (routertwin calibrate) they
    are flat names: `cost.<platform>.<cost_key>.<field>` (fields of CostSet),
    `io_ceiling.<family>.sclk_cycles_per_packet`, `lock.<name>.hold_cycles`."""

    costs: dict[str, dict[str, CostSet]]  # platform -> cost_key -> costs
    io_ceiling: dict[str, IoCeiling]  # family -> ceiling
    locks: dict[str, LockHold]

    def flat(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for plat, sets in self.costs.items():
            for key, cs in sets.items():
                for name, v in cs.model_dump(exclude_unset=True).items():
                    out[f"cost.{plat}.{key}.{name}"] = v
        for fam, io in self.io_ceiling.items():
            out[f"io_ceiling.{fam}.sclk_cycles_per_packet"] = io.sclk_cycles_per_packet
        for name, lock in self.locks.items():
            out[f"lock.{name}.hold_cycles"] = lock.hold_cycles
        return out

    @classmethod
    def from_flat(cls, values: dict[str, float], shown: str) -> "FittedParameters":
        import pydantic

        costs: dict[str, dict[str, dict]] = {}
        io: dict[str, IoCeiling] = {}
        locks: dict[str, LockHold] = {}
        for name, v in values.items():
            parts = name.split(".")
            try:
                if parts[0] == "cost" and len(parts) == 4:
                    CostSet.model_validate({"fixed_cycles": 0.0, parts[3]: v})  # this one field, alone
                    costs.setdefault(parts[1], {}).setdefault(parts[2], {})[parts[3]] = v
                elif parts[0] == "io_ceiling" and len(parts) == 3 and parts[2] == "sclk_cycles_per_packet":
                    io[parts[1]] = IoCeiling(sclk_cycles_per_packet=v)
                elif parts[0] == "lock" and len(parts) == 3 and parts[2] == "hold_cycles":
                    locks[parts[1]] = LockHold(hold_cycles=v)
                else:
                    raise ScenarioError(f"{shown}: parameter '{name}' is not a pipeline parameter "
                                        "(cost.P.K.FIELD, io_ceiling.F.sclk_cycles_per_packet, lock.L.hold_cycles)")
            except pydantic.ValidationError as exc:
                err = exc.errors(include_url=False)[0]
                raise ScenarioError(f"{shown}: parameter '{name}': {err['msg']} (got {v!r})") from None
        built = {}
        for p, sets in costs.items():
            built[p] = {}
            for k, f in sets.items():
                if "fixed_cycles" not in f:
                    raise ScenarioError(f"{shown}: parameter 'cost.{p}.{k}.fixed_cycles' is missing")
                built[p][k] = CostSet(**f)
        return cls(built, io, locks)


def load_fitted(path: Path) -> FittedParameters:
    from routertwin.validation.calibration import load_fitted as load_values

    return FittedParameters.from_flat(load_values(path), str(path))


def load_profiles(cfg: Schema) -> tuple[PlatformProfile, WorkloadProfile, FittedParameters]:
    """The scenario's platform (with its port_rate_bps what-if), workload and
    fitted parameters; errors name the profile file and line."""
    plat = load_profile(cfg.platform, PlatformProfile)
    if cfg.port_rate_bps is not None:
        plat = plat.model_copy(update={"port": plat.port.model_copy(update={"rate_bps": cfg.port_rate_bps})})
    return plat, load_profile(cfg.workload, WorkloadProfile), load_fitted(cfg.fitted)

