"""What the load-balancer importers share: the error they raise, the list of
what they did not model, and writing the scenario they build."""

from __future__ import annotations

import io
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML

from routertwin.errors import UserError


def case_suffix(name: str) -> str:
    """A pool's or service's name as the tail of a case id (fill-NAME,
    drain-timed-NAME, ...): characters a case id cannot hold become '-'."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", name)


def as_import(result, args, suffix: str = ".yaml"):
    """A balancer importer's result as the registry's `Imported` (one file:
    `args.out`, default FILE's name with `suffix` in the current folder).
    A scenario is validated as `routertwin run` would load it first."""
    from routertwin.importers import Imported as Files

    source = Path(result.source)
    out = Path(args.out) if getattr(args, "out", None) else Path(source.name).with_suffix(suffix)
    if hasattr(result, "scenario"):
        from routertwin.scenario_loader import validate_scenario

        validate_scenario(result.scenario, shown=f"{source} (imported)", base_dir=Path.cwd())
    n = len(result.not_modelled)
    summary = (f"{source}: wrote {out}; {n} directive{'s' * (n != 1)} not modelled"
               + (" (listed at the top of the file)" if n and suffix == ".yaml" else ""))
    return Files(files={out: result.text()}, summary=summary,
                 unmodelled=[f"{m.file}:{m.line}: {m.text} ({m.reason})" for m in result.not_modelled])


class ImportFileError(UserError):
    """A configuration the importer cannot read: `FILE:LINE: message`."""

    def __init__(self, shown: str, line: int | None, message: str):
        super().__init__(f"{shown}:{line}: {message}" if line else f"{shown}: {message}")
        self.line = line


@dataclass(frozen=True)
class NotModelled:
    """A line of the configuration (or part of one) the scenario does not carry."""

    file: str
    line: int
    text: str  # the directive as written (whitespace collapsed)
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: not modelled: {self.text}  ({self.reason})"


@dataclass
class Imported:
    """An importer's result: the scenario (plain data, as YAML would load it)
    and every directive it does not carry, in file order."""

    scenario: dict
    not_modelled: list[NotModelled] = field(default_factory=list)
    source: str = ""  # what was imported, as the user named it

    def text(self) -> str:
        """The scenario as YAML, headed by the list of what it does not carry."""
        head = [f"Imported from {self.source} by routertwin import.",
                "Edit freely: `routertwin run` checks every key when it loads the file."]
        if self.not_modelled:
            head.append(f"Not modelled ({len(self.not_modelled)} directives; --strict makes them errors):")
            head += [f"  {n.file}:{n.line}: {n.text}  ({n.reason})" for n in self.not_modelled]
        else:
            head.append("Every directive is modelled.")
        yaml = YAML()
        yaml.default_flow_style = None
        yaml.width = 120
        buf = io.StringIO()
        yaml.dump(self.scenario, buf)
        return "".join(f"# {h}\n" for h in head) + buf.getvalue()


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all (a temporary file renamed)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_text(path: Path, shown: str) -> list[str]:
    """The file's lines; a byte that is not UTF-8 is an error naming its line."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ImportFileError(shown, None, f"cannot read: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    out = []
    for i, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as exc:
            raise ImportFileError(shown, i, f"not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1})") \
                from None
    if out and out[-1] == "":
        out.pop()
    return out
