"""The keys the lb fill declares unread (runners/lb/native.FILL_UNREAD) are
not read: a fill run with each of them at another value gives the same
result, bit for bit, so interval runs that differ only there may share one
(NativeMemo). The check runs the fill itself (a small shard), not a copy
of its key list."""

from __future__ import annotations

import pytest

from routertwin import _core
from routertwin.runners.lb.native import FILL_UNREAD

FILL = {"workload": "fill", "sessions_per_core": 4096, "num_cores": 32, "clock_hz": 1e9, "forwarding": "fullnat",
        "fixed_cycles_per_packet": 300, "counter_prices": {"table_probes": 10.0}, "seed": 1, "ports": 16,
        "port_bit_rate": 10e9, "core_queue_depth": 1024}
OTHER = {"seed": 99, "core_queue_depth": 256, "ports": 4, "port_bit_rate": 1e9}


def test_fill_declares_every_varied_key():
    assert set(FILL_UNREAD) == set(OTHER)


@pytest.mark.parametrize("key", FILL_UNREAD)
def test_fill_result_does_not_depend_on_an_unread_key(key):
    a = _core.run_lb(dict(FILL))
    b = _core.run_lb(dict(FILL, **{key: OTHER[key]}))
    assert a["fill_connections_per_core"] > 1000
    assert a == b


def test_fill_reads_what_it_is_not_declared_to_skip():
    # the check above can fail: a key the fill reads changes its result
    a = _core.run_lb(dict(FILL))
    b = _core.run_lb(dict(FILL, fixed_cycles_per_packet=600))
    assert a["fill_cycles_per_connection"] != b["fill_cycles_per_connection"]


def test_interval_runs_differing_only_in_unread_keys_share_one_fill():
    from routertwin.runners._shared.native import NativeMemo
    from routertwin.runners.lb.native import call

    NativeMemo.enable(None)
    try:
        hits, misses = NativeMemo.hits, NativeMemo.misses
        first = call(dict(FILL), source=None, case_id="fill")
        for key, value in OTHER.items():  # a replication's seed, a core_queue_depth variant, ...
            assert call(dict(FILL, **{key: value}), source=None, case_id="fill") == first
        assert (NativeMemo.hits - hits, NativeMemo.misses - misses) == (len(OTHER), 1)
        call(dict(FILL, clock_hz=2e9), source=None, case_id="fill")  # a read key: run again
        assert NativeMemo.misses - misses == 2
    finally:
        NativeMemo.disable()
