"""Assumed numbers of a profile and their plausible ranges.

A profile (scenarios/platforms/*.yaml, scenarios/workloads/*.yaml) cites
every number or marks it `assumption:` in a comment (on its line, on its
key's line, or in the comment block directly above its key). Each assumed
number declares how far it may plausibly be off, in one section of the same
file, keyed by the number's dotted path:

    memory:
      efficiency: 0.7     # assumption: sustained/peak DRAM efficiency ...
    assumption_ranges:
      memory.efficiency: {low: 0.5, high: 0.85, why: "DDR controllers sustain 50-85 % of peak on mixed DMA (planning range)"}

A range is itself an assumption: `why` says on what it rests (four words at
least). The validation intervals (routertwin.validation.intervals) rerun the
twin with each assumed number at each end of its range.

Checked whenever a profile is loaded (runners/_shared/profiles.py), each
mistake one `FILE:LINE: key 'assumption_ranges.PATH': ...` line (exit 2):
a path that names no number of the file (with the closest path), a number
that is cited rather than assumed, a fitted parameter (fitted numbers follow
from calibrate rows, not from a guess), low >= high, and an end the
profile's own model refuses (an efficiency above 1, a fractional count). A
missing range, or a value outside its range (a what-if copy of a profile),
is not a load error; tests/test_assumption_ranges.py requires a range for
every assumed number of the project's profiles, holding its value.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pydantic
from pydantic import BaseModel, ConfigDict, Field, field_validator

from routertwin.errors import ScenarioError

SECTION = "assumption_ranges"
# The word that marks an assumed number in its comments (any case: the T640
# profile writes ASSUMPTION).
MARK = re.compile(r"\bassumption\b", re.IGNORECASE)


class RangeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    low: float
    high: float
    why: str = Field(min_length=1)

    @field_validator("low", "high")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v

    @field_validator("why")
    @classmethod
    def _a_reason(cls, v: str) -> str:
        if len(v.split()) < 4:
            raise ValueError("say on what the range rests, in four words at least")
        return v


@dataclass(frozen=True)
class Assumption:
    """One assumed number of a profile and its declared range."""

    file: Path  # the profile
    path: str  # dotted path of the number in the profile
    nominal: float | int
    low: float | int
    high: float | int
    why: str
    where: str  # "FILE:LINE" of the range

    @property
    def name(self) -> str:
        """`<profile file name>:<path>`, the label reports use."""
        return f"{self.file.name}:{self.path}"


def line_comment(line: str) -> str:
    """The comment of a YAML line ('' if none): a '#' outside quotes that
    starts the line or follows whitespace."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[i + 1:]
    return ""


def comment_block_above(lines: list[str], index: int) -> list[str]:
    """The comment-only lines directly above line `index` (0-based), nearest last."""
    block = []
    i = index - 1
    while i >= 0 and lines[i].lstrip().startswith("#"):
        block.insert(0, line_comment(lines[i]))
        i -= 1
    return block


@dataclass(frozen=True)
class Leaf:
    """A number of a profile: dotted path, value, 0-based line and column of
    the value, and the comments that may cite or mark it."""

    path: str
    value: float | int
    line: int
    col: int
    comments: str

    @property
    def assumed(self) -> bool:
        return bool(MARK.search(self.comments))


def _leaves(node, lines: list[str], keys: tuple = (), anchors: tuple = ()) -> Iterator[Leaf]:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        inherited = tuple(anchors) if node.fa.flow_style() else ()
        for k, v in node.items():
            if not keys and k == SECTION:
                continue
            at = inherited + (node.lc.key(k)[0],)
            if isinstance(v, (CommentedMap, CommentedSeq)):
                yield from _leaves(v, lines, keys + (str(k),), at)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                line, col = node.lc.value(k)
                yield Leaf(".".join(keys + (str(k),)), v, line, col, _places(lines, line, at))
    elif isinstance(node, CommentedSeq):
        for i, v in enumerate(node):
            if isinstance(v, (CommentedMap, CommentedSeq)):
                yield from _leaves(v, lines, keys + (str(i),), anchors)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                line, col = node.lc.item(i)
                yield Leaf(".".join(keys + (str(i),)), v, line, col, _places(lines, line, anchors))


def _places(lines: list[str], line: int, anchors: tuple) -> str:
    parts = [line_comment(lines[line])]
    for a in anchors:
        parts += comment_block_above(lines, a) + [line_comment(lines[a])]
    return " ".join(parts)


def _leaves_of(text: str, shown: str) -> tuple[Leaf, ...]:
    from routertwin.scenario_loader import _parse_data_file

    _parse_data_file(text, shown)  # a syntax error is raised naming `shown`
    return _leaves_cached(text)


@functools.lru_cache(maxsize=128)
def _leaves_cached(text: str) -> tuple[Leaf, ...]:
    # Keyed on the text: the copies of a profile that validation intervals
    # make share it.
    from routertwin.scenario_loader import _parse_text

    return tuple(_leaves(_parse_text(text), text.splitlines()))


def numbers(path: Path) -> dict[str, Leaf]:
    """Every number of a YAML file outside its assumption_ranges section, by
    dotted path (list items by index)."""
    text = Path(path).read_text(encoding="utf-8")
    return {leaf.path: leaf for leaf in _leaves_of(text, str(path))}


def _fitted_names(profile: Path) -> set[str]:
    """Parameter names of the fitted files beside a profile (fitted/*.yaml)."""
    from ruamel.yaml import YAML

    names: set[str] = set()
    for f in sorted((Path(profile).parent / "fitted").glob("*.yaml")):
        try:
            doc = YAML(typ="safe").load(f.read_text(encoding="utf-8"))
        except Exception:  # not ours to judge here; loading that file names its error
            continue
        if isinstance(doc, dict) and isinstance(doc.get("params"), dict):
            names.update(str(k) for k in doc["params"])
    return names


def _with_value(data: Any, dotted: str, value: float) -> Any:
    """A copy of plain data with the number at `dotted` replaced."""
    import copy

    out = copy.deepcopy(data)
    node = out
    parts = dotted.split(".")
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


def _as_nominal_type(value: float, nominal: float | int) -> float | int:
    """An end written 2 or 2.0 for an integer number is the integer 2; a
    fractional end of an integer stays a float (the model refuses it)."""
    if isinstance(nominal, int) and float(value).is_integer():
        return int(value)
    return float(value)


def check_ranges(doc, shown: str, path: Path, model: type[BaseModel] | None = None, *,
                 nominal_inside: bool = False) -> dict[str, Assumption]:
    """The assumption ranges of the profile `doc` (round-trip, from `path`),
    checked; raises ScenarioError naming file, line and key. With `model`,
    each end must also be a value the profile's model accepts. With
    `nominal_inside`, the file's value must lie in its range: true of the
    project's profiles (tests/test_assumption_ranges.py), not required when
    a profile loads, so a what-if copy may set a number outside the range
    its source declared."""
    from routertwin.scenario_loader import Locator, plain

    section = doc.get(SECTION) if isinstance(doc, dict) else None
    if section is None:
        return {}
    where = Locator(doc, shown)
    if not isinstance(section, dict):
        raise ScenarioError(where.at((SECTION,), "expected a mapping of dotted path -> {low, high, why}"))
    leaves = numbers(path)
    data = plain({k: v for k, v in doc.items() if k != SECTION})
    out: dict[str, Assumption] = {}
    for key, raw in section.items():
        key = str(key)
        loc = (SECTION, key)
        if key not in leaves:
            if key in _fitted_names(path):
                raise ScenarioError(where.at(loc, f"'{key}' is a fitted parameter: it follows from calibrate rows "
                                                  "(routertwin calibrate), so it takes no assumption range"))
            close = difflib.get_close_matches(key, list(leaves), n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ScenarioError(where.at(loc, f"unknown path: '{key}' names no number of this file{hint}"))
        leaf = leaves[key]
        if not leaf.assumed:
            raise ScenarioError(where.at(loc, f"'{key}' (line {leaf.line + 1}) is cited, not marked "
                                              "'assumption:': only assumed numbers take a range"))
        try:
            spec = RangeSpec.model_validate(plain(raw))
        except pydantic.ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            sub = ".".join(str(x) for x in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            raise ScenarioError(where.at(loc, f"{sub + ': ' if sub else ''}{msg}")) from None
        if not spec.low < spec.high:
            raise ScenarioError(where.at(loc, f"low {spec.low:g} must be below high {spec.high:g} "
                                              "(a number known exactly is not an assumption)"))
        if nominal_inside and not spec.low <= leaf.value <= spec.high:
            raise ScenarioError(where.at(loc, f"the assumed value {leaf.value:g} lies outside "
                                              f"[{spec.low:g}, {spec.high:g}]"))
        low, high = _as_nominal_type(spec.low, leaf.value), _as_nominal_type(spec.high, leaf.value)
        if model is not None:
            for name, end in (("low", low), ("high", high)):
                try:
                    model.model_validate(_with_value(data, key, end))
                except pydantic.ValidationError as exc:
                    err = exc.errors(include_url=False)[0]
                    msg = err["msg"].removeprefix("Value error, ")
                    raise ScenarioError(where.at(loc, f"{name} end {end!r} is not a valid value here: {msg}")) from None
        out[key] = Assumption(Path(path), key, leaf.value, low, high, spec.why, where.line_of(loc).rstrip(": "))
    return out


def profile_assumptions(path: Path, *, nominal_inside: bool = False) -> list[Assumption]:
    """The checked assumption ranges of a profile file ([] without any)."""
    from routertwin.scenario_loader import read_yaml_file

    doc, shown = read_yaml_file(Path(path))
    return list(check_ranges(doc, shown, Path(path), nominal_inside=nominal_inside).values())


def set_number(text: str, leaf: Leaf, value: float | int) -> str:
    """`text` with the number of `leaf` replaced by `value`, everything else
    (comments, layout) unchanged."""
    lines = text.splitlines(keepends=True)
    line = lines[leaf.line]
    m = re.compile(r"[^\s,}\]#]+").match(line, leaf.col)
    if m is None:
        raise ValueError(f"no scalar at line {leaf.line + 1} column {leaf.col + 1}")
    shown = str(value) if isinstance(value, int) else repr(float(value))
    lines[leaf.line] = line[:m.start()] + shown + line[m.end():]
    return "".join(lines)
