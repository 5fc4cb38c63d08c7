"""The judge runs a property only on a Trace holding one of the kinds it declares (`checks(kinds=)`,
properties/judge.py `exercisable`); on any other its verdict is not_exercised without running.
That skip must never change a verdict: on generated Histories of every family, run by the
campaign's models, the other models and the mutants, the indexed judge gives every verdict that
running every property gives, verdict by verdict; and a property never gives anything but
not_exercised on a Trace with its kinds taken out (its own passing and violating cases' too)."""
from __future__ import annotations

import importlib
from functools import lru_cache

import pytest

from replcheck import io, systems
from replcheck.features import FEATURES
from replcheck.generate import FAMILIES, generate
from replcheck.properties.core import PROPERTIES, STMT, TraceView, run_properties
from replcheck.properties.judge import exercisable, judge_trace
from replcheck.spec.contract import Trace
from replcheck.spec.ops import OPS

SEED = 7
CAMPAIGN = ("model:wl344", "model:wl7318", "model:groupid")
KINDED = [p for p in PROPERTIES if p.kinds]


def _others(kind: str) -> list[str]:
    return sorted(n for n, s in systems.systems().items() if s.kind == kind and n not in CAMPAIGN)


@lru_cache(maxsize=None)
def generated(per_family: int) -> tuple[Trace, ...]:
    """Each family's first Histories, each run by the campaign's three models, one other model and
    one mutant (in turn)."""
    models, mutants, out = _others("model"), _others("mutant"), []
    for family in FAMILIES:
        for i in range(per_family):
            history = generate(SEED, i, (family,))
            for name in (*CAMPAIGN, models[i % len(models)], mutants[(i * len(FAMILIES) + len(out)) % len(mutants)]):
                out.append(Trace(*systems.get(name).run(history)))
    return tuple(out)


def declared(o: dict, kinds: frozenset[str]) -> bool:
    return o["kind"] in kinds or (o["kind"] == "stmt" and STMT + o["op"] in kinds)


def assert_same_verdicts(trace: Trace) -> None:
    full = run_properties(TraceView(*trace))  # the view numbers a copy of each observation as judge_trace does
    indexed = judge_trace(trace).verdicts
    assert [v for v in indexed if v not in full] == [] and len(indexed) == len(full)
    assert list(indexed) == full


def assert_unexercised_without_kinds(header: dict, obs: list[dict], props) -> None:
    for prop in props:
        kept = [o for o in obs if not declared(o, prop.kinds)]
        view = TraceView(header, kept)
        assert prop.run(view) == prop.unexercised(view), (prop.name, header.get("system"), header.get("history"))


def test_kinds_name_observations_or_statements():
    named = set(io.schema("trace")["$defs"]["kinds"]) | {STMT + op for op in OPS}
    assert {(p.name, k) for p in KINDED for k in p.kinds if k not in named} == set()


@pytest.mark.parametrize("per_family", [pytest.param(3), pytest.param(40, marks=pytest.mark.slow)])
def test_indexed_judging_gives_every_verdict_of_full_judging(per_family):
    for trace in generated(per_family):
        assert_same_verdicts(trace)


@pytest.mark.parametrize("per_family", [pytest.param(3), pytest.param(40, marks=pytest.mark.slow)])
def test_no_verdict_but_not_exercised_without_the_declared_kinds(per_family):
    for header, obs in generated(per_family):
        view = TraceView(header, obs)
        assert_unexercised_without_kinds(header, obs, [p for p in KINDED if not p.kinds.isdisjoint(view.present)])


CASES = {}
for _feature in FEATURES:
    CASES.update(importlib.import_module(f"test_properties_{_feature}").CASES)


@pytest.mark.parametrize("prop", KINDED, ids=lambda p: p.requirement)
def test_a_property_with_kinds_runs_on_its_cases_and_is_unexercised_without_them(kit, prop):
    case = CASES[prop.requirement]
    for tr in (case.passing(kit), case.violating(kit)[0]):
        trace = Trace(tr.header, [dict(o) for o in tr.obs])
        assert prop in [PROPERTIES[i] for i in exercisable(TraceView(*trace))]
        assert_same_verdicts(trace)
        assert_unexercised_without_kinds(tr.header, tr.obs, [prop])
