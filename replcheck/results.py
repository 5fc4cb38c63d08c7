"""Judgements into results: the rows and findings every command writes, and what catches a mutant.

A row is one verdict of one system on one History (or one search, proof or TLC check), as results
files hold it (spec/schemas/results.schema.json). A finding is what differs from what the spec
says to expect; its kind (FindingKind) says whether the models gate fails on it, so a kind cannot
be misspelt out of the gate. `caught` is the one definition of a mutant killed: verify's record of
catches, the campaign's findings, the state machines' searches and the gate all read it.
verify, conform, campaign, the state machines and the report go through this module.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Callable, Sequence

from replcheck.properties import core, expect
from replcheck.properties.judge import Judgement


class FindingKind(Enum):
    """Each kind of finding, and whether the models gate (ci/models.toml) fails on it. A kind the
    gate does not read is one it sees otherwise: in the verdict cells (a model's undeclared
    violation, a state machine's failure), in verify's catches (a mutant that survived), or one
    of a real server or a campaign, which that gate does not judge."""

    MODEL_VIOLATES_SEED = "model violates its seed", False
    STATE_MACHINE = "state machine", False
    MUTANT_SURVIVED = "mutant survived", False  # the gate reads `caught` itself (report "caught")
    PROOF_OUTCOME = "proof outcome", True
    PROOF_INCONCLUSIVE = "proof inconclusive", True
    NO_EVIDENCE = "no evidence", True
    SCENARIO_INCONCLUSIVE = "scenario inconclusive", True  # the reference model no longer shows what a scenario claims
    TLC_MANIFEST = "tlc manifest", True
    TLC_FAILED = "tlc failed", True
    SERVER_DIFFERS = "MariaDB differs from the seed", False
    EXPECTATION = "expectation", False  # a real server against a suite's .result
    CROSS_CHECK = "cross-check", False  # a real server against the reference model
    CAMPAIGN_DIFFERENCE = "unexpected cross-check difference", False
    MUTANT_FOUND = "mutant found", False

    def __new__(cls, text: str, gated: bool):
        kind = object.__new__(cls)
        kind._value_ = text  # FindingKind("mutant survived") is MUTANT_SURVIVED
        kind.gated = gated
        return kind

    @classmethod
    def of(cls, text: object) -> FindingKind:
        if isinstance(text, cls):
            return text
        try:
            return cls(text)
        except ValueError:
            raise BadFinding("kind", f"unknown finding kind {text!r}") from None


class BadFinding(ValueError):
    """A finding that cannot exist; `field` names the part that is wrong."""

    def __init__(self, where: str, problem: str):
        self.field, self.problem = where, problem
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class Finding:
    """One finding, as results files and reports hold it (a field left None is not written)."""
    kind: FindingKind
    witness: str
    system: str | None = None
    history: str | None = None
    requirement: str | None = None
    bug: str | None = None  # a mutant's
    server_version: str | None = None  # a real server's, exact (its system name is major.minor)
    predicted: str | None = None  # what the reference model's seed predicts of the requirement
    seed: str | None = None  # the seed's sentence a real server departs from
    attempt: int | None = None  # the conformance run it comes from
    histories: int | None = None  # a campaign's: how many Histories show it, the first, and how to reproduce it
    first_index: int | None = None
    reproduce: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "kind", FindingKind.of(self.kind))
        for f in fields(self)[1:]:
            value, want = getattr(self, f.name), int if f.name in _INTS else str
            if not (value is None and f.name != "witness" or isinstance(value, want) and not isinstance(value, bool)):
                raise BadFinding(f.name, f"{value!r} is not {'an integer' if want is int else 'a string'}")

    @property
    def gated(self) -> bool:
        return self.kind.gated

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        return {**out, "kind": self.kind.value}

    @classmethod
    def from_dict(cls, d: object) -> Finding:
        if not isinstance(d, dict):
            raise BadFinding("", f"{d!r} is not an object")
        if unknown := sorted(set(d) - _NAMES):
            raise BadFinding(unknown[0], "unknown field")
        if "kind" not in d or "witness" not in d:
            raise BadFinding("kind" if "kind" not in d else "witness", "missing (required)")
        return cls(**d)


_NAMES = {f.name for f in fields(Finding)}
_INTS = {"attempt", "histories", "first_index"}


def findings_of(j: Judgement, kind: FindingKind, history: str, system: str | None = None,
                detail: Callable[[core.Verdict], dict] = lambda v: {}) -> list[Finding]:
    """A finding per violation the system does not declare; `detail` adds or replaces fields."""
    return [Finding(**{"kind": kind, "system": system or j.system, "history": history, "requirement": v.requirement,
                       "witness": v.witnesses[0].message, **detail(v)}) for v in j.findings]


# -- catching a mutant ----------------------------------------------------------------------------
def excused(j: Judgement, base: Judgement | None = None) -> dict[str, str]:
    """Each violation of `j` that is no finding, and why: the system declares it (its seed's
    reason), or, for a mutant, its base model on the same History violates it too (a base's own
    violation shows no bug)."""
    out = {}
    for v in j.violations:
        if v.requirement in j.declares.expected_violations:
            out[v.requirement] = j.declares.expected_violations[v.requirement] or "declared"
        elif base is not None and base.violated(v.requirement):
            out[v.requirement] = f"{base.system} violates it too on this History"
    return out


def caught(mutant: Judgement, base: Judgement | None) -> tuple[str, ...]:
    """The requirements that catch a mutant on this History, the one definition of a kill: its
    kills that it violates where its base model, on the same History, holds them (the anti-join). A
    violation the base declares is a catch too where the base holds it here: the declaration says
    the base may break it in some Histories, and on this one only the mutant's change does."""
    if base is None:
        gone = excused(mutant)
        return tuple(r for r in mutant.declares.kills if mutant.violated(r) and r not in gone)
    return tuple(r for r in mutant.declares.kills if mutant.violated(r) and not base.violated(r))


def search_failures(j: Judgement, base: Callable[[Sequence[str]], Judgement] | None = None) -> tuple[core.Verdict, ...]:
    """What fails a state machine's search: on a model, a violation it does not declare; on a
    mutant (`base` judges its base model on some requirements), a violation it does not declare
    that its base model holds on the same History: the anti-join, on every requirement judged,
    not only the mutant's kills (a bug may show first in another feature's requirement). The base
    is judged only when there is such a violation, and only on those: most steps catch nothing."""
    if base is None:
        return j.findings
    if not j.violations:  # declared ones too: the anti-join, as `caught`
        return ()
    on_base = base([v.requirement for v in j.violations])
    return tuple(v for v in j.violations if not on_base.violated(v.requirement))


# -- rows -----------------------------------------------------------------------------------------
@dataclass
class Results:
    """What a command found, before it is written: verify's, conform's (one per attempt)."""
    rows: list[dict] = field(default_factory=list)  # one per (source, system, history, requirement)
    findings: list[Finding] = field(default_factory=list)
    caught: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # mutant -> (History, requirement)
    searches: list[dict] = field(default_factory=list)  # state machines searching for each mutant
    figures: dict[str, list] = field(default_factory=lambda: {"delay": [], "semisync": []})

    def add(self, source: str, system: str, history: str, verdict: core.Verdict, expected: bool = False, **extra) -> None:
        """A row; `expected`: the violation is predicted (the row says so only where it is violated)."""
        row = {"source": source, "system": system, "history": history, **verdict.as_dict(), **extra}
        if expected and verdict.status == core.VIOLATED:
            row["expected"] = "violated"
        self.rows.append(row)

    def add_judgement(self, source: str, history_name: str, j: Judgement, *, system: str | None = None,
                      verdicts: Sequence[core.Verdict] | None = None, history: dict | None = None,
                      predicted: dict[str, str] | None = None) -> None:
        """A row per verdict of `j` (or `verdicts`, the same concluded by a scenario), a violation
        predicted by `predicted` (by default what the system declares) marked expected; with the
        History, its expectations as rows of their own."""
        system = system or j.system
        predicted = j.declares.expected_violations if predicted is None else predicted
        for v in j.verdicts if verdicts is None else verdicts:
            self.add(source, system, history_name, v, v.requirement in predicted)
        if history is not None:
            self.add_expectations(source, system, history_name, history, j)

    def add_expectations(self, source: str, system: str, history_name: str, history: dict, j: Judgement) -> None:
        """The History's expectations as rows of their own (`EXPECT <file>:<line>`), a documented
        flavour difference as an expected violation: shown, never silenced."""
        differs = expect.declared(history, system)
        texts = {eid: expect.describe(op) for eid, op in expect.expectations(history)}
        for v in j.expectations:
            self.add(source, system, history_name, v, v.requirement in differs, text=texts[v.requirement],
                     **({"reason": differs[v.requirement]} if v.requirement in differs else {}))

    def add_catches(self, mutant: str, history_name: str, j: Judgement, base: Judgement | None) -> None:
        self.caught.setdefault(mutant, []).extend((history_name, r) for r in caught(j, base))

    def document(self, **header) -> dict:
        """The results file (`replcheck.results/1`)."""
        return {"schema": "replcheck.results/1", **header, "findings": [f.as_dict() for f in self.findings],
                "rows": self.rows}


SUMMARISED = "*"  # the history of a row that stands for every passing or unexercised one of its cell


def summarised(rows: list[dict]) -> list[dict]:
    """The rows as a results file sized for CI keeps them: each violated or inconclusive row whole
    (its witnesses), each expectation's and TLC check's whole; the passing and unexercised rows of
    one (source, system, requirement) as one row that counts them (history `*`), in the place of
    the first, which the report reads as it reads a campaign's counted rows."""
    out: list[dict] = []
    groups: dict[tuple, dict] = {}
    for row in rows:
        if row["status"] not in (core.PASS, core.NOT_EXERCISED) or {"text", "reason", "tlc"} & row.keys():
            out.append(row)
            continue
        key = (row["source"], row["system"], row["requirement"], row.get("evidence"))
        group = groups.get(key)
        if group is None:
            group = groups[key] = {**row, "history": SUMMARISED, "checked": 0, "counts": {}, "witnesses": []}
            out.append(group)
        group["checked"] += row.get("checked", 0)
        for status, n in row.get("counts", {row["status"]: 1}).items():
            group["counts"][status] = group["counts"].get(status, 0) + n
        if row["status"] == core.PASS:
            group["status"] = core.PASS
    return out


def catches(results: Results) -> dict[str, list[list[str]]]:
    """verify's record of catches as a results file holds it: mutant -> sorted [History, requirement]."""
    return {m: [list(c) for c in sorted(set(found))] for m, found in results.caught.items()}


def read_findings(results: dict, path: object) -> list[Finding]:
    """The findings of a results file; one that cannot exist is bad input naming its field."""
    from replcheck import io

    out = []
    for i, f in enumerate(results.get("findings", [])):
        try:
            out.append(Finding.from_dict(f))
        except BadFinding as e:
            raise io.InputError(str(path), None, io.field_path("findings", [i] + ([e.field] if e.field else [])),
                                e.problem) from None
    return out
