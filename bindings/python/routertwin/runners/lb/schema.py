"""The keys of an lb scenario (`Schema`) and its cases."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat, ValidationInfo, field_validator, model_validator

from routertwin.runners.lb.balancer import Balancer
from routertwin.scenario_loader import FieldError, ScenarioModel, ScenarioPath

Workload = Literal["http11", "http10", "dns", "synflood"]
# Units per second of a load step: at most 1e9, ten times the 119 Mpps of
# eight 10GbE ports of 64-byte frames, the largest rate of the seed.
Rate = Annotated[float, Field(gt=0, le=1e9)]
# Simulated time per run: at most 100 ms (the model runs ~1e6 frames per wall
# second; 100 ms at 119 Mpps is 12 M frames).
MAX_DURATION_US = 1e5


class PayloadSizes(ScenarioModel):
    """An HTTP request's or response's bytes, drawn per unit (http11, http10;
    model/lb/model/lb-testers.h): an empirical `table` {bytes: weight, a
    share of units}, or ceil(X) bytes of a Pareto (P(X > x) = (xm / x)^alpha,
    xm = pareto_min_bytes) or lognormal (ln X ~ N(mu, sigma^2)) X. A size
    above `mss` is sent as segments, the client acknowledging every second
    one: the bytes per connection of an http10 unit, and its cost."""

    sizes: Literal["table", "pareto", "lognormal"]
    table: dict[Annotated[int, Field(ge=0, le=2**30)], Annotated[float, Field(gt=0)]] | None = None
    pareto_alpha: float = Field(default=1.5, gt=1, le=100)  # > 1: a finite mean
    pareto_min_bytes: float = Field(default=1000.0, ge=1, le=2**30)
    lognormal_mu: float = Field(default=8.0, ge=-50, le=30)
    lognormal_sigma: float = Field(default=1.0, gt=0, le=10)

    @model_validator(mode="after")
    def _table_with_sizes_table(self):
        if self.sizes == "table" and self.table is None:
            raise FieldError(("sizes",), "sizes: table needs a `table` {bytes: weight}")
        if self.sizes != "table" and self.table is not None:
            raise FieldError(("table",), f"a `table` belongs to sizes: table, not {self.sizes}")
        if self.table is not None and not self.table:
            raise FieldError(("table",), "an empty table")
        return self

    def native_keys(self, side: str) -> dict:
        """run_lb's keys of this side (request or response)."""
        if self.sizes == "table":
            return {f"{side}_table": {str(b): float(w) for b, w in self.table.items()}}
        if self.sizes == "pareto":
            return {f"{side}_sizes": "pareto", f"{side}_pareto_alpha": self.pareto_alpha,
                    f"{side}_pareto_min_bytes": self.pareto_min_bytes}
        return {f"{side}_sizes": "lognormal", f"{side}_lognormal_mu": self.lognormal_mu,
                f"{side}_lognormal_sigma": self.lognormal_sigma}


class ConnectionTrace(ScenarioModel):
    """http10 connections from a pcap or pcapng file of TCP flows: each
    opened by a SYN, its start that SYN's instant (rescaled so connections
    start at the case's rate, or `rescale: false` as captured), its
    exchanges the payload each side sent until both FINs or a RST, a new
    request where the client speaks again after the server did (HTTP/1.1
    keep-alive); looped. IPv6 connections are counted
    (drops.trace_ipv6_not_replayed) and not replayed: the balancer's session
    table keys IPv4 5-tuples (model/lb/model/lb-testers.h)."""

    file: ScenarioPath
    rescale: bool = True


class TcpWindow(ScenarioModel):
    """Responses sent under TCP windows (model/lb/model/lb-testers.h): slow
    start from `initial_window` segments (RFC 6928), the window growing by
    the segments each ACK acknowledges, capped by the receiver's window;
    the client's ACKs cross one `rtt_us` after the segments they
    acknowledge. Without it a response's segments follow each other at the
    platform's step gap."""

    initial_window: int = Field(default=10, ge=1, le=1000)  # segments, RFC 6928
    # the largest window without RFC 7323 window scaling (assumption: no scaling)
    receive_window_bytes: int = Field(default=65535, ge=2, le=2**30)
    rtt_us: float = Field(default=10.0, gt=0, le=1e7)  # a LAN's round trip, as the step gap (assumption)

    def native_keys(self) -> dict:
        return {"tcp_windows": True, "tcp_initial_window": self.initial_window,
                "tcp_receive_window_bytes": self.receive_window_bytes, "tcp_rtt_s": self.rtt_us * 1e-6}


class LbFlowMix(ScenarioModel):
    """Popularity of what a unit picks (model/lb/model/lb-testers.h): the
    persistent connection of an http11 transaction, the service of an
    http10 connection or a DNS query. round_robin is the report's rotation;
    zipf gives rank k the weight k^-zipf_exponent."""

    popularity: Literal["round_robin", "uniform", "zipf"] = "round_robin"
    zipf_exponent: NonNegativeFloat = 1.0

    def native_keys(self) -> dict:
        if self.popularity == "round_robin":
            return {}
        return {"flow_popularity": self.popularity, "zipf_exponent": self.zipf_exponent}


class EcmpWhatIf(ScenarioModel):
    """N instances of a pool's balancer behind a router's ECMP route to the
    VIP; one instance fails or one is added (model/lb/helper/lb-ecmp.h: the
    router's hash-threshold or resilient group, each instance's own dp_sess
    table and dp_sched pool)."""

    instances: int = Field(default=4, ge=1, le=256)  # N before the change (each holds a Maglev table)
    action: Literal["fail", "add"] = "fail"  # instance `instance` fails, or instance N joins
    instance: int = Field(default=0, ge=0, le=255)  # the one that fails (group order)
    # RFC 2992 hash-threshold (Linux's default group) or a resilient group (ip nexthop ... type resilient)
    mode: Literal["hash-threshold", "resilient"] = "hash-threshold"
    hash: Literal["l3", "l4"] = "l3"  # Linux fib_multipath_hash_policy 0 (addresses, the default) or 1 (5-tuple)
    buckets: int = Field(default=128, ge=1, le=65535)  # resilient: ip-nexthop(8)'s default 128
    # resilient: Linux migrates an overweight member's busy buckets only when the
    # unbalanced timer expires (default 0: never): "idle"; "forced": at once
    rebalance: Literal["idle", "forced"] = "idle"
    # the group members' weights (ip nexthop add id N group 1,W1/2,W2), one per
    # instance that ever exists (action add: the added one last); Linux keeps
    # weight - 1 in struct nexthop_grp's __u8: 1..256. None: all equal
    weights: list[Annotated[int, Field(ge=1, le=256)]] | None = None
    # None: the pool's (IPVS -g dr, -i tunnel, -m fullnat; HAProxy: proxy)
    forwarding: Literal["dr", "tunnel", "fullnat", "proxy"] | None = None

    @model_validator(mode="after")
    def _consistent(self):
        if self.action == "fail" and self.instances < 2:
            raise FieldError(("instances",), "one instance fails: at least 2 instances are needed")
        if self.action == "fail" and self.instance >= self.instances:
            raise FieldError(("instance",), f"instance {self.instance} of {self.instances} (numbered from 0)")
        if self.action == "add" and "instance" in self.model_fields_set:
            raise FieldError(("instance",), "action add adds instance N: 'instance' names one that fails")
        members = self.instances + (self.action == "add")
        if self.weights is not None and len(self.weights) != members:
            raise FieldError(("weights",), f"{len(self.weights)} weights for {members} instances"
                             + (" (action add: the added one's weight last)" if self.action == "add" else ""))
        if self.mode == "resilient" and self.buckets < members:
            raise FieldError(("buckets",), f"a resilient group needs a bucket per member ({members})")
        if self.mode != "resilient" and {"buckets", "rebalance"} & self.model_fields_set:
            raise FieldError(("buckets",) if "buckets" in self.model_fields_set else ("rebalance",),
                             "buckets and rebalance belong to mode: resilient")
        return self


class CalibratedValue(ScenarioModel):
    """A workload value measured on the user's system, not assumed: the
    record `routertwin import haproxy CONFIG --stat STAT.csv` writes beside
    it (routertwin.importers.haproxy_stat.workloads). `role: calibrate` as in
    validation/reference.csv: the what-if takes it as input and nothing may
    treat it as a prediction."""

    role: Literal["calibrate"]
    value: float
    sd: float = Field(ge=0)  # one standard deviation, the value's unit
    how: str = Field(min_length=1)
    sources: list[str] = Field(min_length=1)  # FILE:LINE: column N 'name' = value (backend/server)


class TimedWhatIf(ScenarioModel):
    """A pool under a connection workload while a server drains, is removed
    or is added, timed (model/lb/helper/lb-timed.h): Poisson arrivals of
    `rate` per second, lifetimes from a distribution (milliseconds), the
    change at `at_s`, replicated over `replications` seeds
    (routertwin.validation.intervals.replication_seeds). The pool's maxconn,
    maxqueue, timeout queue (else timeout connect), option redispatch and
    cookie insert act as HAProxy's."""

    rate: float = Field(default=100.0, gt=0, le=1e5)  # connections/s (an assumption: not in a configuration)
    lifetime: Literal["exponential", "pareto", "lognormal"] = "exponential"
    lifetime_mean_ms: float = Field(default=1000.0, gt=0, le=3.6e6)  # exponential
    pareto_alpha: float = Field(default=2.5, gt=1, le=100)  # P(L > x) = (xm / x)^alpha
    pareto_min_ms: float = Field(default=600.0, ge=1, le=1e9)  # xm
    lognormal_mu: float = Field(default=6.5, ge=0, le=20)  # ln(L / 1 ms) ~ N(mu, sigma^2)
    lognormal_sigma: float = Field(default=0.8, gt=0, le=5)
    warmup_s: float = Field(default=20.0, ge=0)  # the "before" window: [warmup_s, at_s)
    at_s: float = Field(default=60.0, ge=0)  # the drain, removal or addition
    settle_s: float = Field(default=20.0, ge=0)  # the "after" window: [at_s + settle_s, end_s)
    end_s: float = Field(default=120.0, gt=0, le=86400)  # arrivals stop, the run ends
    replications: int = Field(default=20, ge=1, le=1000)
    sample_s: float = Field(default=0.0, ge=0)  # > 0: the changed server's connections every sample_s (<id>-t-<k>)
    # None: the pool's (cookie insert with a cookie on every server: cookie)
    persistence: Literal["none", "cookie"] | None = None
    clients: int | None = Field(default=None, ge=1, le=1 << 24)  # cookie: clients (default 10 per server)
    # which of rate and lifetime_mean_ms were measured (show stat) rather than assumed
    calibrate: dict[Literal["rate", "lifetime_mean_ms"], CalibratedValue] | None = None

    @model_validator(mode="after")
    def _windows(self):
        for key, record in (self.calibrate or {}).items():
            value = getattr(self, key)
            if not math.isclose(value, record.value, rel_tol=1e-9):
                raise FieldError(("calibrate", key), f"{key} is {value:g} but its calibrate record measured "
                                                     f"{record.value:g}: edit both, or delete calibrate.{key} "
                                                     f"to make {key} an assumption")
        if not (self.warmup_s <= self.at_s and self.at_s + self.settle_s < self.end_s):
            raise FieldError(("at_s",), "needs warmup_s <= at_s and at_s + settle_s < end_s")
        # a law's parameter given for another law would be silently unused
        for key in sorted(self.model_fields_set):
            law = next((law for law, keys in _LIFETIME_KEYS.items() if key in keys), self.lifetime)
            if law != self.lifetime:
                raise FieldError((key,), f"{key} is the {law} lifetime's, not {self.lifetime}'s")
        return self


class TableFillWhatIf(ScenarioModel):
    """How full a balancer's connection table gets (runners/lb/tablefill.py):
    `limit` connections held at most (HAProxy: the frontend's maxconn, else
    global maxconn; IPVS: `memory_bytes` / bytes_per_connection), each held
    an exponential lifetime of mean lifetime_mean_ms plus linger_ms; beyond
    the limit up to `accept_queue` wait (HAProxy: the kernel's accept queue of
    the paused listener) and the rest are refused (`overflow`: the kernel drops
    the handshake, or resets it with tcp_abort_on_overflow=1). Offered at
    `load_factors` x limit / holding time connections per second."""

    limit: int | None = Field(default=None, ge=1, le=2**31 - 1)  # None: memory_bytes // bytes_per_connection
    limit_source: str = Field(min_length=1)  # where the limit comes from (FILE:LINE or the assumption)
    bytes_per_connection: int = Field(ge=1, le=2**30)
    bytes_source: str = Field(min_length=1)  # what the bytes count and where the number comes from
    memory_bytes: int | None = Field(default=None, ge=1, le=2**50)  # IPVS: memory given to the entries
    accept_queue: int = Field(default=0, ge=0, le=2**31 - 1)
    queue_source: str = "no queue"
    overflow: Literal["drop", "reset"] = "drop"
    # what a refusal is on the real system and where it is counted there; the twin's counter name
    refused_as: str = "refused"
    counter: str = Field(default="refused", pattern=r"^[a-z][a-z0-9_]*$")
    lifetime_mean_ms: float = Field(default=1000.0, gt=0, le=3.6e6)  # an assumption, as timed's
    linger_ms: float = Field(default=0.0, ge=0, le=3.6e6)  # IPVS: TIME_WAIT/FIN_WAIT entry lifetime
    load_factors: list[Annotated[float, Field(gt=0, le=100)]] = Field(
        default_factory=lambda: [0.5, 0.9, 1.0, 1.25, 2.0], min_length=1, max_length=20)
    # the simulated span per load factor, in holding times (after a warm-up of 3)
    measure_holdings: float = Field(default=12.0, gt=0, le=1000)

    @model_validator(mode="after")
    def _limit_or_memory(self):
        if (self.limit is None) == (self.memory_bytes is None):
            raise FieldError(("limit",), "give 'limit' (connections) or 'memory_bytes' (IPVS), one of them")
        if self.held_limit() > 10_000_000:
            raise FieldError(("limit",) if self.limit else ("memory_bytes",),
                             f"{self.held_limit()} connections: the simulation follows at most 10,000,000")
        return self

    def held_limit(self) -> int:
        return self.limit if self.limit is not None else self.memory_bytes // self.bytes_per_connection


class SplitRequest(ScenarioModel):
    """One request of a URL mix: its target as on the request line and its Host header."""

    url: str = Field(pattern=r"^/[\x21-\x7e]*$", max_length=8000)  # origin form: /path[?query]
    # '': no Host header; ',' separates values, as HAProxy's hdr(host) reads them (base: the first)
    host: str = Field(default="", pattern=r"^[\x21-\x7e]*$", max_length=1000)
    count: int = Field(default=1, ge=1, le=10**9)  # how many of the mix's requests are this one


class SplitWhatIf(ScenarioModel):
    """A URL mix routed by a service's content-switching rules (runners/lb/content.py)."""

    requests: list[SplitRequest] = Field(min_length=1, max_length=100000)


_LIFETIME_KEYS = {"exponential": ("lifetime_mean_ms",), "pareto": ("pareto_alpha", "pareto_min_ms"),
                  "lognormal": ("lognormal_mu", "lognormal_sigma")}


class Case(ScenarioModel):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    method: Literal["step", "tolly", "fill", "remap", "max-cps", "max-tps", "max-concurrent", "failover",
                    "ecmp", "timed", "tablefill", "split"] = "step"
    rate: Rate | None = None  # step: units/s
    steps: list[Rate] | None = None  # tolly: the load steps, units/s
    saturation: bool = True  # tolly: also run to true saturation
    cores: int | None = Field(default=None, ge=1, le=4096)  # what-if: application cores
    syn_cookies: bool | None = None  # default: the scenario's
    legit_rate: NonNegativeFloat | None = None  # synflood: legitimate connections/s beside the flood
    response_bytes: int | None = Field(default=None, ge=0, le=1460)
    sessions_per_core: int | None = Field(default=None, ge=2, le=2**28)  # fill: the table size
    scheduler: str | None = None  # remap: dp_sched algorithm (default: the platform's)
    servers: int | None = Field(default=None, ge=2, le=4096)  # remap: pool size
    keys: int | None = Field(default=None, ge=1, le=10**7)  # remap and ecmp: connections
    pool: str | None = None  # remap: a pool of the scenario's balancer (its scheduler and size)
    server: str | None = None  # remap: the server of that pool that fails (default its first)
    # remap: "fail" (`server` goes down), "drain" (it drains: established connections
    # stay, new ones go elsewhere) or "add" (a new server joins the pool, with
    # `weight`, default its first server's); timed: "drain" (the default),
    # "remove" (it leaves, its connections cut), "add" or "none" (steady state)
    action: Literal["fail", "drain", "add", "remove", "none"] | None = None
    weight: int | None = Field(default=None, ge=1, le=65535)  # remap/timed add: the new server's weight
    # max-cps, max-tps (units/s) and max-concurrent (connections of the box):
    # the target objective of RFC 9411 7.x.4 (qualification at 10 % of it)
    target: PositiveFloat | None = Field(default=None, le=1e10)
    resolution: float = Field(default=0.005, gt=0, lt=1)  # max-*: final bracket, relative
    sustain_tolerance: float = Field(default=0.005, ge=0, lt=1)  # max-cps/max-tps: units not completed
    forwarding: Literal["fullnat", "dr", "tunnel"] | None = None  # default: the platform's
    # failover: the keys of routertwin._core.run_lb_failover (health checks,
    # retries/redispatch, balancer redundancy, persistence;
    # model/lb/helper/lb-failover.h), checked there
    failover: dict[str, bool | int | float | str] | None = None
    # ecmp: balancer instances behind a router's ECMP (with `pool`, or `scheduler` and `servers`)
    ecmp: EcmpWhatIf | None = None
    # timed: the workload and the timing of a drain/remove/add (with `pool`, or `scheduler` and `servers`)
    timed: TimedWhatIf | None = None
    # tablefill: the connection table against memory and new-connection rate (runners/lb/tablefill.py)
    tablefill: TableFillWhatIf | None = None
    # split: which pool each request of a URL mix goes to under `service`'s content switching
    service: str | None = None
    split: SplitWhatIf | None = None

    @model_validator(mode="after")
    def _keys_of_method(self):
        if self.method == "step" and self.rate is None:
            raise FieldError(("rate",), "a step case needs 'rate' (units/s)")
        if self.method == "tolly" and (self.steps is None or len(self.steps) < 3 or len(set(self.steps)) < 2):
            # the line's covariance needs n - 2 >= 1 degrees of freedom
            raise FieldError(("steps",), "a tolly case needs at least three load steps, not all equal, in 'steps'")
        if self.method != "step" and self.rate is not None:
            raise FieldError(("rate",), f"'rate' belongs to step cases, not {self.method}")
        if self.method != "tolly" and self.steps is not None:
            raise FieldError(("steps",), f"'steps' belongs to tolly cases, not {self.method}")
        if self.method.startswith("max-") and self.target is None:
            raise FieldError(("target",), f"a {self.method} case needs 'target', the target objective "
                                          "(RFC 9411 7.x.4: qualification at 10 % of it, then the search)")
        if not self.method.startswith("max-") and self.target is not None:
            raise FieldError(("target",), f"'target' belongs to max-cps/max-tps/max-concurrent cases, "
                                          f"not {self.method}")
        if self.action is None:
            self.action = "drain" if self.method == "timed" else "fail"
        if self.method not in ("remap", "ecmp", "timed") and self.pool is not None or \
                self.method not in ("remap", "timed") and self.server is not None:
            raise FieldError(("pool",) if self.pool is not None else ("server",),
                             f"'pool' and 'server' belong to remap and timed cases ('pool' also to ecmp), "
                             f"not {self.method}")
        if self.method != "timed" and self.timed is not None:
            raise FieldError(("timed",), f"'timed' belongs to timed cases, not {self.method}")
        if self.method == "timed":
            if self.timed is None:
                self.timed = TimedWhatIf()
            if self.action == "fail":
                raise FieldError(("action",), "a timed case drains, removes or adds a server (or none)")
            if self.pool is None and self.scheduler is None:
                raise FieldError(("method",), "a timed case needs 'pool' (a pool of `balancer`) or 'scheduler'")
        elif self.action in ("remove", "none"):
            raise FieldError(("action",), f"action {self.action} belongs to timed cases")
        if (self.method == "tablefill") != (self.tablefill is not None):
            raise FieldError(("tablefill",) if self.tablefill is not None else ("method",),
                             f"'tablefill' belongs to tablefill cases, not {self.method}"
                             if self.tablefill is not None else "a tablefill case needs 'tablefill' (its limit, "
                             "bytes per connection and their sources)")
        if (self.method == "ecmp") != (self.ecmp is not None):
            raise FieldError(("ecmp",) if self.ecmp is not None else ("method",),
                             f"'ecmp' belongs to ecmp cases, not {self.method}" if self.ecmp is not None
                             else "an ecmp case needs 'ecmp' (its instances, action, mode, hash)")
        if self.method == "split" and (self.service is None or self.split is None):
            raise FieldError(("method",), "a split case needs 'service' (a service of `balancer`) and 'split' "
                                          "(its requests)")
        for key in ("service", "split"):
            if self.method != "split" and getattr(self, key) is not None:
                raise FieldError((key,), f"'{key}' belongs to split cases, not {self.method}")
        if self.method == "ecmp" and self.keys is not None and self.keys > 2_000_000:
            raise FieldError(("keys",), "an ecmp case follows at most 2,000,000 connections")
        if self.method == "ecmp" and self.pool is None and self.scheduler is None:
            raise FieldError(("method",), "an ecmp case needs 'pool' (a pool of `balancer`) or 'scheduler'")
        if self.pool is not None and (self.scheduler is not None or self.servers is not None):
            raise FieldError(("pool",), "a remap case takes 'pool' or 'scheduler'/'servers', not both")
        if self.method not in ("remap", "timed") and (self.action != "fail" or self.weight is not None):
            raise FieldError(("action",) if self.action != "fail" else ("weight",),
                             f"'action' and 'weight' belong to remap and timed cases, not {self.method}")
        if self.weight is not None and self.action != "add":
            raise FieldError(("weight",), "'weight' is the added server's: it needs action: add")
        if self.action == "add" and self.server is not None:
            raise FieldError(("server",), "action add adds a server: 'server' names one that fails or drains")
        if self.action == "none" and self.server is not None:
            raise FieldError(("server",), "action none changes no server")
        if self.server is not None and self.pool is None:
            raise FieldError(("server",), "'server' names a server of 'pool': give the pool too")
        if self.method != "failover" and self.failover is not None:
            raise FieldError(("failover",), f"'failover' belongs to failover cases, not {self.method}")
        if self.method == "max-concurrent" and self.target is not None and self.target < 10:
            raise FieldError(("target",), "at least 10 connections (the qualification opens 10 % of them)")
        return self


class Schema(ScenarioModel):
    # the platform profile: needed by every case but failover cases and remap
    # cases on a pool of `balancer` (or with their own scheduler)
    platform: ScenarioPath | None = None
    # a real balancer's services and pools (routertwin import haproxy|ipvs; runners/lb/balancer.py)
    balancer: Balancer | None = None
    fitted: ScenarioPath | None = None  # fitted prices (scenarios/platforms/fitted/adx.yaml)
    workload: Workload = "http11"
    syn_cookies: bool = False
    legit_rate: NonNegativeFloat = 0.0  # synflood: the report's 1,200 legitimate TPS
    flood_ports: int = Field(default=8, ge=1, le=1024)  # synflood: ports carrying the attack
    # unit starts (connections, transactions, queries): constant, Poisson, or
    # bursty: on/off bursts (geometric, mean burst_mean_units, at
    # burst_peak_ratio x the rate) or a two-state MMPP (traffic-profile.h)
    arrivals: Literal["constant", "poisson", "onoff", "mmpp"] = "constant"
    burst_mean_units: float = Field(default=16.0, ge=1)
    burst_peak_ratio: float = Field(default=4.0, gt=1, le=1e6)
    mmpp_rate_ratio: float = Field(default=4.0, ge=1)
    mmpp_high_fraction: float = Field(default=0.2, gt=0, lt=1)
    mmpp_cycle_us: PositiveFloat = 1000.0
    # HTTP request / response bytes drawn per unit (http11, http10), instead
    # of the platform's fixed sizes; segmented by `mss` (PayloadSizes)
    request_sizes: PayloadSizes | None = None
    response_sizes: PayloadSizes | None = None
    # TCP payload a segment: Ethernet MTU 1500 - 40; up to 8960, a 9000-byte jumbo MTU's
    mss: int = Field(default=1460, ge=1, le=8960)
    tcp_window: TcpWindow | None = None  # responses under TCP windows (slow start, receive window)
    flow_mix: LbFlowMix | None = None  # popularity of connections (http11) or services (http10, dns)
    trace: ConnectionTrace | None = None  # http10: connections from a capture
    rate_table_sessions_per_core: int = Field(default=65536, ge=2, le=2**28)
    # Closing (model/lb/model/l4-balancer.h): TIME_WAIT linger, 0 = removed at
    # the last ACK (the ADX profile); IPVS keeps it 120 s. FIN_WAIT timeout:
    # where DR and tunnel connections end (IPVS 120 s).
    time_wait_s: NonNegativeFloat = Field(default=0.0, le=2e6)
    fin_wait_s: PositiveFloat = Field(default=120.0, ge=1e-3, le=2e6)
    # > 0: step cases also report the connections held every this many us
    # (cases <id>-occ-<k>: the table's occupancy over time)
    occupancy_sample_us: NonNegativeFloat = 0.0
    # descriptor: frames as descriptors through the balancer device; packet:
    # real ns3::Packets between a tester node and the balancer node over the
    # platform's ports (every workload; docs/adx.md section 8)
    level: Literal["descriptor", "packet"] = "descriptor"
    link_delay_ns: NonNegativeFloat = Field(default=0.0, le=1e9)  # packet level: each cable's delay
    duration_us: float = Field(default=2000.0, gt=0, le=MAX_DURATION_US)
    warmup_us: NonNegativeFloat = 200.0
    cases: list[Case] = Field(default_factory=list)  # at least one, unless `balancer` is given

    @field_validator("time_wait_s")
    @classmethod
    def _whole_milliseconds(cls, v: float) -> float:
        if 0 < v < 1e-3:
            raise ValueError("must be 0 or at least 0.001 s (the session table counts milliseconds)")
        return v

    @field_validator("warmup_us")
    @classmethod
    def _warmup_leaves_a_window(cls, v: float, info: ValidationInfo) -> float:
        duration = info.data.get("duration_us")
        if duration is not None and v >= duration:
            raise ValueError(f"warmup_us {v:g} must be smaller than duration_us {duration:g}")
        return v

    @model_validator(mode="after")
    def _window_holds_two_segments(self):
        if self.tcp_window is not None and self.tcp_window.receive_window_bytes < 2 * self.mss:
            # the client acknowledges every second segment: a window of one
            # would wait for a delayed-ACK timer the model does not have
            raise FieldError(("tcp_window", "receive_window_bytes"),
                             f"must hold two segments of mss {self.mss} (>= {2 * self.mss})")
        return self

    @model_validator(mode="after")
    def _sizes_are_http(self):
        for key in ("request_sizes", "response_sizes"):
            if getattr(self, key) is not None and self.workload not in ("http11", "http10"):
                raise FieldError((key,), f"request and response sizes are those of http11 and http10 units, "
                                         f"not {self.workload}")
        return self

    @model_validator(mode="after")
    def _trace_is_http10(self):
        if self.trace is not None:
            if self.workload != "http10":
                raise FieldError(("trace",), f"a trace's connections are http10 units, not {self.workload}")
            if self.response_sizes is not None or self.request_sizes is not None:
                raise FieldError(("trace",), "a trace brings its own request and response sizes")
        return self

    @model_validator(mode="after")
    def _distinct_ids(self):
        if not self.cases and self.balancer is None:
            raise FieldError(("cases",), "at least one case (or a `balancer` to describe)")
        for i, c in enumerate(self.cases):
            needs_platform = not (c.method in ("remap", "ecmp", "timed")
                                  and (c.pool is not None or c.scheduler is not None)
                                  or c.method in ("failover", "tablefill", "split"))
            if needs_platform and self.platform is None:
                raise FieldError(("cases", i), f"case '{c.id}' ({c.method}) needs the platform profile: "
                                               "give `platform` (only remap cases run without one)")
            if c.pool is not None:
                pool = self.balancer.pool(c.pool) if self.balancer is not None else None
                if pool is None:
                    raise FieldError(("cases", i, "pool"), f"no pool named '{c.pool}' in `balancer`")
                if pool.scheduler is None:
                    raise FieldError(("cases", i, "pool"),
                                     f"pool '{c.pool}' has no scheduler the twin models (see the import's list)")
                usable = [s for s in pool.servers if not s.disabled and not s.backup and s.weight > 0]
                need = 2 if c.method == "remap" or c.method == "timed" and c.action in ("drain", "remove") else 1
                if len(usable) < need:
                    raise FieldError(("cases", i, "pool"),
                                     f"pool '{c.pool}' has {len(usable)} usable active servers: a {c.method} needs "
                                     f"{need}")
                if c.server is not None and c.server not in {s.name for s in usable}:
                    raise FieldError(("cases", i, "server"),
                                     f"no usable active server '{c.server}' in pool '{c.pool}'")
            if c.service is not None:
                svc = self.balancer.service(c.service) if self.balancer is not None else None
                if svc is None:
                    raise FieldError(("cases", i, "service"), f"no service named '{c.service}' in `balancer`")
                if svc.rules_not_modelled is not None:
                    raise FieldError(("cases", i, "service"), f"service '{c.service}': its routing is not "
                                                              f"modelled: {svc.rules_not_modelled}")
        seen: set[str] = set()
        for i, c in enumerate(self.cases):
            if c.id in seen:
                raise FieldError(("cases", i, "id"), f"case id '{c.id}' appears twice")
            seen.add(c.id)
        return self
