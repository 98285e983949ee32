"""kind: webswitch_pair -- a redundant pair of NCTU web switches (seed 003
table 6: active/backup and active/active) on the ns-3 engine, and what a
switch's death costs: the takeover time (VRRPv3, RFC 5798: the seed names
no protocol; the product profile's behaviour.failover_advert_interval_s),
the connections open at the death that survive or are lost (reset by the
survivor, which knows nothing of them) under each
kind of state synchronisation (behaviour.session_sync: none, persistence,
connections; with connections, L4 sessions are copied and spliced L7
connections mirrored), and the closed-loop throughput before the death and
after the takeover (the capacity step), with the closed-loop threads'
cycle times in those windows and the stall of the requests in flight at
the death. docs/nctu.md "Switch redundancy".

Each product runs each redundancy and each sync mode, a case each
(`<product>-<mode>-<forwarding>-<redundancy>-<sync>`). The model:
model/l7/helper/redundant-pair-testbed.h (RunRedundantPair).

Example (scenarios/whatif/nctu-pair-failover.yaml):

    scenario: nctu-pair-failover
    kind: webswitch_pair
    seed: 1
    products: [../platforms/nctu-f5-bigip-ha.yaml]
    mode: l7
    redundancy: [active_backup, active_active]
    session_sync: [none, connections]
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from routertwin.distributions import cycle_distributions
from routertwin.results import CaseResult
from routertwin.runners.webswitch.profiles import load_webswitch
from routertwin.runners.webswitch.runner import product_key
from routertwin.scenario_loader import FieldError, ScenarioModel, ScenarioPath

METRICS = ("takeover_s", "closed_form_takeover_s", "master_down_interval_s", "requests_per_s_before",
           "requests_per_s_after", "capacity_ratio", "open_at_death", "survived", "lost",
           *(f"cycle_{w}_{q}_us" for w in ("before", "after") for q in ("p50", "p99", "p999", "max")),
           "across_death", "across_death_max_us")
UNITS = {"requests_per_s_before": "requests/s", "requests_per_s_after": "requests/s",
         "capacity_ratio": "fraction", "open_at_death": "connections", "survived": "connections",
         "lost": "connections", "link_mbps": "Mbit/s", "threads_per_vip": "threads", "across_death": "requests"}


class Schema(ScenarioModel):
    # Product profiles (scenarios/platforms/nctu-*.yaml); each runs every case.
    products: list[ScenarioPath] = Field(min_length=1)
    # l7: URL switching with delayed binding; l4: connection balancing.
    mode: Literal["l4", "l7"] = "l7"
    # l4 only: nat (everything through the switch) or dr (servers answer
    # the clients directly, figure 4). L7 terminates both connections.
    forwarding: Literal["nat", "dr"] = "nat"
    redundancy: list[Literal["active_backup", "active_active"]] = Field(default=["active_backup"], min_length=1)
    # profile: each product's behaviour.session_sync; or every product with these.
    session_sync: list[Literal["profile", "none", "persistence", "connections"]] = Field(default=["profile"],
                                                                                        min_length=1)
    # VRRP advertisement interval; absent: the profile's.
    advert_interval_s: float | None = Field(default=None, ge=0.01, le=40.95)
    # every link of the testbed (the seed's ports: 100 Mbit/s, section 3.3)
    link_mbps: float = Field(default=100.0, gt=0, le=100_000)
    # the client segment's links (the seed's gigabit uplink); absent: link_mbps
    segment_mbps: float | None = Field(default=None, gt=0, le=100_000)
    # what if each switch's processor ran at this multiple of its profile's
    # clock (a slow switch makes the capacity step show with few connections)
    clock_scale: float = Field(default=1.0, gt=0, le=1000)
    servers: int = Field(default=2, ge=2, le=64)
    # switch 0 dies at kill_at_s; closed-loop threads (HTTP/1.0, a new
    # connection per request) per virtual address from load_start_s
    kill_at_s: float = Field(default=5.55, gt=0, le=600)
    threads_per_vip: int = Field(default=8, ge=0, le=1000)
    load_start_s: float = Field(default=3.5, ge=0, le=600)
    load_bytes: int = Field(default=2000, ge=1, le=10**9)
    # throughput windows: [kill - window, kill) and [kill + MDI + settle, + window)
    window_s: float = Field(default=1.0, gt=0, le=600)
    settle_s: float = Field(default=0.5, ge=0, le=600)
    # long downloads to VIP 1, one connection each, download_spacing_s apart
    downloads: int = Field(default=10, ge=0, le=10_000)
    download_start_s: float = Field(default=4.5, ge=0, le=600)
    download_spacing_s: float = Field(default=0.1, gt=0, le=600)
    download_bytes: int = Field(default=2_000_000, ge=1, le=10**10)
    # the timelines' bin (answers/s, the survivor's resets and the clients'
    # failed requests over the run: distributions["timeline"])
    timeline_bin_s: float = Field(default=0.1, ge=0.001, le=600)

    @model_validator(mode="after")
    def _consistent(self):
        if self.mode == "l7" and self.forwarding == "dr":
            raise FieldError(("forwarding",), "L7 switching terminates both connections: forwarding is nat")
        if self.mode == "l4" and self.forwarding == "nat" and "active_active" in self.redundancy:
            raise FieldError(("redundancy",), "an L4 NAT pair is active/backup: the servers route the answers "
                                              "through one gateway, not by the virtual address (use dr)")
        if self.load_start_s > self.kill_at_s - self.window_s:
            raise FieldError(("load_start_s",), f"the window before the death ({self.window_s} s before kill_at_s "
                                                f"{self.kill_at_s}) must start after load_start_s")
        for key in ("redundancy", "session_sync"):
            values = getattr(self, key)
            if len(set(values)) != len(values):
                raise FieldError((key,), f"a value is listed twice: {values}")
        return self


def check(scenario) -> None:
    """Every product offers the mode and the redundancy asked for (its features)."""
    cfg: Schema = scenario.config
    for i, path in enumerate(cfg.products):
        p = load_webswitch(path)
        if cfg.mode == "l7" and not p.features.l7.url_switching:
            raise FieldError(("products", i), f"{path.name}: no URL switching (features.l7.url_switching): mode l4")
        if cfg.mode == "l4" and cfg.forwarding == "dr" and not p.features.l4.direct_routing:
            raise FieldError(("products", i), f"{path.name}: no direct routing (features.l4.direct_routing)")
        ft = p.features.fault_tolerance
        for red in cfg.redundancy:
            if not getattr(ft, red):
                raise FieldError(("products", i), f"{path.name}: no {red.replace('_', '/')} redundancy "
                                                  f"(features.fault_tolerance)")


def timeline(r: dict) -> dict:
    """The run over time, bins of bin_s from 0 to its end: closed-loop
    answers per second, the survivor's RSTs for segments of no known
    connection and the clients' requests that ended without their answer
    (in the last bin, the downloads still waiting for theirs at the run's
    end: cut by the failover, their clients never told, or too slow for
    the run), per bin (they add
    up to the counters answers, survivor_resets and failed_requests)."""
    bin_s = float(r["timeline_bin_s"])
    return {"bin_s": bin_s, "answers_per_s": [n / bin_s for n in r["answers_per_bin"]],
            "survivor_resets": [int(n) for n in r["survivor_resets_per_bin"]],
            "failed_requests": [int(n) for n in r["failed_per_bin"]]}


def cycle_metrics(r: dict) -> dict[str, float]:
    """The closed-loop threads' cycle times (a request's start, the previous
    answer or the thread's start, to its answer) in the window before the
    death and the one after the takeover, the answers the rates count:
    cycle_<window>_p50/p99/p999/max_us; and the requests whose cycle spans
    the death (started before, answered after): across_death, and
    across_death_max_us, the longest of them (the stall the failover cost
    a client). A window without answers has no percentiles, and no request
    across the death no longest: absent, never 0."""
    m = {key: float(r[key]) for w in ("before", "after") for q in ("p50", "p99", "p999", "max")
         if (key := f"cycle_{w}_{q}_us") in r}
    m["across_death"] = float(r["across_death"])
    if "across_death_max_us" in r:
        m["across_death_max_us"] = float(r["across_death_max_us"])
    return m


def run(scenario, progress) -> list[CaseResult]:
    from routertwin import _core

    cfg: Schema = scenario.config
    cases = [(p, red, sync) for p in cfg.products for red in cfg.redundancy for sync in cfg.session_sync]
    progress.set_total(len(cases))
    profiles = {path: load_webswitch(path) for path in cfg.products}
    out = []
    for path, red, sync in cases:
        profile = profiles[path]
        used_sync = profile.behaviour.session_sync if sync == "profile" else sync
        key = product_key(profile.platform)
        fwd = cfg.forwarding if cfg.mode == "l4" else "splice"
        cid = f"{key}-{cfg.mode}-{fwd}-{red.replace('_', '-')}-{used_sync}"
        native = {"profile": str(path), "mode": cfg.mode, "forwarding": cfg.forwarding, "redundancy": red,
                  "session_sync": used_sync, "link_mbps": cfg.link_mbps, "servers": cfg.servers,
                  "clock_scale": cfg.clock_scale, "seed": scenario.seed,
                  "kill_at_s": cfg.kill_at_s, "threads_per_vip": cfg.threads_per_vip,
                  "load_start_s": cfg.load_start_s, "load_path": f"/a/CLASS_{cfg.load_bytes}.gif",
                  "window_s": cfg.window_s, "settle_s": cfg.settle_s, "downloads": cfg.downloads,
                  "download_start_s": cfg.download_start_s, "download_spacing_s": cfg.download_spacing_s,
                  "download_bytes": cfg.download_bytes, "timeline_bin_s": cfg.timeline_bin_s}
        if cfg.segment_mbps is not None:
            native["segment_mbps"] = cfg.segment_mbps
        if cfg.advert_interval_s is not None:
            native["advert_interval_s"] = cfg.advert_interval_s
        r = _core.run_redundant_pair(native)
        before, after = r["requests_per_s_before"], r["requests_per_s_after"]
        out.append(CaseResult(
            case=cid,
            params={"product": profile.platform, "mode": cfg.mode, "forwarding": cfg.forwarding, "redundancy": red,
                    "session_sync": used_sync, "link_mbps": cfg.link_mbps, "threads_per_vip": cfg.threads_per_vip,
                    "clock_scale": cfg.clock_scale,
                    "advert_interval_s": cfg.advert_interval_s or profile.behaviour.failover_advert_interval_s},
            metrics={"takeover_s": r["takeover_s"], "closed_form_takeover_s": r["closed_form_takeover_s"],
                     "master_down_interval_s": r["master_down_interval_s"], "requests_per_s_before": before,
                     "requests_per_s_after": after, "capacity_ratio": after / before if before > 0 else 0.0,
                     "open_at_death": float(r["open_at_death"]), "survived": float(r["survived"]),
                     "lost": float(r["lost"]), **cycle_metrics(r)},
            counters={"survivor_resets": float(r["survivor_resets"]), "sync_updates": float(r["sync_updates"]),
                      "splice_mirrors": float(r["splice_mirrors"]),
                      "survivor_no_session": float(r["survivor_no_session"]),
                      "answers": float(r["answers"]), "failed_requests": float(r["failed_requests"])},
            distributions={"timeline": timeline(r), **cycle_distributions(r)}))
        progress.advance(status=cid)
    return out
