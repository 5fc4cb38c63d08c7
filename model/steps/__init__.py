"""The History vocabulary, written once: one Family per feature, whose topology and steps both the
campaign generator (replcheck/generate.py, drawing from a seeded SplitMix64 stream) and the
Hypothesis state machines (properties/machines/, drawing from Hypothesis, which shrinks) take.

A step draws its arguments through a Draw and grows a History through a Builder. It draws in
the same order whoever draws, so the same choices give the same operations. A step that does not
apply either has a precondition or does nothing.

A feature has a family when its module here (named after it) defines FAMILY; `families()` finds
them, so a new family joins by being written (a module of shared steps, as partial.py, has none;
vocabulary.py holds the operator's vocabulary every family takes where it makes sense).
A module composing the families' steps defines COMPOSED instead (`composed()`: mixed.py).
"""
from __future__ import annotations

import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import import_module
from typing import Any, Callable, Protocol, Sequence, TypeVar

from replcheck.spec.formats import US

from ..sim import Config, simulate

MS = 1000
# The status samples a step reads of the reference model's Trace (groupid.py: the root's Group_ID in
# SHOW MASTER STATUS): its runs take no others, a third of their CPU.
STEPS_READ = frozenset({"master_status"})
T = TypeVar("T")


class Draw(Protocol):
    """Where a step's choices come from."""

    def integer(self, lo: int, hi: int) -> int: ...  # lo..hi, both included

    def choice(self, seq: Sequence[T]) -> T: ...

    def boolean(self) -> bool: ...


@dataclass
class Builder:
    """A History being grown one step at a time."""

    name: str  # the History's name in its header
    tail_us: int  # simulate this long after the last step (Family.tail_us)
    now: int = 0
    ops: list[dict] = field(default_factory=list)
    header: dict = field(default_factory=dict)
    n: int = 0  # transactions named so far
    state: dict[str, Any] = field(default_factory=dict)  # the family's own (replicas, primary, ...)

    def topology(self, sample_every_us: int, nodes: list[dict], channels: list[dict]) -> None:
        self.header = {"schema": "replcheck.history/1", "name": self.name, "sample_every_us": sample_every_us,
                       "topology": {"nodes": nodes, "channels": channels}}

    def op(self, op: str, node: str, **kw) -> None:
        self.ops.append({"at": self.now, "op": op, "node": node, **kw})

    def trx_name(self) -> str:
        self.n += 1
        return f"t{self.n}"

    def history(self) -> dict:
        return {"header": {**self.header, "end_us": self.now + self.tail_us}, "ops": self.ops}

    def trace(self, rule: str = "wl344") -> tuple[dict, list[dict]]:
        """The reference model's Trace so far, for steps that choose as an operator would. The
        reference model, not the system under test: the same choices then give the same History
        on every system, and a mutant cannot steer the steps that test it."""
        return simulate(self.history(), Config(rule), "steps", STEPS_READ)

    def wait_for_promotion(self, node: str, rule: str = "wl344") -> None:
        """Clients write to a new primary once it has applied its relay log and taken over (a
        failover tool's wait; the reference model's Trace says when): a commit there before, in the
        old primary's domain, precedes in its binlog the groups it still applies, and a replica
        connecting by GTID after them never gets it (MariaDB's dump thread starts after the
        replica's GTID in that domain: sql/sql_repl.cc gtid_find_binlog_file; MDEV-4473's trigger)."""
        _, obs = self.trace(rule)
        # a µs past it: an operation at the promotion's µs runs before the group that completes it
        self.now = max([self.now] + [o["t"] + 1 for o in obs if o["kind"] == "promoted" and o["node"] == node])


StepFn = Callable[[Builder, Draw], None]


@dataclass(frozen=True)
class Step:
    name: str
    weight: int  # how often the generator draws it, relative to the family's other steps
    fn: StepFn
    precondition: Callable[[Builder], bool] | None = None  # None: it always applies


@dataclass(frozen=True)
class Family:
    name: str
    topology: StepFn  # draws the servers and channels, sets the header, may open with operations
    steps: tuple[Step, ...]
    tail_us: int
    features: tuple[str, ...]  # whose requirements the Histories exercise (properties.<feature>)


def time_passes(b: Builder, d: Draw) -> None:
    b.now += d.integer(0, 12) * US + d.choice([0, 1, 499_999, 999_999])


TIME_PASSES = Step("time_passes", 1, time_passes)
TAIL_US = 12 * US  # long enough for pending waits to resolve (a family may need longer)


def thread_kw(thread: str | None) -> dict:
    """START/STOP SLAVE's thread argument: none means both threads."""
    return {"thread": thread} if thread else {}


def _modules():
    return (import_module(f".{m.name}", __name__) for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name))


@lru_cache(maxsize=None)
def families() -> dict[str, Family]:
    """Every module's FAMILY by its name (its module's: tests/engine/test_features.py), in name order."""
    return {m.FAMILY.name: m.FAMILY for m in _modules() if hasattr(m, "FAMILY")}


@lru_cache(maxsize=None)
def composed() -> dict[str, Family]:
    """Every module's COMPOSED family by its name: the families' steps composed on one topology (mixed's).
    No requirement file is named after one, so it is no feature; the generator draws it by name only
    (replcheck.generate.COMPOSED), and its state machine searches mutants (replcheck.search)."""
    return {m.COMPOSED.name: m.COMPOSED for m in _modules() if hasattr(m, "COMPOSED")}
