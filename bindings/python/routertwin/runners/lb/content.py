"""Content switching of an HTTP service: HAProxy's `acl` and `use_backend`
(configuration manual 2.6, sections 4.2 "use_backend" and 7 "Using ACLs").

A service's `rules` are evaluated in the order written; the first whose
condition holds names the pool, otherwise the service's `pool`
(`default_backend`), otherwise none (HAProxy answers 503). A condition is
HAProxy's (7.2): terms ANDed, `||` or `or` between groups ORs them, `!`
before a term negates it (each `!` toggles, as acl.c's parser strips them),
`unless` negates the whole. A term names an ACL of the service: the OR of
every `acls` entry of that name, each the OR of its patterns (7.1); `TRUE`
and `FALSE` are HAProxy's predefined ACLs (7.4) unless the service defines
them. An anonymous ACL (`{ ... }` in a condition) is imported as an entry
named `@N` (or `@N.K`: the K-th anonymous ACL of the N-th rule), a name
HAProxy's own never take ('@' is not allowed in them).

Only fetches the C core's URL rule matching (dp_urlrule) compares
faithfully are entries: HAProxy's `path` (the path without the query
string), the Host header (`hdr(host)`), `url` (the request target as
sent) and `base` (Host then path; the path alone without a Host header),
with the match methods `str` (equal), `beg`, `end` and `sub` (7.1.3) and
`-i`. The Host header's value list is HAProxy's: `hdr(host)` fetches each
comma-separated value (blanks trimmed) and an entry holds when any of them
matches; `base` takes the first value. Each pattern tried on a value is one
dp_urlrule_eval call (routertwin._core.UrlTerms); the evaluation
short-circuits as HAProxy's acl_exec_cond does, so the comparisons counted
are those of the tests HAProxy would make (none for hdr(host) without a
Host header: the fetch finds no value).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from routertwin.scenario_loader import ScenarioModel

# HAProxy ACL names (manual 7.1): letters, digits, '-', '_', '.', ':'; '@' starts an anonymous one's
ACL_NAME = r"^(@[0-9]+(\.[0-9]+)?|[A-Za-z0-9_.:-]+)$"
PREDEFINED = {"TRUE": True, "FALSE": False}  # manual 7.4 (the others are not modelled)
Pattern = Annotated[str, StringConstraints(min_length=1, pattern=r"^[^\x00]+$")]


class Acl(ScenarioModel):
    """One `acl NAME FETCH [-i] [-m METHOD] PATTERN...` line: true when the fetched string matches any pattern."""

    name: str = Field(pattern=ACL_NAME, max_length=128)
    # HAProxy `path` (no query string), `hdr(host)`, `url` (the request target as sent) or `base` (Host + path)
    fetch: Literal["path", "host", "url", "base"]
    match: Literal["str", "beg", "end", "sub"] = "str"  # equal, prefix, suffix, substring (manual 7.1.3)
    icase: bool = False  # -i
    # none: never matches (HAProxy warns). The core stores 1..255 bytes a pattern, without NUL.
    patterns: list[Pattern] = Field(default_factory=list, max_length=10000)

    @field_validator("patterns")
    @classmethod
    def _core_sized(cls, v: list[str]) -> list[str]:
        for p in v:
            if len(p.encode("utf-8")) > 255:
                raise ValueError(f"pattern '{p[:40]}...' is over 255 bytes (the core's URL rule limit)")
        return v


class Rule(ScenarioModel):
    """`use_backend POOL [if|unless CONDITION]`: no condition always matches."""

    pool: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$", max_length=128)
    if_: str | None = Field(default=None, alias="if", max_length=10000)
    unless: str | None = Field(default=None, max_length=10000)


class ConditionError(ValueError):
    pass


def parse_condition(text: str) -> list[list[tuple[bool, str]]]:
    """HAProxy's condition words -> OR of AND-groups of (negated, acl name).
    Follows acl.c's build_acl_cond: leading '!' toggle negation, `||`/`or`
    closes a group (an empty group is never formed)."""
    groups: list[list[tuple[bool, str]]] = []
    group: list[tuple[bool, str]] | None = None
    neg = False
    for word in text.split():
        while word.startswith("!"):
            neg = not neg
            word = word[1:]
        if not word:
            continue
        if word == "||" or word.lower() == "or":
            group, neg = None, False
            continue
        if not re.fullmatch(ACL_NAME, word):
            raise ConditionError(f"'{word}' is not an ACL name")
        if group is None:
            group = []
            groups.append(group)
        group.append((neg, word))
        neg = False
    if not groups:
        raise ConditionError("an empty condition")
    return groups


@dataclass
class Verdict:
    pool: str | None  # None: no rule matched and the service has no default pool (503)
    rule: int  # index of the rule that matched, -1 for the default
    terms: int  # pattern tests made (dp_urlrule_eval calls, short-circuited)
    bytes_compared: int  # the core's byte comparisons over them


class Switch:
    """The rules of one service, ready to route requests: its patterns in
    one table of the C core's URL rules, built once."""

    def __init__(self, acls: list[Acl], rules: list[Rule], default: str | None):
        from routertwin import _core

        self.default = default
        # (pool, condition groups or None for an unconditional rule, unless)
        self.rules = []
        for r in rules:
            text = r.if_ if r.if_ is not None else r.unless
            self.rules.append((r.pool, parse_condition(text) if text is not None else None, r.unless is not None))
        # every pattern of every entry, in order: one core term each; an ACL is its entries as
        # (subject, first term, end)
        terms: list[tuple[str, str, bool]] = []
        self.entries: dict[str, list[tuple[str, int, int]]] = {}
        for a in acls:
            start = len(terms)
            terms += [(a.match, p, a.icase) for p in a.patterns]
            self.entries.setdefault(a.name, []).append((a.fetch, start, len(terms)))
        self.table = _core.UrlTerms(terms)

    def route(self, url: str, host: str) -> Verdict:
        """The pool of a request: its target `url` as on the request line
        (origin form) and its Host header ('' for none)."""
        path = url.split("?", 1)[0]  # HAProxy's `path`: up to the '?'
        # hdr(host) yields each comma-separated value, blanks trimmed (http_find_header, empty ones
        # too); base is the first value then the path, the path alone when that value is empty
        hosts = [v.strip(" \t") for v in host.split(",")] if host else []
        subjects = {"path": [path], "host": hosts, "url": [url], "base": [(hosts[0] if hosts else "") + path]}
        used = [0, 0]

        def acl(name: str) -> bool:
            if name not in self.entries:
                return PREDEFINED[name]
            # entries ORed; each fetched value against the patterns in turn, as acl_exec_cond: stop at a hit
            for fetch, start, end in self.entries[name]:
                for value in subjects[fetch]:
                    for k in range(start, end):
                        hit, compared = self.table.eval(k, value)
                        used[0] += 1
                        used[1] += compared
                        if hit:
                            return True
            return False

        for i, (pool, groups, unless) in enumerate(self.rules):
            if groups is None:
                return Verdict(pool, i, *used)
            holds = any(all(acl(name) != neg for neg, name in g) for g in groups)
            if holds != unless:
                return Verdict(pool, i, *used)
        return Verdict(self.default, -1, *used)
