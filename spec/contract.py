"""The contract between systems and verdicts: what a System is, what it returns, what it declares.

A System turns a History into a Trace: a reference model, a mutant of one, a real server driven
by the harness, a TLA+ specification run by TLC. It says what it declares: the requirements it
violates because its seed says so (with the reason), and for a mutant the bug it re-creates,
the model it changes and the requirements that must catch it.

It lives in spec, beside the History and Trace formats, because spec is the one layer every other
may import and which imports nothing of replcheck: a model, the harness's server System and TLC's
are Systems without reaching through the properties layer that judges them, and the properties
(properties/judge.py, the one judge) read the same shapes. Shapes only: no decision is made here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Protocol


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


class FollowedRun(Protocol):
    """One run that follows a History as it grows (a state machine's example, step by step):
    `trace(history)` is what the system's run(history) gives, at the cost of the ops added since
    the previous call when the History only grew at its end (any other History is run afresh)."""

    def trace(self, history: dict) -> Trace: ...


class Extensible(System, Protocol):
    """A System whose runs can be extended op by op, so that a History grown by a step is not run
    again from its start: a model (its simulator forks). A real server or TLC is a plain System,
    which a state machine runs whole after every step."""

    def follow(self) -> FollowedRun: ...
