"""`replcheck simulate --format itf`: a Trace as ITF JSON (Apalache's and Quint's format) that
itf-py reads back, one state per observation, every value as the JSON Lines Trace has it."""
from __future__ import annotations

import json

import itf_py
import pytest

from replcheck import io, itf
from replcheck.cli import main
from replcheck.spec import ROOT

HISTORIES = ROOT / "histories"


def _plain(v):
    """An itf-py value as the JSON value it was written from."""
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return None if type(v).__name__ == "NULL" else {k: _plain(x) for k, x in v._asdict().items()}
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


@pytest.mark.parametrize("history,system", [("d1-stop-start-ddl", "model:wl7318"), ("gg-crash-binlog-commit", "model:groupid")])
def test_an_itf_trace_reads_back_with_one_state_per_observation(tmp_path, history, system):
    path = HISTORIES / f"{history}.jsonl"
    assert main(["simulate", str(path), "--system", system, "--out", str(tmp_path / "t.jsonl")]) == 0
    assert main(["simulate", str(path), "--system", system, "--format", "itf", "--out", str(tmp_path / "t.itf.json")]) == 0
    header, obs = io.load_trace(tmp_path / "t.jsonl")
    trace = itf_py.trace_from_json(json.loads((tmp_path / "t.itf.json").read_text()))
    assert trace.vars == ["t", "kind", "observation"] and len(trace.states) == len(obs) > 10
    assert trace.meta["format"] == "ITF" and trace.meta["replcheck"] == header
    for i, (state, o) in enumerate(zip(trace.states, obs)):
        assert state.meta == {"index": i, "line": o.pop("_line")}  # the line load_trace read it from
        assert {"t": state.values["t"], "kind": state.values["kind"], **_plain(state.values["observation"])} == o


def test_values_map_to_itf_as_adr_015_has_them():
    header = {"schema": "replcheck.trace/1", "system": "s", "topology": {"nodes": []}}
    obs = [{"t": 5, "kind": "status", "node": "B", "Seconds_Behind_Master": None, "ok": True, "files": ["a", "b"],
            "counts": {"b-local-1": 2}, "stmt": {"for": "C", "x": 1}}]
    doc = itf.trace(header, obs)
    assert "loop" not in doc and doc["params"] == []
    [state] = doc["states"]
    assert state["t"] == {"#bigint": "5"} and state["kind"] == "status"
    o = state["observation"]
    assert o["Seconds_Behind_Master"] == {"tag": "NULL", "value": {}}  # ITF has no null
    assert o["ok"] is True and o["files"] == ["a", "b"]
    assert o["counts"] == {"#map": [["b-local-1", {"#bigint": "2"}]]}  # not a record field name
    assert o["stmt"] == {"#map": [["for", "C"], ["x", {"#bigint": "1"}]]}  # a keyword is none either
    assert _plain(itf_py.trace_from_json(doc).states[0].values["observation"]) == {k: v for k, v in obs[0].items()
                                                                                   if k not in ("t", "kind")}


def test_an_unknown_format_is_refused(capsys):
    assert main(["simulate", str(HISTORIES / "d1-stop-start-ddl.jsonl"), "--format", "tla"]) == 2
    assert "invalid choice: 'tla'" in capsys.readouterr().err
