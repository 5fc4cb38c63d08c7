"""The loaders' fast schema check (jsonschema-rs) may only ever say "valid" where the Python
jsonschema, whose errors the user reads, says so too: otherwise a bad line would pass unchecked.
Checked on every line of the spec's Histories and the saved Traces, and on fuzzed variants of them
(values at their edges, keys dropped or added, references to nothing)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import mutations
from replcheck import io, systems
from replcheck.spec import ROOT as SPEC

TRACES = Path(__file__).parent.parent / "properties" / "traces"


def _schemas_of(line: dict, kind: str) -> list[io.Schema]:
    """The schemas a loader checks this line against, as far as the line names one."""
    if kind == "history":
        out = [io._validator("history", "$defs", "op")]
        return out + ([io._op_validator(line["op"])] if str(line.get("op")) in io.schema("history")["$defs"]["ops"] else [])
    out = [io._validator("trace", "$defs", "observation")]
    return out + ([io._kind_validator(line["kind"])] if str(line.get("kind")) in io.schema("trace")["$defs"]["kinds"] else [])


def _lines() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(SPEC.joinpath("histories").glob("*.jsonl"))[:40]:
        out += [("history", json.loads(raw)) for raw in path.read_text().splitlines()[1:] if raw.strip()]
    for path in sorted(TRACES.glob("*.jsonl")):
        out += [("trace", json.loads(raw)) for raw in path.read_text().splitlines()[1:] if raw.strip()]
    history = io.load_history(sorted(SPEC.joinpath("histories").glob("*.jsonl"))[0])
    out += [("trace", o) for o in systems.get("model:wl344").run(history).observations]
    return out


def _disagreements(kind: str, line: dict) -> list[str]:
    return [f"{line}: {err.message}" for s in _schemas_of(line, kind) if s.valid(line)
            for err in s.slow.iter_errors(line)][:1]


@pytest.mark.parametrize("seed", range(4))
def test_fast_check_never_passes_what_the_full_check_refuses(seed):
    rng = random.Random(seed)
    lines = _lines()
    refused = checked = 0
    for _ in range(1500):
        kind, line = rng.choice(lines)
        line = json.loads(json.dumps({k: v for k, v in line.items() if not k.startswith("_")}))
        mutated = mutations.dumps(rng.choice(mutations.JSON_OPS)(rng, line))
        try:
            doc = io.parse_json(mutated, "fuzzed", 1)
        except io.InputError:
            continue
        if not isinstance(doc, dict):
            continue
        checked += 1
        assert not _disagreements(kind, doc), _disagreements(kind, doc)
        refused += any(not s.valid(doc) for s in _schemas_of(doc, kind))
    # both answers were exercised: the mutations reach refused lines and leave some valid
    assert checked > 1000 and 0 < refused < checked


def test_what_the_fast_check_cannot_tell_goes_to_the_full_check():
    op = io._op_validator("change_master")
    line = {"at": 1, "op": "change_master", "node": "B", "delay": 5}
    assert op.valid(line)
    assert op.fast.is_valid({**line, "delay": 5.0}) and not op.valid({**line, "delay": 5.0})
    with pytest.raises(io.InputError, match="delay"):
        io._validate(op, {**line, "delay": 5.0}, "h.jsonl", 2, "")
    assert not op.valid({**line, "delay": 2**63})  # beyond a double's integers: the full check decides


def test_the_plainness_walk_takes_any_nesting_the_parser_allows():
    deep = io.parse_json("[" * 900 + "1" + "]" * 900, "deep.json", 1)
    assert io._plain(deep) and not io._plain(io.parse_json("[" * 900 + "1.5" + "]" * 900, "deep.json", 1))
