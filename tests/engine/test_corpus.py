"""The corpus of saved failing Histories (corpus/corpus.toml): each still fails, or passes once
fixed, exactly as its entry says."""
from __future__ import annotations

import tomllib

import pytest

from replcheck import catalogue, io, systems
from replcheck.properties.judge import judge
from replcheck.investigate import unexpected_differences
from conftest import REPO

CORPUS = REPO / "corpus"
ENTRIES = tomllib.loads((CORPUS / "corpus.toml").read_text())["entry"]


def test_every_file_has_an_entry_and_every_entry_is_well_formed():
    assert {p.stem for p in CORPUS.glob("*.jsonl")} == {e["name"] for e in ENTRIES}
    known = {r.id for r in catalogue.load()}
    for e in ENTRIES:
        assert e["system"] in systems.systems() and e["bug"] and e["found"]
        assert e["status"] in ("regression", "open", "fixed")
        assert e["other"] in systems.systems() if "other" in e else e["requirement"] in known
        # a regression is a mutant caught by a requirement that its declaration says must kill it
        assert (e["status"] == "regression") == (systems.get(e["system"]).kind == "mutant")
        if e["status"] == "regression":
            assert e["requirement"] in systems.get(e["system"]).declares.kills


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_the_saved_history_fails_as_its_entry_says(entry):
    history = io.load_history(CORPUS / f"{entry['name']}.jsonl")
    if "other" in entry:
        unexpected = unexpected_differences(history, entry["system"], entry["other"])
        assert bool(unexpected) == (entry["status"] == "open"), f"{entry['name']}: {unexpected}"
        return
    violated = judge(systems.get(entry["system"]), history, (entry["requirement"],)).violated(entry["requirement"])
    if entry["status"] == "fixed":
        assert not violated, f"{entry['name']}: fixed, yet {entry['requirement']} fails again on {entry['system']}"
    else:
        assert violated, (f"{entry['name']}: {entry['system']} no longer violates {entry['requirement']}: "
                                        + ("the mutant escapes" if entry["status"] == "regression"
                                           else "fixed? change its status to \"fixed\""))
