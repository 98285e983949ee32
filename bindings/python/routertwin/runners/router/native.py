"""The router's native model, `routertwin._core.run_router` (keys documented
in model/router/helper/router-scenario.h): the config dict of one trial and the
call."""

from __future__ import annotations

from pathlib import Path

from routertwin.runners._shared.native import call_native
from routertwin.runners.router.analytic import zero_load_us
from routertwin.runners.router.platform import RouterPlatform
from routertwin.runners.router.schema import Case, RouterTrace


def native_config(plat: RouterPlatform, case: Case, *, pipeline_latency_us: float, load: float, ip_bytes: int,
                  duration_s: float, mode: str, seed: int, mix: list[tuple[int, float]] | None = None,
                  mix_order: str = "random", trace: RouterTrace | None = None) -> dict:
    """The run_router config dict of one trial. With a mix or a trace,
    ip_bytes is the reference size of the fixed latency (the model adds each
    packet's own serialization and cells beyond it)."""
    cfg = {
        "mode": mode,
        "ports": plat.ports,
        "ports_per_pfe": plat.ports_per_pfe,
        "sonet": plat.sonet,
        "fcs_bits": plat.framing.fcs_bits,
        "shared_flag": plat.framing.shared_flag,
        "address_control": plat.framing.address_control,
        "protocol_bytes": plat.framing.protocol_bytes,
        "ip_bytes": ip_bytes,
        "offered_load": load,
        "routes": case.routes,
        "routes_as_destinations": case.routes_as_destinations,
        "route_first_prefix": plat.route_first_prefix,
        "lookup_probes_per_second": plat.lookup.probes_per_second,
        "lookup_queue_us": plat.lookup.queue_us,
        "cell_bytes": plat.fabric.cell_bytes,
        "internal_header_bytes": plat.fabric.internal_header_bytes,
        "fabric_gbps_per_pfe": plat.fabric.gbps_per_pfe,
        "queueing": plat.fabric.queueing,
        "scheduler": plat.fabric.scheduler,
        "islip_iterations": plat.fabric.islip_iterations,
        "speedup": plat.fabric.speedup,
        "ingress_buffer_us": plat.buffers.ingress_us,
        "egress_buffer_us": plat.buffers.egress_us,
        "fixed_latency_us": pipeline_latency_us + sum(zero_load_us(plat, ip_bytes).values()),
        "duration_s": duration_s,
        "seed": seed,
    }
    if case.route_file is not None:
        cfg["route_file"] = str(case.route_file)
    if trace is not None:
        if trace.file is not None:
            cfg["trace_file"] = str(trace.file)
        else:
            cfg["trace_files"] = [str(trace.ports[p]) if p in trace.ports else "" for p in range(plat.ports)]
        cfg["trace_destinations"] = trace.destinations == "trace"
    elif mix is not None:
        cfg["ip_mix"] = {str(b): float(w) for b, w in mix}
        cfg["ip_mix_order"] = mix_order
    return cfg


def run_native(config: dict, *, source: Path | None, case_id: str) -> dict:
    """`_core.run_router(config)`; a config the load-time checks let through
    but the model rejects is still the input's fault (a ScenarioError naming
    the scenario file and case)."""
    from routertwin import _core

    return call_native(_core.run_router, config, source=source, case_id=case_id, engine="native model")
