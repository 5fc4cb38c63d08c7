"""What every state machine shares: it grows a History one step at a time, runs the system on it
after each step, and asserts the properties of its requirements on the Trace. The steps are a
Family's (replcheck.model.steps), the ones the campaign generator takes, drawn by Hypothesis."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Sequence, TypeVar

from hypothesis import Phase
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from replcheck.model.steps import Builder, Family, Step
from replcheck.results import search_failures

from ..core import PROPERTIES
from replcheck.spec.contract import FollowedRun, System, Trace

from ..judge import asking, judge_trace

T = TypeVar("T")
JUDGED_KEPT = 512
UNREACHED = object()  # a mutant's History whose run never reached its seam (HistoryMachine.seam), in `judged`
# Every phase but `explain`: after shrinking, Hypothesis's explain phase replays the example
# hundreds of times to annotate which draws matter. On a machine that simulates the whole
# History after every step that took minutes (a mutant found in 1.6 s, shrunk in 6 s, then
# explained for 4 min); the shrunk steps and the witness already say what happened.
SEARCH_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)


def _without_local_constants() -> None:
    """Derandomised searches draw the same examples in every process. Hypothesis (6.131 on) draws an
    integer now and then from the literals of the local modules imported so far
    (providers._get_local_constants), and pays for that choice in random draws, so the same search
    drew other examples in a pytest worker that had imported other modules than a fresh
    interpreter (send-before-sync's, AFTER_SYNC's). With no local pool it draws from Hypothesis's
    own constants only, the same everywhere. Hypothesis has no setting for it; without the
    function (another version) there is nothing to take away."""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "_get_local_constants"):
        none = providers.Constants()
        providers._get_local_constants = lambda: none
        providers.CONSTANTS_CACHE.cache.clear()


_without_local_constants()


def every_requirement() -> tuple[str, ...]:
    """The requirement of every trace property (replcheck.properties.judge imported them all)."""
    return tuple(p.requirement for p in PROPERTIES)


def requirements_of(*features: str) -> tuple[str, ...]:
    """The requirements of these features' trace properties: what a machine judges when a test
    narrows it to them (a hand-made model declares none of another feature's known violations)."""
    return tuple(p.requirement for p in PROPERTIES if p.feature in features)


class HypothesisDraw:
    """A step's choices drawn by Hypothesis, so that it shrinks them."""

    def __init__(self, data):
        self.data = data

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))

    def choice(self, seq: Sequence[T]) -> T:
        return self.data.draw(st.sampled_from(seq))

    def boolean(self) -> bool:
        return self.data.draw(st.booleans())


class HistoryMachine(RuleBasedStateMachine):
    REQUIREMENTS: tuple[str, ...] = ()
    FAMILY: Family
    system: System  # what the machine drives (machine_for sets it)
    base: System | None = None  # a mutant's base model: a violation it shows too on the History is no catch
    exercised: Counter = Counter()  # per requirement, how many traces judged it; one per machine class
    judged: dict = {}  # History text -> its Judgement, the most recent JUDGED_KEPT; one per machine class
    # Steps taken by the class's most recent run: after a failing run_state_machine_as_test,
    # Hypothesis's last replay is the shrunk example, so this is its length.
    last_steps: int = 0
    examples: int = 0  # the examples its search ran (replcheck.search.run_machine sets it)
    # A mutant of a model that differs from its base model by these mutants alone (machine_for): an
    # example's run notes whether it asked about them (judge.Asked: the model's code asks at a
    # mutant's seam), and a History whose run never did has its base model's Trace.
    seam: frozenset = frozenset()

    def __init__(self):
        super().__init__()
        self.b = Builder("state-machine", self.FAMILY.tail_us)
        self.steps = 0
        type(self).last_steps = 0
        system = getattr(self, "system", None)  # a bare family machine drives nothing
        if self.seam:  # each example notes its own asks: a fork's are its run's (shared mutants)
            system = asking(system)
            self.asked = system.config.mutants.asked
        # A system whose runs extend (a model) follows the example's History step by step; any
        # other is run on the whole History after every step.
        follow = getattr(system, "follow", None)
        self.run: FollowedRun | None = follow() if follow is not None else None

    def trace(self, history: dict) -> Trace:
        return self.system.run(history) if self.run is None else self.run.trace(history)

    @invariant()
    def properties_hold(self):
        if not self.b.header:
            return
        history = self.b.history()
        key = json.dumps(history, sort_keys=True)
        j = self.judged.get(key)
        if j is None:  # shrinking replays the same prefixes over and over: judge each History once
            trace = self.trace(history)
            # Its run never asked about the mutant's seam (in this example so far: a few asks of an
            # earlier step's fork more only judge more): the Trace is the base model's, whose
            # violations are all the mutant's too, and a search fails on none of those. Not judged.
            reached = not self.seam or self.seam & self.asked
            j = judge_trace(trace, self.system.declares, self.system.name, self.REQUIREMENTS) if reached else UNREACHED
            if len(self.judged) >= JUDGED_KEPT:
                self.judged.pop(next(iter(self.judged)))
            self.judged[key] = j
        if j is UNREACHED:
            return
        for verdict in j.verdicts:
            self.exercised[verdict.requirement] += verdict.checked > 0
        base = self.base  # a search for a mutant fails on a catch only: a violation its base model holds
        on_base = None if base is None else (lambda rs: judge_trace(base.run(history), base.declares, base.name, rs))
        for verdict in search_failures(j, on_base):
            raise AssertionError(f"{verdict.requirement}: {verdict.witnesses[0].message}")


def _topology(family: Family):
    @initialize(data=st.data())
    def topology(self, data):
        family.topology(self.b, HypothesisDraw(data))
    return topology


def _rule(step: Step):
    def take(self, data):
        step.fn(self.b, HypothesisDraw(data))
        self.steps += 1
        type(self).last_steps = self.steps
    take.__name__ = take.__qualname__ = step.name
    ruled = rule(data=st.data())(take)
    return ruled if step.precondition is None else precondition(lambda self: step.precondition(self.b))(ruled)


def family_machine(family: Family) -> type[HistoryMachine]:
    """The state machine of a family: its topology as the initial rule, one rule per step (the
    generator's weights do not apply: Hypothesis chooses the rules)."""
    body = {"FAMILY": family, "REQUIREMENTS": every_requirement(),
            "topology": _topology(family), **{s.name: _rule(s) for s in family.steps}}
    return type(f"{family.name}_machine", (HistoryMachine,), body)


def machine_for(base: type[HistoryMachine], system: System, model: System | None = None,
                requirements: tuple[str, ...] | None = None) -> type[HistoryMachine]:
    """The machine driving one system (a model, a mutant, any System); for a mutant, `model` is its
    base model: the search fails only on a violation that model holds on the same History
    (replcheck.results.search_failures), so it goes on past what the base shows too. It judges
    `requirements` (by default every one)."""
    name = f"{base.__name__}_{''.join(c if c.isalnum() else '_' for c in system.name)}"
    return type(name, (base,), {"system": system, "base": model, "exercised": Counter(), "judged": {}, "__module__": base.__module__,
                                "seam": _seam(system, model),
                                "REQUIREMENTS": base.REQUIREMENTS if requirements is None else tuple(requirements)})


def _seam(system: System, model: System | None) -> frozenset:
    """The mutants a model's mutant carries beyond its base model, when its runs are that model's
    but for them (the same Config otherwise, and it follows a History step by step); else none."""
    config, base = getattr(system, "config", None), getattr(model, "config", None)
    if config is None or base is None or not hasattr(system, "follow"):
        return frozenset()
    if replace(config, mutants=base.mutants) != base:
        return frozenset()
    return frozenset(config.mutants - base.mutants)
