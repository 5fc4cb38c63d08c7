"""Every registered property, of every feature, has a trace on which it passes and one on which it
is violated with the right witness (the CASES table in its feature's test module): no property
can be vacuous, and none can be blind. And every model's trace of every embedded History
violates nothing but what its seed itself predicts."""
from __future__ import annotations

import importlib
import re

import pytest
from conftest import HISTORIES, assert_witness

from replcheck.features import FEATURES
from replcheck.properties.core import PASS, PROPERTIES, VIOLATED, seconds
from replcheck.systems import systems

CASES = {}
for _feature in FEATURES:
    CASES.update(importlib.import_module(f"test_properties_{_feature}").CASES)


@pytest.mark.parametrize("prop", PROPERTIES, ids=lambda p: p.requirement)
def test_property_passes_on_model_trace(kit, prop):
    case = CASES[prop.requirement]  # a new property without a case fails here
    verdict = prop.run(case.passing(kit).view())
    assert verdict.status == PASS and verdict.checked > 0, verdict


@pytest.mark.parametrize("prop", PROPERTIES, ids=lambda p: p.requirement)
def test_property_catches_fault(kit, prop):
    case = CASES[prop.requirement]
    tr, target = case.violating(kit)
    assert_witness(prop.run(tr.view()), tr, target, case.expect)


# A History time a witness gives as raw microseconds: a time word, then six digits or more that are
# not seconds (the cases' traces run for seconds; a binlog position of theirs has fewer digits); or
# a span in µs (a node's local clock, beside the µs of the event's commit timestamp, keeps them).
RAW_MICROSECONDS = re.compile(r"\b(?:at|due|since|stop|began|until)\s+\d{6,}\b(?!\.\d| s\b)|(?<!local )\b\d+ µs\b")


@pytest.mark.parametrize("prop", PROPERTIES, ids=lambda p: p.requirement)
def test_witnesses_give_history_times_in_seconds(kit, prop):
    tr, _ = CASES[prop.requirement].violating(kit)
    assert [w.message for w in prop.run(tr.view()).witnesses if RAW_MICROSECONDS.search(w.message)] == []


def test_a_witness_time_is_exact_to_the_microsecond():
    assert [seconds(t) for t in (0, 2_000_000, 2_500_000, 2_000_001, 12_345_678, 999_999)] == [
        "0 s", "2 s", "2.5 s", "2.000001 s", "12.345678 s", "0.999999 s"]
    assert len({seconds(t) for t in range(1_999_990, 2_000_010)}) == 20  # no two times read the same
    assert RAW_MICROSECONDS.search("B began t1 at 11000000 but") and not RAW_MICROSECONDS.search("B began t1 at 11 s but")
    assert RAW_MICROSECONDS.search("waited 500000 µs") and not RAW_MICROSECONDS.search("waited 0.5 s")


def test_every_property_has_exactly_one_case():
    assert set(CASES) == {p.requirement for p in PROPERTIES}


HISTORY_NAMES = sorted(p.stem for p in HISTORIES.glob("*.jsonl"))
MODELS = [s for s in systems().values() if s.kind == "model"]


@pytest.mark.parametrize("system", MODELS, ids=lambda s: s.name)
@pytest.mark.parametrize("history", HISTORY_NAMES)
def test_models_violate_nothing_but_what_the_seeds_predict(kit, system, history):
    view = kit.run(system.name, history).view()
    verdicts = [p.run(view) for p in PROPERTIES if p.requirement not in system.declares.expected_violations]
    assert [(v.requirement, v.witnesses[:1]) for v in verdicts if v.status == VIOLATED] == []


@pytest.mark.slow
def test_embedded_scenarios_exercise_every_property(kit):
    # Otherwise the sweep above could pass by judging nothing.
    assert len(HISTORY_NAMES) >= 40 and len(MODELS) >= 4
    left = {p.requirement for p in PROPERTIES}  # each judged until some trace exercises it, then no more
    for s in MODELS:
        for h in HISTORY_NAMES:
            if not left:
                return
            view = kit.run(s.name, h).view()
            left -= {p.requirement for p in PROPERTIES if p.requirement in left and p.run(view).checked}
    assert sorted(left) == []
