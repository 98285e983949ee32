"""The pipeline at packet level: the C++ engine `routertwin._core.run_pipeline`
(ns-3 + PipelineEngine, keys in model/pipeline/helper/forwarding-scenario.h), its
config dict of a case and its answer as a CaseResult."""

from __future__ import annotations

from pathlib import Path

from routertwin.errors import UserError
from routertwin.results import CaseResult
from routertwin.runners._shared.ethernet import line_rate_pps
from routertwin.runners._shared.native import call_native
from routertwin.runners.pipeline.metrics import rate_metrics
from routertwin.runners.pipeline.resolve import CaseError, Resolved
from routertwin.runners.pipeline.schema import Schema


def engine_config(r: Resolved, cfg: Schema, seed: int) -> dict:
    """The run_pipeline keys (model/pipeline/helper/forwarding-scenario.h) of a case.

    The engine's tester offers one frame size on the port and its device runs
    the C core's IPv4 forwarding, priced by `counter_prices`. For the ipv4
    workloads the fitted fixed and per-byte cycles go in as such, so the core's
    own counters are priced by the engine; for other paths (L2, ESP) the whole
    per-packet cost is folded into fixed_cycles_per_packet and no counter is
    priced. The ESP output frame is longer than the input: the egress port's
    line rate of the output frame is given as the output pps ceiling.
    """
    if len(r.frames) != 1:
        raise CaseError("frame", "method 'packet' runs one frame size per case; use method: analytic for "
                        "frame mixes")
    f = r.frames[0]
    plat, port = r.plat, r.plat.port
    keys = {
        "seed": seed,
        "num_cores": r.cores,
        "clock_hz": plat.cores.clock_hz,
        "scheduling": r.tag_type.lower(),
        "input_pps_ceiling": 1.0 / r.io_s,
        "memory_bytes_per_s": plat.memory.bandwidth_bytes_per_s,
        "memory_bytes_per_frame_byte": 2.0,
        "memory_bytes_per_packet": float(f.out_frame - f.frame),
        "port_bit_rate": port.rate_bps,
        "frame_bytes": f.frame,
        "offered_pps": 0.0 if r.offered_load == 1.0 else r.offered_load * line_rate_pps(f.frame, port),
        "arrivals": "constant",
        "num_flows": r.flows,
        "duration_s": cfg.duration_us * 1e-6,
        "warmup_s": cfg.warmup_us * 1e-6,
        "input_queue_depth": plat.input_buffer_packets,
        "lock_hold_cycles": r.lock_s * plat.cores.clock_hz,
        "fixed_latency_s": sum(plat.stages_ns.values()) * 1e-9,
    }
    if f.out_frame != f.frame:
        keys["output_pps_ceiling"] = line_rate_pps(f.out_frame, port)
    if r.wl.path == "ipv4_forward":
        keys["fixed_cycles_per_packet"] = r.cost.fixed_cycles
        keys["cycles_per_frame_byte"] = r.cost.per_byte_cycles
        keys["counter_prices"] = dict(plat.counter_cycles)
    else:
        keys["fixed_cycles_per_packet"] = f.cycles
    return keys


def run_engine(keys: dict, source: Path | None, case_id: str) -> dict:
    """`_core.run_pipeline(keys)`; a key the engine rejects (a value the
    load-time checks let through) is still the input's fault: a
    ScenarioError naming the scenario file, the case and the engine's key."""
    from routertwin import _core

    return call_native(_core.run_pipeline, keys, source=source, case_id=case_id, engine="packet engine")


def run_packet(r: Resolved, cfg: Schema, seed: int, source: Path | None = None, case_id: str = "") -> CaseResult:
    """One case through the C++ packet-level engine (ns-3 + PipelineEngine)."""
    from routertwin import _core

    if not hasattr(_core, "run_pipeline"):
        raise UserError("method 'packet' needs routertwin._core.run_pipeline, which this build "
                        "does not have (run scripts/dev-refresh.sh); or use method: analytic")
    keys = engine_config(r, cfg, seed)
    out = run_engine(keys, source, case_id)
    f = r.frames[0]
    pps = float(out["forwarded_pps"])
    line_in = line_rate_pps(f.frame, r.plat.port)
    metrics = {
        **rate_metrics(pps, f.frame, f.out_frame, line_in),
        "latency_avg_us": float(out["latency_avg_us"]),
        "latency_min_us": float(out["latency_min_us"]),
        "latency_max_us": float(out["latency_max_us"]),
        "cycles_per_packet": float(out["service_cycles"]),
        "loss_pct": float(out["loss_pct"]),
    }
    for name, u in sorted(out["utilization"].items()):
        metrics[f"{name}_util"] = float(u)
    for i, u in enumerate(out["core_utilization"]):
        metrics[f"core{i}_util"] = float(u)
    bottleneck = str(out["bottleneck"])
    if bottleneck == "packet_output" and "output_pps_ceiling" in keys:
        bottleneck = "line_rate"  # the ceiling given is the egress line rate of the ESP frame
    if pps >= 0.995 * r.offered_load * line_in:
        bottleneck = "line_rate_in" if r.offered_load >= 1.0 else "offered_load"
    counters = {f"drop.{k}": float(v) for k, v in sorted(out["drops"].items())}
    if r.wl.path == "ipv4_forward":  # the engine's core runs IPv4 forwarding: its counters are this path's
        counters.update({f"ops.{k}": float(v) for k, v in sorted(out["ops_per_packet"].items())})
    return CaseResult(case="", metrics=metrics, bottleneck=bottleneck, counters=counters)
