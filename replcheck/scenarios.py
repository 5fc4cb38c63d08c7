"""The conformance scenarios (spec/conformance.toml) and their claims, checked on any run of them.

conform runs each on a real server, verify runs the same Histories on the models; both judge a
run's verdicts by the scenario's claims (properties/preconditions.py): a requirement it exercises
is inconclusive on a run that did not test it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from replcheck import io
from replcheck.properties import core, preconditions
from replcheck.properties.judge import Judgement
from replcheck.results import Finding, FindingKind
from replcheck.spec import ROOT as SPEC

REFERENCE = "model:mariadb-10.11"  # the MariaDB flavour model: the one the scenarios' claims hold on


@dataclass(frozen=True)
class Scenario:
    name: str
    history: Path
    quick: bool
    scale: float | None  # None: what its History's timing needs (harness.runner.scale_for)
    exercises: tuple[str, ...]
    description: str = ""
    requires: tuple[dict, ...] = ()


def load_scenarios(path: Path | None = None) -> list[Scenario]:
    """The scenarios of `path`, by default replcheck's own, whose faults are replcheck's (SpecError)."""
    if path is None:  # read as package data, whatever holds it
        try:
            return _scenarios(SPEC.joinpath("conformance.toml").read_text(encoding="utf-8"), "spec/conformance.toml")
        except io.InputError as e:
            raise io.SpecError(str(e)) from None
    return _scenarios(io.read_text(path), path)


def _scenarios(text: str, path) -> list[Scenario]:
    data = io.parse_toml(text, path)
    out = []
    for i, s in enumerate(data.get("scenario", [])):
        where = f"scenario[{i}]"
        for key in ("name", "history", "exercises"):
            if key not in s:
                raise io.InputError(path, None, where, f"missing {key}")
        scale = s.get("scale")
        if scale is not None and (not isinstance(scale, (int, float)) or isinstance(scale, bool) or not 0 < scale <= 10):
            raise io.InputError(path, None, f"{where}.scale", f"{scale!r} is not a number in (0, 10]")
        requires = s.get("requires", [])
        if not isinstance(requires, list):
            raise io.InputError(path, None, f"{where}.requires", "a list of preconditions")
        for j, pre in enumerate(requires):
            if why := preconditions.problem(pre):
                raise io.InputError(path, None, f"{where}.requires[{j}]", why)
        out.append(Scenario(s["name"], SPEC.joinpath("histories", s["history"]), bool(s.get("quick", False)),
                            None if scale is None else float(scale),
                            tuple(s["exercises"]), s.get("description", ""), tuple(requires)))
    return out


def for_history(path: Path) -> Scenario | None:
    """The scenario whose History this file is: run on its own (a reproduce command, verify),
    it keeps the scenario's claims and time scale."""
    return next((s for s in load_scenarios() if s.history.resolve() == Path(path).resolve()), None)


def conclude(scenario: Scenario, j: Judgement) -> tuple[tuple[core.Verdict, ...], list[core.Witness]]:
    """The run's verdicts with the scenario's claims checked, and its unmet preconditions."""
    return preconditions.conclude(core.TraceView(*j.trace), j.verdicts, scenario.exercises, scenario.requires)


def inconclusive(scenario: Scenario, verdicts: tuple[core.Verdict, ...], system: str, trace: str) -> list[Finding]:
    """A finding per requirement the run did not test although the scenario claims it."""
    return [Finding(FindingKind.SCENARIO_INCONCLUSIVE, system=system, history=scenario.name, requirement=v.requirement,
                    witness="; ".join(f"{w.message} [{trace}:{list(w.lines)}]" if w.lines else w.message for w in v.witnesses))
            for v in verdicts if v.status == core.INCONCLUSIVE]
