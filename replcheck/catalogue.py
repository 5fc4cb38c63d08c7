"""The requirement catalogue (spec/requirements/*.toml) and the evidence each requirement has."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache

from replcheck.io import SpecError
from replcheck.spec import ROOT as SPEC

KINDS = ("safety", "liveness", "format", "interface")
PREFIXES = ("WL344.", "WL7318.", "GGID.", "WL3464.", "WL1720.", "WL6355.", "WL7169.", "MARIADB.", "SBM.", "PARTIAL.", "DURABLE.", "FILTER.", "DOMAIN.", "SRCERR.", "PARALLEL.", "MULTISOURCE.")


@dataclass(frozen=True)
class Requirement:
    id: str
    feature: str
    seed: str
    section: str
    kind: str
    text: str
    # distinct conditions its property reports reaching (properties.core.Check.reached): coverage counts each
    conditions: tuple[str, ...] = ()


@lru_cache(maxsize=None)
def load() -> tuple[Requirement, ...]:
    out, seen = [], set()
    for f in sorted(SPEC.joinpath("requirements").iterdir(), key=lambda p: p.name):
        if not f.name.endswith(".toml"):
            continue
        try:
            data = tomllib.loads(f.read_text())
            feature = data["feature"]["name"]
            for i, r in enumerate(data["requirement"]):
                if r["id"] in seen or r["kind"] not in KINDS or not r["id"].startswith(PREFIXES):
                    raise SpecError(f"spec/requirements/{f.name}: requirement[{i}]: {r['id']}: duplicate id, unknown prefix or unknown kind {r['kind']!r}")
                seen.add(r["id"])
                out.append(Requirement(r["id"], feature, r["seed"], r["section"], r["kind"], r["text"],
                                       tuple(r.get("conditions", ()))))
        except (tomllib.TOMLDecodeError, KeyError, TypeError) as e:  # a missing key, a value of another type
            raise SpecError(f"spec/requirements/{f.name}: {type(e).__name__}: {e}") from None
    return tuple(out)


def by_id() -> dict[str, Requirement]:
    return {r.id: r for r in load()}


def evidence() -> dict[str, list[dict]]:
    """Every check that can produce a verdict for each requirement, from the registries themselves."""
    from replcheck.features import load_features
    from replcheck.properties import core

    load_features()
    ev: dict[str, list[dict]] = {r.id: [] for r in load()}
    for p in core.PROPERTIES:
        ev.setdefault(p.requirement, []).append({"type": "property", "name": f"{p.feature}.{p.name}", "doc": p.doc})
    for p in core.PROOFS:
        for r in p.requirements:
            ev.setdefault(r, []).append({"type": "z3-proof", "name": p.name, "doc": p.claim})
    for m in core.MACHINES:
        for r in m.requirements:
            ev.setdefault(r, []).append({"type": "state-machine", "name": m.name, "doc": m.doc})
    from replcheck import tlc

    tla = tlc.manifest()
    for c in tla.checks:  # a mutant's check shows the property can fail; the others say what TLC finds
        if not c.mutants:
            for name in c.properties():
                if name in tla.requirements:
                    pinned = f"{c.violated} violated" if c.expect == "violated" and name == c.violated else c.expect
                    ev.setdefault(tla.requirements[name], []).append(
                        {"type": "tlc", "name": f"{c.module}:{c.name}", "doc": f"{c.note} (pinned: {pinned}, {c.size})"})
    return ev
