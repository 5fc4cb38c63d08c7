"""A mutant's search judges only the Histories whose run reached its seam (base.HistoryMachine.seam):
a followed run that never asked about the mutant gives its base model's Trace, on which the search
fails on nothing; and skipping those leaves every search as it was."""
from __future__ import annotations

import pytest

from replcheck import io, search, systems
from replcheck.generate import generate
from replcheck.model.steps import TAIL_US
from replcheck.properties.judge import asking
from replcheck.properties.machines import base
from replcheck.properties.machines.base import _seam


def _grown(history: dict, k: int) -> dict:
    ops = history["ops"][:k]
    return {"header": {**history["header"], "end_us": (ops[-1]["at"] if ops else 0) + TAIL_US}, "ops": ops}


@pytest.mark.parametrize("mutant,family", [("origin-timestamp", "delay"), ("per-event-wait", "delay"),
                                           ("mts-gaps-not-filled", "parallel"), ("stop-event", "groupid")])
def test_a_run_that_never_asked_about_the_seam_is_its_base_models(mutant, family):
    system = systems.get(f"mutant:{mutant}")
    model = systems.get(system.declares.base)
    seam = _seam(system, model)
    assert seam
    kinds = set()
    for index in range(4):
        history = generate(5, index, (family,))
        noting = asking(system)
        run = noting.follow()
        for k in range(1, len(history["ops"]) + 1):
            grown = _grown(history, k)
            trace = run.trace(grown)
            reached = bool(seam & noting.config.mutants.asked)
            kinds.add(reached)
            if not reached:
                assert io.dumps_lines({}, trace.observations) == io.dumps_lines({}, model.run(grown).observations), \
                    f"{index} after {k} ops"
    assert False in kinds  # some steps judged nothing


def test_no_seam_for_a_model_or_a_mutant_run_otherwise():
    assert _seam(systems.get("model:wl344"), None) == frozenset()
    mutant = systems.get("mutant:min-ack-last-slot")
    assert _seam(mutant, systems.get("model:wl344")) == frozenset()  # not its base's Config
    assert {m.name for m in _seam(mutant, systems.get(mutant.declares.base))} == {"min-ack-last-slot"}


@pytest.mark.parametrize("mutant", ["min-ack-last-slot", "rotate-mid-group"])
def test_a_search_skipping_the_unreached_histories_finds_what_judging_every_one_finds(mutant, monkeypatch):
    task = search.tasks([f"mutant:{mutant}"], search.DEFAULT, 0)[0]
    skipping = search.run_task(task)
    monkeypatch.setattr(base, "_seam", lambda system, model: frozenset())
    judging = search.run_task(task)
    assert [(a["machine"], a["failure"], a["shrunk_steps"]) for a in skipping] == \
        [(a["machine"], a["failure"], a["shrunk_steps"]) for a in judging]
    assert skipping[-1]["failure"]
