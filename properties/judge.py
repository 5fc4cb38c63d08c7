"""The one judge: `judge` is the one path from (system, History) to verdicts: run, check every
property on the Trace (and the History's expectations, properties/expect.py), and classify each
violation as declared or as a finding. verify, campaign, conform, investigate, check-trace and
the state machines all go through it. What a System is, its Trace and its Declarations are the
contract's (replcheck.spec.contract), which systems import without this layer.
"""
from __future__ import annotations

import pickle
from collections import deque
from dataclasses import dataclass, replace
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

    @property
    def violations(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.status == VIOLATED)

    @property
    def findings(self) -> tuple[Verdict, ...]:
        """Violations the system does not declare: for a model, a departure from its seed."""
        return tuple(v for v in self.violations if v.requirement not in self.declares.expected_violations)

    def violated(self, requirement: str) -> bool:
        return any(v.requirement == requirement for v in self.violations)


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


# The last Traces of one History judged, each as (requirements, its header but the system's name, a copy of its
# observations, its verdicts, the system's name). A property is a function of the Trace alone, and no property reads
# the system's name: a campaign's systems that write the same Trace of a History (model:wl344 and
# model:groupid do on every generated History) are judged once. The copy keeps what was judged
# whatever is done to the Trace after; a few are kept, as the systems of a History come in turn.
_judged: deque = deque(maxlen=4)
REMEMBERED_UP_TO = 10_000  # observations: a campaign's Traces are hundreds; a long one is not copied


def _unnamed(header: dict) -> dict:
    return {k: v for k, v in header.items() if k != "system"}


def judge_trace(trace: Trace, declares: Declarations = NOTHING, system: str = "",
                requirements: Iterable[str] | None = None) -> Judgement:
    """Every property (or those of `requirements`) on one Trace, classified against `declares`."""
    wanted = None if requirements is None else frozenset(requirements)
    name, header = system or trace.header.get("system", ""), _unnamed(trace.header)
    judged = tuple(_judged)  # a snapshot: a real server's groups judge Histories in threads
    if judged and judged[-1][1].get("history_digest") != header.get("history_digest"):
        _judged.clear()  # another History's: what lives on after its judging only costs the garbage collector
    kept = len(trace.observations) <= REMEMBERED_UP_TO
    # the observations pickled: equal bytes are an equal Trace to its nested values (a copy of each
    # observation would share a sample's `counts` or `variables` with whoever edits it after)
    copied = pickle.dumps(trace.observations, pickle.HIGHEST_PROTOCOL) if kept else b""
    for was_wanted, was_header, was_observations, was_verdicts, was_name in judged:
        if kept and was_wanted == wanted and was_header == header and was_observations == copied:
            return Judgement(name, trace, was_verdicts, declares, same_as=was_name)
    # Numbered in place for the judging and un-numbered after, rather than copied by the view: a
    # copy of every observation was as much memory again as the Trace.
    numbered = [o for o in trace.observations if "_line" not in o]
    for i, o in enumerate(trace.observations, 2):
        if "_line" not in o:
            o["_line"] = i
    view = None
    try:
        view = TraceView(*trace)
        run = exercisable(view)
        verdicts = tuple(p.run(view) if i in run else p.unexercised(view)
                         for i, p in enumerate(PROPERTIES) if wanted is None or p.requirement in wanted)
    finally:
        for o in numbered:
            o.pop("_line", None)
        if view is not None:
            view.release()
    if kept:
        _judged.append((wanted, header, copied, verdicts, name))
    return Judgement(name, trace, verdicts, declares)


def judge(system: System, history: dict, requirements: Iterable[str] | None = None) -> Judgement:
    """The properties on the system's Trace of the History, and the History's expectations on it."""
    trace = Trace(*system.run(history))
    j = judge_trace(trace, system.declares, system.name, requirements)
    return replace(j, expectations=judge_expectations(history, trace.observations, polled=polled(trace.header)))
