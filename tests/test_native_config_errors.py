"""The native runners' config dicts (bindings/dict-config.h): a bad key or
value is one ValueError whose message names the key, once, for both
run_router and run_pipeline."""

from __future__ import annotations

import pytest

from routertwin import _core

RUNNERS = {"router": _core.run_router, "pipeline": _core.run_pipeline}


@pytest.mark.parametrize(
    "runner, config, message",
    [
        ("router", {"portz": 32}, "key 'portz': unknown router config key"),
        ("pipeline", {"num_corez": 2}, "key 'num_corez': unknown key"),
        ("router", {"ports": True}, "key 'ports': must be a non-negative integer"),
        ("router", {"ports": -2}, "key 'ports': must be a non-negative integer"),
        ("router", {"ports": 2**32}, "key 'ports': must be a non-negative integer"),
        ("router", {"offered_load": True}, "key 'offered_load': must be a number"),
        ("router", {"shared_flag": 1}, "key 'shared_flag': must be true or false"),
        ("router", {"route_file": 3}, "key 'route_file': must be a string"),
        ("pipeline", {"num_cores": True}, "key 'num_cores': must be an integer"),
        ("pipeline", {"num_cores": 2**70}, "key 'num_cores': integer out of range"),
        ("pipeline", {"counter_prices": {"table_probes": True}},
         "key 'counter_prices': must map names to numbers"),
        ("pipeline", {"seed": [1]}, "key 'seed': unsupported value type list"),
    ],
)
def test_bad_value_names_its_key(runner, config, message):
    with pytest.raises(ValueError) as e:
        RUNNERS[runner](config)
    assert str(e.value) == message


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_non_string_key_is_refused(runner):
    with pytest.raises(ValueError) as e:
        RUNNERS[runner]({1: 2})
    assert str(e.value) == "config keys must be strings"


@pytest.mark.parametrize(
    "config, message",
    [
        # Parsers that know nothing of keys get the key prefixed, once.
        ({"sonet": "OC-7"}, "key 'sonet': SONET rate OC-7 is not one of"),
        ({"queueing": "nope"}, "key 'queueing': input queueing 'nope' is not one of"),
        # A type error inside such a parser's setter already names the key.
        ({"sonet": 5}, "key 'sonet': must be a string"),
    ],
)
def test_router_parser_errors_name_the_key_once(config, message):
    with pytest.raises(ValueError) as e:
        _core.run_router(config)
    assert str(e.value).startswith(message)
    assert str(e.value).count("key '") == 1
