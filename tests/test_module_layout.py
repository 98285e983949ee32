"""The model/ folder is one ns-3-style module per family (docs/architecture.md):
model/<module>/{model,helper,test,examples}, each a library routertwin-<module>
that declares the modules and C core areas it uses. The build enforces the
declarations through include folders and links; this test reads the sources
and says, by file and line, where a module includes a header of a module or
core area it did not declare, or declares one below itself."""

import re
from pathlib import Path

import pytest

from conftest import ROOT

CORE_BASE = {"dp_ops", "dp_drop", "dp_csum"}  # built into dp_base


def parse_layout(root: Path):
    """(module order, {module: declared USES}, {module: example USES}, {header: owner})."""
    model = root / "model"
    order = re.findall(r"^add_subdirectory\((\w+)\)", (model / "CMakeLists.txt").read_text(), re.M)
    uses, example_uses, owner = {}, {}, {}
    for m in order:
        text = (model / m / "CMakeLists.txt").read_text()
        decl = re.search(r"routertwin_module\(\s*" + m + r"\b(.*?)\)", text, re.S)
        assert decl, f"model/{m}/CMakeLists.txt does not call routertwin_module({m} ...)"
        words = re.sub(r"#.*", "", decl.group(1)).split()
        uses[m] = set(words[words.index("USES") + 1:]) if "USES" in words else set()
        example_uses[m] = set()
        for ex in re.findall(r"routertwin_example\((.*?)\)", text, re.S):
            w = ex.split()
            if "USES" in w:
                example_uses[m] |= {x for x in w[w.index("USES") + 1:] if x.isidentifier() or x.startswith("dp_")}
        for sub in ("model", "helper"):
            for h in (model / m / sub).glob("*.h") if (model / m / sub).is_dir() else ():
                owner[h.name] = f"routertwin-{m}"
    for h in (root / "core" / "include" / "dp").glob("dp_*.h"):
        area = h.stem
        owner[h.name] = "dp_base" if area in CORE_BASE else area
    return order, uses, example_uses, owner


def closure(target: str, uses: dict) -> set:
    """Every target reachable through USES from routertwin-<module> or a core area."""
    seen, stack = set(), [target]
    while stack:
        t = stack.pop()
        if t in seen:
            continue
        seen.add(t)
        if t.startswith("routertwin-"):
            stack.extend(uses.get(t[len("routertwin-"):], ()))
        if t.startswith("dp_") and t != "dp_base":
            stack.append("dp_base")
    return seen


def violations(root: Path) -> list[str]:
    order, uses, example_uses, owner = parse_layout(root)
    problems = []
    for i, m in enumerate(order):
        for u in sorted(uses[m]):
            if u.startswith("routertwin-"):
                dep = u[len("routertwin-"):]
                if dep not in order:
                    problems.append(f"model/{m}/CMakeLists.txt: uses {u}, which is no module")
                elif order.index(dep) >= i:
                    problems.append(f"model/{m}/CMakeLists.txt: uses {u}, declared after it in "
                                    f"model/CMakeLists.txt (a module may use only those above it)")
            elif u.startswith("dp_") and u != "dp_base" and not (root / "core" / "src" / f"{u}.c").exists():
                problems.append(f"model/{m}/CMakeLists.txt: uses {u}, which is no core area")
        allowed = closure(f"routertwin-{m}", uses)
        for sub in ("model", "helper", "test", "examples"):
            folder = root / "model" / m / sub
            if not folder.is_dir():
                continue
            extra = set()
            if sub == "examples":
                for u in example_uses[m]:
                    extra |= closure(u, uses)
            for f in sorted(folder.iterdir()):
                if f.suffix not in (".h", ".cc"):
                    continue
                for n, line in enumerate(f.read_text().splitlines(), 1):
                    inc = re.match(r'\s*#include "([^"]+)"', line)
                    if not inc or inc.group(1) == "dp.h" or inc.group(1).startswith("ns3/"):
                        continue
                    name = Path(inc.group(1)).name
                    if (folder / name).exists():
                        continue  # a file of the same folder (test support)
                    who = owner.get(name)
                    if who is None:
                        problems.append(f"{f.relative_to(root)}:{n}: includes {name}, which no module "
                                        f"or core area provides")
                    elif who not in allowed | extra:
                        problems.append(f"{f.relative_to(root)}:{n}: includes {name} of {who}, which "
                                        f"routertwin-{m} does not declare in model/{m}/CMakeLists.txt")
    return problems


def test_every_include_follows_the_declared_module_dependencies():
    assert violations(ROOT) == []


def test_modules_are_declared_in_dependency_order_from_the_architecture_doc():
    order, uses, _, _ = parse_layout(ROOT)
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for m in order:
        assert f"`{m}`" in doc, f"docs/architecture.md does not describe module {m}"


@pytest.mark.parametrize("module", parse_layout(ROOT)[0])
def test_each_module_has_a_readme_and_a_tested_example(module):
    folder = ROOT / "model" / module
    assert (folder / "README.md").is_file()
    examples = sorted((folder / "examples").glob("*.cc"))
    assert examples, f"model/{module}/examples has no example"
    text = (folder / "CMakeLists.txt").read_text()
    for ex in examples:
        assert re.search(r"routertwin_example\(\s*" + module + r"\s+" + re.escape(ex.stem) + r"\b", text), \
            f"{ex.relative_to(ROOT)} is not built and run as a test"


def test_l7_declares_what_its_web_switch_runs_on():
    """model/l7's web switch (issue 12) splices real ns-3 TCP connections on
    the C core's L7 areas: it comes after lb and hosts and declares them,
    dp_http, dp_urlrule, dp_splice, dp_pkt and ns-3's internet and
    point-to-point modules."""
    order, uses, _, _ = parse_layout(ROOT)
    assert order.index("l7") > max(order.index("lb"), order.index("hosts"))
    assert {"routertwin-lb", "routertwin-hosts", "routertwin-common", "dp_http", "dp_urlrule", "dp_splice",
            "dp_pkt", "ns3::libinternet", "ns3::libpoint-to-point"} <= uses["l7"]


def test_hosts_declares_the_core_areas_of_its_nat():
    """model/hosts runs the EIP's conntrack and DNAT on the C core (issue 13):
    it declares dp_flow, dp_nat and dp_pkt and the ns-3 internet module."""
    order, uses, _, _ = parse_layout(ROOT)
    assert order.index("hosts") > order.index("framing")
    assert {"routertwin-common", "routertwin-framing", "dp_flow", "dp_nat", "dp_pkt",
            "ns3::libinternet"} <= uses["hosts"]


def _tree(tmp_path, a_includes: str) -> Path:
    """A two-module layout: b uses a; a's source includes a_includes."""
    for m, uses in (("a", ""), ("b", "routertwin-a")):
        (tmp_path / "model" / m / "model").mkdir(parents=True)
        (tmp_path / "model" / m / "CMakeLists.txt").write_text(f"routertwin_module({m} USES {uses})\n")
        (tmp_path / "model" / m / "model" / f"{m}-thing.h").write_text("")
    (tmp_path / "model" / "CMakeLists.txt").write_text("add_subdirectory(a)\nadd_subdirectory(b)\n")
    (tmp_path / "model" / "a" / "model" / "a-thing.cc").write_text(f'#include "a-thing.h"\n#include "{a_includes}"\n')
    (tmp_path / "model" / "b" / "model" / "b-thing.cc").write_text('#include "a-thing.h"\n')
    (tmp_path / "core" / "include" / "dp").mkdir(parents=True)
    (tmp_path / "core" / "src").mkdir(parents=True)
    (tmp_path / "core" / "include" / "dp" / "dp_lpm.h").write_text("")
    (tmp_path / "core" / "src" / "dp_lpm.c").write_text("")
    return tmp_path


def test_a_wrong_way_include_is_named_with_file_and_line(tmp_path):
    root = _tree(tmp_path, "b-thing.h")
    assert violations(root) == [
        "model/a/model/a-thing.cc:2: includes b-thing.h of routertwin-b, which routertwin-a does not "
        "declare in model/a/CMakeLists.txt"]


def test_an_undeclared_core_area_is_named(tmp_path):
    root = _tree(tmp_path, "dp_lpm.h")
    assert violations(root) == [
        "model/a/model/a-thing.cc:2: includes dp_lpm.h of dp_lpm, which routertwin-a does not "
        "declare in model/a/CMakeLists.txt"]


def test_a_dependency_on_a_later_module_is_named(tmp_path):
    root = _tree(tmp_path, "a-thing.h")
    (root / "model" / "a" / "CMakeLists.txt").write_text("routertwin_module(a USES routertwin-b)\n")
    assert any("uses routertwin-b, declared after it" in p for p in violations(root))
