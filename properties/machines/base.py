"""What every state machine shares: it grows a History one operation at a time, runs the model
on it after each step, and asserts the properties of its requirements on the Trace."""
from __future__ import annotations

import importlib
from collections import Counter

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from ..core import PROPERTIES
from ..judge import System, Trace, judge_trace

S = 1_000_000


def requirements_of(*features: str) -> tuple[str, ...]:
    """The requirements of these features' trace properties (importing them registers them)."""
    for feature in features:
        importlib.import_module(f"replcheck.properties.{feature}")
    return tuple(p.requirement for p in PROPERTIES if p.feature in features)


class HistoryMachine(RuleBasedStateMachine):
    REQUIREMENTS: tuple[str, ...] = ()
    TAIL_US = 12 * S  # simulate this long after the last step, so pending waits resolve
    system: System  # what the machine drives (machine_for sets it)
    exercised: Counter = Counter()  # per requirement, how many traces judged it; one per machine class

    def __init__(self):
        super().__init__()
        self.now = 0
        self.ops: list[dict] = []
        self.header: dict = {}
        self.n = 0

    def _op(self, op: str, node: str, **kw) -> None:
        self.ops.append({"at": self.now, "op": op, "node": node, **kw})

    def _trx_name(self) -> str:
        self.n += 1
        return f"t{self.n}"

    def trace(self) -> Trace:
        history = {"header": {**self.header, "end_us": self.now + self.TAIL_US}, "ops": self.ops}
        return self.system.run(history)

    @rule(seconds=st.integers(0, 12), micros=st.sampled_from([0, 1, 499_999, 999_999]))
    def time_passes(self, seconds, micros):
        self.now += seconds * S + micros

    @invariant()
    def properties_hold(self):
        if not self.header:
            return
        j = judge_trace(self.trace(), self.system.declares, self.system.name, self.REQUIREMENTS)
        for verdict in j.verdicts:
            self.exercised[verdict.requirement] += verdict.checked > 0
        for verdict in j.findings:
            raise AssertionError(f"{verdict.requirement}: {verdict.witnesses[0].message}")


def machine_for(base: type[HistoryMachine], system: System) -> type[HistoryMachine]:
    """The machine driving one system (a model, a mutant, any System)."""
    name = f"{base.__name__}_{''.join(c if c.isalnum() else '_' for c in system.name)}"
    return type(name, (base,), {"system": system, "exercised": Counter(), "__module__": base.__module__})
