"""The table of ops (spec/ops.py) against the History schema, the simulator's table (model/ops.py), and the harness's
own table (replcheck/harness/ops.py) against both: a new op is one entry in each plus the code it
names, and nothing else decides what an op is."""
from __future__ import annotations

import json
import re
from operator import attrgetter

import pytest

from replcheck.harness import ops as H
from replcheck.harness import runner as R
from replcheck.harness import statements
from replcheck.model.ops import METHODS
from replcheck.spec.ops import OPS, TABLE
from replcheck.model.sim import Config, Simulator
from replcheck.spec import ROOT

SCHEMA = json.loads((ROOT / "schemas" / "history.schema.json").read_text())


def test_the_table_has_exactly_the_schemas_ops():
    assert len(OPS) == len(TABLE)
    assert list(OPS) == list(SCHEMA["$defs"]["ops"])
    assert list(OPS) == SCHEMA["$defs"]["op"]["properties"]["op"]["enum"]


@pytest.mark.parametrize("entry", TABLE, ids=lambda e: e.name)
def test_every_entry_names_code_that_exists(entry):
    sim = Simulator({"header": {"topology": {"nodes": [{"id": "A"}]}}, "ops": []}, Config())
    assert callable(attrgetter(METHODS[entry.name])(sim))


def test_the_simulator_carries_out_exactly_the_tables_ops():
    assert list(METHODS) == list(OPS)


def test_the_harness_runs_or_refuses_every_op_and_names_code_that_exists():
    assert sorted([*H.RUNS, *H.REFUSED]) == sorted(OPS)
    assert not set(H.RUNS) & set(H.REFUSED) and set(H.LIMITS) <= set(H.RUNS)
    r = R.Runner({"header": {"topology": {"nodes": [{"id": "A"}]}}, "ops": []})
    for name, how in H.RUNS.items():
        assert callable(attrgetter(how)(r)), name
        assert (how == H.STATEMENT) == (name in statements.BUILDERS), name


@pytest.mark.parametrize("entry", TABLE, ids=lambda e: e.name)
def test_every_time_field_is_an_integer_field_of_the_schema(entry):
    props = SCHEMA["$defs"]["op"]["properties"] | SCHEMA["$defs"]["ops"][entry.name]["properties"]
    for t in entry.times:
        spec = props[t.path[0]]
        for key in t.path[1:]:
            spec = spec["items"]["properties"][key]
        if "$ref" in spec:
            spec = SCHEMA["$defs"][spec["$ref"].rsplit("/", 1)[1]]
        assert "integer" in spec["type"], (entry.name, t.path)


def test_a_refused_op_is_refused_by_the_runner_with_the_tables_reason():
    for name, why in H.REFUSED.items():
        h = {"header": {"topology": {"nodes": [{"id": "A"}]}}, "ops": [{"at": 0, "op": name, "node": "A"}]}
        with pytest.raises(R.RunnerError, match=re.escape(f"op {name} is not supported on a real server: {why}")):
            R.check_supported(h)
