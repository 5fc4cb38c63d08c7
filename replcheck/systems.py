"""Systems: anything that turns a History into a Trace. Declared as data in spec/systems.toml."""
from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache

from replcheck.io import dumps_history
from replcheck.model.delay import DelayRule
from replcheck.model.sim import simulate
from replcheck.spec import ROOT as SPEC


@dataclass(frozen=True)
class System:
    name: str
    kind: str
    rule: str
    description: str = ""
    mutants: tuple[str, ...] = ()
    bug: str = ""
    kills: tuple[str, ...] = ()
    expected_violations: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)  # forced on every node, whatever the History says
    defaults: dict = field(default_factory=dict)  # the server version's defaults

    def run(self, history: dict) -> tuple[dict, list[dict]]:
        header, obs = simulate(history, DelayRule(self.rule, frozenset(self.mutants)), self.name,
                               variables=self.variables, variable_defaults=self.defaults)
        header["history_digest"] = history_digest(history)
        return header, obs


@lru_cache(maxsize=None)
def systems() -> dict[str, System]:
    data = tomllib.loads(SPEC.joinpath("systems.toml").read_text())
    declared = {s["name"]: s for s in data["system"]}
    out = {}
    for s in data["system"]:
        # A mutant changes one model (`base`): it runs that model's rule with its server defaults
        # (AFTER_SYNC for model:wl7318), so it differs from the model only by its mutation.
        base = declared.get(s.get("base"), {})
        if ("base" in s or s["kind"] == "mutant") and base.get("kind") != "model":
            raise ValueError(f"systems.toml: {s['name']}: base {s.get('base')!r} is not a declared model")
        out[s["name"]] = System(
            name=s["name"], kind=s["kind"], rule=s.get("rule", base.get("rule")),
            description=s.get("description", s.get("bug", "")),
            mutants=tuple(s.get("mutants", ())), bug=s.get("bug", ""), kills=tuple(s.get("kills", ())),
            expected_violations=s.get("expected_violations", {}),
            variables={**base.get("variables", {}), **s.get("variables", {})},
            defaults={**base.get("defaults", {}), **s.get("defaults", {})},
        )
    return out


def get(name: str) -> System:
    try:
        return systems()[name]
    except KeyError:
        raise KeyError(f"unknown system {name!r}; known: {', '.join(systems())}") from None


def history_digest(history: dict) -> str:
    return "sha256:" + hashlib.sha256(dumps_history(history).encode()).hexdigest()[:16]
