"""The layering rule, over every module of every subpackage, absolute and relative imports alike
(one inside a function or under TYPE_CHECKING counts too: the module still knows the other):

- spec (the formats, the vocabulary, the System contract) imports nothing of replcheck but spec;
- the model (model/, its steps and its simulator) only spec and itself;
- the trace properties (properties/<feature>.py and what they share) never the model, nor the
  machines and proofs that may import it, so a property cannot judge the model by the model's
  own decisions; the state machines (properties/machines/) and the proofs (properties/proofs/)
  may import the model;
- the harness (replcheck/harness/) neither the model nor the properties: it reaches them only
  through the contract and the vocabulary in spec.

And the model has no import circle: its modules import one another as a tree of parts, never back.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO

ROOT = REPO
PACKAGES = ("spec", "model", "properties", "replcheck")  # top-level folders; all but replcheck/ map into replcheck.*


def module_name(path: Path) -> str:
    """The dotted name a file is imported by: model/steps/delay.py is replcheck.model.steps.delay."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    parts = parts if parts[0] == "replcheck" else ("replcheck", *parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every replcheck module or name the file imports, relative ones resolved: `from .x import y`
    counts as pkg.x.y, `from . import y` as pkg.y (a module or an attribute: both lie in pkg)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            out |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in out if m.split(".")[0] == "replcheck"}


def modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def trace_property(path: Path) -> bool:
    return within(module_name(path), "replcheck.properties") and not within(
        module_name(path), "replcheck.properties.machines", "replcheck.properties.proofs")


# (files, what they may import)
RULES = {
    "spec": (lambda p: within(module_name(p), "replcheck.spec"), ("replcheck.spec",)),
    "model": (lambda p: within(module_name(p), "replcheck.model"), ("replcheck.spec", "replcheck.model")),
    "trace properties": (trace_property, ("replcheck.spec", "replcheck.properties")),
}
FORBIDDEN_TO_PROPERTIES = ("replcheck.properties.machines", "replcheck.properties.proofs")
# What the harness still takes from the model: the op table's units and names, filters' settings,
# a connection's fields and the parallel applier's settings, each to move to spec or to the harness
# itself. Each entry must still be true: one that no longer is is taken off.
HARNESS_DEBTS: set[tuple[str, str]] = set()


def all_modules() -> list[Path]:
    return [p for folder in PACKAGES for p in modules(folder)]


@pytest.mark.parametrize("rule", sorted(RULES))
def test_layer_imports(rule):
    applies, allowed = RULES[rule]
    checked = [p for p in all_modules() if applies(p)]
    assert checked, rule
    for path in checked:
        wrong = {m for m in imports(path) if not within(m, *allowed)}
        if rule == "trace properties":
            wrong |= {m for m in imports(path) if within(m, *FORBIDDEN_TO_PROPERTIES)}
        assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"


def harness_imports() -> set[tuple[str, str]]:
    """(file, module) for each model or properties module a harness file imports."""
    out = set()
    for path in modules("replcheck/harness"):
        for m in imports(path):
            if within(m, "replcheck.model", "replcheck.properties"):
                # a module, not a name in it: `from replcheck.model import ops as O` is ops
                out.add((str(path.relative_to(ROOT)), ".".join(m.split(".")[:3])))
    return out


def test_the_harness_reaches_models_and_properties_only_through_spec():
    found = harness_imports()
    assert not found - HARNESS_DEBTS, f"the harness imports {sorted(found - HARNESS_DEBTS)}: use replcheck.spec"
    assert not HARNESS_DEBTS - found, f"{sorted(HARNESS_DEBTS - found)} no longer imported: take them off HARNESS_DEBTS"


def import_graph(folder: str) -> dict[str, set[str]]:
    """Module -> the modules of the same folder it imports (a name in a module counts as the module)."""
    names = {module_name(p): p for p in modules(folder)}
    graph = {}
    for name, path in names.items():
        graph[name] = set()
        for m in imports(path):
            while m and m not in names:  # pkg.module.Name -> pkg.module
                m = m.rpartition(".")[0]
            if m and m != name:
                graph[name].add(m)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each strongly connected group of more than one module (Tarjan)."""
    index, low, stack, on, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_import_resolution_and_circles_are_found():
    """The test's own tools on a made-up graph and on files they must read: a relative import in a
    subpackage resolves, and a circle of three is found while a tree is not one."""
    assert within("replcheck.model.sim", "replcheck.model") and not within("replcheck.modelx", "replcheck.model")
    steps = imports(ROOT / "model" / "steps" / "delay.py")
    assert "replcheck.model.sim.DEFAULT_EPOCH_US" in steps and "replcheck.model.steps.partial.CUT_IO" in steps
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_model_has_no_import_circle():
    assert circles(import_graph("model")) == []
