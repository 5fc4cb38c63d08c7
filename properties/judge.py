"""The seam between systems and verdicts: the System protocol, and the one judge.

A System turns a History into a Trace: a reference model, a mutant of one, a real server driven
by the harness, a TLA+ specification run by TLC. It says what it declares: the requirements it
violates because its seed says so (with the reason), and for a mutant the bug it re-creates,
the model it changes and the requirements that must catch it. `judge` is the one path from
(system, History) to verdicts: run, check every property on the Trace (and the History's
expectations, properties/expect.py), and classify each
violation as declared or as a finding. verify, campaign, conform, investigate, check-trace and
the state machines all go through it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, NamedTuple, Protocol

from . import delay, domains, filter, groupid, incident, lag, multisource, parallel, partial, recovery, semisync, srcerr  # noqa: F401  each registers its properties
from .core import PROPERTIES, VIOLATED, TraceView, Verdict
from .expect import judge_expectations


class Trace(NamedTuple):
    header: dict
    observations: list[dict]


@dataclass(frozen=True)
class Declarations:
    expected_violations: dict[str, str] = field(default_factory=dict)  # requirement -> the seed's reason
    bug: str = ""  # a mutant: the bug it re-creates
    kills: tuple[str, ...] = ()  # a mutant: the requirements that must catch it
    base: str = ""  # a mutant: the model it changes (and whose declarations it inherits)


NOTHING = Declarations()


class System(Protocol):
    name: str
    kind: str  # model, mutant, server, tlc
    declares: Declarations

    def run(self, history: dict) -> Trace: ...


@dataclass(frozen=True)
class Judgement:
    system: str
    trace: Trace
    verdicts: tuple[Verdict, ...]
    declares: Declarations
    expectations: tuple[Verdict, ...] = ()  # one per `expect` op of the History (properties/expect.py)

    @property
    def violations(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.status == VIOLATED)

    @property
    def findings(self) -> tuple[Verdict, ...]:
        """Violations the system does not declare: for a model, a departure from its seed."""
        return tuple(v for v in self.violations if v.requirement not in self.declares.expected_violations)

    def violated(self, requirement: str) -> bool:
        return any(v.requirement == requirement for v in self.violations)


def judge_trace(trace: Trace, declares: Declarations = NOTHING, system: str = "",
                requirements: Iterable[str] | None = None) -> Judgement:
    """Every property (or those of `requirements`) on one Trace, classified against `declares`."""
    wanted = None if requirements is None else frozenset(requirements)
    # Numbered in place for the judging and un-numbered after, rather than copied by the view: a
    # copy of every observation was as much memory again as the Trace.
    numbered = [o for o in trace.observations if "_line" not in o]
    for i, o in enumerate(trace.observations, 2):
        if "_line" not in o:
            o["_line"] = i
    try:
        view = TraceView(*trace)
        verdicts = tuple(p.run(view) for p in PROPERTIES if wanted is None or p.requirement in wanted)
    finally:
        for o in numbered:
            o.pop("_line", None)
    return Judgement(system or trace.header.get("system", ""), trace, verdicts, declares)


def judge(system: System, history: dict, requirements: Iterable[str] | None = None) -> Judgement:
    """The properties on the system's Trace of the History, and the History's expectations on it."""
    trace = Trace(*system.run(history))
    j = judge_trace(trace, system.declares, system.name, requirements)
    return replace(j, expectations=judge_expectations(history, trace.observations))
