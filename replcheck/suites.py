"""The suite scenarios (spec/histories/suites/): Histories taken from the servers' own mysql-test
suites, with the expectations of their .result files, each run on the model of its server flavour
as spec/suites.toml maps it."""
from __future__ import annotations

from functools import lru_cache
from fnmatch import fnmatchcase
from pathlib import Path

from replcheck import io, scenarios, systems
from replcheck.spec import ROOT as SPEC


@lru_cache(maxsize=1)
def flavours() -> dict[str, str]:
    """flavour -> the model system that runs its scenarios; a broken manifest is replcheck's fault."""
    data = io.parse_toml(SPEC.joinpath("suites.toml").read_text(encoding="utf-8"), "spec/suites.toml")
    out = {}
    for name, entry in data.get("flavours", {}).items():
        if not isinstance(entry, dict) or set(entry) != {"system", "why"} or entry["system"] not in systems.systems():
            raise io.SpecError(f"spec/suites.toml: flavours.{name}: needs `system`, a known system, and `why`")
        out[name] = entry["system"]
    return out


def histories() -> list[Path]:
    return sorted(Path(str(p)) for p in SPEC.joinpath("histories", "suites").iterdir() if p.name.endswith(".jsonl"))


def systems_for(history: dict, path: str | Path, names: list[str]) -> list[str]:
    """Of `names`, those that run this History: for a suite scenario the model of its flavour (an
    unknown flavour is bad input); for another, every system but the flavour models, which run the
    Histories their `histories` globs name and, for conform's reference, the conformance Histories."""
    suite = history["header"].get("suite")
    if suite is None:
        stem = Path(path).stem
        def runs(name: str) -> bool:
            system = systems.get(name)
            return (not system.seed or any(fnmatchcase(stem, g) for g in system.histories)
                    or (name == scenarios.REFERENCE and scenarios.for_history(Path(path)) is not None))
        return [n for n in names if runs(n)]
    system = flavours().get(suite["flavour"])
    if system is None:
        raise io.InputError(path, 1, "suite.flavour", f"unknown flavour {suite['flavour']!r} (spec/suites.toml has "
                                                      f"{', '.join(sorted(flavours()))})")
    return [system] if system in names else []
