"""Keys of a `webswitch` scenario (docs/nctu.md). Unknown keys are errors."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from routertwin.scenario_loader import FieldError, ScenarioModel, ScenarioPath


class Ns3Options(ScenarioModel):
    # Simulated seconds before the measured window (TCP windows open, every
    # thread in its loop) and of the window itself.
    warmup_s: float = Field(default=0.2, ge=0.0, le=60.0)
    duration_s: float = Field(default=1.0, gt=0.0, le=600.0)


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
