"""Keys of a `webswitch` scenario (docs/nctu.md). Unknown keys are errors."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from routertwin.runners.lb.schema import ConnectionTrace
from routertwin.scenario_loader import FieldError, ScenarioModel, ScenarioPath


class Ns3Options(ScenarioModel):
    # Simulated seconds before the measured window (TCP windows open, every
    # thread in its loop) and of the window itself.
    warmup_s: float = Field(default=0.2, ge=0.0, le=60.0)
    duration_s: float = Field(default=1.0, gt=0.0, le=600.0)
    # open_loop only: simulated seconds after the window in which the
    # requests that arrived in it may still be answered (their response
    # times count; those still waiting are `unanswered`)
    drain_s: float = Field(default=0.5, ge=0.0, le=600.0)


class OpenLoop(ScenarioModel):
    """Open-loop offered requests instead of WebBench's closed loop (issue
    16; engine ns3): requests arrive at each `offered_rps` (a case each,
    suffix -o<rps>) by the arrival process the lb kind uses
    (model/testers/model/traffic-profile.h ArrivalProcess: constant,
    Poisson, on/off bursts of a geometric number of requests at
    burst_peak_ratio x the rate, or a two-state MMPP), each request a new
    HTTP/1.0 connection from the client PCs in turn, for a file class drawn
    by `popularity`: the testbed's shares (WebBench's mix), uniform over the
    classes, or Zipf (class k as listed in the testbed, rank k + 1, weight
    (k + 1)^-zipf_exponent; traffic-profile.h FlowPicker)."""

    arrivals: Literal["constant", "poisson", "onoff", "mmpp"] = "poisson"
    offered_rps: list[Annotated[float, Field(gt=0, le=1e6)]] = Field(min_length=1)
    burst_mean_requests: float = Field(default=16.0, ge=1)
    burst_peak_ratio: float = Field(default=4.0, gt=1, le=1e6)
    mmpp_rate_ratio: float = Field(default=4.0, ge=1)
    mmpp_high_fraction: float = Field(default=0.2, gt=0, lt=1)
    mmpp_cycle_s: float = Field(default=0.1, gt=0, le=600)
    popularity: Literal["shares", "uniform", "zipf"] = "shares"
    zipf_exponent: float = Field(default=1.0, ge=0, le=100)
    # requests from a capture instead (ConnectionTrace; C++ ReadHttpTrace):
    # each IPv4 TCP connection opens at its SYN's instant (rescaled so its
    # requests come at each offered_rps, or as captured) and sends its HTTP
    # requests on it one after another (keep-alive) after the captured think
    # times, each the captured target, Host and version as the C core's
    # HTTP parser reads them, for a body of the exchange's server payload
    # less the testbed's response head; looped to the window's end
    # (docs/workloads.md)
    trace: ConnectionTrace | None = None

    @model_validator(mode="after")
    def _trace_brings_arrivals_and_sizes(self):
        if self.trace is not None:
            for key in ("arrivals", "popularity"):
                if key in self.model_fields_set:
                    raise FieldError((key,), f"a trace brings its own instants and sizes: no {key}")
        return self

    @model_validator(mode="after")
    def _rates_once(self):
        if len(set(self.offered_rps)) != len(self.offered_rps):
            raise FieldError(("offered_rps",), f"a rate is listed twice: {self.offered_rps}")
        return self

    def native_keys(self, rps: float) -> dict:
        """run_webbench_testbed's keys of one offered rate."""
        return {"arrivals": self.arrivals, "offered_rps": rps, "burst_mean_requests": self.burst_mean_requests,
                "burst_peak_ratio": self.burst_peak_ratio, "mmpp_rate_ratio": self.mmpp_rate_ratio,
                "mmpp_high_fraction": self.mmpp_high_fraction, "mmpp_cycle_s": self.mmpp_cycle_s,
                "popularity": self.popularity, "zipf_exponent": self.zipf_exponent,
                **({"trace_file": str(self.trace.file), "trace_rescale": self.trace.rescale} if self.trace else {})}


class Schema(ScenarioModel):
    # The testbed and workload profile (scenarios/workloads/webbench-nctu.yaml).
    testbed: ScenarioPath
    # One or more product profiles (scenarios/platforms/nctu-*.yaml): each
    # runs every case of the scenario.
    products: list[ScenarioPath] = Field(min_length=1)
    # l4: the switch balances connections (round robin); l7: URL switching
    # with delayed binding (seed 003 sections 3.3, 3.4).
    mode: Literal["l4", "l7"]
    # dr: servers answer clients directly (figure 4); nat: everything passes
    # the switch (figure 5). L7 is always nat (section 3.4).
    forwarding: Literal["dr", "nat"] = "nat"
    # WebBench client PCs and servers (section 3.3: 14 and 8; section 3.4: 6).
    clients: int = Field(default=14, ge=1, le=1000)
    servers: int = Field(default=8, ge=1, le=1000)
    # WebBench mixes: client PCs sending in each (increasing, at most
    # `clients`), as WebBench steps its load; each mix a case (suffix
    # -c<PCs>). Without it, one mix of every client PC.
    mixes: list[Annotated[int, Field(ge=1, le=1000)]] | None = None
    # HTTP versions to run; with both, each product also reports the
    # HTTP/1.1 gain over HTTP/1.0 (figure 9).
    http: list[Literal["1.0", "1.1"]] = Field(default=["1.1"], min_length=1)
    # URL rules configured (l7): .gif, .htm, padding extension rules, the
    # default (section 3.4: 3 and 50). With several, each product also
    # reports the drop from the fewest to the most (figures 10, 11). At most
    # 10,000: the padding rules are three-letter extensions (17,576 names),
    # and every request runs them all through the C core once per file class.
    rules: list[Annotated[int, Field(ge=3, le=10_000)]] = [3]
    # cookie: section 3.5's cookie-persistence test instead of URL
    # switching: the testbed's cookie_test page on every server (no content
    # partition), each product persisting by its cookie_method_tested
    # (figure 12). Mode l7 only; no URL rules.
    persistence: Literal["none", "cookie"] = "none"
    # mva: the testbed as a closed queueing network solved exactly (the
    # default); ns3: the testbed at packet level, WebBench threads on ns-3's
    # TCP through the ns-3 web switch of model/l7 (docs/nctu.md "The ns-3
    # engine"), the same profiles and testbed numbers.
    engine: Literal["mva", "ns3"] = "mva"
    # engine ns3 only: the simulated warm-up and measured window.
    ns3: Ns3Options | None = None
    # engine ns3 only: open-loop requests (OpenLoop) instead of WebBench's
    # closed-loop threads; http 1.0 only, no mixes, no cookie test
    open_loop: OpenLoop | None = None

    @model_validator(mode="after")
    def _consistent(self):
        if self.mode == "l7" and self.forwarding == "dr":
            raise FieldError(("forwarding",), "L7 switching terminates both connections: the responses pass the "
                                              "switch, so forwarding is nat (seed 003 section 3.4)")
        if self.mode == "l4" and self.rules != [3]:
            raise FieldError(("rules",), "URL rules apply to mode l7 only")
        if self.persistence == "cookie":
            if self.mode != "l7":
                raise FieldError(("persistence",), "cookie persistence reads the HTTP request: mode l7")
            if self.rules != [3]:
                raise FieldError(("rules",), "the cookie test runs no URL rules (seed 003 section 3.5: no content "
                                             "partition)")
        if self.ns3 is not None and self.engine != "ns3":
            raise FieldError(("ns3",), "ns3 options need engine: ns3")
        if self.open_loop is not None:
            if self.engine != "ns3":
                raise FieldError(("open_loop",), "open-loop arrivals run on engine: ns3 (the MVA is a closed network)")
            if self.http != ["1.0"]:
                raise FieldError(("http",), "open-loop requests are one HTTP/1.0 connection each: http: [\"1.0\"]")
            if self.mixes is not None:
                raise FieldError(("mixes",), "mixes step WebBench's closed loop: open_loop steps offered_rps")
            if self.persistence != "none":
                raise FieldError(("persistence",), "the cookie test needs WebBench's clients, not open-loop requests")
        if self.mode == "l7" and self.servers < 2:
            raise FieldError(("servers",), "L7 splits the servers between .gif and .htm: at least 2")
        if self.mixes is not None:
            if self.mixes != sorted(set(self.mixes)):
                raise FieldError(("mixes",), f"mixes must increase, each listed once: {self.mixes}")
            if self.mixes[-1] > self.clients:
                raise FieldError(("mixes",), f"a mix of {self.mixes[-1]} client PCs is more than clients "
                                             f"{self.clients}")
        for key in ("http", "rules"):
            values = getattr(self, key)
            if len(set(values)) != len(values):
                raise FieldError((key,), f"a value is listed twice: {values}")
        return self
