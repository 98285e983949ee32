"""The `balancer` key of an lb scenario: a real balancer's configuration as
the twin holds it (written by `routertwin import haproxy|ipvs`, editable by
hand): virtual services and the server pools behind them.

What each key means follows HAProxy's configuration manual (2.6, sections
4.2 and 5.2) for HAProxy's names and ipvsadm(8) for IPVS's; the schedulers
are dp_sched's (core/src/dp_sched.c implements HAProxy's and IPVS's picks).
Every key here is one the twin acts on: the scheduler's keys in remap
cases; the health-check, retry and persistence keys in the `failover-POOL`
case the importer writes from them (model/lb/helper/lb-failover.h);
maxconn, maxqueue, timeout queue, redispatch and cookies in the timed
`drain-timed-POOL` case (model/lb/helper/lb-timed.h).
Settings the twin does not act on (option httpchk, timeouts, ...) are not
keys: the importer lists them by line (routertwin.importers.haproxy.SETTINGS).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from routertwin.runners.lb.content import PREDEFINED, Acl, ConditionError, Rule, parse_condition
from routertwin.scenario_loader import FieldError, ScenarioModel

# HAProxy proxy and server names: letters, digits, '-', '_', '.', ':'
# (configuration manual section 4); IPVS services are named by their address.
Name = Field(pattern=r"^[A-Za-z0-9_.:-]+$", max_length=128)
_HOSTNAME = re.compile(r"^(?=.*[A-Za-z])[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$")


def check_host(value: str, *, wildcard: bool) -> str:
    """An IPv4 or IPv6 literal, a DNS name (HAProxy resolves server names at
    start), or '*' (any address; `wildcard` only). A dotted quad out of range
    (256.1.1.1) is an error, not a name."""
    if wildcard and value == "*":
        return value
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        pass
    if re.fullmatch(r"[0-9.]+", value) or not _HOSTNAME.match(value):
        raise ValueError(f"'{value}' is not an IPv4 or IPv6 address{' or *' if wildcard else ''} or a host name")
    return value


def split_endpoint(text: str) -> tuple[str, int | None]:
    """'ADDR:PORT', '[V6]:PORT', 'ADDR' -> (address, port or None)."""
    m = re.fullmatch(r"\[([^\]]+)\](?::(\d+))?", text)
    if m:
        return m.group(1), int(m.group(2)) if m.group(2) else None
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        if not re.fullmatch(r"\d+", port):
            raise ValueError(f"port '{port}' of '{text}' is not a number")
        return host, int(port)
    return text, None


def join_endpoint(address: str, port: int | None) -> str:
    if ":" in address:
        address = f"[{address}]"
    return address if port is None else f"{address}:{port}"


class Server(ScenarioModel):
    name: str = Name
    address: str  # IPv4/IPv6 literal or a host name
    port: int | None = Field(default=None, ge=1, le=65535)  # None: the port the client asked for (HAProxy)
    weight: int = Field(default=1, ge=0, le=65535)  # HAProxy 0..256, IPVS 0..65535
    backup: bool = False  # used only when no active server is usable (HAProxy "backup")
    disabled: bool = False  # starts in maintenance (HAProxy "disabled")
    maxconn: int = Field(default=0, ge=0, le=2**31 - 1)  # concurrent connections, 0 = unlimited
    # HAProxy 5.2 maxqueue: requests that may wait in this server's own queue (cookie-persistent ones, or
    # those a hash sends to it while it is at maxconn); 0 = unlimited
    maxqueue: int = Field(default=0, ge=0, le=2**31 - 1)
    slowstart_ms: float = Field(default=0.0, ge=0, le=86_400_000)  # weight and maxconn ramp after coming up
    # health checks (HAProxy 5.2 check, inter, fastinter, downinter, rise, fall; None: HAProxy's default)
    check: bool = False
    inter_ms: float | None = Field(default=None, gt=0, le=86_400_000)
    fastinter_ms: float | None = Field(default=None, gt=0, le=86_400_000)
    downinter_ms: float | None = Field(default=None, gt=0, le=86_400_000)
    rise: int | None = Field(default=None, ge=1, le=2**31 - 1)
    fall: int | None = Field(default=None, ge=1, le=2**31 - 1)
    cookie: str | None = None  # the value a cookie-persistent pool's clients carry for this server

    @field_validator("address")
    @classmethod
    def _address(cls, v: str) -> str:
        return check_host(v, wildcard=False)


class PoolCookie(ScenarioModel):
    """HAProxy 4.2 'cookie NAME rewrite|insert|prefix [indirect] [nocache]'."""

    name: str
    mode: Literal["rewrite", "insert", "prefix"] = "rewrite"
    indirect: bool = False
    nocache: bool = False


class StickTable(ScenarioModel):
    """HAProxy 4.2 'stick-table type T size N [expire E]'."""

    type: Literal["ip", "ipv6", "integer", "string", "binary"]
    size: int = Field(ge=1)
    expire_ms: float | None = Field(default=None, ge=0)


class Pool(ScenarioModel):
    """An HAProxy backend (or a listen section's servers), or the real servers of an IPVS virtual service."""

    name: str = Name
    mode: Literal["tcp", "http", "udp"] = "tcp"  # udp: IPVS -u services
    # dp_sched algorithm; None: the configuration's algorithm has no dp_sched
    # equivalent (balance url_param, rdp-cookie; IPVS lblc, ...): the importer lists it.
    scheduler: str | None = "roundrobin"
    # HAProxy 4.2 hash-type <method> [<function> [avalanche]]: the function that hashes uri and hdr
    # keys (None: sdbm) and whether full_hash() follows (None: HAProxy's default, yes for consistent,
    # no for map-based; a function given without "avalanche" means no)
    hash_function: Literal["sdbm", "djb2", "wt6", "crc32"] | None = None
    hash_avalanche: bool | None = None
    # balance uri [whole] [len N] [depth N] [path-only]; balance hdr(<name>) [use_domain_only]
    uri_whole: bool = False
    uri_path_only: bool = False
    uri_len: int | None = Field(default=None, ge=1, le=2**31 - 1)
    uri_depth: int | None = Field(default=None, ge=1, le=2**31 - 2)
    hdr_name: str | None = Field(default=None, pattern=r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 token
    hdr_domain_only: bool = False
    allbackups: bool = False  # HAProxy "option allbackups": all backups at once, not the first
    forwarding: Literal["fullnat", "dr", "tunnel"] | None = None  # IPVS -m/-g/-i (None: a proxy, HAProxy)
    # failure handling and persistence (HAProxy 4.2 retries, option redispatch, cookie, stick-table, stick on)
    retries: int | None = Field(default=None, ge=0, le=2**31 - 1)  # None: HAProxy's default, 3
    redispatch: bool = False
    # option redispatch <interval> (HAProxy redispatch_after): P > 0 every P-th retry, N < 0 the N-th retry
    # before the last, 0 none of those; None: HAProxy's default, -1 (the last retry)
    redispatch_after: int | None = Field(default=None, ge=-(2**31), le=2**31 - 1)
    # HAProxy 4.2 timeout connect (a connection attempt fails after it) and timeout check (with it, a
    # check's connection gets min(timeout connect, inter)); None: not set
    connect_timeout_ms: float | None = Field(default=None, ge=0)
    check_timeout_ms: float | None = Field(default=None, ge=0)
    # HAProxy 4.2 timeout queue: a request queued longer (servers at maxconn) gets a 503; None: not set,
    # HAProxy then uses timeout connect (and without either, no limit)
    queue_timeout_ms: float | None = Field(default=None, ge=0)
    cookie: PoolCookie | None = None
    stick_table: StickTable | None = None
    stick_on: Literal["src"] | None = None
    servers: list[Server] = Field(default_factory=list)

    @field_validator("scheduler")
    @classmethod
    def _known(cls, v: str | None) -> str | None:
        from routertwin import _core

        names = _core.lb_scheduler_names()
        if v is not None and v not in names:
            raise ValueError(f"unknown scheduler '{v}' (dp_sched: {', '.join(names)})")
        return v

    @model_validator(mode="after")
    def _hash_keys(self):
        sched = self.scheduler or ""
        if sched.startswith("hdr") and not self.hdr_name:
            raise FieldError(("hdr_name",), f"scheduler '{sched}' hashes a header: hdr_name names it")
        for key in ("uri_whole", "uri_path_only", "uri_len", "uri_depth"):
            if getattr(self, key) not in (None, False) and not sched.startswith("uri"):
                raise FieldError((key,), f"only a uri scheduler reads {key} (scheduler '{sched}')")
        for key in ("hdr_name", "hdr_domain_only"):
            if getattr(self, key) not in (None, False) and not sched.startswith("hdr"):
                raise FieldError((key,), f"only a hdr scheduler reads {key} (scheduler '{sched}')")
        return self

    def sched_keys(self) -> dict:
        """The dp_sched configuration keys of this pool's scheduler (lb_remap, lb_failover)."""
        keys: dict = {}
        if self.hash_function is not None:
            keys["hash_function"] = self.hash_function
        if self.hash_avalanche is not None:
            keys["hash_avalanche"] = self.hash_avalanche
        for key in ("uri_whole", "uri_path_only", "hdr_domain_only"):
            if getattr(self, key):
                keys[key] = True
        for key in ("uri_len", "uri_depth"):
            if getattr(self, key) is not None:
                keys[key] = getattr(self, key)
        return keys

    @model_validator(mode="after")
    def _unique_servers(self):
        seen: set[str] = set()
        for i, s in enumerate(self.servers):
            if s.name in seen:
                raise FieldError(("servers", i, "name"), f"server '{s.name}' appears twice in pool '{self.name}'")
            seen.add(s.name)
        return self


class Service(ScenarioModel):
    """An HAProxy frontend (or listen section), or an IPVS virtual service."""

    name: str = Name
    mode: Literal["tcp", "http", "udp"] = "tcp"
    listen: list[str] = Field(default_factory=list)  # 'ADDR:PORT', '*:PORT', '[V6]:PORT'
    pool: str | None = None  # the pool it sends to (HAProxy default_backend)
    # content switching (runners/lb/content.py): HAProxy acl lines, and
    # use_backend rules in order (first match wins, else `pool`)
    acls: list[Acl] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
    # why the routing is not modelled ("FILE:LINE: ..."): a use_backend rule
    # depends on something the twin cannot match; then `rules` is empty
    rules_not_modelled: str | None = None

    @field_validator("listen")
    @classmethod
    def _endpoints(cls, v: list[str]) -> list[str]:
        out = []
        for text in v:
            host, port = split_endpoint(text)
            if port is None or not 1 <= port <= 65535:
                raise ValueError(f"'{text}': a listening endpoint needs a port in 1..65535")
            out.append(join_endpoint(check_host(host, wildcard=True), port))
        return out

    @model_validator(mode="after")
    def _conditions(self):
        if self.rules_not_modelled is not None and self.rules:
            raise FieldError(("rules",), "a service whose routing is not modelled ('rules_not_modelled') "
                                         "carries no rules")
        if self.acls and self.mode != "http":
            # every fetch an entry has is HTTP's: HAProxy evaluates them only on buffered HTTP content
            raise FieldError(("acls",), f"acls fetch HTTP fields: a {self.mode} service has none to match")
        if self.rules and self.mode == "udp":
            raise FieldError(("rules",), "use_backend rules are HAProxy's: a udp service has none")
        defined = {a.name for a in self.acls}
        anonymous: dict[str, int] = {}
        for i, a in enumerate(self.acls):
            if a.name.startswith("@"):
                if a.name in anonymous:
                    # an anonymous ACL is one `{ ... }`: export writes it back inline, where it is used
                    raise FieldError(("acls", i, "name"), f"anonymous ACL '{a.name}' appears twice")
                anonymous[a.name] = i
        for i, r in enumerate(self.rules):
            if r.if_ is not None and r.unless is not None:
                raise FieldError(("rules", i, "unless"), "a rule takes 'if' or 'unless', not both")
            key = "if" if r.if_ is not None else "unless"
            text = r.if_ if r.if_ is not None else r.unless
            if text is None:
                continue
            try:
                groups = parse_condition(text)
            except ConditionError as exc:
                raise FieldError(("rules", i, key), str(exc)) from None
            for _, name in (t for g in groups for t in g):
                if name not in defined and name not in PREDEFINED:
                    raise FieldError(("rules", i, key), f"no ACL named '{name}' in service '{self.name}'")
                anonymous.pop(name, None)
        if anonymous:
            name, i = next(iter(anonymous.items()))
            raise FieldError(("acls", i, "name"), f"anonymous ACL '{name}' is used by no rule (it stands for a "
                                                  "`{ ... }` of a rule's condition)")
        return self


class Balancer(ScenarioModel):
    source: Literal["haproxy", "ipvs"]  # the configuration language it was imported from (export target)
    services: list[Service] = Field(default_factory=list)
    pools: list[Pool] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references(self):
        names: set[str] = set()
        for i, p in enumerate(self.pools):
            if p.name in names:
                raise FieldError(("pools", i, "name"), f"pool '{p.name}' appears twice")
            names.add(p.name)
        for i, s in enumerate(self.services):
            if s.pool is not None and s.pool not in names:
                raise FieldError(("services", i, "pool"), f"no pool named '{s.pool}'")
            for j, r in enumerate(s.rules):
                if r.pool not in names:
                    raise FieldError(("services", i, "rules", j, "pool"), f"no pool named '{r.pool}'")
        return self

    def pool(self, name: str) -> Pool | None:
        return next((p for p in self.pools if p.name == name), None)

    def service(self, name: str) -> Service | None:
        return next((s for s in self.services if s.name == name), None)
