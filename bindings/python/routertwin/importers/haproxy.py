"""HAProxy configuration (haproxy.cfg) -> an lb scenario's `balancer`, and back.

Semantics are HAProxy 2.6's configuration manual (Debian's
/usr/share/doc/haproxy/configuration.txt.gz; https://www.haproxy.org/download/2.6/doc/configuration.txt),
cited by section:

- 2.1 a statement is a line before any unprotected '#', cut into words at
  unprotected spaces and tabs; a section starts at its keyword and ends at the
  next section keyword or the end of the file;
- 2.2 quoting and escaping: backslash escapes outside quotes (\\<space>, \\#,
  \\\\, \\', \\", \\n, \\r, \\t, \\xNN; any other backslash stays as written),
  weak quoting "..." (no word split, no comment, backslash escapes and \$,
  $VAR and ${VAR} / ${VAR-default} expanded from the environment, any other
  '$' refused), strong quoting '...' (nothing interpreted); quoted and
  unquoted parts join into one word. Where the manual and the real haproxy
  2.6.12 differ (\<TAB> is not an escape; \$ outside quotes keeps its
  backslash), the twin follows haproxy: tests/test_import_lb.py compares
  the two on random lines through haproxy's own `.notice`;
- 2.4 conditional blocks (.if/.elif/.else/.endif) are refused: which lines
  apply depends on the environment HAProxy runs in;
- 2.5 times: a number with us, ms (default), s, m, h or d;
- 4 proxies: a frontend, backend or listen section starts from the settings
  of the last defaults section before it, or of the named one after `from`;
  a defaults section may itself start from another; mode tcp is the default;
- 4.2 balance (roundrobin when absent), hash-type, option allbackups,
  default_backend, server, default-server, cookie, stick-table, stick on,
  option httpchk, option redispatch, retries, timeout connect and timeout
  check (the failover what-if's), timeout queue (the timed drain's), the
  other timeout * (listed);
- 5.2 server options (weight 0..256, default 1; backup; disabled; maxconn;
  maxqueue; slowstart; check, inter (2000 ms), fastinter, downinter, rise (2), fall
  (3); cookie); default-server sets them for the servers after it.

Every line maps to the scenario or is listed (`NotModelled`) with its file
and line; a keyword HAProxy itself does not know (_haproxy_keywords, from the
same manual), a bad value or a reference to a backend or server that does
not exist is an `ImportFileError` naming the line.

SETTINGS is the one table of where each HAProxy setting goes in the
scenario. A setting is modelled when its key is a field of the balancer
schema (routertwin.runners.lb.balancer); the others (option httpchk,
timeouts) are parsed and checked, listed as "not modelled yet", and switch
on when the schema gains their key. Health checks, retries, redispatch and
persistence are keys, and each pool whose servers are checked gets a
`failover-POOL` case: model/lb's failover model (lb-failover.h) run with
those settings (_failover_cases). Global maxconn and tune.bufsize, and a
frontend's maxconn and backlog, set each frontend's `fill-SERVICE` case
(_fill_cases: the connection table against memory and rate, docs/import-lb.md 5e).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from routertwin.importers import _haproxy_keywords as kw
from routertwin.importers._lbcommon import Imported, ImportFileError, NotModelled, case_suffix, read_text
from routertwin.runners.lb.balancer import Pool, Server, Service, check_host, join_endpoint

KIND = "haproxy"
HELP = ("an HAProxy configuration (haproxy.cfg) as an lb scenario's balancer; every directive not "
        'modelled listed by line (docs/import-lb.md)')

# ---------------------------------------------------------------- the table


@dataclass(frozen=True)
class Setting:
    directive: str  # as HAProxy names it
    scope: str  # "server", "pool" or "service": the scenario object it belongs to
    key: str  # the key of that object in the balancer schema


SETTINGS = (
    Setting("mode", "service", "mode"),
    Setting("mode", "pool", "mode"),
    Setting("bind", "service", "listen"),
    Setting("default_backend", "service", "pool"),
    Setting("balance", "pool", "scheduler"),
    Setting("hash-type", "pool", "scheduler"),  # source + hash-type consistent = source-consistent
    Setting("hash-type", "pool", "hash_function"),  # and its function and avalanche modifier
    Setting("option allbackups", "pool", "allbackups"),
    Setting("server", "pool", "servers"),
    Setting("weight", "server", "weight"),
    Setting("backup", "server", "backup"),
    Setting("disabled", "server", "disabled"),
    Setting("maxconn", "server", "maxconn"),
    Setting("maxqueue", "server", "maxqueue"),  # maxconn, maxqueue, timeout queue: the drain-timed-POOL case
    Setting("slowstart", "server", "slowstart_ms"),
    # health checks, retries and persistence: acted on by the failover-POOL case (lb-failover.h)
    Setting("check", "server", "check"),
    Setting("inter", "server", "inter_ms"),
    Setting("fastinter", "server", "fastinter_ms"),
    Setting("downinter", "server", "downinter_ms"),
    Setting("rise", "server", "rise"),
    Setting("fall", "server", "fall"),
    Setting("cookie", "server", "cookie"),
    Setting("option httpchk", "pool", "httpchk"),
    Setting("cookie", "pool", "cookie"),
    Setting("stick-table", "pool", "stick_table"),
    Setting("stick on", "pool", "stick_on"),
    Setting("option redispatch", "pool", "redispatch"),
    Setting("option redispatch", "pool", "redispatch_after"),  # its <interval>
    Setting("retries", "pool", "retries"),
    # the failover what-if's connection attempts and check timeouts (lb-failover.h)
    Setting("timeout connect", "pool", "connect_timeout_ms"),
    Setting("timeout check", "pool", "check_timeout_ms"),
    Setting("timeout queue", "pool", "queue_timeout_ms"),
    Setting("timeout", "pool", "timeouts_ms"),
    Setting("timeout", "service", "timeouts_ms"),
)
_SCHEMA = {"server": Server, "pool": Pool, "service": Service}


def modelled(scope: str, key: str) -> bool:
    """The balancer schema has the key: the twin carries (and acts on) it."""
    return key in _SCHEMA[scope].model_fields


def setting(directive: str, scope: str) -> Setting:
    return next(s for s in SETTINGS if s.directive == directive and s.scope == scope)


# ---------------------------------------------------------------- tokenizer


class TokenError(ValueError):
    """A line HAProxy's word splitter would refuse; `column` is 1-based."""

    def __init__(self, column: int, message: str):
        super().__init__(message)
        self.column = column


# The manual's matrix also lists \<TAB>; haproxy 2.6.12 keeps that backslash
# (measured with .notice, tests/test_import_lb.py), so the twin does too.
_SIMPLE_ESCAPES = {" ": " ", "#": "#", "\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(\[\*\])?(?:-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def tokenize(line: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The words of one configuration line (manual 2.1-2.3). Raises TokenError."""
    env = os.environ if env is None else env
    words: list[str] = []
    cur: list[str] = []
    in_word = False
    quote = ""
    quote_col = 0
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                cur.append(c)
            i += 1
            continue
        if quote == '"':
            if c == '"':
                quote = ""
                i += 1
            elif c == "\\":
                i = _escape(line, i, cur, weak=True)
            elif c == "$":
                m = _VAR.match(line, i)
                if m is None:  # haproxy 2.6.12 refuses it too (a dollar is written \$ here)
                    raise TokenError(i + 1, "forbidden first char in environment variable name")
                name, split, default, bare = m.groups()
                if split:
                    raise TokenError(i + 1, f"'${{{name}[*]}}' (a variable split into words) is not supported")
                name = name or bare
                value = env.get(name)
                cur.append(value if value is not None else (default or ""))
                i = m.end()
            else:
                cur.append(c)
                i += 1
            continue
        if c in " \t":
            if in_word:
                words.append("".join(cur))
                cur, in_word = [], False
            i += 1
            continue
        if c == "#":
            break
        in_word = True
        if c in "'\"":
            quote, quote_col = c, i + 1
            i += 1
        elif c == "\\":
            i = _escape(line, i, cur)
        else:
            cur.append(c)
            i += 1
    if quote:
        raise TokenError(quote_col, f"unmatched {'double' if quote == chr(34) else 'single'} quote")
    if in_word:
        words.append("".join(cur))
    return words


def _escape(line: str, i: int, cur: list[str], weak: bool = False) -> int:
    """The backslash at `i`: append what it stands for, return the next index.
    `\\$` is a dollar inside double quotes only (outside, where '$' is never
    expanded, haproxy 2.6.12 keeps the backslash: measured with .notice)."""
    if i + 1 >= len(line):
        cur.append("\\")  # a trailing backslash is itself (HAProxy has no line continuation)
        return i + 1
    d = line[i + 1]
    if d in _SIMPLE_ESCAPES or (weak and d == "$"):
        cur.append(_SIMPLE_ESCAPES.get(d, d))
        return i + 2
    if d == "x":
        hexa = line[i + 2:i + 4]
        if not re.fullmatch(r"[0-9A-Fa-f]{2}", hexa):
            raise TokenError(i + 1, f"'\\x' must be followed by two hex digits, not '{hexa}'")
        cur.append(chr(int(hexa, 16)))
        return i + 4
    cur.append("\\")  # not an escape: the backslash stays, the next character is read as usual
    return i + 1


# ---------------------------------------------------------------- values

_TIME = re.compile(r"^(\d+)(us|ms|s|m|h|d)?$")
_TIME_MS = {"us": 1e-3, "ms": 1.0, None: 1.0, "s": 1e3, "m": 60e3, "h": 3600e3, "d": 86400e3}


class _Bad(ValueError):
    """A bad value in a line (the parser adds the file and line)."""


def parse_time_ms(text: str, what: str) -> float:
    m = _TIME.match(text)
    if not m:
        raise _Bad(f"{what}: '{text}' is not a time (a number with us, ms, s, m, h or d; manual 2.5)")
    ms = int(m.group(1)) * _TIME_MS[m.group(2)]
    if ms > 2**31 - 1:
        raise _Bad(f"{what}: '{text}' is more than 2^31-1 ms (HAProxy's limit, about 24.8 days)")
    return ms


def parse_int(text: str, what: str, lo: int, hi: int) -> int:
    if not re.fullmatch(r"\d+", text) or not lo <= int(text) <= hi:
        raise _Bad(f"{what}: '{text}' must be an integer in {lo}..{hi}")
    return int(text)


def parse_size(text: str, what: str) -> int:
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", text)
    if not m:
        raise _Bad(f"{what}: '{text}' is not a size (a number with k, m or g)")
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]


def _fmt_time(ms: float) -> str:
    for unit, scale in (("d", 86400e3), ("h", 3600e3), ("m", 60e3), ("s", 1e3)):
        if ms >= scale and ms % scale == 0:
            return f"{int(ms // scale)}{unit}"
    return f"{int(ms)}ms" if ms == int(ms) else f"{int(round(ms * 1000))}us"


# ---------------------------------------------------------------- parser

SECTIONS_PROXY = ("defaults", "frontend", "backend", "listen")
# Section keywords of 2.6 that are not proxies (manual 3.4-3.10, 6, 10): listed whole.
SECTIONS_OTHER = ("global", "userlist", "peers", "mailers", "program", "http-errors", "ring", "log-forward",
                  "resolvers", "cache", "fcgi-app", "dynamic-update")
_ALGOS_MODELLED = {"roundrobin": "roundrobin", "static-rr": "static-rr", "leastconn": "leastconn",
                   "first": "first", "source": "source", "random": "random", "uri": "uri", "hdr": "hdr"}
# The keywords _directive reads (the rest of the manual's are listed as not modelled).
_HANDLED = {"mode", "balance", "hash-type", "option allbackups", "bind", "default_backend", "use_backend", "acl",
            "use-server", "server", "default-server", "option httpchk", "option redispatch", "retries", "cookie",
            "stick-table", "stick on", "maxconn", "backlog"} | {k for k in kw.PROXY if k.startswith("timeout ")}
_ALGOS_KNOWN = ("url_param", "rdp-cookie", "hash")
# The pool keys a balance line sets (cleared by the next balance line, as HAProxy resets them).
_BALANCE_KEYS = ("uri_whole", "uri_path_only", "uri_len", "uri_depth", "hdr_name", "hdr_domain_only")


@dataclass
class _Proxy:
    kind: str
    name: str
    line: int
    mode: str = "tcp"
    balance: tuple | None = None  # (scheduler or None, the words, line)
    hash_consistent: bool = False
    allbackups: bool = False
    default_backend: tuple | None = None  # (name, line)
    default_server: dict = field(default_factory=dict)  # scenario server keys -> value
    settings: dict = field(default_factory=dict)  # pool keys of SETTINGS (carried when the schema has them)
    timeouts: dict = field(default_factory=dict)
    binds: list = field(default_factory=list)
    servers: list = field(default_factory=list)  # server dicts (with '_line')
    refs: list = field(default_factory=list)  # (what, name, line): use_backend, use-server, track
    acls: list = field(default_factory=list)  # _AclLine, in declaration order
    rules: list = field(default_factory=list)  # _UseBackend, in order
    redispatch_line: int = 0  # the line of its (or its defaults') option redispatch
    fill: dict = field(default_factory=dict)  # maxconn, backlog -> (value, line): the fill-SERVICE case
    content: dict = field(default_factory=dict)  # the service's acls and rules (or rules_not_modelled)
    # predefined ACL name -> the first line whose condition used it while no `acl` line of that name came
    # before: HAProxy then made the predefined ACL the proxy's, and later acl lines of the name are ORed onto it
    predefined_used: dict = field(default_factory=dict)
    # (line, words, why): the first line that can rewrite the path, URL or Host, or answer the request,
    # before use_backend (its defaults' rules run first, so it is inherited)
    diverting: tuple | None = None
    # (line, words) of its monitor-uri and stats lines (inherited from defaults, as HAProxy copies them)
    intercepts: list = field(default_factory=list)

    def inherit(self, kind: str, name: str, line: int) -> "_Proxy":
        import copy

        new = copy.deepcopy(self)
        new.kind, new.name, new.line = kind, name, line
        new.binds, new.servers, new.refs, new.acls, new.rules = [], [], [], [], []
        new.predefined_used = {}  # a defaults section's ACLs are not its proxies' (manual 7)
        return new


# HAProxy's predefined ACLs (manual 7.4); TRUE and FALSE are modelled, the others need fetches the twin lacks.
_PREDEFINED_ACLS = {"FALSE", "HTTP", "HTTP_1.0", "HTTP_1.1", "HTTP_2.0", "HTTP_CONTENT", "HTTP_URL_ABS",
                    "HTTP_URL_SLASH", "HTTP_URL_STAR", "LOCALHOST", "METH_CONNECT", "METH_DELETE", "METH_GET",
                    "METH_HEAD", "METH_OPTIONS", "METH_POST", "METH_PUT", "METH_TRACE", "RDP_COOKIE", "REQ_CONTENT",
                    "TRUE", "WAIT_END"}


_REWRITES_URL = {"set-path", "set-pathq", "set-uri", "set-query", "replace-path", "replace-pathq", "replace-uri",
                 "normalize-uri"}
_ANSWERS = {"deny", "tarpit", "redirect", "return", "auth", "reject", "silent-drop", "use-service", "cache-use"}
_HEADER_ACTIONS = {"set-header", "add-header", "del-header", "replace-header", "replace-value"}
# stats keywords that turn on the statistics page (manual 4.2: each enables it with the default URI)
_STATS = {"admin", "auth", "enable", "hide-version", "http-request", "realm", "refresh", "scope", "show-desc",
          "show-legends", "show-modules", "show-node", "uri"}


def _diverts(words: list[str]) -> str | None:
    """Why a proxy line can change what use_backend sees (the path, URL or Host) or answer the request
    before use_backend runs (HAProxy 2.6 http_process_req_common: http-request rules, redirect,
    monitor-uri and the stats page come before the switching rules), or None."""
    head = words[0]
    action = words[1] if len(words) > 1 else ""
    if head == "http-request":
        if action in _REWRITES_URL:
            return "rewrites the path or URL before use_backend (not modelled)"
        if action in _ANSWERS:
            return "can answer or end the request before use_backend (not modelled)"
        if action in _HEADER_ACTIONS and len(words) > 2 and words[2].lower() == "host":
            return "rewrites the Host header before use_backend (not modelled)"
        if action.startswith("lua."):
            return "a Lua action can rewrite or answer the request before use_backend (not modelled)"
    if head == "tcp-request" and action in ("connection", "session", "content") and len(words) > 2 and \
            words[2] in ("reject", "silent-drop", "use-service"):
        return "can end the request before use_backend (not modelled)"
    if head == "redirect":
        return "answers with a redirect before use_backend (not modelled)"
    if head == "monitor-uri":
        return "answers requests for its URI before use_backend (not modelled)"
    if head == "stats" and action in _STATS:
        return "turns on the statistics page, which answers its URI before use_backend (not modelled)"
    return None


@dataclass
class _AclLine:
    name: str
    line: int
    words: list
    expression: dict | str  # the scenario's acl keys, or why it is not modelled


@dataclass
class _UseBackend:
    pool: str | None  # None: a dynamic name (%[...]), not modelled
    line: int
    words: list
    key: str | None  # 'if', 'unless' or None (always)
    condition: list  # the condition's words, anonymous ACLs replaced by their '@N' names
    anonymous: dict  # '@N' -> expression (as _AclLine.expression)


class _Parser:
    def __init__(self, lines: list[str], shown: str, env: Mapping[str, str] | None):
        self.lines = lines
        self.shown = shown
        self.env = env
        self.listed: list[NotModelled] = []
        self.defaults: dict[str, _Proxy] = {}
        self.last_defaults = _Proxy("defaults", "", 0)
        self.proxies: list[_Proxy] = []
        self.process: dict = {}  # global maxconn, tune.bufsize -> (value, line): the fill-SERVICE case
        # False: monitor-uri and stats lines answer only their own URIs, which a caller checks
        # (lab_routing); they do not make the routing not modelled
        self.intercepts_divert = True

    def fail(self, line: int, message: str):
        raise ImportFileError(self.shown, line, message)

    def note(self, line: int, words: list[str], reason: str):
        self.listed.append(NotModelled(self.shown, line, " ".join(words), reason))

    def pending(self, line: int, words: list[str], directive: str, scope: str):
        """A setting the schema does not carry yet: listed with the key it will map to."""
        key = setting(directive, scope).key
        if not modelled(scope, key):
            self.note(line, words, f"not modelled yet: would set {scope} key '{key}'")

    def parse(self) -> list[_Proxy]:
        section: _Proxy | None = None
        other: str | None = None  # a non-proxy section being listed
        for no, text in enumerate(self.lines, 1):
            try:
                words = tokenize(text, self.env)
            except TokenError as exc:
                self.fail(no, f"column {exc.column}: {exc}")
            if not words:
                continue
            head = words[0]
            if head.startswith("."):
                if head in (".if", ".elif", ".else", ".endif"):
                    self.fail(no, f"conditional blocks ({head}) are not supported: which lines apply depends on "
                                  "the environment HAProxy starts in (manual 2.4); resolve them first")
                if head in (".diag", ".notice", ".warning", ".alert"):
                    self.note(no, words, "a start-up message (manual 2.4)")
                    continue
                self.fail(no, f"unknown directive '{head}'")
            if head in SECTIONS_PROXY:
                section, other = self._open(no, words), None
                continue
            if head in SECTIONS_OTHER:
                section, other = None, head
                if head != "global":
                    self.note(no, words, f"a {head} section (not a proxy)")
                continue
            if other is not None:
                if other == "global" and head not in kw.GLOBAL:
                    self.fail(no, f"unknown keyword '{head}' in section 'global'")
                if other == "global" and head in ("maxconn", "tune.bufsize"):
                    if len(words) != 2:
                        self.fail(no, f"{head} takes one number")
                    try:
                        # manual 3.2: maxconn per process; tune.bufsize in bytes (at least a few kB in practice)
                        self.process[head] = (parse_int(words[1], head, 1 if head == "maxconn" else 1024,
                                                        2**31 - 1), no)
                    except _Bad as exc:
                        self.fail(no, str(exc))
                    continue
                self.note(no, words, f"{other} section: process settings" if other == "global"
                          else f"in a {other} section")
                continue
            if section is None:
                self.fail(no, f"'{head}' outside any section (a file starts with a section keyword; manual 2.1)")
            try:
                self._directive(section, no, words)
            except _Bad as exc:
                self.fail(no, str(exc))
        self._check_references()
        for p in self.proxies:
            if p.kind in ("frontend", "listen"):
                p.content = self._content(p)
            else:  # a backend's ACLs serve its http-request, use-server, ... rules, which are not modelled
                for a in p.acls:
                    self.note(a.line, a.words, a.expression if isinstance(a.expression, str)
                              else "an ACL of a backend (the rules that use it are not modelled)")
        for p in self.proxies:
            after, retries = p.settings.get("redispatch_after"), p.settings.get("retries", 3)
            if p.settings.get("redispatch") and after is not None and after < 0 and retries + 1 + after == 0:
                self.fail(p.redispatch_line, f"option redispatch {after} with retries {retries} names no retry: "
                                             "HAProxy 2.6 would take the retry count modulo 0 "
                                             "(stream_choose_redispatch)")
        return self.proxies

    def _open(self, no: int, words: list[str]) -> _Proxy:
        kind = words[0]
        rest = words[1:]
        base = self.last_defaults
        if "from" in rest:
            k = rest.index("from")
            if k + 2 != len(rest):
                self.fail(no, f"'{kind} [name] from <defaults>': one name after 'from'")
            if rest[k + 1] not in self.defaults:
                self.fail(no, f"defaults section '{rest[k + 1]}' does not exist (before this line)")
            base = self.defaults[rest[k + 1]]
            rest = rest[:k]
        if len(rest) > 1:
            self.fail(no, f"'{kind}' takes one name (and 'from <defaults>'), got {' '.join(rest)}")
        name = rest[0] if rest else ""
        if kind != "defaults" and not name:
            self.fail(no, f"a {kind} section needs a name")
        if name and not re.fullmatch(r"[A-Za-z0-9_.:-]+", name):
            self.fail(no, f"'{name}': proxy names are letters, digits, '-', '_', '.' and ':' (manual 4)")
        if kind == "defaults":
            # a defaults section without 'from' starts from HAProxy's own defaults (manual 4)
            proxy = (base if "from" in words else _Proxy("defaults", "", 0)).inherit("defaults", name, no)
            if name:
                self.defaults[name] = proxy
            self.last_defaults = proxy
            return proxy
        for p in self.proxies:
            # a frontend and a backend may share a name; nothing else may (manual 4)
            if p.name == name and (p.kind == kind or "listen" in (p.kind, kind)):
                self.fail(no, f"{kind} '{name}' has the same name as the {p.kind} at line {p.line}")
        proxy = base.inherit(kind, name, no)
        self.proxies.append(proxy)
        return proxy

    def _keyword(self, words: list[str]) -> str | None:
        """The longest keyword sequence of the manual starting the line ('no'/'default' before an option)."""
        probe = words[1:] if words[0] in ("no", "default") and len(words) > 1 and words[1] == "option" else words
        for table in (_HANDLED, kw.PROXY):  # the manual also heads some arguments ('stick-table type')
            for n in range(min(len(probe), 4), 0, -1):
                name = " ".join(probe[:n])
                if name in table:
                    return name
        return None

    def _directive(self, p: _Proxy, no: int, words: list[str]) -> None:
        name = self._keyword(words)
        if name is None:
            self.fail(no, f"unknown keyword '{' '.join(words[:2]) if words[0] in ('option', 'no') else words[0]}' "
                          f"in {p.kind} section{' ' + repr(p.name) if p.name else ''}")
        allowed = kw.PROXY[name]
        if name == "use_backend" and p.kind == "backend":
            # haproxy 2.6.12 parses it (a bad condition or backend name is still an error), warns
            # "ignored because backend has no frontend capability" and never applies it
            self._use_backend(p, no, words, words[1:])
            p.rules.pop()
            self.note(no, words, "ignored by HAProxy: a backend has no frontend capability")
            return
        if p.kind[0] not in allowed:
            self.fail(no, f"'{name}' is not allowed in a {p.kind} section (manual 4.1)")
        if p.kind != "backend":
            self._before_use_backend(p, no, words)
        negated = words[0] == "no"
        args = words[len(name.split()) + (1 if words[0] in ("no", "default") else 0):]
        if name == "mode":
            if args not in (["tcp"], ["http"]):
                self.fail(no, f"mode: '{' '.join(args)}' must be tcp or http")
            p.mode = args[0]
        elif name == "balance":
            self._balance(p, no, words, args)
        elif name == "hash-type":
            if not args or args[0] not in ("map-based", "consistent"):
                self.fail(no, "hash-type: map-based or consistent")
            # cfgparse-listen.c (2.6): no function means sdbm, with avalanche for consistent only;
            # a function given takes avalanche only when the modifier follows it
            if len(args) > 3 or (len(args) > 1 and args[1] not in ("sdbm", "djb2", "wt6", "crc32")) \
                    or (len(args) == 3 and args[2] != "avalanche"):
                self.fail(no, "hash-type: map-based|consistent [sdbm|djb2|wt6|crc32 [avalanche]]")
            p.hash_consistent = args[0] == "consistent"
            p.settings["hash_function"] = args[1] if len(args) > 1 else None
            p.settings["hash_avalanche"] = (len(args) == 3) if len(args) > 1 else None
        elif name == "option allbackups":
            p.allbackups = not negated
        elif name == "bind":
            self._bind(p, no, words, args)
        elif name == "default_backend":
            if len(args) != 1:
                self.fail(no, "default_backend takes one backend name")
            p.default_backend = (args[0], no)
        elif name in ("acl", "use_backend") and "" in args:
            # HAProxy's argument lists end at the first empty word: `use_backend b '' if x` is
            # `use_backend b`, `acl a path_beg /x '' /y` has one pattern (haproxy 2.6.12 -c agrees)
            self._directive(p, no, words[:len(words) - len(args) + args.index("")])
        elif name == "acl":
            if p.kind == "defaults":
                self.note(no, words, "an ACL of a defaults section (its rules are not modelled; proxies do not "
                                     "see it)")
                return
            if not args or not args[0]:
                self.fail(no, "acl needs a name and an expression")
            if not re.fullmatch(r"[A-Za-z0-9_.:-]+", args[0]):
                self.fail(no, f"acl name '{args[0]}': letters, digits, '-', '_', '.' and ':' (manual 7.1)")
            p.acls.append(_AclLine(args[0], no, words, self._acl_expression(no, args[1:])))
        elif name == "use_backend":
            self._use_backend(p, no, words, args)
        elif name == "use-server":
            if args:
                p.refs.append(("server", args[0], no))
            self.note(no, words, "use-server rules are not modelled")
        elif name == "server":
            self._server(p, no, words, args)
        elif name == "default-server":
            p.default_server.update(self._server_options(p, no, words, args))
        elif name == "option httpchk":
            p.settings["httpchk"] = " ".join(args) if not negated else None
            self.pending(no, words, "option httpchk", "pool")
        elif name == "option redispatch":
            after = -1  # cfgparse-listen.c: "option redispatch" alone is redispatch_after -1 (the last retry)
            if args and not negated:
                neg = args[0].startswith("-")
                after = parse_int(args[0][neg:], "option redispatch interval", 0, 2**31 - neg) * (-1 if neg else 1)
            p.settings["redispatch"] = not negated
            p.settings.pop("redispatch_after", None)  # HAProxy's default (-1) or off: no key
            if not negated and after != -1:
                p.settings["redispatch_after"] = after
            p.redispatch_line = no
            self.pending(no, words, "option redispatch", "pool")
        elif name == "retries":
            if len(args) != 1:
                self.fail(no, "retries takes one number")
            p.settings["retries"] = parse_int(args[0], "retries", 0, 2**31 - 1)
            self.pending(no, words, "retries", "pool")
        elif name == "cookie":
            p.settings["cookie"] = self._cookie(no, args)
            self.pending(no, words, "cookie", "pool")
            extra = [a for a in args[1:] if a not in ("rewrite", "insert", "prefix", "indirect", "nocache")]
            if extra:
                self.note(no, words, f"cookie options not modelled: {' '.join(extra)}")
            if p.settings["cookie"]["mode"] != "insert":
                self.note(no, words, f"cookie {p.settings['cookie']['mode']}: carried; the failover what-if "
                                     "models insert's persistence only")
        elif name == "stick-table":
            p.settings["stick_table"] = self._stick_table(no, args)
            self.pending(no, words, "stick-table", "pool")
            if set(args) & {"len", "nopurge", "peers", "srvkey", "store", "write-to"}:
                self.note(no, words, "stick-table options not modelled (type, size and expire are)")
        elif name == "stick on":
            if args == ["src"]:  # another backend's table ('table T') is not modelled
                p.settings["stick_on"] = "src"
                self.pending(no, words, "stick on", "pool")
            else:
                self.note(no, words, "stick on a pattern other than src, another backend's table or a condition "
                                     "is not modelled")
        elif name in ("maxconn", "backlog"):
            if len(args) != 1:
                self.fail(no, f"{name} takes one number")
            # manual 4.2: maxconn 0 (the default) means the global maxconn; backlog 0, the frontend's maxconn
            p.fill[name] = (parse_int(args[0], name, 0, 2**31 - 1), no)
        elif name.startswith("timeout "):
            if len(args) != 1:
                self.fail(no, f"{name} takes one time")
            key = name.split(" ", 1)[1]
            if key in ("connect", "check", "queue") and p.kind != "frontend":  # backend timeouts (manual 4.1)
                p.settings[f"{key}_timeout_ms"] = parse_time_ms(args[0], name)
                self.pending(no, words, name, "pool")
                return
            p.timeouts[key] = parse_time_ms(args[0], name)
            self.pending(no, words, "timeout", "pool" if p.kind != "frontend" else "service")
        else:
            self.note(no, words, "not modelled")

    def _before_use_backend(self, p: _Proxy, no: int, words: list[str]) -> None:
        """What a frontend's (or defaults') line means for its use_backend rules, which HAProxy applies
        after the http-request, redirect, monitor and stats processing: the first line that can change the
        path, URL or Host they match, or answer the request itself, is kept (p.diverting); a predefined
        ACL name a condition uses before any `acl` line of that name is kept (p.predefined_used)."""
        why = _diverts(words)
        intercept = why is not None and words[0] in ("monitor-uri", "stats")
        if intercept:
            p.intercepts.append((no, words))
        if why is not None and p.diverting is None and (self.intercepts_divert or not intercept):
            p.diverting = (no, words, why)
        if words[0] in ("acl", "use_backend"):
            return  # their names are read where they are parsed
        key = next((k for k, w in enumerate(words) if w in ("if", "unless")), None)
        depth = 0
        for w in words[key + 1:] if key is not None else []:
            depth += (w == "{") - (w == "}")  # an anonymous ACL's words are its fetch and patterns
            if depth == 0 and w.lstrip("!") in _PREDEFINED_ACLS and w.lstrip("!") not in {a.name for a in p.acls}:
                p.predefined_used.setdefault(w.lstrip("!"), no)

    def _content(self, p: _Proxy) -> dict:
        """A frontend's acl and use_backend lines -> the service's acls and
        rules, or `rules_not_modelled` when a rule depends on something the
        twin cannot match (then every acl and use_backend line is listed:
        the service is never silently routed to its default)."""
        entries: dict[str, list[_AclLine]] = {}
        for a in p.acls:
            entries.setdefault(a.name, []).append(a)

        def why(rule: _UseBackend) -> str | None:
            if rule.pool is None:
                return "a dynamic backend name (log-format) is not modelled"
            names = [w.lstrip("!") for w in rule.condition]
            names = [n for n in names if n and n != "||" and n.lower() != "or"]
            if rule.key is not None and not names:
                return "an empty condition (HAProxy 2.6 accepts it; what it does is not modelled)"
            for n in names:
                if n in rule.anonymous:
                    if isinstance(rule.anonymous[n], str):
                        return f"its anonymous ACL: {rule.anonymous[n]}"
                elif n in entries:
                    bad = next((a for a in entries[n] if isinstance(a.expression, str)), None)
                    if bad is not None:
                        return f"acl '{n}' (line {bad.line}): {bad.expression}"
                    used = p.predefined_used.get(n)
                    # FALSE ORed with the acl lines is the acl lines (checked against haproxy 2.6.12)
                    if used is not None and used < entries[n][0].line and n != "FALSE":
                        return (f"acl '{n}' (line {entries[n][0].line}): line {used} used HAProxy's predefined "
                                f"'{n}' before it, so HAProxy ORs the acl lines onto the predefined ACL")
                elif n not in ("TRUE", "FALSE"):
                    return f"the predefined ACL '{n}' is not modelled"
            fetches = [n for n in names if n in entries or n in rule.anonymous]  # every entry fetches HTTP
            if p.mode != "http" and fetches:
                return "HTTP fetches in a tcp-mode proxy (HAProxy evaluates them only on buffered content)"
            return None

        # a line that rewrites what the rules match or answers before them comes first: a split
        # (even of a service without rules) would send to a pool requests HAProxy never routes so
        blocking = p.diverting or next(((r.line, r.words, w) for r in p.rules for w in [why(r)] if w is not None),
                                       None)
        if blocking is not None:
            line, words, reason = blocking
            where = f"{self.shown}:{line}"
            for a in p.acls:
                self.note(a.line, a.words, a.expression if isinstance(a.expression, str)
                          else f"not carried: the service's routing is not modelled ({where})")
            for r in p.rules:
                self.note(r.line, r.words, reason if r.line == line
                          else f"not carried: the service's routing is not modelled ({where})")
            return {"rules_not_modelled": f"{where}: {' '.join(words)}: {reason}"}
        acls = []
        if p.mode != "http":  # no rule uses them (why): their fetches are HTTP's, unused in tcp mode
            for a in p.acls:
                self.note(a.line, a.words, a.expression if isinstance(a.expression, str)
                          else "an ACL of HTTP fetches in a tcp-mode proxy (no rule uses it)")
            entries = {}
        for name, lines in entries.items():
            bad = [a for a in lines if isinstance(a.expression, str)]
            for a in bad:
                self.note(a.line, a.words, a.expression)
            for a in lines if not bad else []:
                acls.append({"name": name, **a.expression})
            for a in lines if bad else []:
                if a not in bad:
                    self.note(a.line, a.words, f"not carried: another line of acl '{name}' is not modelled")
        rules = []
        for r in p.rules:
            acls += [{"name": n, **e} for n, e in r.anonymous.items()]
            rules.append({"pool": r.pool, **({r.key: " ".join(r.condition)} if r.key else {})})
        return {k: v for k, v in (("acls", acls), ("rules", rules)) if v}

    def _acl_expression(self, no: int, words: list[str]) -> dict | str:
        """An ACL expression (manual 7.1: FETCH [FLAGS] [--] PATTERN...) -> the
        scenario's acl keys (fetch, match, icase, patterns), or why the twin
        cannot match it."""
        if not words:
            self.fail(no, "an ACL needs a fetch (manual 7.1)")
        m = re.fullmatch(r"([A-Za-z0-9_.]+)(?:\(([^()]*)\))?(,.*)?", words[0])
        if m is None:
            self.fail(no, f"'{words[0]}' is not a sample fetch (manual 7.1: FETCH[(ARGS)][,CONVERTER...])")
        fetch, arg, converters = m.group(1), m.group(2), m.group(3)
        base, _, suffix = fetch.partition("_") if fetch.startswith(("path_", "hdr_", "url_", "base_")) \
            else (fetch, "", "")
        if converters:
            return f"converters ('{converters[1:]}') are not modelled"
        if base in ("path", "url", "base") and arg is None and suffix in ("", "beg", "end", "sub"):
            out = {"fetch": base, "match": suffix or "str"}
        elif base in ("hdr", "req.hdr") and arg is not None and arg.strip().lower() == "host" and \
                suffix in ("", "beg", "end", "sub") and not (base == "req.hdr" and suffix):
            out = {"fetch": "host", "match": suffix or "str"}
        else:
            return (f"fetch '{words[0]}' is not modelled (the twin matches path, url, base and hdr(host), each "
                    "exact or with _beg, _end, _sub)")
        icase, k = False, 1
        while k < len(words) and words[k].startswith("-"):  # flags come before the first pattern (7.1.1)
            flag = words[k]
            k += 1
            if flag == "--":
                break
            if flag == "-i":
                icase = True
            elif flag == "-n":
                pass  # no DNS resolution: string patterns are never resolved
            elif flag == "-m":
                if k >= len(words):
                    self.fail(no, "acl flag '-m' needs a match method (manual 7.1.1)")
                method = words[k]
                k += 1
                if method not in ("str", "beg", "end", "sub"):
                    return f"match method '-m {method}' is not modelled (the twin has str, beg, end, sub)"
                out["match"] = method
            else:
                return f"acl flag '{flag}' is not modelled (the twin takes -i, -m str|beg|end|sub, -n, --)"
        patterns = words[k:]
        for p in patterns:  # (an empty word ends HAProxy's arguments: no empty pattern comes here)
            if "\x00" in p:
                return "a pattern with a NUL byte is not modelled (the core's URL rule patterns are C strings)"
            if len(p.encode("utf-8")) > 255:
                return "a pattern over 255 bytes is not modelled (the core's URL rules store 1..255 bytes)"
        return {**out, "icase": icase, "patterns": patterns}

    def _use_backend(self, p: _Proxy, no: int, words: list[str], args: list[str]) -> None:
        """use_backend BACKEND [{if | unless} CONDITION] (manual 4.2, 7.2)."""
        if not args:
            self.fail(no, "use_backend needs a backend name")
        target = args[0]
        dynamic = "%[" in target
        if not dynamic:
            p.refs.append(("backend", target, no))
        rule = _UseBackend(None if dynamic else target, no, words, None, [], {})
        if len(args) > 1:
            if args[1] not in ("if", "unless"):
                self.fail(no, f"unexpected keyword '{args[1]}' after switching rule, only 'if' and 'unless' "
                              "are allowed")
            rule.key = args[1]
            anon = 0
            k = 2
            known = {a.name for a in p.acls}
            while k < len(args):
                word = args[k]
                bangs = len(word) - len(word.lstrip("!"))
                rest = word[bangs:]
                k += 1
                if rest == "{":  # an anonymous ACL, up to the next '}' (manual 7.2)
                    end = next((j for j in range(k, len(args)) if args[j] == "}"), None)
                    if end is None:
                        self.fail(no, "missing closing '}' in condition")
                    anon += 1
                    name = f"@{len(p.rules) + 1}" + (f".{anon}" if anon > 1 else "")
                    rule.anonymous[name] = self._acl_expression(no, args[k:end])
                    rule.condition.append("!" * bangs + name)
                    k = end + 1
                    continue
                if rest and rest != "||" and rest.lower() != "or":
                    if rest not in known and rest not in _PREDEFINED_ACLS:
                        self.fail(no, f"no such ACL: '{rest}' (an ACL is declared before the rules that use it)")
                    if rest not in known:
                        p.predefined_used.setdefault(rest, no)
                rule.condition.append(word)
        p.rules.append(rule)

    def _balance(self, p: _Proxy, no: int, words: list[str], args: list[str]) -> None:
        if not args:
            self.fail(no, "balance needs an algorithm")
        algo = args[0]
        base = re.match(r"^([a-z_-]+)(\(.*\))?$", algo)
        stem = base.group(1) if base else algo
        for key in _BALANCE_KEYS:
            p.settings.pop(key, None)
        if stem == "uri":
            self._balance_uri(p, no, words, args[1:])
        elif stem == "hdr":
            name = base.group(2)[1:-1] if base and base.group(2) else ""
            if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
                self.fail(no, "balance hdr(<name>): a header field name is needed (manual 4.2 'balance')")
            if args[1:] not in ([], ["use_domain_only"]):
                self.fail(no, f"balance {algo}: only 'use_domain_only' may follow (got '{' '.join(args[1:])}')")
            p.balance = ("hdr", words, no)
            p.settings["hdr_name"] = name
            p.settings["hdr_domain_only"] = len(args) == 2
        elif stem in _ALGOS_MODELLED and (stem != "random" or algo in ("random", "random(2)")) and len(args) == 1 \
                and (base.group(2) is None or stem == "random"):
            p.balance = (_ALGOS_MODELLED[stem], words, no)
        elif stem in _ALGOS_KNOWN or stem in _ALGOS_MODELLED:
            p.balance = (None, words, no)
            self.note(no, words, "dp_sched has no such scheduler (or not with these arguments): the pool gets none")
        else:
            self.fail(no, f"balance: unknown algorithm '{algo}' (manual 4.2 'balance')")

    def _balance_uri(self, p: _Proxy, no: int, words: list[str], opts: list[str]) -> None:
        """backend.c backend_parse_balance (2.6): whole, path-only, len N, depth N (N > 0), any order."""
        k = 0
        while k < len(opts):
            if opts[k] in ("whole", "path-only"):
                p.settings["uri_" + opts[k].replace("-", "_")] = True
                k += 1
            elif opts[k] in ("len", "depth"):
                if k + 1 == len(opts) or not re.fullmatch(r"\d+", opts[k + 1]) or int(opts[k + 1]) <= 0:
                    self.fail(no, f"balance uri: '{opts[k]}' expects a positive integer")
                p.settings["uri_" + opts[k]] = int(opts[k + 1])
                k += 2
            else:
                self.fail(no, f"balance uri: only 'len', 'depth', 'path-only' and 'whole' (got '{opts[k]}')")
        p.balance = ("uri", words, no)

    def _bind(self, p: _Proxy, no: int, words: list[str], args: list[str]) -> None:
        if not args:
            self.fail(no, "bind needs an address")
        opts = args[1:]
        k = 0
        while k < len(opts):
            if opts[k] not in kw.BIND_OPTIONS:
                self.fail(no, f"unknown bind option '{opts[k]}' (manual 5.1)")
            k += 1 + kw.BIND_OPTIONS[opts[k]]
        listed = False
        for item in args[0].split(","):
            if "@" in item or item.startswith("/"):
                self.note(no, words, "a non-IP listener (unix@, fd@, abns@, a path or an address family prefix)")
                listed = True
                continue
            host, port_text = item.rsplit(":", 1) if ":" in item else (item, "")
            host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
            if not re.fullmatch(r"\d+", port_text):
                if re.fullmatch(r"\d+-\d+", port_text):
                    self.note(no, words, "a port range")
                    listed = True
                    continue
                self.fail(no, f"bind '{item}': needs ':PORT' with a port number (manual 4.2 'bind')")
            port = int(port_text)
            if not 1 <= port <= 65535:
                self.fail(no, f"bind '{item}': port {port} is out of range 1..65535")
            try:
                host = check_host(host or "*", wildcard=True)
            except ValueError as exc:
                self.fail(no, f"bind '{item}': {exc}")
            p.binds.append(join_endpoint(host, port))
        if opts and not listed:
            self.note(no, words, "bind options are not modelled (the listening address is)")

    def _server_options(self, p: _Proxy, no: int, words: list[str], opts: list[str]) -> dict:
        """The scenario keys of a server or default-server line's options (manual 5.2)."""
        out: dict = {}
        unmodelled: list[str] = []
        k = 0
        while k < len(opts):
            o = opts[k]
            if o not in kw.SERVER_OPTIONS:
                self.fail(no, f"unknown server option '{o}' (manual 5.2)")
            arity = kw.SERVER_OPTIONS[o]
            if arity and k + 1 >= len(opts):
                self.fail(no, f"server option '{o}' needs a value")
            v = opts[k + 1] if arity else None
            if o == "weight":
                out["weight"] = parse_int(v, "weight", 0, 256)
            elif o in ("backup", "no-backup"):
                out["backup"] = o == "backup"
            elif o in ("disabled", "enabled"):
                out["disabled"] = o == "disabled"
            elif o == "maxconn":
                out["maxconn"] = parse_int(v, "maxconn", 0, 2**31 - 1)
            elif o == "maxqueue":
                out["maxqueue"] = parse_int(v, "maxqueue", 0, 2**31 - 1)
            elif o == "slowstart":
                out["slowstart_ms"] = parse_time_ms(v, "slowstart")
            elif o in ("check", "no-check"):
                out["check"] = o == "check"
            elif o in ("inter", "fastinter", "downinter"):
                ms = parse_time_ms(v, o)
                if ms <= 0:
                    raise _Bad(f"{o}: must be more than 0")
                out[f"{o}_ms"] = ms
            elif o in ("rise", "fall"):
                out[o] = parse_int(v, o, 1, 2**31 - 1)
            elif o == "cookie":
                out["cookie"] = v
            elif o == "track":
                p.refs.append(("track", v, no))
                unmodelled.append(f"track {v}")
            elif o == "source":  # source <addr> [usesrc <x>] [interface <x>]
                k += 2
                while k + 1 < len(opts) and opts[k] in ("usesrc", "interface"):
                    k += 2
                unmodelled.append("source ...")
                continue
            else:
                unmodelled.append(o if not arity else f"{o} {v}")
            k += 1 + arity
        later = sorted(key for key in out if not modelled("server", key))
        if later:
            self.note(no, words, "not modelled yet: would set server keys " + ", ".join(f"'{k}'" for k in later))
        if unmodelled:
            self.note(no, words, f"server options not modelled: {', '.join(unmodelled)}")
        return out

    def _server(self, p: _Proxy, no: int, words: list[str], args: list[str]) -> None:
        if len(args) < 2:
            self.fail(no, "server needs a name and an address")
        name, addr = args[0], args[1]
        if not re.fullmatch(r"[A-Za-z0-9_.:-]+", name):
            self.fail(no, f"server name '{name}': letters, digits, '-', '_', '.' and ':'")
        for s in p.servers:
            if s["name"] == name:
                self.fail(no, f"server '{name}' already defined at line {s['_line']} in {p.kind} '{p.name}'")
        opts = self._server_options(p, no, words, args[2:])
        if "@" in addr or addr.startswith("/"):
            self.fail(no, f"server '{name}': address '{addr}' is not an IP address or host name the twin can hold")
        # manual 5.2 / 4.2 'bind': the port is after the last colon, also for
        # IPv6 ('2001:db8::2:80'); '[2001:db8::2]:80' brackets the address
        m = re.fullmatch(r"\[([^\]]+)\](?::(.*))?", addr)
        host, port_text = (m.group(1), m.group(2) or "") if m else addr.rsplit(":", 1) if ":" in addr else (addr, "")
        if re.fullmatch(r"[+-]\d+", port_text):
            self.fail(no, f"server '{name}': port offsets ('{addr}') are not modelled")
        if port_text and not re.fullmatch(r"\d+", port_text):
            self.fail(no, f"server '{name}': port '{port_text}' of '{addr}' is not a number")
        port = int(port_text) if port_text else None
        if port is not None and not 1 <= port <= 65535:
            self.fail(no, f"server '{name}': port {port} is out of range 1..65535")
        try:
            host = check_host(host, wildcard=False)
        except ValueError as exc:
            hint = " (the port is after the last colon: write an IPv6 address as [ADDR] or [ADDR]:PORT)" \
                if addr.count(":") > 1 and not m else ""
            self.fail(no, f"server '{name}': {exc}{hint}")
        server = {"name": name, "address": host}
        if port is not None:
            server["port"] = port
        server.update(p.default_server)
        server.update(opts)
        server["_line"] = no
        p.servers.append(server)

    def _cookie(self, no: int, args: list[str]) -> dict:
        if not args:
            self.fail(no, "cookie needs a name")
        out: dict = {"name": args[0]}
        modes = [a for a in args[1:] if a in ("rewrite", "insert", "prefix")]
        if len(modes) > 1:
            self.fail(no, f"cookie: '{modes[0]}' and '{modes[1]}' exclude each other (manual 4.2 'cookie')")
        out["mode"] = modes[0] if modes else "rewrite"
        out["indirect"] = "indirect" in args[1:]
        out["nocache"] = "nocache" in args[1:]
        k = 1
        flags = ("rewrite", "insert", "prefix", "indirect", "nocache", "postonly", "preserve", "httponly",
                 "secure", "dynamic")
        while k < len(args):
            a = args[k]
            if a in ("domain", "maxidle", "maxlife", "attr"):
                if k + 1 >= len(args):
                    self.fail(no, f"cookie: '{a}' needs a value")
                if a in ("maxidle", "maxlife"):
                    parse_time_ms(args[k + 1], f"cookie {a}")
                k += 2
            elif a in flags:
                k += 1
            else:
                self.fail(no, f"cookie: unknown option '{a}'")
        return out

    def _stick_table(self, no: int, args: list[str]) -> dict:
        out: dict = {}
        k = 0
        while k < len(args):
            a = args[k]
            v = args[k + 1] if k + 1 < len(args) else None
            if a in ("nopurge",):
                k += 1
                continue
            if v is None:
                self.fail(no, f"stick-table: '{a}' needs a value")
            if a == "type":
                if v not in ("ip", "ipv6", "integer", "string", "binary"):
                    self.fail(no, f"stick-table: type '{v}' must be ip, ipv6, integer, string or binary")
                out["type"] = v
            elif a == "len":
                parse_int(v, "stick-table len", 1, 65535)
            elif a == "size":
                out["size"] = parse_size(v, "stick-table size")
            elif a == "expire":
                out["expire_ms"] = parse_time_ms(v, "stick-table expire")
            elif a not in ("peers", "srvkey", "store", "write-to"):
                self.fail(no, f"stick-table: unknown option '{a}'")
            k += 2
        if "type" not in out or "size" not in out:
            self.fail(no, "stick-table needs 'type' and 'size'")
        return out

    def _check_references(self) -> None:
        backends = {p.name: p for p in self.proxies if p.kind in ("backend", "listen")}
        for p in self.proxies:
            if p.kind in ("frontend", "listen") and p.default_backend is not None:
                name, no = p.default_backend
                if name not in backends:
                    self.fail(no, f"default_backend '{name}': no backend or listen section of that name")
            for what, name, no in p.refs:
                if what == "backend" and name not in backends:
                    self.fail(no, f"use_backend '{name}': no backend or listen section of that name")
                if what == "server" and name not in {s["name"] for s in p.servers}:
                    self.fail(no, f"use-server '{name}': no server of that name in {p.kind} '{p.name}'")
                if what == "track":
                    bk, _, srv = name.rpartition("/")
                    target = backends.get(bk) if bk else p
                    if target is None or srv not in {s["name"] for s in target.servers}:
                        self.fail(no, f"track '{name}': no such server")


# ---------------------------------------------------------------- mapping


def _scheduler(p: _Proxy) -> str | None:
    if p.balance is None:
        return "roundrobin"  # manual 4.2 'balance': roundrobin is the default
    sched = p.balance[0]
    if sched in ("source", "uri", "hdr") and p.hash_consistent:
        return sched + "-consistent"
    return sched


def _pool(p: _Proxy) -> dict:
    pool: dict = {"name": p.name, "mode": p.mode, "scheduler": _scheduler(p)}
    if p.allbackups:
        pool["allbackups"] = True
    extra = dict(p.settings)
    if p.timeouts:
        extra["timeouts_ms"] = {k: v for k, v in p.timeouts.items() if k not in ("client", "client-fin")}
    for key, value in extra.items():
        if value is not None and not (value is False and key in _BALANCE_KEYS) and modelled("pool", key):
            pool[key] = value
    servers = []
    for s in p.servers:
        servers.append({k: v for k, v in s.items() if not k.startswith("_") and modelled("server", k)})
    pool["servers"] = servers
    return pool


def build_balancer(proxies: list[_Proxy]) -> dict:
    services, pools = [], []
    for p in proxies:
        if p.kind in ("backend", "listen") and (p.kind == "backend" or p.servers):
            pools.append(_pool(p))
        if p.kind in ("frontend", "listen"):
            svc: dict = {"name": p.name, "mode": p.mode, "listen": p.binds}
            # a default_backend (its own or its defaults') wins over a listen's own servers,
            # which then serve only as a backend others name (manual 4.2 'default_backend')
            if p.default_backend is not None:
                svc["pool"] = p.default_backend[0]
            elif p.kind == "listen" and p.servers:
                svc["pool"] = p.name
            timeouts = {k: v for k, v in p.timeouts.items() if k in ("client", "client-fin", "http-request",
                                                                      "http-keep-alive", "tarpit")}
            if timeouts and modelled("service", "timeouts_ms"):
                svc["timeouts_ms"] = timeouts
            svc.update(p.content)
            services.append(svc)
    return {"source": "haproxy", "services": services, "pools": pools}


def _remap_cases(balancer: dict) -> list[dict]:
    """The what-ifs per pool the twin can answer: its first server fails or drains; a server is added."""
    cases = []
    for pool in balancer["pools"]:
        usable = [s for s in pool["servers"] if not s.get("disabled") and not s.get("backup")
                  and s.get("weight", 1) > 0]
        if pool.get("scheduler") and len(usable) >= 2:
            name = case_suffix(pool["name"])
            cases.append({"id": f"fail-{name}", "method": "remap", "pool": pool["name"],
                          "server": usable[0]["name"]})
            cases.append({"id": f"drain-{name}", "method": "remap", "pool": pool["name"],
                          "server": usable[0]["name"], "action": "drain"})
            cases.append({"id": f"add-{name}", "method": "remap", "pool": pool["name"], "action": "add"})
    return cases


def _timed_cases(balancer: dict) -> list[dict]:
    """Per pool with a remap case: its first server drained under a workload
    (model/lb/helper/lb-timed.h) with the pool's maxconn, maxqueue, timeout
    queue, option redispatch and cookie; the workload is the what-if's
    (`timed` defaults, runners/lb/schema.py TimedWhatIf: 100 connections/s,
    exponential lifetimes of mean 1 s: assumptions, edit them)."""
    return [{"id": f"drain-timed-{case['id'][len('drain-'):]}", "method": "timed", "pool": case["pool"],
             "server": case["server"], "action": "drain"}
            for case in _remap_cases(balancer) if case["id"].startswith("drain-")]


def _ecmp_cases(balancer: dict) -> list[dict]:
    """Per pool with a remap case: the balancer deployed as 4 instances
    (assumption: the configuration does not say how many run) behind a
    router's ECMP route, Linux's defaults (hash on the addresses); one
    instance fails, or a fifth is added, with a hash-threshold group and
    with a resilient one (model/lb/helper/lb-ecmp.h)."""
    cases = []
    for case in _remap_cases(balancer):
        if case["id"].startswith("fail-"):
            name = case["id"][len("fail-"):]
            for tag, mode in (("", "hash-threshold"), ("rh-", "resilient")):
                cases.append({"id": f"ecmp-{tag}fail-{name}", "method": "ecmp", "pool": case["pool"],
                              "ecmp": {"instances": 4, "action": "fail", "mode": mode}})
                cases.append({"id": f"ecmp-{tag}add-{name}", "method": "ecmp", "pool": case["pool"],
                              "ecmp": {"instances": 4, "action": "add", "mode": mode}})
    return cases


def _ms(value: float | None, default: float) -> int:
    """A time of the scenario as the failover model's whole milliseconds (HAProxy's timer unit)."""
    return max(1, math.ceil(default if value is None else value))


def _per_server(values: list[int]) -> int | str:
    """A failover per-server key: one integer when every server has it, else
    one per server in pool order ("3,2,1", lb-failover.h)."""
    return values[0] if len(set(values)) == 1 else ",".join(str(v) for v in values)


def _failover_cases(balancer: dict) -> list[dict]:
    """Per pool with a checked usable server: the first one dies (its
    process gone: connections refused) at 10 s, under 100 requests/s, and
    model/lb's failover model answers when the checks take it out and how
    many requests fail meanwhile, with the pool's own weights, each server's
    inter, fastinter, downinter, rise and fall and whether it has `check`
    at all, the pool's timeout connect and timeout check, retries, option
    redispatch (with its interval) and persistence.
    Defaults are HAProxy's (manual 5.2: weight 1, inter 2 s, rise 2, fall 3;
    fastinter and downinter default to inter; 4.2: retries 3)."""
    cases = []
    for pool in balancer["pools"]:
        usable = [s for s in pool["servers"] if not s.get("disabled") and not s.get("backup")
                  and s.get("weight", 1) > 0]
        checked = [i for i, s in enumerate(usable) if s.get("check")]
        if not (pool.get("scheduler") and len(usable) >= 2 and checked):
            continue
        inters = [_ms(s.get("inter_ms"), 2000) for s in usable]
        keys = {"servers": len(usable), "weights": _per_server([s.get("weight", 1) for s in usable]),
                "scheduler": pool["scheduler"], "kill_server": checked[0], "inter_ms": _per_server(inters),
                "fastinter_ms": _per_server([_ms(s.get("fastinter_ms"), i) for s, i in zip(usable, inters)]),
                "downinter_ms": _per_server([_ms(s.get("downinter_ms"), i) for s, i in zip(usable, inters)]),
                "rise": _per_server([s.get("rise", 2) for s in usable]),
                "fall": _per_server([s.get("fall", 3) for s in usable]),
                "retries": pool.get("retries", 3), "redispatch": bool(pool.get("redispatch"))}
        if len(checked) < len(usable):  # a server without check is never probed: up for good (lb-failover.h)
            keys["checked"] = _per_server([int(bool(s.get("check"))) for s in usable])
        if pool.get("redispatch") and pool.get("redispatch_after") is not None:
            keys["redispatch_after"] = pool["redispatch_after"]
        if pool.get("connect_timeout_ms") is not None:
            keys["connect_timeout_ms"] = _ms(pool["connect_timeout_ms"], 0)
            # timeout check shortens a check's connection to min(timeout connect, inter) only when both are
            # set (tcpcheck_eval_connect in src/tcpcheck.c); otherwise the connection gets inter, the model's
            # value without the key
            if pool.get("check_timeout_ms") is not None:
                keys["check_timeout_ms"] = _ms(pool["check_timeout_ms"], 0)
        keys.update({k: pool[k] for k in ("hash_function", "hash_avalanche", "uri_whole", "uri_path_only",
                                          "uri_len", "uri_depth", "hdr_domain_only") if k in pool})
        # the checks must have time to take the dying server out before the
        # model's 30 s end: the first failing check comes up to inter after
        # the death at 10 s, the others fastinter apart (fall of them: one spare)
        dead, dead_inter = usable[checked[0]], inters[checked[0]]
        needed_s = (dead_inter + dead.get("fall", 3) * _ms(dead.get("fastinter_ms"), dead_inter)) / 1000
        if needed_s > 15:
            keys["duration_s"] = math.ceil(10 + 2 * needed_s)
        cookie, table = pool.get("cookie"), pool.get("stick_table")
        if cookie and cookie["mode"] == "insert" and all(s.get("cookie") for s in usable):
            keys["persistence"] = "cookie"  # with both, the what-if models the cookie only (docs/import-lb.md 7)
        elif pool.get("stick_on") == "src" and table and table["type"] == "ip":
            keys.update(persistence="stick_src", stick_size=min(table["size"], 1 << 24),  # the model's bound
                        stick_expire_ms=math.ceil(table.get("expire_ms") or 0))
        if "persistence" in keys:
            # assumption: 10 clients per server, each returning; the model cycles over them
            keys["clients"] = 10 * len(usable)
        name = case_suffix(pool["name"])
        cases.append({"id": f"failover-{name}", "method": "failover", "failover": keys})
    return cases


# HAProxy 2.6 numbers of the fill-SERVICE case (docs/import-lb.md, "Table fill")
BUFSIZE_DEFAULT = 16384  # manual 3.2 tune.bufsize: "The default value is 16384"
# manual 4.2 maxconn: "a connection contains two buffers of tune.bufsize (16kB by default) each, as well
# as some other data resulting in about 33 kB": the other data taken as 33 x 1024 - 2 x 16384 = 1024
# bytes (our reading of "about"; HAProxy's stream, connection and task structures are not measured here)
OTHER_BYTES = 33 * 1024 - 2 * BUFSIZE_DEFAULT
# global maxconn unset: HAProxy 2.6 derives it from ulimit -n, about two descriptors a connection
# (compute_ideal_maxconn, src/haproxy.c); assumption: ulimit -n 1024, systemd's default soft limit
ASSUMED_ULIMIT_N = 1024
# the kernel caps listen()'s backlog at net.core.somaxconn: 4096 since Linux 5.4 (assumption: the host's)
SOMAXCONN = 4096
REFUSED_AS = ("at the limit HAProxy stops accepting (manual 3.2 maxconn: 'Proxies will stop accepting "
              "connections'); the kernel completes handshakes into the listener's accept queue (manual 4.2 "
              "maxconn: 'queued by the system in the socket's listen queue'); when that is full the kernel "
              "drops the handshake (TcpExt ListenOverflows and ListenDrops in /proc/net/netstat; the client "
              "retransmits its SYN) or resets it with net.ipv4.tcp_abort_on_overflow=1; HAProxy's own "
              "counters do not see them (show stat scur stays at slim)")


def _fill_cases(parser: "_Parser") -> list[dict]:
    """Per frontend or listen section with an IP listener: how many
    connections it holds (its maxconn, else the global maxconn, both capped
    by the global one), their memory (two tune.bufsize buffers and about
    1 kB more each: manual 4.2 maxconn), the accept queue beyond it (its
    backlog, else its maxconn, capped by somaxconn) and what is refused
    (runners/lb/tablefill.py). The workload (1 s mean lifetimes) is the
    what-if's assumption, as the timed case's."""
    shown = parser.shown
    g = parser.process.get("maxconn")
    buf, buf_line = parser.process.get("tune.bufsize", (BUFSIZE_DEFAULT, None))
    bytes_source = (f"2 x tune.bufsize {buf}" + (f" ({shown}:{buf_line})" if buf_line else " (HAProxy's default)")
                    + f" + {OTHER_BYTES} (manual 4.2 maxconn: 'about 33 kB' a connection with 16 kB buffers; "
                    "the rest is our reading); kernel socket buffers not counted")
    cases = []
    for p in parser.proxies:
        if p.kind not in ("frontend", "listen") or not p.binds:
            continue
        fe = p.fill.get("maxconn")
        if fe is not None and fe[0] > 0:
            limit, source = fe[0], f"{shown}:{fe[1]}: maxconn {fe[0]}"
            if g is not None and g[0] < limit:
                limit, source = g[0], f"{shown}:{g[1]}: global maxconn {g[0]} (below the frontend's {fe[0]})"
        elif g is not None:
            limit, source = g[0], f"{shown}:{g[1]}: global maxconn {g[0]}"
        else:
            limit = ASSUMED_ULIMIT_N // 2
            source = ("assumption: no maxconn in the configuration; HAProxy 2.6 derives the global maxconn from "
                      f"ulimit -n, about two descriptors a connection; ulimit -n {ASSUMED_ULIMIT_N} assumed: edit it")
        bl = p.fill.get("backlog")
        if bl is not None and bl[0] > 0:
            backlog, qsource = bl[0], f"{shown}:{bl[1]}: backlog {bl[0]}"
        else:
            backlog, qsource = limit, f"the frontend's maxconn {limit} (manual 4.2 backlog: its default)"
        if backlog > SOMAXCONN:
            qsource += f", capped by net.core.somaxconn {SOMAXCONN} (Linux 5.4+ default; assumption)"
        name = case_suffix(p.name)
        cases.append({"id": f"fill-{name}", "method": "tablefill", "tablefill": {
            "limit": limit, "limit_source": source, "bytes_per_connection": 2 * buf + OTHER_BYTES,
            "bytes_source": bytes_source, "accept_queue": min(backlog, SOMAXCONN), "queue_source": qsource,
            "refused_as": REFUSED_AS, "counter": "listen_overflows"}})
    return cases


def import_file(path: str | Path, shown: str | None = None, env: Mapping[str, str] | None = None) -> Imported:
    """Read a haproxy.cfg into an lb scenario. Raises ImportFileError (FILE:LINE)."""
    shown = shown or str(path)
    parser = _Parser(read_text(Path(path), shown), shown, env)
    proxies = parser.parse()
    balancer = build_balancer(proxies)
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(path).stem).strip("-.") or "haproxy"
    scenario = {"scenario": f"haproxy-{name}", "kind": "lb",
                "description": f"HAProxy configuration {Path(path).name}, imported",
                "balancer": balancer,
                "cases": _remap_cases(balancer) + _timed_cases(balancer) + _failover_cases(balancer)
                + _ecmp_cases(balancer) + _fill_cases(parser)}
    return Imported(scenario, parser.listed, shown)


def lab_routing(path: str | Path, shown: str | None = None, env: Mapping[str, str] | None = None) -> dict:
    """For a lab that sends its own requests to each frontend or listen section: its content (acls and
    rules, or rules_not_modelled) as import_file gives it but with monitor-uri and the stats page left
    out, the line of each rule in order, and those URIs as (line, kind, uri): 'monitor-uri' answers
    the request target equal to its URI, 'stats' (GET, HEAD, POST) one starting with its URI (HAProxy
    2.6 http_process_req_common, stats_check_uri; the last line of each kind sets it, the stats page's
    default URI is /haproxy?stats)."""
    shown = shown or str(path)
    parser = _Parser(read_text(Path(path), shown), shown, env)
    parser.intercepts_divert = False
    out = {}
    for p in parser.parse():
        if p.kind not in ("frontend", "listen"):
            continue
        monitor = [(no, "monitor-uri", w[1]) for no, w in p.intercepts if w[0] == "monitor-uri" and len(w) > 1]
        stats = [(no, "stats", w[2] if w[1] == "uri" and len(w) > 2 else None) for no, w in p.intercepts
                 if w[0] == "stats"]
        uris = [s for s in stats if s[2] is not None]
        stats = [uris[-1] if uris else (stats[0][0], "stats", "/haproxy?stats")] if stats else []
        out[p.name] = {"content": p.content, "rule_lines": [r.line for r in p.rules],
                       "intercepts": monitor[-1:] + stats}
    return out


# ---------------------------------------------------------------- export

_SCHED_TO_BALANCE = {"roundrobin": "roundrobin", "static-rr": "static-rr", "leastconn": "leastconn",
                     "first": "first", "source": "source", "source-consistent": "source", "random": "random",
                     "uri": "uri", "uri-consistent": "uri", "hdr": "hdr", "hdr-consistent": "hdr"}


def export(scenario) -> str:
    """A haproxy.cfg from a loaded lb scenario's `balancer` (every key it holds)."""
    from routertwin.errors import UserError

    bal = scenario.config.balancer
    where = str(scenario.path) if scenario.path else scenario.name
    if bal is None:
        raise UserError(f"{where}: key 'balancer': the scenario describes no balancer to export")
    if not bal.services and not bal.pools:
        raise UserError(f"{where}: key 'balancer': no services and no pools: nothing HAProxy could run "
                        "(the imported configuration had no proxy the twin models)")
    out = [f"# written by routertwin export haproxy from {Path(where).name}: what the scenario models.",
           "# Timeouts are in it only when the scenario has them (HAProxy warns when they are missing).", "",
           ]
    fills = _export_fills(scenario)
    bufsizes = {f.bytes_per_connection for f in fills.values()}
    if bufsizes and bufsizes != {2 * BUFSIZE_DEFAULT + OTHER_BYTES}:
        # one tune.bufsize for the whole process: every fill case was imported with the same one
        out += ["global", f"    tune.bufsize {(max(bufsizes) - OTHER_BYTES) // 2}", ""]
    out += ["defaults", "    mode tcp", ""]
    for svc in bal.services:
        out += [f"frontend {svc.name}", f"    mode {svc.mode if svc.mode != 'udp' else 'tcp'}"]
        fill = fills.get(case_suffix(svc.name))
        if fill is not None and not fill.limit_source.startswith("assumption"):
            # the limit the fill case holds (the frontend's maxconn, or the global one below it)
            out.append(f"    maxconn {fill.limit}")
        if fill is not None and ": backlog " in fill.queue_source:
            out.append(f"    backlog {fill.accept_queue}")
        if svc.mode == "udp":
            raise UserError(f"{where}: service '{svc.name}': HAProxy does not balance UDP")
        out += [f"    bind {ep}" for ep in svc.listen]
        for key, ms in (getattr(svc, "timeouts_ms", None) or {}).items():
            out.append(f"    timeout {key} {_fmt_time(ms)}")
        out += _export_content(svc)
        if svc.pool is not None:
            out.append(f"    default_backend {svc.pool}")
        out.append("")
    for pool in bal.pools:
        if pool.scheduler not in _SCHED_TO_BALANCE:
            raise UserError(f"{where}: pool '{pool.name}': scheduler '{pool.scheduler}' has no HAProxy "
                            f"equivalent (HAProxy's: {', '.join(_SCHED_TO_BALANCE)})")
        if pool.mode == "udp":
            raise UserError(f"{where}: pool '{pool.name}': HAProxy does not balance UDP")
        out += [f"backend {pool.name}", f"    mode {pool.mode}", f"    balance {_export_balance(pool)}"]
        hash_type = _export_hash_type(pool)
        if hash_type:
            out.append(f"    hash-type {hash_type}")
        if pool.allbackups:
            out.append("    option allbackups")
        out += _export_pending(pool)
        for s in pool.servers:
            line = f"    server {s.name} {join_endpoint(s.address, s.port)} weight {s.weight}"
            line += " backup" * s.backup + " disabled" * s.disabled
            if s.maxconn:
                line += f" maxconn {s.maxconn}"
            if s.maxqueue:
                line += f" maxqueue {s.maxqueue}"
            if s.slowstart_ms:
                line += f" slowstart {_fmt_time(s.slowstart_ms)}"
            line += _export_pending_server(s)
            out.append(line)
        out.append("")
    return "\n".join(out)


def _haproxy_word(word: str) -> str:
    """A word HAProxy reads back as itself (manual 2.2): bare when plain, else quoted."""
    if re.fullmatch(r"[A-Za-z0-9_./:@%+=,~^*?&;!|-]+", word) and not word.startswith(("!", "{", "}")):
        return word
    if "'" not in word:
        return f"'{word}'"
    return '"' + re.sub(r'([\\"$#])', r"\\\1", word) + '"'


def _acl_words(a) -> str:
    """The ACL expression of a scenario acl entry (manual 7.1)."""
    fetch = a.fetch if a.fetch != "host" else "hdr(host)"
    if a.match != "str":
        fetch = f"{a.fetch}_{a.match}" if a.fetch != "host" else f"hdr_{a.match}(host)"
    flags = " -i" * a.icase + " --" * any(p.startswith("-") for p in a.patterns)
    return fetch + flags + "".join(" " + _haproxy_word(p) for p in a.patterns)


def _export_content(svc) -> list[str]:
    """acl and use_backend lines of a service (anonymous '@N' entries go back inline as { ... }; the
    schema has each one once, used by a rule)."""
    if svc.rules_not_modelled is not None:
        return [f"    # content switching not exported: {svc.rules_not_modelled}"]
    out = [f"    acl {a.name} {_acl_words(a)}" for a in svc.acls if not a.name.startswith("@")]
    anonymous = {a.name: a for a in svc.acls if a.name.startswith("@")}
    for r in svc.rules:
        text = r.if_ if r.if_ is not None else r.unless
        words = []
        for w in (text or "").split():
            name = w.lstrip("!")
            if name in anonymous:
                words.append(w[:len(w) - len(name)] + "{ " + _acl_words(anonymous[name]) + " }")
            else:
                words.append(w)
        cond = f" {'if' if r.if_ is not None else 'unless'} {' '.join(words)}" if text is not None else ""
        out.append(f"    use_backend {r.pool}{cond}")
    return out


def _export_fills(scenario) -> dict:
    """The fill-SERVICE cases' settings by service name: export writes back
    what they model (the connections held, the accept queue, tune.bufsize),
    so that import, export and import again give the same fill cases."""
    return {c.id[len("fill-"):]: c.tablefill for c in scenario.config.cases
            if c.method == "tablefill" and c.tablefill is not None and c.tablefill.limit is not None}


def _export_balance(pool) -> str:
    words = [_SCHED_TO_BALANCE[pool.scheduler]]
    if words[0] == "uri":
        words += ["whole"] * pool.uri_whole + ["path-only"] * pool.uri_path_only
        words += [f"len {pool.uri_len}"] * (pool.uri_len is not None)
        words += [f"depth {pool.uri_depth}"] * (pool.uri_depth is not None)
    elif words[0] == "hdr":
        words = [f"hdr({pool.hdr_name})"] + ["use_domain_only"] * pool.hdr_domain_only
    return " ".join(words)


def _export_hash_type(pool) -> str:
    """hash-type for a hashing pool: the method, then the function and modifier when they are not
    the method's default (cfgparse-listen.c: a function given drops the default avalanche)."""
    consistent = pool.scheduler.endswith("-consistent")
    if not consistent and pool.hash_function is None and not pool.hash_avalanche:
        return ""
    method = "consistent" if consistent else "map-based"
    if pool.hash_function is None and pool.hash_avalanche in (None, consistent):
        return method
    aval = consistent if pool.hash_avalanche is None else pool.hash_avalanche
    return f"{method} {pool.hash_function or 'sdbm'}" + " avalanche" * aval


def _export_pending(pool) -> list[str]:
    """Pool settings of SETTINGS beyond the scheduler's (those the schema does not carry are absent)."""
    lines = []
    data = pool.model_dump()
    if data.get("httpchk") is not None:
        lines.append(f"    option httpchk {data['httpchk']}".rstrip())
    if data.get("redispatch"):
        after = data.get("redispatch_after")
        lines.append("    option redispatch" + (f" {after}" if after is not None else ""))
    if data.get("retries") is not None:
        lines.append(f"    retries {data['retries']}")
    c = data.get("cookie")
    if c:
        lines.append(f"    cookie {c['name']} {c['mode']}" + " indirect" * bool(c.get("indirect"))
                     + " nocache" * bool(c.get("nocache")))
    t = data.get("stick_table")
    if t:
        lines.append(f"    stick-table type {t['type']} size {t['size']}"
                     + (f" expire {_fmt_time(t['expire_ms'])}" if t.get("expire_ms") else ""))
    if data.get("stick_on"):
        lines.append(f"    stick on {data['stick_on']}")
    for key in ("connect", "check", "queue"):
        if data.get(f"{key}_timeout_ms") is not None:
            lines.append(f"    timeout {key} {_fmt_time(data[f'{key}_timeout_ms'])}")
    for key, ms in (data.get("timeouts_ms") or {}).items():
        lines.append(f"    timeout {key} {_fmt_time(ms)}")
    return lines


def _export_pending_server(s) -> str:
    data = s.model_dump()
    text = " check" if data.get("check") else ""
    for key in ("inter", "fastinter", "downinter"):
        if data.get(f"{key}_ms"):
            text += f" {key} {_fmt_time(data[f'{key}_ms'])}"
    for key in ("rise", "fall", "cookie"):
        if data.get(key) is not None:
            text += f" {key} {data[key]}"
    return text


def add_arguments(p) -> None:
    p.add_argument("--stat", type=Path, metavar="STAT.csv",
                   help="HAProxy's `show stat` CSV of the same configuration: its rates and times set each "
                        "drain-timed case's rate and mean lifetime, written as calibrate data with the cells they "
                        "came from (docs/import-lb.md 5d)")


def apply_stat(imported: Imported, stat: Path, shown: str | None = None) -> None:
    """The workload `show stat` measured (routertwin.importers.haproxy_stat.
    workloads) into each timed case of its pool: `rate` and `lifetime_mean_ms`
    with a `calibrate` record of each (value, sd, how, the CSV cells). The
    lifetime law stays the case's (exponential: show stat gives means only);
    a pool the CSV has no rows for keeps the assumed workload, listed."""
    from routertwin.importers import haproxy_stat

    shown = shown or str(stat)
    found, notes = haproxy_stat.workloads(stat, imported.scenario["balancer"], shown)
    imported.not_modelled.extend(notes)
    timed = [c for c in imported.scenario["cases"] if c["method"] == "timed"]
    for case in timed:
        w = found.get(case["pool"])
        if w is None or w.rate is None:
            if w is None:
                imported.not_modelled.append(NotModelled(shown, 1, f"{case['id']}: no server rows of pool "
                                                                   f"'{case['pool']}'",
                                                         "its workload stays the what-if's assumption"))
            continue
        keys: dict = {"rate": w.rate.value}
        calibrate = {"rate": w.rate.record()}
        if w.lifetime_mean_ms is not None and w.lifetime_mean_ms.value > 0:
            keys["lifetime_mean_ms"] = w.lifetime_mean_ms.value
            calibrate["lifetime_mean_ms"] = w.lifetime_mean_ms.record()
        else:
            imported.not_modelled.append(NotModelled(shown, 1, f"{case['id']}: no lifetime",
                                                     "no ttime and no open session: the lifetime stays the "
                                                     "what-if's assumption"))
        case["timed"] = {**keys, "calibrate": calibrate}
    for pool in found:
        if not any(c["pool"] == pool for c in timed):
            imported.not_modelled.append(NotModelled(shown, 1, f"pool '{pool}'",
                                                     "no timed case (fewer than two usable servers, or no "
                                                     "scheduler): its measured workload is not used"))


def convert(path: Path, args) -> "Imported":
    """The registry's entry (routertwin.importers): FILE -> the scenario."""
    from routertwin.importers._lbcommon import as_import

    imported = import_file(path, shown=str(path))
    if getattr(args, "stat", None) is not None:
        if not Path(args.stat).is_file():
            raise ImportFileError(str(args.stat), None, "file not found")
        apply_stat(imported, Path(args.stat))
    return as_import(imported, args, '.yaml')
