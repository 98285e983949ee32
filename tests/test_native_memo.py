"""Interval runs share native results (runners/_shared/native.NativeMemo):
a native call identical to an earlier one takes its result instead of
running again. Checked against the runs themselves: a shared result equals,
bit for bit, what running the call gives, and the calls that differ in
anything the model reads still run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from routertwin import _core
from routertwin.parallel import Job, run_job
from routertwin.runners._shared.native import NativeMemo

ROOT = Path(__file__).resolve().parents[1]

SMALL_PATH = """\
scenario: small-path
kind: tcp_path
seed: 1
platform: {platform}
transfer: {{file_bytes: 300000, records: 2, simulate: full}}
path:
  - {{node: vm-a, type: vm}}
  - {{node: host-a, type: host-bridge, link: virtio}}
  - {{node: l3-switch, type: l3-switch, link: gbe-vlan}}
  - {{node: host-b, type: host-bridge, link: gbe-vlan}}
  - {{node: vm-b, type: vm, link: virtio}}
"""

LOSSY = """\
link_types:
  lossy-gbe: {rate_bps: 1.0e9, frame_overhead_bytes: 42, delay_us: 1, queue_packets: 1000, loss_rate: 0.002}
"""

ROUTER = """\
scenario: small-router
kind: router
seed: 1
platform: {platform}
fitted: {fitted}
mode: packet
duration_s: 0.00005
cases:
  - {{case: a, method: load, ip_bytes: 40, offered_load: 0.5}}
  - {{case: b, method: load, ip_bytes: 40, offered_load: 0.5}}
"""


def _scenario(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / f"{name}.yaml"
    platform = "t640.yaml" if "kind: router" in text else "zstack-gbe.yaml"
    p.write_text(text.format(platform=ROOT / "scenarios" / "platforms" / platform,
                             fitted=ROOT / "scenarios" / "platforms" / "fitted" / "t640.yaml"), encoding="utf-8")
    return p


@pytest.fixture
def counted(monkeypatch):
    """Counts the calls that reach the native engines."""
    calls: dict[str, int] = {}
    for name in ("run_tcp_path", "run_router"):
        real = getattr(_core, name)

        def wrapper(config, _real=real, _name=name):
            calls[_name] = calls.get(_name, 0) + 1
            return _real(config)

        wrapper.__name__ = name
        monkeypatch.setattr(_core, name, wrapper)
    yield calls
    NativeMemo.disable()


def _values(outcome):
    assert outcome.error is None, outcome.error
    return [(c.case, c.params, c.metrics, c.counters) for c in outcome.cases]


def test_a_repeated_call_takes_the_first_result_bit_for_bit(tmp_path, counted):
    path = _scenario(tmp_path, "router", ROUTER)
    plain = _values(run_job(Job(str(path))))
    assert counted["run_router"] == 2  # two cases, computed each
    memo = str(tmp_path / "memo")
    first = _values(run_job(Job(str(path), memo=memo)))
    assert counted["run_router"] == 3  # case b is case a's call: taken, not run
    again = _values(run_job(Job(str(path), memo=memo)))  # a later job of the same replay
    assert counted["run_router"] == 3
    assert first == plain and again == plain
    # Another seed is another input (the router runner declares no key
    # unread): it runs again, whether or not this case draws from it.
    run_job(Job(str(path), seed=2, memo=memo))
    assert counted["run_router"] == 4


def test_a_lossless_paths_seed_is_unread_and_a_lossy_paths_is_read(tmp_path, counted):
    path = _scenario(tmp_path, "path", SMALL_PATH)
    # The claim the memo rests on, checked by running: without the memo a
    # lossless path gives the same result for two seeds.
    a, b = _values(run_job(Job(str(path)))), _values(run_job(Job(str(path), seed=99)))
    assert a == b and counted["run_tcp_path"] == 2
    memo = str(tmp_path / "memo")
    assert _values(run_job(Job(str(path), memo=memo))) == a
    assert _values(run_job(Job(str(path), seed=99, memo=memo))) == a
    assert counted["run_tcp_path"] == 3
    # A link that loses packets draws from the seed's stream: each seed runs.
    lossy = tmp_path / "lossy.yaml"
    lossy.write_text(path.read_text(encoding="utf-8").replace("link: gbe-vlan}\n  - {node: host-b",
                                                             "link: lossy-gbe}\n  - {node: host-b") + LOSSY,
                     encoding="utf-8")
    x = _values(run_job(Job(str(lossy), memo=memo)))
    y = _values(run_job(Job(str(lossy), seed=99, memo=memo)))
    assert counted["run_tcp_path"] == 5 and x != y
    assert _values(run_job(Job(str(lossy), seed=99))) == y  # what the memo did not share, rerun alike


def test_the_key_sees_every_bit_of_the_config_and_the_files_it_names(tmp_path):
    base = {"x": 0.1, "n": 3, "nested": {"l": [1, 2.0]}, "seed": 5}
    k = NativeMemo.key("f", base, ())
    assert NativeMemo.key("f", dict(base), ()) == k
    assert NativeMemo.key("f", {**base, "x": 0.1 + 2**-56 * 2}, ()) != k  # one ulp
    assert NativeMemo.key("f", {**base, "n": 3.0}, ()) != k  # 3 and 3.0 are different inputs
    assert NativeMemo.key("g", base, ()) != k
    assert NativeMemo.key("f", {**base, "seed": 6}, ("seed",)) == NativeMemo.key("f", base, ("seed",))
    f = tmp_path / "routes.txt"
    f.write_text("10.0.0.0/8 1\n", encoding="utf-8")
    k1 = NativeMemo.key("f", {"route_file": str(f)}, ())
    f.write_text("10.0.0.0/8 2\n", encoding="utf-8")
    import os

    os.utime(f, ns=(1, 1))
    assert NativeMemo.key("f", {"route_file": str(f)}, ()) != k1


def test_jobs_without_a_memo_share_nothing(tmp_path, counted):
    path = _scenario(tmp_path, "router", ROUTER)
    job = Job(str(path))
    assert dataclasses.replace(job).memo is None
    run_job(job)
    run_job(job)
    assert counted["run_router"] == 4 and not NativeMemo.enabled
