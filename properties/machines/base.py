"""What every state machine shares: it grows a History one operation at a time, runs the model
on it after each step, and asserts the properties of its requirements on the Trace."""
from __future__ import annotations

import importlib
from collections import Counter

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from replcheck.model.delay import DelayRule
from replcheck.model.sim import simulate

from ..core import PROPERTIES, VIOLATED, TraceView

S = 1_000_000


def requirements_of(*features: str) -> tuple[str, ...]:
    """The requirements of these features' trace properties (importing them registers them)."""
    for feature in features:
        importlib.import_module(f"replcheck.properties.{feature}")
    return tuple(p.requirement for p in PROPERTIES if p.feature in features)


class HistoryMachine(RuleBasedStateMachine):
    REQUIREMENTS: tuple[str, ...] = ()
    TAIL_US = 12 * S  # simulate this long after the last step, so pending waits resolve
    rule_name = "wl7318"
    mutants: frozenset[str] = frozenset()
    expected_violations: frozenset[str] = frozenset()
    variables: dict = {}  # the system's forced settings
    defaults: dict = {}  # the system's defaults
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

    def trace(self) -> tuple[dict, list[dict]]:
        history = {"header": {**self.header, "end_us": self.now + self.TAIL_US}, "ops": self.ops}
        return simulate(history, DelayRule(self.rule_name, self.mutants), "state-machine",
                        variables=self.variables, variable_defaults=self.defaults)

    @rule(seconds=st.integers(0, 12), micros=st.sampled_from([0, 1, 499_999, 999_999]))
    def time_passes(self, seconds, micros):
        self.now += seconds * S + micros

    @invariant()
    def properties_hold(self):
        if not self.header:
            return
        view = TraceView(*self.trace())
        for prop in PROPERTIES:
            if prop.requirement not in self.REQUIREMENTS or prop.requirement in self.expected_violations:
                continue
            verdict = prop.run(view)
            self.exercised[prop.requirement] += verdict.checked > 0
            assert verdict.status != VIOLATED, f"{verdict.requirement}: {verdict.witnesses[0].message}"


def machine_for(base: type[HistoryMachine], rule_name: str, mutants=(), expected_violations=(),
                variables=None, defaults=None) -> type[HistoryMachine]:
    """The same machine against another system: a delay rule, its settings, mutants of it."""
    name = f"{base.__name__}_{rule_name}_{'_'.join(sorted(mutants)) or 'model'}"
    return type(name, (base,), {
        "rule_name": rule_name, "mutants": frozenset(mutants), "expected_violations": frozenset(expected_violations),
        "variables": dict(variables or {}), "defaults": dict(defaults or {}), "exercised": Counter(),
        "__module__": base.__module__,
    })
