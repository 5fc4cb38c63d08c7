"""z3 proofs, one module per feature; each registers itself with properties.core.proof.

What they share: solving under a deterministic resource limit, counterexamples made unique (so a report is the same
on every run), and combining the outcomes of several queries into one.
"""
from __future__ import annotations

import z3

from ..core import COUNTEREXAMPLE, PROVED

# z3's rlimit counts the solver's own work, not seconds: the same query gives the same answer on
# a quiet machine and a loaded one (a wall-clock timeout turned proofs into `unknown` under load).
# The hardest proof here needs about 8 % of it; `unknown` means this limit, and is reported so.
RLIMIT = 1_000_000_000
UNKNOWN = "unknown"


def check(*constraints) -> tuple[str, z3.ModelRef | None]:
    """The constraints state a violation: unsat proves the claim, sat is a counterexample."""
    s = z3.Solver(ctx=constraints[0].ctx)
    s.set("rlimit", RLIMIT)
    s.add(*constraints)
    r = s.check()
    if r == z3.unsat:
        return PROVED, None
    if r == z3.sat:
        return COUNTEREXAMPLE, s.model()
    return UNKNOWN, None


def witness(constraints, pins, maximize=None) -> z3.ModelRef | None:
    """A model of `constraints` made unique: `maximize` first, then each pinned term in order at
    its smallest |value| and then smallest value (z3 optimises lexicographically)."""
    opt = z3.Optimize()
    opt.set("rlimit", RLIMIT)
    opt.add(*constraints)
    if maximize is not None:
        opt.maximize(maximize)
    for p in pins:
        if z3.is_bool(p):
            opt.minimize(z3.If(p, 1, 0))
            continue
        if z3.is_int(p):
            opt.minimize(z3.If(p >= 0, p, -p))
        opt.minimize(p)  # a bit-vector is minimised as unsigned, which is already unique
    return opt.model() if opt.check() == z3.sat else None


def combine(*outcomes: str) -> str:
    return UNKNOWN if UNKNOWN in outcomes else (COUNTEREXAMPLE if COUNTEREXAMPLE in outcomes else PROVED)
