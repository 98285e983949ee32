"""The NCTU testbed and WebBench workload profile
(scenarios/workloads/webbench-nctu.yaml) and the per-request arithmetic of
its traffic: segments, ACKs, wire bytes, from the file set of seed 003's
appendix 4."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from routertwin.runners._shared.profiles import load_profile
from routertwin.scenario_loader import FieldError, ScenarioModel

Group = Literal["gif", "htm", "other"]  # which URL rule of the paper's section 3.4 takes the request


class FileClass(ScenarioModel):
    name: str
    bytes: int = Field(ge=0, le=10**9)  # body bytes of a response
    share: float = Field(gt=0)  # share of requests (normalised over the classes)
    group: Group


class Client(ScenarioModel):
    threads: int = Field(ge=1, le=64)  # WebBench worker threads per client PC
    cpu_per_request_us: float = Field(ge=0, le=1e5)
    cpu_per_connection_us: float = Field(ge=0, le=1e5)


class Server(ScenarioModel):
    cpu_per_request_us: float = Field(ge=0, le=1e5)
    cpu_per_connection_us: float = Field(ge=0, le=1e5)


class Network(ScenarioModel):
    host_link_bps: float = Field(gt=0, le=1e12)
    uplink_bps: float = Field(gt=0, le=1e12)
    frame_overhead_bytes: int = Field(ge=0, le=100)
    header_bytes: int = Field(ge=20, le=120)  # IP + TCP header bytes of a segment
    mss_bytes: int = Field(ge=88, le=9000)
    ack_every_segments: int = Field(ge=1, le=16)
    l2_switch_latency_us: float = Field(ge=0, le=1e4)
    host_round_trip_us: float = Field(ge=0, le=1e5)


class CookieTest(ScenarioModel):
    """The workload of the cookie-persistence test (seed 003 section 3.5):
    one ASP page that sends the client a cookie, no content partition."""

    page_bytes: int = Field(ge=0, le=10**9)  # body bytes of the page
    server_cpu_per_request_us: float = Field(ge=0, le=1e6)  # the page run by IIS (replaces server.cpu_per_request_us)
    set_cookie_bytes: int = Field(ge=0, le=8192)  # one Set-Cookie header line of a response
    cookie_bytes: int = Field(ge=0, le=8192)  # the Cookie header line a request carries back


class Testbed(ScenarioModel):
    workload: str
    file_classes: list[FileClass] = Field(min_length=1)
    url_prefix: str = Field(pattern=r"^/")  # the folder of the file set on the servers
    request_bytes: int = Field(ge=16, le=65536)
    response_header_bytes: int = Field(ge=0, le=65536)
    client: Client
    server: Server
    network: Network
    cookie_test: CookieTest | None = None

    @model_validator(mode="after")
    def _request_fits_a_segment(self):
        if self.request_bytes > self.network.mss_bytes:
            raise FieldError(("request_bytes",), f"{self.request_bytes} bytes do not fit one segment of "
                                                  f"network.mss_bytes {self.network.mss_bytes}: the twin sends a "
                                                  "request as one segment")
        return self


def load_testbed(path: Path) -> Testbed:
    return load_profile(Path(path), Testbed)


COOKIE_PAGE = "cookie.asp"  # the cookie test's one page (its name only lengthens no rule: no URL rules run)


def cookie_testbed(tb: Testbed, switch_inserts: bool) -> Testbed:
    """The testbed as the cookie test runs it (section 3.5): every request
    asks for the one ASP page (group "other": any server, no content
    partition), carries its cookie back, and the response carries the
    page's Set-Cookie (and a second one when the switch inserts its own)."""
    ct = tb.cookie_test
    if ct is None:
        raise ValueError(f"testbed {tb.workload!r} has no cookie_test section")
    headers = tb.response_header_bytes + ct.set_cookie_bytes * (2 if switch_inserts else 1)
    return tb.model_copy(update={
        "file_classes": [FileClass(name=COOKIE_PAGE, bytes=ct.page_bytes, share=1.0, group="other")],
        "request_bytes": tb.request_bytes + ct.cookie_bytes,
        "response_header_bytes": headers,
        "server": tb.server.model_copy(update={"cpu_per_request_us": ct.server_cpu_per_request_us}),
    })


@dataclass(frozen=True)
class Traffic:
    """Mean traffic of one request and its response on a kept-alive
    connection (no handshake), over the file classes' shares."""

    response_bytes: float  # HTTP response (headers + body)
    response_segments: float  # data segments of a response
    response_wire_bytes: float  # on an Ethernet wire: segments with headers and framing
    request_wire_bytes: float  # the request, one segment
    acks: float  # the client's ACKs of the response (one per ack_every_segments, the last one delayed or piggybacked)
    ack_wire_bytes: float  # one bare ACK on the wire
    group_share: dict[str, float]  # share of requests per rule group (gif, htm, other)

    @property
    def client_to_server_wire_bytes(self) -> float:
        return self.request_wire_bytes + self.acks * self.ack_wire_bytes

    @property
    def packets_client_to_server(self) -> float:
        return 1.0 + self.acks

    @property
    def packets_server_to_client(self) -> float:
        return self.response_segments


def traffic(tb: Testbed, group: str | None = None) -> Traffic:
    """Segment arithmetic per class, weighted by share: a response of b
    bytes is ceil(b / MSS) segments; the client ACKs every
    `ack_every_segments` (RFC 1122), the remainder in one ACK more. With
    `group`, over that group's classes only (its group_share is still of
    all requests)."""
    net = tb.network
    total = sum(c.share for c in tb.file_classes)
    groups: dict[str, float] = {"gif": 0.0, "htm": 0.0, "other": 0.0}
    for c in tb.file_classes:
        groups[c.group] += c.share / total
    classes = [c for c in tb.file_classes if group is None or c.group == group]
    if not classes:
        raise ValueError(f"no file class in group {group!r}")
    total = sum(c.share for c in classes)
    frame = net.header_bytes + net.frame_overhead_bytes
    resp = segs = wire = acks = 0.0
    for c in classes:
        w = c.share / total
        b = c.bytes + tb.response_header_bytes
        n = max(1, math.ceil(b / net.mss_bytes))
        resp += w * b
        segs += w * n
        wire += w * (b + n * frame)
        acks += w * math.ceil(n / net.ack_every_segments)
    return Traffic(response_bytes=resp, response_segments=segs, response_wire_bytes=wire,
                   request_wire_bytes=tb.request_bytes + frame, acks=acks, ack_wire_bytes=float(frame),
                   group_share=groups)


# A TCP connection's control segments on the wire, one side (client or
# server side of the switch): SYN, SYN-ACK, ACK to open (RFC 793 3.4) and
# FIN, ACK, FIN, ACK to close (RFC 793 3.5): 7 bare segments, 4 from the
# opener and 3 from the other end.
HANDSHAKE_SEGMENTS_FROM_OPENER = 4
HANDSHAKE_SEGMENTS_FROM_ACCEPTER = 3
