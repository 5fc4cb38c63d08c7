"""The layering rule: spec.formats imports nothing of replcheck, the model only spec, and the trace
properties (properties/<feature>.py) never the model, so a property cannot judge the model by the
model's own decisions. State machines and proofs may import the model."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO

ROOT = REPO


def replcheck_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return {m for m in out if m.split(".")[0] == "replcheck"}


@pytest.mark.parametrize("folder,allowed", [
    ("spec", ()), ("model", ("replcheck.spec",)), ("properties", ("replcheck.spec", "replcheck.properties")),
])
def test_layer_imports(folder, allowed):
    for path in sorted((ROOT / folder).glob("*.py")):
        wrong = {m for m in replcheck_imports(path) if not any(m == a or m.startswith(a + ".") for a in allowed)}
        assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"
