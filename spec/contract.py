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
