"""Scenario files: load the YAML, check it against its kind's schema, and say
exactly where it is wrong.

A scenario is a YAML mapping with the common keys `scenario`, `kind`,
`description`, `seed` and the keys of the kind's pydantic `Schema`
(`routertwin.runners.<kind>.Schema`, extra="forbid"). Every error is raised as
one `ScenarioError` line, `FILE:LINE: key 'a.b': message`: ruamel.yaml's
round-trip loader keeps the line of every key, and pydantic's error location
(a path of keys and list indices) is walked through the loaded document to
find it. Paths inside a scenario (type `ScenarioPath`) are relative to the
scenario file and must exist.

Every kind's models derive from `ScenarioModel` (unknown keys and infinite or
NaN numbers rejected). A rule across keys raises `FieldError` with the key it
blames, so the line points there; a runner's optional `check(scenario)`
(profiles, platform limits) runs here too, so every user error surfaces at
load time, before any scenario runs.
"""

from __future__ import annotations

import difflib
import functools
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import pydantic
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from routertwin.errors import ScenarioError, UserError

COMMON_KEYS = ("scenario", "kind", "description", "seed")


def _resolve_path(value: Path, info: ValidationInfo) -> Path:
    # Relative to the scenario file, so a scenario folder can be moved whole.
    base = (info.context or {}).get("base_dir")
    path = Path(value)
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    if not path.exists():
        raise ValueError(f"file not found: {path}")
    return path


ScenarioPath = Annotated[Path, AfterValidator(_resolve_path)]
"""A path in a scenario: resolved against the scenario's folder; must exist."""


class ScenarioModel(BaseModel):
    """Base of every scenario and profile model: unknown keys are errors, and
    so are `.inf`, `.nan` and numbers too large for a double (YAML reads
    1e400 as inf): no physical quantity here is infinite, and an infinite
    input only comes back as a NaN or a zero rate much later."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class FieldError(ValueError):
    """A rule across keys, blamed on one key: `loc` is its path (keys and
    list indices) from the model whose validator raises it, or from the top
    of the scenario when a runner's `check` raises it."""

    def __init__(self, loc: tuple, message: str):
        super().__init__(message)
        self.loc = tuple(loc)


class Common(ScenarioModel):
    """The keys every scenario has, whatever its kind."""

    scenario: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    kind: str
    description: str = ""
    seed: int = Field(default=1, ge=0, lt=2**63)


@dataclass(frozen=True)
class LoadedScenario:
    """A validated scenario, as runners receive it."""

    path: Path | None  # absolute path of the scenario file; None when built in Python
    name: str
    kind: str
    description: str
    seed: int
    config: BaseModel  # instance of the kind's Schema, paths resolved
    parameters: dict[str, Any] = field(default_factory=dict)  # kind keys as written (plus --set)


Override = typing.Union[str, tuple[str, Any]]
"""A key replaced before validation: `"a.b=VALUE"` (VALUE is YAML, as
`routertwin run --set`) or `("a.b", value)` (a Python value, as
`routertwin.Scenario.with_`)."""

OVERRIDE_FLAG = "with_()"  # what error lines name for a (key, value) override


def load_scenario(
    path: str | Path,
    *,
    seed: int | None = None,
    overrides: typing.Sequence[Override] = (),
) -> LoadedScenario:
    """Load and validate a scenario file.

    `seed` replaces the file's seed; `overrides` (see `Override`) are applied
    before validation. Raises ScenarioError.
    """
    path = Path(path)
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{shown}: cannot read scenario: {exc.strerror or exc}") from None
    doc = parse_yaml(text, shown)
    if not isinstance(doc, CommentedMap):
        raise ScenarioError(f"{shown}:1: a scenario must be a YAML mapping of keys")
    return validate_scenario(plain(doc), shown=shown, path=path.resolve(), doc=doc, seed=seed, overrides=overrides)


def validate_scenario(
    data: dict,
    *,
    shown: str,
    path: Path | None = None,
    doc: CommentedMap | None = None,
    base_dir: Path | None = None,
    seed: int | None = None,
    overrides: typing.Sequence[Override] = (),
) -> LoadedScenario:
    """Validate a scenario given as plain data (`data`, not modified).

    `path` is the scenario file (None for a scenario built in Python: relative
    paths are then resolved against `base_dir`, default the current folder);
    `doc` its round-trip document (which knows lines; without it errors name
    `shown` and the key, no line). Raises ScenarioError.
    """
    import copy

    from routertwin import runners

    data = copy.deepcopy(data)
    overridden: dict[tuple[str, ...], str] = {}
    for item in overrides:
        keys = _apply_override(data, item, shown)
        overridden[keys] = "--set" if isinstance(item, str) else OVERRIDE_FLAG
    if seed is not None:
        data["seed"] = seed
        overridden[("seed",)] = "--seed"
    where = Locator(doc, shown, overridden, data)
    if base_dir is None:
        base_dir = path.parent if path is not None else Path.cwd()

    common_in = {k: v for k, v in data.items() if k in COMMON_KEYS}
    if "kind" not in data:
        raise ScenarioError(where.line_of(()) + "key 'kind': missing required key")
    try:
        runner = runners.get(data["kind"])
    except runners.UnknownKind as exc:
        raise ScenarioError(where.at(("kind",), str(exc))) from None
    schema: type[BaseModel] = runner.Schema
    valid_top = sorted(set(COMMON_KEYS) | set(schema.model_fields))

    try:
        common = Common.model_validate(common_in)
    except pydantic.ValidationError as exc:
        raise ScenarioError(where.explain(exc, Common, valid_top)) from None
    kind_in = {k: v for k, v in data.items() if k not in COMMON_KEYS}
    try:
        config = schema.model_validate(kind_in, context={"base_dir": Path(base_dir).resolve()})
    except pydantic.ValidationError as exc:
        raise ScenarioError(where.explain(exc, schema, valid_top)) from None

    loaded = LoadedScenario(
        path=path,
        name=common.scenario,
        kind=common.kind,
        description=common.description,
        seed=common.seed,
        config=config,
        parameters=kind_in,
    )
    check = getattr(runner, "check", None)
    if check is not None:  # profiles and limits that need more than the scenario's own keys
        try:
            check(loaded)
        except FieldError as exc:
            raise ScenarioError(where.at(exc.loc, str(exc))) from None
    return loaded


def parse_yaml(text: str, shown: str, error: type[UserError] = ScenarioError) -> Any:
    """Round-trip parse (keeps the line of every key); syntax errors become
    one `error` line naming the file and line."""
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        return yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        raise error(f"{shown}:{line}: YAML syntax error: {problem}") from None
    except YAMLError as exc:
        msg = " ".join(str(exc).split())
        raise error(f"{shown}:1: YAML error: {msg}") from None


def read_yaml_file(path: Path) -> tuple[Any, str]:
    """Parse a data file a scenario refers to (platform, workload, fitted
    parameters): (round-trip document, the name errors show)."""
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    return _parse_data_file(text, shown), shown


def _parse_data_file(text: str, shown: str) -> Any:
    # A profile is read by its runner's load-time check, again by the run, and
    # by every fit that needs it; round-trip parsing of a commented file costs
    # tens of ms, so each text is parsed once per process. Keyed on the text
    # alone (the copies of a file that validation intervals make share it),
    # an edited file is parsed afresh; an error is raised again with this
    # file's name. Callers only read the document.
    try:
        return _parse_text(text)
    except UserError:
        return parse_yaml(text, shown)


@functools.lru_cache(maxsize=128)
def _parse_text(text: str) -> Any:
    return parse_yaml(text, "<text>")


def plain(node: Any) -> Any:
    """ruamel's round-trip nodes as plain dict/list/int/float/str/bool."""
    if isinstance(node, dict):
        return {str(k): plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def _apply_override(data: dict, item: Override, shown: str) -> tuple[str, ...]:
    if isinstance(item, str):
        flag = "--set"
        key, sep, raw = item.partition("=")
        keys = tuple(key.strip().split("."))
        if not sep or not all(keys):
            raise ScenarioError(f"{shown}: --set {item!r}: expected KEY=VALUE (KEY may be dotted: a.b)")
        try:
            value = plain(YAML(typ="rt").load(raw)) if raw.strip() else ""
        except YAMLError:
            raise ScenarioError(f"{shown}: --set key '{key}': value is not valid YAML: {raw!r}") from None
    else:
        flag = OVERRIDE_FLAG
        key, value = item
        keys = tuple(str(key).split("."))
        if not all(keys):
            raise ScenarioError(f"{shown}: {flag} key {key!r}: not a key (dotted names: a.b)")
        value = _python_value(value)
    node = data
    for i, k in enumerate(keys[:-1]):
        child = node.get(k)
        if child is None:
            child = node[k] = {}  # a new group of keys: the schema says whether it may exist
        elif not isinstance(child, dict):
            # Replacing a list or a value by a mapping would be reported as a
            # wrong type at the file's line: say what the flag did instead.
            parent = ".".join(keys[: i + 1])
            whole = f"--set {parent}=[...]" if flag == "--set" else f"with_({{'{parent}': [...]}})"
            what = (f"is a list, not a group of keys: set it whole ({whole})"
                    if isinstance(child, list) else f"is the value {child!r}, not a group of keys")
            raise ScenarioError(f"{shown}: {flag} key '{key}': '{parent}' {what}")
        node = child
    node[keys[-1]] = value
    return keys


def _python_value(value: Any) -> Any:
    """A Python override value as the plain data YAML would give: tuples as
    lists, Paths as strings, numpy scalars as Python numbers."""
    import copy

    if isinstance(value, dict):
        return {str(k): _python_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_python_value(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return copy.deepcopy(value)


class Locator:
    """Maps a pydantic error location to `FILE:LINE: key 'a.b': `.

    The location is walked through the validated data (`data`, the document
    plus any --set) and the loaded document (`doc`, which knows lines) side by
    side: an element found in neither is a pydantic union tag, not a key."""

    def __init__(self, doc: CommentedMap | None, shown: str, overridden: dict[tuple[str, ...], str] | None = None,
                 data: Any = None):
        self.doc = doc
        self.data = data if data is not None else plain(doc)
        self.has_lines = doc is not None  # a scenario built in Python has no lines to name
        self.shown = shown
        self.overridden = overridden or {}  # key path -> the flag that set it

    def line_of(self, loc: tuple) -> str:
        """`FILE:LINE: ` of the key at `loc` (or of its nearest parent in the file)."""
        return f"{self.shown}:{self.line(loc)}: " if self.has_lines else f"{self.shown}: "

    def line(self, loc: tuple) -> int:
        return self._walk(loc)[0]

    def _flag(self, parts: list[str]) -> str | None:
        """The command-line flag that set the key at `parts`, if one did: the
        key lies inside an overridden value, or the override created it, or
        changed a key inside it (only a rule across the whole document, at
        no key, stays the file's)."""
        for keys, flag in self.overridden.items():
            if tuple(parts[: len(keys)]) == keys or (parts and keys[: len(parts)] == tuple(parts)):
                return flag
        return None

    def _walk(self, loc: tuple) -> tuple[int, list[str]]:
        node: Any = self.doc
        value: Any = self.data
        line = 1
        parts: list[str] = []
        for i, el in enumerate(loc):
            if isinstance(value, dict) and isinstance(el, str) and el in value:
                value = value[el]
            elif isinstance(value, list) and isinstance(el, int) and 0 <= el < len(value):
                value = value[el]
            elif i == len(loc) - 1 and isinstance(value, dict):
                value = None  # a missing key: named, at the line of its parent
            else:
                continue  # a union tag, not part of the document
            parts.append(f"[{el}]" if isinstance(el, int) else el)
            if isinstance(node, CommentedMap) and el in node:
                line = _key_line(node, el, line)
                node = node[el]
            elif isinstance(node, CommentedSeq) and isinstance(el, int) and 0 <= el < len(node):
                line = _item_line(node, el, line)
                node = node[el]
            else:
                node = None  # set on the command line, or missing: keep the parent's line
        return line, parts

    def _prefix(self, loc: tuple) -> tuple[int, str]:
        """(line, `FILE:LINE: key 'a.b': `) of the key at `loc`, or
        `FILE: --set key 'a.b': ` (line 0) when a flag set it."""
        line, parts = self._walk(loc)
        key = ".".join(parts).replace(".[", "[")
        flag = self._flag(parts)
        named = f"key '{key}': " if key else ""  # a rule across keys has no single key
        if flag is not None:
            return 0, f"{self.shown}: {flag} {named}"  # a command-line mistake is the one to report first
        if not self.has_lines:
            return line, f"{self.shown}: {named}"
        return line, f"{self.shown}:{line}: {named}"

    def at(self, loc: tuple, message: str) -> str:
        """The one line of an error blamed on the key at `loc`."""
        return self._prefix(tuple(loc))[1] + message

    def explain(self, exc: pydantic.ValidationError, model: type[BaseModel], top_keys: list[str] | None = None) -> str:
        """The one line for a pydantic error of `model` validated from this
        document: the misspelt key first, else the earliest line."""
        top_keys = top_keys if top_keys is not None else sorted(model.model_fields)
        best = None
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            blamed = (err.get("ctx") or {}).get("error")
            if isinstance(blamed, FieldError):
                loc += blamed.loc  # a rule across keys that names the key to fix
            line, prefix = self._prefix(loc)
            # A misspelt key also makes its real name "missing": report the
            # misspelling (with its suggestion) first, then the earliest line.
            candidate = ((err["type"] == "missing", line), prefix + self._message(err, loc, model, top_keys))
            if best is None or candidate[0] < best[0]:
                best = candidate
        assert best is not None
        extra = len(exc.errors()) - 1
        return best[1] + (f" (and {extra} more error{'s' if extra > 1 else ''})" if extra else "")

    @staticmethod
    def _message(err: dict, loc: tuple, model: type[BaseModel], top_keys: list[str]) -> str:
        etype = err["type"]
        if etype == "extra_forbidden":
            name = str(loc[-1])
            valid = top_keys if len(loc) == 1 else _keys_at(model, loc[:-1])
            close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            if not close and valid:
                hint = f"; valid keys here: {', '.join(valid)}"
            return f"unknown key{hint}"
        if etype == "missing":
            return "missing required key"
        msg = " ".join(str(err["msg"]).split())
        msg = re.sub(r"^(Value|Assertion) error, ", "", msg)
        value = err.get("input")
        if isinstance(value, (str, int, float, bool)) and etype != "value_error":
            msg += f" (got {value!r})"
        return msg


def _key_line(node: CommentedMap, key: str, default: int) -> int:
    try:
        return node.lc.key(key)[0] + 1
    except (KeyError, TypeError, AttributeError):
        return default


def _item_line(node: CommentedSeq, index: int, default: int) -> int:
    try:
        return node.lc.item(index)[0] + 1
    except (KeyError, TypeError, AttributeError, IndexError):
        return default


def _keys_at(model: type[BaseModel], loc: tuple) -> list[str]:
    """The field names of the (sub)model found by following `loc` from `model`."""
    candidates: list[Any] = [model]
    for el in loc:
        nxt: list[Any] = []
        for tp in candidates:
            for t in _unwrap(tp):
                if isinstance(el, str) and isinstance(t, type) and issubclass(t, BaseModel):
                    if el in t.model_fields:
                        nxt.append(t.model_fields[el].annotation)
                else:
                    origin = typing.get_origin(t)
                    args = typing.get_args(t)
                    if origin in (list, tuple, set, frozenset) and args:
                        nxt.append(args[0])
                    elif origin is dict and len(args) == 2:
                        nxt.append(args[1])
        candidates = nxt
    keys: set[str] = set()
    for tp in candidates:
        for t in _unwrap(tp):
            if isinstance(t, type) and issubclass(t, BaseModel):
                keys.update(t.model_fields)
    return sorted(keys)


def _unwrap(tp: Any) -> list[Any]:
    """Union members and Annotated payloads of a type annotation."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin is typing.Union or origin is types.UnionType:
        out: list[Any] = []
        for a in typing.get_args(tp):
            out.extend(_unwrap(a))
        return out
    return [tp]
