"""Calling the native runners of `routertwin._core` (plain dicts in and out)
from a runner, and reading their counts as an RFC 2544 trial."""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Callable

from routertwin.errors import ScenarioError
from routertwin.methods.rfc2544 import TrialResult


def case_error(source: Path | None, case_id: str, message: str) -> ScenarioError:
    """A ScenarioError about one case: `FILE: case 'ID': message` (no file
    when the scenario has none)."""
    where = f"{source}: " if source else ""
    return ScenarioError(f"{where}case '{case_id}': {message}")


class NativeMemo:
    """Results of native runs, kept by their complete input (docs/validation.md
    "Speed and modes"). A native runner of `routertwin._core` is a pure
    function of its config dict (same config, same result, bit for bit: the
    project's reproducibility rule), so a call whose config, and the files it
    names, equal an earlier call's may take that call's result instead of
    running again. Interval runs make many such calls: an assumption varied
    for a scenario whose cases never read it, a refitted file of which a
    scenario reads nothing that changed, the same trial of two RFC 2544
    searches. Kept in this process (a run's repeated trials) and, when
    `folder` is set (interval runs: a folder of the run's temporary
    workdir), in files there, shared by every worker that sees the folder.
    Off unless enabled: a plain run computes everything.
    """

    enabled = False
    folder: Path | None = None
    _seen: dict[str, bytes] = {}
    hits = 0
    misses = 0

    @classmethod
    def enable(cls, folder: str | os.PathLike | None) -> None:
        cls.enabled = True
        cls.folder = Path(folder) if folder is not None else None

    @classmethod
    def disable(cls) -> None:
        cls.enabled, cls.folder = False, None
        cls._seen = {}

    @staticmethod
    def key(fn_name: str, config: dict, unread: tuple[str, ...]) -> str:
        """SHA-256 of the engine, the config (its keys in order, floats by
        repr, so any bit of difference differs) and the identity (path, size,
        mtime) of every file a string value names; `unread` top-level keys,
        those the engine provably does not read for this config, left out."""
        h = hashlib.sha256(fn_name.encode())

        def feed(v) -> None:
            if isinstance(v, dict):
                h.update(b"{")
                for k in sorted(v):
                    h.update(repr(k).encode() + b":")
                    feed(v[k])
                h.update(b"}")
            elif isinstance(v, (list, tuple)):
                h.update(b"[")
                for x in v:
                    feed(x)
                    h.update(b",")
                h.update(b"]")
            else:
                h.update(f"{type(v).__name__}:{v!r};".encode())
                if isinstance(v, str) and v and os.path.isfile(v):
                    st = os.stat(v)
                    h.update(f"file:{os.path.realpath(v)}:{st.st_size}:{st.st_mtime_ns};".encode())

        feed({k: v for k, v in config.items() if k not in unread})
        return h.hexdigest()

    @classmethod
    def call(cls, fn: Callable[[dict], dict], config: dict, unread: tuple[str, ...]) -> dict:
        if not cls.enabled:
            return fn(config)
        k = cls.key(getattr(fn, "__name__", repr(fn)), config, unread)
        blob = cls._seen.get(k)
        path = cls.folder / f"{k}.pickle" if cls.folder is not None else None
        if blob is None and path is not None and path.exists():
            blob = path.read_bytes()
        if blob is not None:
            cls.hits += 1
            return pickle.loads(blob)  # a fresh copy: callers may change what they get
        cls.misses += 1
        out = fn(config)
        blob = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
        cls._seen[k] = blob
        if path is not None:
            # Written whole under a temporary name, then renamed: a reader in
            # another worker sees the complete result or none.
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, path)
        return out


def call_native(fn: Callable[[dict], dict], config: dict, *, source: Path | None, case_id: str,
                engine: str, unread: tuple[str, ...] = ()) -> dict:
    """`fn(config)`; a key the native runner rejects (a value the load-time
    checks let through) is still the input's fault: a ScenarioError naming
    the scenario file, the case and `engine`'s message. With NativeMemo
    enabled, a call identical to an earlier one takes its result; `unread`
    names top-level keys of `config` that `fn` provably does not read for
    this config (the caller says why), so calls differing only there are
    identical."""
    try:
        return NativeMemo.call(fn, config, unread)
    except ValueError as exc:
        raise case_error(source, case_id, f"{engine}: {exc}") from None


def trial_result(load: float, out: dict, extra: dict) -> TrialResult:
    """The RFC 2544 TrialResult of a native run at `load`: frames sent and
    received and the latencies (us) the native runner counted, plus `extra`."""
    return TrialResult(load, int(out["tx_packets"]), int(out["rx_packets"]), float(out["latency_min_us"]),
                       float(out["latency_avg_us"]), float(out["latency_max_us"]), extra)
