"""The Juniper T640 study (seed 001): its one fitted parameter.

The fixed pipeline latency of the router (line card in, forwarding engine,
fabric traversal, line card out, with no queueing and no per-packet service)
comes from the calibrate row t640-40b-500k-lat-min only: the fastest of
2.3e10 packets met empty queues, so

    min latency = pipeline + serialization + minimum service

(routertwin.runners.router.analytic.zero_load_us: the ingress frame with no
escapes at the SONET payload rate, one lookup table read, one fabric slot
per cell), solved for the pipeline part at the row's 40-byte packets.
Every other number of the model is cited or assumed in
scenarios/platforms/t640.yaml; predict rows are never read here.
"""

from __future__ import annotations

from routertwin.runners.router.analytic import zero_load_us
from routertwin.runners.router.platform import load_platform, pipeline_latency_param
from routertwin.validation.calibration import Fitted, register_fit

STUDY = "t640"
ROW = "t640-40b-500k-lat-min"  # 40-byte IP, 500,000 routes as destinations: minimum latency (us)
IP_BYTES = 40  # the row's condition


def fit(data) -> dict:
    from routertwin.project import find_root

    root = data.root if data.root is not None else find_root()
    plat = load_platform(root / "scenarios" / "platforms" / "t640.yaml")
    parts = zero_load_us(plat, IP_BYTES)
    pipeline = data.value(ROW) - sum(parts.values())
    note = ("fixed pipeline latency (us) = minimum latency of the row - "
            + " - ".join(f"{k} {v:.4f}" for k, v in parts.items()) + f" us at {IP_BYTES}-byte packets")
    return {pipeline_latency_param(plat): Fitted(pipeline, (ROW,), note)}


register_fit(STUDY, fit)
