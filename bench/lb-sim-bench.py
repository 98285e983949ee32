"""Wall time of the lb model on one core for the issue's two runs: one
simulated second of 5M HTTP/1.1 transactions/s (scenarios/adx/adx-tps.yaml's
5M step) and 10 ms of a 119 Mpps SYN flood with SYN cookies
(scenarios/adx/adx-synflood.yaml's cookie case). The scenario files give
every key (platform, fitted prices); only the simulated time changes. Prints
the simulated time, frames, events, wall seconds, frames per wall second.

    /work/venv-X/bin/python bench/lb-sim-bench.py [--tps-seconds 1.0] [--flood-ms 10] [--packet-ms 20]

With --packet-ms > 0 it also runs the 5M TPS step for that long at both
levels (descriptor, and packet: real ns3::Packets over the 16 ports), so
the cost of packet level is a ratio measured in one run.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def config_of(scenario_file: Path, case_id: str, duration_s: float) -> dict:
    import routertwin as rt
    from routertwin.runners.lb.native import step_config
    from routertwin.runners.lb.profiles import load_platform, load_prices

    s = rt.load(scenario_file)
    cfg = s.config
    case = next(c for c in cfg.cases if c.id == case_id)
    keys = step_config(cfg, load_platform(cfg.platform), load_prices(cfg.fitted), s.seed, case, case.rate)
    keys.update({"duration_s": duration_s, "warmup_s": duration_s / 10})
    return keys


def bench(name: str, keys: dict) -> float:
    from routertwin import _core

    t0 = time.perf_counter()
    cpu0 = time.process_time()
    out = _core.run_lb(keys)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    frames = out["units_started"] / 0.9 * out["packets_per_unit"]  # the window is 90 % of the run
    print(f"{name}: {keys['duration_s'] * 1e3:g} ms simulated at {keys['rate']:.6g} units/s "
          f"({out['completed_rate']:.6g} completed/s in the window, mean CPU {out['cpu_mean_pct']:.2f} %): "
          f"~{frames:.3g} frames, {out['sim_events']} ns-3 events; wall {wall:.2f} s (process CPU {cpu:.2f} s), "
          f"{frames / cpu / 1e6:.2f} M frames per CPU second", flush=True)
    return cpu / frames


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tps-seconds", type=float, default=1.0)
    p.add_argument("--flood-ms", type=float, default=10.0)
    p.add_argument("--packet-ms", type=float, default=0.0)
    a = p.parse_args()
    if a.packet_ms > 0:
        keys = config_of(ROOT / "scenarios/adx/adx-tps.yaml", "5m", a.packet_ms * 1e-3)
        per_frame = {}
        for level in ("descriptor", "packet"):
            per_frame[level] = bench(f"http11 5M TPS, {level} level", {**keys, "level": level})
        print(f"packet level costs {per_frame['packet'] / per_frame['descriptor']:.2f}x the descriptor level's "
              f"CPU time per frame", flush=True)
    bench("http11 5M TPS", config_of(ROOT / "scenarios/adx/adx-tps.yaml", "5m", a.tps_seconds))
    bench("synflood 119 Mpps, cookies",
          config_of(ROOT / "scenarios/adx/adx-synflood.yaml", "flood-cookies", a.flood_ms * 1e-3))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"peak RSS {rss / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
