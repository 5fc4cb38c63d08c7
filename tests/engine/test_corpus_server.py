"""The real-server corpus (corpus/server/server.toml): each shrunk finding's kept Trace, judged with
no server, violates its requirement exactly while its entry is open or declared, and is a finding
(not declared on the server's flavour model) exactly while it is open."""
from __future__ import annotations

import tomllib

import pytest

from replcheck import catalogue, io, systems
from replcheck.properties.judge import judge_trace
from replcheck.spec.contract import Trace
from conftest import REPO

CORPUS = REPO / "corpus" / "server"
ENTRIES = tomllib.loads((CORPUS / "server.toml").read_text())["entry"]


def test_every_entry_has_its_history_and_trace_and_names_what_exists():
    names = {e["name"] for e in ENTRIES}
    assert {p.name.removesuffix(".trace.jsonl") for p in CORPUS.glob("*.trace.jsonl")} == names
    assert {p.stem for p in CORPUS.glob("*.jsonl") if not p.name.endswith(".trace.jsonl")} == names
    known = {r.id for r in catalogue.load()}
    for e in ENTRIES:
        assert systems.is_server(e["system"]) and e["requirement"] in known and e["status"] in ("open", "fixed", "declared")


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_the_kept_trace_fails_as_its_entry_says(entry):
    io.load_history(CORPUS / f"{entry['name']}.jsonl")  # a History replcheck reads
    header, obs = io.load_trace(CORPUS / f"{entry['name']}.trace.jsonl")
    flavour = systems.flavour_of(entry["system"])
    j = judge_trace(Trace(header, obs), flavour.declares, entry["system"], (entry["requirement"],))
    assert j.violated(entry["requirement"]) == (entry["status"] in ("open", "declared"))
    assert any(v.requirement == entry["requirement"] for v in j.findings) == (entry["status"] == "open")
