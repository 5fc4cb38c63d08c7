"""A derandomised search draws the same examples whatever the process imported before it (the
group-ID send-before-sync search once found its bug in a fresh interpreter and not in a pytest
worker: Hypothesis drew integers from the literals of the local modules imported so far)."""
from __future__ import annotations

import importlib.util
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from replcheck.model.steps import US
from replcheck.properties.machines.base import HypothesisDraw


def drawn() -> list[int]:
    """What a step's wide draws (a pause of up to a second) give in 200 derandomised examples."""
    values = []

    @settings(max_examples=200, derandomize=True, database=None)
    @given(st.data())
    def pauses(data):
        values.append(HypothesisDraw(data).integer(0, US))

    pauses()
    return values


def test_draws_do_not_depend_on_imported_modules(tmp_path, monkeypatch):
    before = drawn()
    # A local module with literals in that range, imported between the two runs
    path = tmp_path / "replcheck_literals.py"
    path.write_text("PAUSES = (" + ", ".join(str(n) for n in range(100, US, 997)) + ")\n")
    spec = importlib.util.spec_from_file_location("replcheck_literals", path)
    monkeypatch.setitem(sys.modules, "replcheck_literals", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(sys.modules["replcheck_literals"])
    assert drawn() == before
