"""The one judge: `judge` is the one path from (system, History) to verdicts: run, check every
property on the Trace (and the History's expectations, properties/expect.py), and classify each
violation as declared or as a finding. verify, campaign, conform, investigate, check-trace and
the state machines all go through it. What a System is, its Trace and its Declarations are the
contract's (replcheck.spec.contract), which systems import without this layer.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from importlib import import_module
from typing import Iterable

from replcheck.spec.contract import NOTHING, Declarations, System, Trace
from replcheck.spec.features import feature_names

from .core import PROPERTIES, VIOLATED, TraceView, Verdict
from .expect import judge_expectations, polled

# Every feature's trace properties, registered by importing its module (properties/<feature>.py):
# one per requirement file, in the files' order, which is the order of every Judgement's verdicts.
for _feature in feature_names():
    import_module(f".{_feature}", __package__)

# The properties (their places in PROPERTIES) each kind of observation may give instances to, and
# those that run on any Trace: built once, so that a Trace is judged only by the properties its
# kinds can exercise.
_BY_KIND: dict[str, frozenset[int]] = {}
for _i, _p in enumerate(PROPERTIES):
    for _kind in _p.kinds:
        _BY_KIND[_kind] = _BY_KIND.get(_kind, frozenset()) | {_i}
_ANY_TRACE = frozenset(i for i, p in enumerate(PROPERTIES) if not p.kinds)


def exercisable(view: TraceView) -> frozenset[int]:
    """The places in PROPERTIES of the properties that may judge an instance of this Trace; every
    other one's verdict is not_exercised (Property.unexercised)."""
    return _ANY_TRACE.union(*(_BY_KIND[k] for k in view.present if k in _BY_KIND))


@lru_cache(maxsize=64)  # a few systems' unobserved kinds, a few callers' requirements
def _unexercised(unobserved: frozenset[str], wanted: frozenset[str] | None) -> tuple[tuple[Verdict, ...], dict[int, int]]:
    """Every `wanted` property's verdict (all, for None), in PROPERTIES' order, on a Trace of these
    unobserved kinds that gives it nothing to judge, and each one's place (in PROPERTIES) to its
    place there: made once, so that judging a Trace runs the properties its kinds exercise alone."""
    chosen = [(i, p) for i, p in enumerate(PROPERTIES) if wanted is None or p.requirement in wanted]
    return tuple(p.unexercised_unseen(unobserved) for _, p in chosen), {i: place for place, (i, _) in enumerate(chosen)}


@dataclass(frozen=True)
class Judgement:
    system: str
    trace: Trace
    verdicts: tuple[Verdict, ...]
    declares: Declarations
    expectations: tuple[Verdict, ...] = ()  # one per `expect` op of the History (properties/expect.py)
    # the system judged before whose Trace of the same History this one is but for the system's
    # name: the same verdicts, and whatever else a caller made of that Trace (a campaign's digests)
    same_as: str = ""

    @cached_property  # asked several times of each Judgement a campaign makes rows of
    def violations(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.status == VIOLATED)

    @property
    def findings(self) -> tuple[Verdict, ...]:
        """Violations the system does not declare: for a model, a departure from its seed."""
        return tuple(v for v in self.violations if v.requirement not in self.declares.expected_violations)

    def violated(self, requirement: str) -> bool:
        return any(v.requirement == requirement for v in self.violations)

    def of(self, system: System, **header) -> "Judgement":
        """This Judgement as `system`'s, a system whose run of the History is this one's but for
        its name (replcheck.systems.same_runs, or a mutant whose seam the run never reached): its
        Trace renamed (the same observations) with `header`'s fields, its verdicts and
        expectations, classified against its own declarations."""
        trace = Trace({**self.trace.header, "system": system.name, **header}, self.trace.observations)
        return replace(self, system=system.name, trace=trace, declares=system.declares, same_as=self.system)


class Asked(frozenset):
    """A model's mutants that note each mutant the simulator asks about: the model's code asks
    whether a mutant is on where its seam is (`M.X in self.mutants`), so a run that never asked
    about X is the run of the same model without X, whatever X is labelled with."""

    def __init__(self, mutants=()):
        super().__init__()
        self.asked: set = set()

    def __contains__(self, item) -> bool:
        self.asked.add(item)
        return super().__contains__(item)


def asking(system):
    """A model system (replcheck.systems.ModelSystem) whose runs note in `.config.mutants.asked`
    each mutant they ask about; otherwise the same system."""
    return replace(system, config=replace(system.config, mutants=Asked(system.config.mutants)))


def judge_trace(trace: Trace, declares: Declarations = NOTHING, system: str = "",
                requirements: Iterable[str] | None = None) -> Judgement:
    """Every property (or those of `requirements`) on one Trace, classified against `declares`."""
    wanted = None if requirements is None else frozenset(requirements)
    # Numbered in place for the judging (by the view) and un-numbered after, rather than copied:
    # a copy of every observation was as much memory again as the Trace.
    numbered: list[dict] = []
    view = None
    try:
        view = TraceView(*trace, numbered)
        unexercised, place = _unexercised(view.unobserved, wanted)
        found = list(unexercised)
        for i in sorted(exercisable(view)):
            if i in place:
                found[place[i]] = PROPERTIES[i].run(view)
        verdicts = tuple(found)
    finally:
        for o in numbered:
            del o["_line"]
        if view is not None:
            view.release()
    return Judgement(system or trace.header.get("system", ""), trace, verdicts, declares)


def judge(system: System, history: dict, requirements: Iterable[str] | None = None, trace: Trace | None = None) -> Judgement:
    """The properties on the system's Trace of the History, and the History's expectations on it;
    `trace`: that Trace, when the caller has run the system already."""
    trace = Trace(*system.run(history)) if trace is None else trace
    j = judge_trace(trace, system.declares, system.name, requirements)
    return replace(j, expectations=judge_expectations(history, trace.observations, polled=polled(trace.header)))
