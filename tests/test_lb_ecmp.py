"""N balancer instances behind a router's ECMP (model/lb/helper/lb-ecmp.h):
one instance fails or one is added.

Independent truth: RFC 2992's closed form for hash-threshold (equal regions
of the hash space: removing region k of N keeps the overlap of each old
region with its new one), Linux's resilient groups (a removed member's
buckets, and only those, move; DIV_ROUND_CLOSEST of buckets x (i + 1) / n
per member), binomial bounds for sampled connections, and what must hold
by construction of each deployment: shared state and Maglev in every
instance break nothing when only an instance fails; a proxy breaks every
connection it moves."""

import itertools
import json
import math
import re
import textwrap
from fractions import Fraction

import pytest

from conftest import one_line, run_cli
from routertwin import _core


def ecmp(**keys) -> dict:
    return _core.lb_ecmp({"scheduler": "roundrobin", "servers": 4, "connections": 20000, **keys})


def ht_moved_on_fail(n: int, k: int) -> Fraction:
    """RFC 2992 hash-threshold, member k of n removed: member j keeps the part
    of its old region [j/n, (j+1)/n) that its new region covers; j < k keeps
    index j, j > k becomes j - 1 of n - 1."""
    kept = sum(Fraction(n - 1 - j, n * (n - 1)) for j in range(k)) + \
        sum(Fraction(j, n * (n - 1)) for j in range(k + 1, n))
    return 1 - kept


def round_closest(x: int, d: int) -> int:
    return (2 * x + d) // (2 * d)


def wants(buckets: int, n: int) -> list[int]:
    bounds = [round_closest(buckets * (i + 1), n) for i in range(n)]
    return [b - a for a, b in zip([0] + bounds, bounds)]


def within(count: int, total: int, p: float, sigmas: float = 4.5) -> bool:
    return abs(count - total * p) <= sigmas * math.sqrt(total * p * (1 - p)) + 1


@pytest.mark.parametrize("n, k", [(2, 0), (2, 1), (3, 1), (4, 0), (4, 1), (4, 3), (8, 3), (16, 0), (16, 8),
                                  (7, 6)])
def test_hash_threshold_fail_moves_rfc2992_closed_form(n, k):
    out = ecmp(ecmp="hash-threshold", hash="l4", instances=n, instance=k)
    exact = ht_moved_on_fail(n, k)
    # the whole 31-bit hash space, walked region by region: Linux rounds each
    # bound to the nearest integer, so it is the closed form within n / 2^31
    assert abs(Fraction(out["hash_space_moved"], out["hash_space"]) - exact) <= Fraction(n, 2 ** 31)
    # and the connections: a binomial sample of it
    assert within(out["moved"], out["connections"], float(exact))
    # between 1/4 and 1/2 (RFC 2992 section 4): never only the failed member's 1/n
    assert Fraction(1, 4) - Fraction(1, 100) <= exact <= Fraction(1, 2)
    assert out["on_changed"] == out["before"][k] and out["after"][k] == 0


@pytest.mark.parametrize("n", [1, 2, 3, 4, 9])
def test_hash_threshold_add_moves_half(n):
    # member n appended: each old region j keeps (j+1)/(n+1) - j/n, summing to 1/2
    out = ecmp(ecmp="hash-threshold", hash="l4", instances=n, action="add")
    assert abs(Fraction(out["hash_space_moved"], out["hash_space"]) - Fraction(1, 2)) <= Fraction(n + 1, 2 ** 31)
    assert within(out["moved"], out["connections"], 0.5)
    assert out["on_changed"] == out["after"][n] and within(out["on_changed"], out["connections"], 1 / (n + 1))


@pytest.mark.parametrize("n, k, buckets", [(4, 0, 128), (4, 2, 128), (3, 1, 128), (5, 4, 128), (8, 3, 1000)])
def test_resilient_fail_moves_exactly_the_failed_members_buckets(n, k, buckets):
    out = ecmp(ecmp="resilient", hash="l4", instances=n, instance=k, buckets=buckets)
    assert out["buckets_moved"] == wants(buckets, n)[k]  # a new group holds what each member wants
    if buckets % n == 0:
        assert out["buckets_moved"] * n == buckets  # 1/N of the table
    # only the failed instance's connections move: none between the survivors
    assert out["moved"] == out["on_changed"] == out["before"][k]
    # a bucket holds floor or ceil of 2^31 / buckets hash values (exactly 2^31 / buckets for a power of 2)
    lo, hi = 2 ** 31 // buckets, -(-2 ** 31 // buckets)
    assert out["buckets_moved"] * lo <= out["hash_space_moved"] <= out["buckets_moved"] * hi
    assert within(out["moved"], out["connections"], out["buckets_moved"] / buckets)


def test_resilient_add_moves_nothing_busy_unless_forced():
    # Linux's defaults (unbalanced_timer 0): busy buckets stay where they are
    idle = ecmp(ecmp="resilient", hash="l4", instances=4, action="add")
    assert idle["buckets_busy"] == 128 and idle["buckets_moved"] == 0 and idle["moved"] == 0
    assert idle["after"][4] == 0
    # the unbalanced timer expired: the new member takes what it wants, from
    # the overweight ones only: 128 - round(128 x 4 / 5) = 26 buckets
    forced = ecmp(ecmp="resilient", hash="l4", instances=4, action="add", rebalance="forced")
    assert forced["buckets_moved"] == wants(128, 5)[4] == 26
    assert forced["moved"] == forced["on_changed"] == forced["after"][4]
    # few connections: the idle buckets migrate without breaking any
    few = ecmp(ecmp="resilient", hash="l4", instances=4, action="add", connections=40)
    assert few["buckets_busy"] <= 40 and few["moved"] == 0 and few["buckets_moved"] > 0


@pytest.mark.parametrize("scheduler", ["roundrobin", "leastconn", "wlc", "source", "source-consistent", "sh",
                                       "maglev", "random"])
@pytest.mark.parametrize("mode", ["hash-threshold", "resilient"])
def test_deployments_when_an_instance_fails(scheduler, mode):
    out = ecmp(scheduler=scheduler, ecmp=mode, instances=4, instance=1, servers=5)
    assert out["moved"] > 0 and not out["terminated"]
    # per-instance tables, mid-flow packets refused (IPVS without sloppy_tcp):
    # every moved connection misses its new instance's table
    assert out["broken_local"] == out["moved"]
    # session sync: found everywhere; Maglev everywhere: the same table
    assert out["broken_shared"] == 0 and out["broken_maglev"] == 0
    sloppy = out["broken_local_sloppy"]
    if scheduler in ("source", "source-consistent", "sh", "maglev"):
        assert sloppy == 0  # every instance maps a key to the same server
    else:
        # the new instance's own state picks one of 5 equal servers: a 1-in-5 chance of the old one
        assert within(out["moved"] - sloppy, out["moved"], 1 / 5)


def test_maglev_in_every_instance_breaks_nothing_when_one_is_added():
    out = ecmp(scheduler="leastconn", instances=3, action="add", hash="l4")
    assert out["moved"] > 0 and out["broken_maglev"] == 0 and out["broken_shared"] == 0
    assert out["broken_local"] == out["moved"]


@pytest.mark.parametrize("forwarding", ["proxy", "fullnat"])
def test_a_terminating_balancer_breaks_every_moved_connection(forwarding):
    out = ecmp(forwarding=forwarding, instances=4)
    assert out["terminated"]
    assert out["broken_local"] == out["broken_local_sloppy"] == out["broken_shared"] == out["broken_maglev"] \
        == out["moved"] > 0


def test_seeded_and_deterministic():
    out = ecmp(instances=8, hash="l3")
    assert out != ecmp(instances=8, hash="l4")  # the router hashes other fields
    # same seed, same result, bit for bit; another seed, other connections
    assert ecmp(instances=8, hash="l3") == out
    assert ecmp(instances=8, hash="l3", seed=2) != out


@pytest.mark.parametrize("keys, message", [
    ({"instances": 0}, "key 'instances'"),
    ({"instances": 1}, "key 'instances': one instance fails"),
    ({"instances": 4, "instance": 4}, "key 'instance'"),
    ({"ecmp": "round-robin"}, "key 'ecmp'"),
    ({"hash": "l7"}, "key 'hash'"),
    ({"ecmp": "resilient", "buckets": 3}, "key 'buckets'"),
    ({"frobnicate": 1}, "key 'frobnicate'"),
    ({"connections": 2000001}, "key 'connections'"),
])
def test_native_keys_are_checked(keys, message):
    with pytest.raises(ValueError, match=message):
        ecmp(**keys)


# ---------------------------------------------------------------- scenarios and imports

HEAD = """\
scenario: e
kind: lb
seed: 1
cases:
- id: e
  method: ecmp
  scheduler: roundrobin
  servers: 4
  keys: 5000
  ecmp: {instances: 4, mode: hash-threshold, hash: l3}
"""


@pytest.mark.parametrize("old, new, message", [
    ("instances: 4", "instances: 0", "key 'cases[0].ecmp.instances'"),
    ("mode: hash-threshold", "mode: round-robin", "key 'cases[0].ecmp.mode'"),
    ("hash: l3", "hash: l7", "key 'cases[0].ecmp.hash'"),
    ("instances: 4,", "instances: 1,", "at least 2 instances"),
    ("instances: 4,", "instances: 4, buckets: 64,", "belong to mode: resilient"),
    ("instances: 4,", "instances: 257,", "key 'cases[0].ecmp.instances'"),
])
def test_bad_ecmp_case_names_file_line_key(tmp_path, old, new, message):
    path = tmp_path / "e.yaml"
    assert old in HEAD
    path.write_text(HEAD.replace(old, new))
    err = one_line(run_cli("run", path, "--out", tmp_path / "o"), tmp_path / "o")
    assert err.startswith(f"{path}:10: ") and message in err, err


def test_an_ecmp_case_runs_from_the_cli(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text(HEAD)
    proc = run_cli("run", path, "--out", tmp_path / "o")
    assert proc.returncode == 0, proc.stderr
    m = json.loads((tmp_path / "o" / "e.json").read_text())["cases"][0]["metrics"]
    assert m["broken_shared_pct"] == 0 and m["broken_local_pct"] == m["moved_pct"]
    assert abs(m["hash_space_moved_pct"] - 100 * float(ht_moved_on_fail(4, 0))) < 1e-6


def test_imported_haproxy_and_ipvs_systems(tmp_path):
    import routertwin as rt

    hap = tmp_path / "h.cfg"
    hap.write_text(textwrap.dedent("""\
        frontend web
            bind 198.18.0.10:80
            default_backend app
        backend app
            balance roundrobin
        """) + "".join(f"    server s{i} 198.18.1.{i}:80\n" for i in range(1, 5)))
    out = tmp_path / "h.yaml"
    assert run_cli("import", "haproxy", hap, "-o", out).returncode == 0
    res = rt.run(rt.load(out).with_(seed=3)).to_dataframe().set_index("case")
    fail, rh = res.loc["ecmp-fail-app"], res.loc["ecmp-rh-fail-app"]
    # HAProxy terminates TCP: whatever is shared, a moved connection breaks
    assert fail["param.forwarding"] == "proxy"
    assert fail["metric.broken_shared_pct"] == fail["metric.broken_maglev_pct"] == fail["metric.moved_pct"]
    assert rh["metric.moved_pct"] == rh["metric.on_failed_instance_pct"]
    assert res.loc["ecmp-rh-add-app", "metric.moved_pct"] == 0

    rules = tmp_path / "rules.txt"
    rules.write_text("-A -t 198.18.0.10:80 -s mh\n" +
                     "".join(f"-a -t 198.18.0.10:80 -r 198.18.1.{i}:80 -g -w 1\n" for i in range(1, 5)))
    out = tmp_path / "r.yaml"
    assert run_cli("import", "ipvs", rules, "-o", out).returncode == 0
    res = rt.run(rt.load(out)).to_dataframe().set_index("case")
    fail = res.loc["ecmp-fail-tcp-198.18.0.10-80"]
    assert fail["param.forwarding"] == "dr" and fail["param.scheduler"] == "maglev"
    # IPVS mh in every instance, DR: sloppy scheduling finds the same server; without it they break
    assert fail["metric.broken_local_sloppy_pct"] == 0 and fail["metric.broken_shared_pct"] == 0
    assert fail["metric.broken_local_pct"] == fail["metric.moved_pct"] > 25


def test_a_sweep_over_instances(tmp_path):
    import routertwin as rt

    path = tmp_path / "e.yaml"
    path.write_text(HEAD)
    s = rt.load(path)
    base = {"id": "e", "method": "ecmp", "scheduler": "roundrobin", "servers": 4, "keys": 5000}
    grid = rt.sweep(s, {"cases": [[{**base, "ecmp": {"instances": n, "instance": n - 1}}] for n in (2, 4, 8)]},
                    jobs=1, progress=False)
    df = grid.to_dataframe().set_index("param.instances")
    # removing the last region of n always moves half the hash space
    assert df["metric.hash_space_moved_pct"].tolist() == pytest.approx([50.0] * 3, abs=1e-6)


# ---------------------------------------------------------------- weighted members (issue 20)
#
# Independent truth: Linux's nexthop.c computed here in Python integers
# (nh_hthr_group_rebalance: member i's region ends at
# DIV_ROUND_CLOSEST_ULL((w_0 + .. + w_i) << 31, W) - 1; nh_res_group_rebalance:
# it wants DIV_ROUND_CLOSEST_ULL(buckets x (w_0 + .. + w_i), W) minus the
# previous bound), the exact shares w / W (Fractions), binomial bounds for
# the sampled connections.


def weighted(weights: list[int], **keys) -> dict:
    return ecmp(instances=len(weights) - (keys.get("action") == "add"),
                instance_weights={str(i): float(w) for i, w in enumerate(weights)}, **keys)


def kernel_regions(weights: list[int]) -> list[int]:
    total, run, prev, out = sum(weights), 0, 0, []
    for w in weights:
        run += w
        upper = round_closest(run << 31, total) - 1
        out.append(upper + 1 - prev)
        prev = upper + 1
    return out


def kernel_wants(buckets: int, weights: list[int]) -> list[int]:
    total, run, prev, out = sum(weights), 0, 0, []
    for w in weights:
        run += w
        upper = round_closest(buckets * run, total)
        out.append(upper - prev)
        prev = upper
    return out


def hashes_in(bucket_list: list[int], buckets: int) -> int:
    """Hash values h < 2^31 with h % buckets in bucket_list (counted directly)."""
    return sum(len(range(b, 2 ** 31, buckets)) for b in bucket_list)


WEIGHTS = [[1, 3], [1, 2, 3, 4], [5, 1, 1, 1], [1, 256, 17, 100, 3], [255, 1, 128, 64, 32, 16, 8, 4]]


@pytest.mark.parametrize("weights", WEIGHTS)
def test_weighted_hash_threshold_regions_and_connection_shares(weights):
    out = weighted(weights, ecmp="hash-threshold", hash="l4", connections=40000)
    total = sum(weights)
    assert out["hash_space_before"] == kernel_regions(weights)
    assert sum(out["hash_space_before"]) == 2 ** 31
    for i, w in enumerate(weights):
        # each rounded bound is within 1/2 of (w_0 + .. + w_i) / W x 2^31: a region within 1 of its exact share
        assert abs(out["hash_space_before"][i] - Fraction(w, total) * 2 ** 31) <= 1
        assert within(out["before"][i], out["connections"], w / total)


@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("buckets", [128, 1000])
def test_weighted_resilient_buckets_follow_the_kernels_rounding(weights, buckets):
    if buckets < len(weights):
        pytest.skip("a bucket per member")
    out = weighted(weights, ecmp="resilient", hash="l4", buckets=buckets, connections=40000)
    total = sum(weights)
    assert out["buckets_before"] == kernel_wants(buckets, weights)
    for i, w in enumerate(weights):
        # cumulative rounding: floor or ceil of the exact share, never further
        exact = Fraction(buckets * w, total)
        assert math.floor(exact) <= out["buckets_before"][i] <= math.ceil(exact)
        assert within(out["before"][i], out["connections"], out["buckets_before"][i] / buckets)


def test_weighted_resilient_is_not_largest_remainder():
    # the kernel rounds running sums, not each share: weights 1, 1, 2, 2 of
    # 128 buckets (exact 21.33, 21.33, 42.67, 42.67) want 21, 22, 42, 43
    # (bounds 21, 43, 85, 128), where largest remainder (floors 21, 21, 42,
    # 42, the 2 left to the .67 remainders) gives 21, 21, 43, 43
    exact = [Fraction(128 * w, 6) for w in (1, 1, 2, 2)]
    floors = [math.floor(e) for e in exact]
    largest_remainder = [f + (e - f > Fraction(1, 2)) for e, f in zip(exact, floors)]
    assert sum(largest_remainder) == 128 and largest_remainder == [21, 21, 43, 43]
    assert kernel_wants(128, [1, 1, 2, 2]) == [21, 22, 42, 43]
    assert weighted([1, 1, 2, 2], ecmp="resilient", buckets=128)["buckets_before"] == [21, 22, 42, 43]


@pytest.mark.parametrize("weights, k", [([1, 2, 3, 4], 3), ([1, 2, 3, 4], 1), ([5, 1, 1, 1], 0),
                                        ([1, 256, 17, 100, 3], 1), ([1, 3], 1)])
@pytest.mark.parametrize("rebalance", ["idle", "forced"])
def test_removing_a_weighted_member_moves_exactly_its_share(weights, k, rebalance):
    buckets = 256
    survivors = weights[:k] + weights[k + 1:]
    before, after = kernel_wants(buckets, weights), kernel_wants(buckets, survivors)
    # no survivor wants fewer buckets than it holds: nothing else need move
    assert all(a >= b for a, b in zip(after, before[:k] + before[k + 1:]))
    out = weighted(weights, ecmp="resilient", hash="l4", buckets=buckets, instance=k, rebalance=rebalance)
    assert out["buckets_moved"] == before[k]
    assert out["buckets_after"] == after[:k] + [0] + after[k:]
    # its hash values, and only those: counted bucket by bucket on the kernel's table
    assert out["hash_space_moved"] == out["hash_space_before"][k]
    assert hashes_in(list(range(before[k])), buckets) <= out["hash_space_moved"] \
        <= hashes_in(list(range(buckets - before[k], buckets)), buckets)
    assert out["moved"] == out["on_changed"] == out["before"][k]
    assert within(out["moved"], out["connections"], before[k] / buckets)


def test_weighted_hash_threshold_failure_moves_more_than_the_share():
    # hash-threshold, member 0 of weights 1,2,3,4 removed: every edge shifts.
    # Exact moved space from the two kernel bound lists, walked in Python
    weights, k = [1, 2, 3, 4], 0
    out = weighted(weights, ecmp="hash-threshold", hash="l4", instance=k)

    def owner(bounds, members, h):
        return next(m for b, m in zip(bounds, members) if h < b)

    def ends(ws):
        return list(itertools.accumulate(kernel_regions(ws)))

    b0, m0 = ends(weights), list(range(4))
    b1, m1 = ends(weights[1:]), [1, 2, 3]
    edges = sorted({0, *b0, *b1})
    moved = sum(e1 - e0 for e0, e1 in zip(edges, edges[1:]) if owner(b0, m0, e0) != owner(b1, m1, e0))
    assert out["hash_space_moved"] == moved
    assert out["hash_space_moved"] > out["hash_space_before"][k]  # not only its 1/10
    assert out["hash_space_after"] == [0] + kernel_regions(weights[1:])


def test_equal_weights_are_the_unweighted_group():
    for mode in ("hash-threshold", "resilient"):
        plain = ecmp(ecmp=mode, instances=4, instance=2)
        assert weighted([7, 7, 7, 7], ecmp=mode, instance=2) == plain


def test_weighted_add_takes_its_weight_last():
    out = weighted([1, 1, 2], ecmp="hash-threshold", action="add", hash="l4")
    assert out["hash_space_before"][:2] == kernel_regions([1, 1]) and out["hash_space_before"][2] == 0
    assert out["hash_space_after"] == kernel_regions([1, 1, 2])
    assert within(out["on_changed"], out["connections"], 0.5)


@pytest.mark.parametrize("weights, message", [
    ({"0": 1.0, "1": 1.0, "2": 1.0}, "key 'instance_weights': needs one weight per instance (4)"),
    ({"0": 1.0, "1": 1.0, "2": 1.0, "3": 0.0}, "key 'instance_weights': weight of instance 3"),
    ({"0": 1.0, "1": 1.0, "2": 257.0, "3": 1.0}, "1..256"),
    ({"0": 1.5, "1": 1.0, "2": 1.0, "3": 1.0}, "1..256"),
    ({"0": 1.0, "1": 1.0, "2": 1.0, "x": 1.0}, "'x' is not an instance index"),
    ({}, "key 'instance_weights'"),
])
def test_native_instance_weights_are_checked(weights, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ecmp(instances=4, instance_weights=weights)


@pytest.mark.parametrize("new, message", [
    ("weights: [1, 2, 3]", "3 weights for 4 instances"),
    ("weights: [1, 2, 3, 0]", "key 'cases[0].ecmp.weights"),
    ("weights: [1, 2, 3, 257]", "key 'cases[0].ecmp.weights"),
    ("weights: [1, 2, 3, 1.5]", "key 'cases[0].ecmp.weights"),
    ("weights: 3", "key 'cases[0].ecmp.weights"),
])
def test_bad_ecmp_weights_name_file_line_key(tmp_path, new, message):
    path = tmp_path / "e.yaml"
    path.write_text(HEAD.replace("hash: l3}", f"hash: l3, {new}}}"))
    proc = run_cli("run", path, "--out", tmp_path / "o")
    err = one_line(proc, tmp_path / "o")
    assert err.startswith(f"{path}:10: ") and message in err, err


def test_a_weighted_ecmp_case_runs_from_the_cli(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text(HEAD.replace("hash: l3}", "hash: l3, mode: resilient, weights: [1, 2, 3, 4]}")
                    .replace("mode: hash-threshold, ", ""))
    proc = run_cli("run", path, "--out", tmp_path / "o")
    assert proc.returncode == 0, proc.stderr
    case = json.loads((tmp_path / "o" / "e.json").read_text())["cases"][0]
    assert case["params"]["instance_weights"] == "1,2,3,4"
    # instance 0 (weight 1 of 10) fails: its 13 of 128 buckets move, and only those
    assert case["metrics"]["buckets_moved"] == kernel_wants(128, [1, 2, 3, 4])[0] == 13
