"""The pipeline at packet level: the C++ engine `routertwin._core.run_pipeline`
(ns-3 + PipelineEngine, keys in model/pipeline/helper/forwarding-scenario.h), its
config dict of a case and its answer as a CaseResult."""

from __future__ import annotations

from pathlib import Path

from routertwin.distributions import histogram_distribution, loss_clustering, percentile_metrics, queue_metrics
from routertwin.errors import UserError
from routertwin.results import CaseResult
from routertwin.runners._shared.ethernet import line_rate_pps
from routertwin.runners._shared.native import call_native
from routertwin.runners._shared.workload import arrival_keys, flow_keys
from routertwin.runners.pipeline.metrics import rate_metrics
from routertwin.runners.pipeline.resolve import CaseError, Resolved
from routertwin.runners.pipeline.schema import Schema


def engine_config(r: Resolved, cfg: Schema, seed: int) -> dict:
    """The run_pipeline keys (model/pipeline/helper/forwarding-scenario.h) of a case.

    The engine's tester offers the case's frame size, frame mix (every frame
    its own size) or trace on the port, with the scenario's arrival process
    and flow popularity, and its device runs the C core's IPv4 forwarding,
    priced by `counter_prices`. For the ipv4 workloads the fitted fixed and
    per-byte cycles go in as such, so the core's own counters are priced by
    the engine; for other paths (L2, ESP) the whole per-packet cost of each
    size is given as its fixed cycles and no counter is priced. The ESP
    output frame is longer than the input: the egress port's line rate of
    the output frame is given as the output pps ceiling, which holds for
    one frame size only.
    """
    esp = any(f.out_frame != f.frame for f in r.frames)
    if esp and (len(r.frames) != 1 or r.trace is not None):
        raise CaseError("frame", "method 'packet' runs one frame size per case for a path whose output frame "
                        "grows (ESP); use method: analytic for its frame mixes and traces")
    plat, port = r.plat, r.plat.port
    line_in = line_rate_pps(r.mean_frame, port)
    keys = {
        "seed": seed,
        "num_cores": r.cores,
        "clock_hz": plat.cores.clock_hz,
        "scheduling": r.tag_type.lower(),
        "input_pps_ceiling": 1.0 / r.io_s,
        "memory_bytes_per_s": plat.memory.bandwidth_bytes_per_s,
        "memory_bytes_per_frame_byte": 2.0,
        "memory_bytes_per_packet": float(r.frames[0].out_frame - r.frames[0].frame) if esp else 0.0,
        "port_bit_rate": port.rate_bps,
        "num_flows": r.flows,
        "duration_s": cfg.duration_us * 1e-6,
        "warmup_s": cfg.warmup_us * 1e-6,
        "input_queue_depth": plat.input_buffer_packets,
        "lock_hold_cycles": r.lock_s * plat.cores.clock_hz,
        "flow_section_cycles": r.section_s * plat.cores.clock_hz,
        "fixed_latency_s": sum(plat.stages_ns.values()) * 1e-9,
        **flow_keys(cfg.flow_mix),
    }
    if r.trace is not None:
        keys.update(trace_file=str(r.trace.file), trace_loop=r.trace.loop)
        if r.trace.rescale:
            keys["trace_rescale"] = True
            keys["offered_pps"] = 0.0 if r.offered_load == 1.0 else r.offered_load * line_in
    else:
        if len(r.frames) == 1:
            keys["frame_bytes"] = r.frames[0].frame
        else:
            keys["frame_mix"] = {str(f.frame): f.weight for f in r.frames}
            keys["frame_order"] = cfg.frame_order
        keys["offered_pps"] = 0.0 if r.offered_load == 1.0 else r.offered_load * line_in
        keys["arrivals"] = "constant"
        keys.update(arrival_keys(cfg.arrivals, line_in))
        if cfg.arrivals is not None and cfg.arrivals.process == "onoff" and \
                not r.offered_load < cfg.arrivals.burst_peak_load:
            raise CaseError("arrivals", f"on/off bursts need an offered load ({r.offered_load:g}) below "
                            f"arrivals.burst_peak_load ({cfg.arrivals.burst_peak_load:g})")
    if esp:
        keys["output_pps_ceiling"] = line_rate_pps(r.frames[0].out_frame, port)
    if r.wl.path == "ipv4_forward":
        keys["fixed_cycles_per_packet"] = r.cost.fixed_cycles
        keys["cycles_per_frame_byte"] = r.cost.per_byte_cycles
        keys["counter_prices"] = dict(plat.counter_cycles)
    elif len(r.frames) == 1 and r.trace is None:
        keys["fixed_cycles_per_packet"] = r.frames[0].cycles
    else:
        keys["frame_fixed_cycles"] = {str(f.frame): f.cycles for f in r.frames}
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
    pps = float(out["forwarded_pps"])
    # What the tester offered: the mix's or the trace's mean frame.
    mean_frame = float(out["mean_frame_bytes"])
    mean_out = mean_frame + (r.mean_out_frame - r.mean_frame)
    line_in = line_rate_pps(mean_frame, r.plat.port)
    metrics = {
        **rate_metrics(pps, mean_frame, mean_out, line_in),
        "latency_avg_us": float(out["latency_avg_us"]),
        "latency_min_us": float(out["latency_min_us"]),
        "latency_max_us": float(out["latency_max_us"]),
        **percentile_metrics(out, "_us"),
        **queue_metrics(out["core_queue"], "core_queue"),
        "cycles_per_packet": float(out["service_cycles"]),
        "loss_pct": float(out["loss_pct"]),
        **loss_clustering(out["loss_timeline"]),
    }
    if len(r.frames) > 1 or r.trace is not None:
        metrics["gbps"] = float(out["forwarded_bps"]) / 1e9  # the bits of the frames actually forwarded
    if cfg.flow_mix is not None and cfg.flow_mix.sizes != "none":  # flow-level traffic: its churn
        metrics.update(flows_started=float(out["flows_started"]), flows_active_mean=float(out["flows_active_mean"]),
                       flows_active_max=float(out["flows_active_max"]))
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
    return CaseResult(case="", metrics=metrics, bottleneck=bottleneck, counters=counters,
                      distributions=histogram_distribution(out))
