"""The manifest of the servers' suites (spec/suites/manifest.toml): every test of the servers'
mysql-test suites that touches a feature replcheck models, with what became of it. A test is
`encoded` (its scenario files re-create the whole test), `partly` (they re-create part of it; `why`
says which steps are left out), `not_expressible` (`why` names the mechanism the model or the
History lacks) or `out_of_scope` (`why` says why it is not replcheck's to check). The manifest and
the scenario files are kept in step: every scenario an entry names exists and names that test, and
every scenario file is named by its test's entry (`out_of_step`)."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from replcheck import io, suites
from replcheck.spec import ROOT as SPEC
from replcheck.spec.features import feature_names

FILE = "spec/suites/manifest.toml"
STATUSES = ("encoded", "partly", "not_expressible", "out_of_scope")
WITH_SCENARIOS = ("encoded", "partly")
# how the status was reached: the test's .test/.result read, or its name and option files only
BASES = ("read", "name")
# a suite's tests are in its t/ folder, except multi_source's, which sit in the suite's own
TEST_PATH = re.compile(r"mysql-test/(?:suite/(?P<suite>[\w-]+)/)?(?:t/)?[\w#-]+\.test")
KEYS = {"flavour", "test", "features", "status", "why", "scenarios", "basis"}


@dataclass(frozen=True)
class Entry:
    flavour: str
    test: str  # its path in the flavour's repository
    features: tuple[str, ...]
    status: str
    why: str
    scenarios: tuple[str, ...]
    basis: str

    @property
    def suite(self) -> str:
        """The mysql-test suite the test belongs to (`main` for mysql-test/t)."""
        return TEST_PATH.fullmatch(self.test)["suite"] or "main"


def _bad(where: str, problem: str) -> io.SpecError:
    return io.SpecError(f"{FILE}: {where}: {problem}")


def _entry(i: int, raw: dict, repos: dict[str, str]) -> Entry:
    where = f"test[{i}] ({raw.get('test', '?')})" if isinstance(raw, dict) else f"test[{i}]"
    if not isinstance(raw, dict) or not KEYS >= set(raw) >= {"flavour", "test", "features", "status", "basis"}:
        raise _bad(where, f"needs flavour, test, features, status, basis (and why, scenarios), only {sorted(KEYS)}")
    if raw["flavour"] not in suites.flavours() or raw["flavour"] not in repos:
        raise _bad(where, f"flavour {raw['flavour']!r} is not one of spec/suites.toml's with a repository here")
    if not isinstance(raw["test"], str) or not TEST_PATH.fullmatch(raw["test"]):
        raise _bad(where, "test is a mysql-test path, mysql-test/suite/<suite>/[t/]<name>.test")
    features = raw["features"]
    if not isinstance(features, list) or not features or not set(features) <= set(feature_names()):
        raise _bad(where, f"features are a non-empty list of {', '.join(feature_names())}")
    if raw["status"] not in STATUSES:
        raise _bad(where, f"status is one of {', '.join(STATUSES)}")
    if raw["basis"] not in BASES:
        raise _bad(where, f"basis is one of {', '.join(BASES)}")
    scenarios = raw.get("scenarios", [])
    if not isinstance(scenarios, list) or not all(isinstance(s, str) for s in scenarios):
        raise _bad(where, "scenarios are a list of scenario names")
    if bool(scenarios) != (raw["status"] in WITH_SCENARIOS):
        raise _bad(where, f"an entry names its scenarios exactly when it is {' or '.join(WITH_SCENARIOS)}")
    if raw["status"] in WITH_SCENARIOS and raw["basis"] != "read":
        raise _bad(where, "an encoded test was read: basis is `read`")
    why = raw.get("why", "")
    if not isinstance(why, str) or (raw["status"] != "encoded" and not why.strip()):
        raise _bad(where, "why says which steps are left out, which mechanism is missing, or why out of scope")
    return Entry(raw["flavour"], raw["test"], tuple(features), raw["status"], why, tuple(scenarios), raw["basis"])


@lru_cache(maxsize=1)
def _data() -> dict:
    try:
        return io.parse_toml(SPEC.joinpath("suites", "manifest.toml").read_text(encoding="utf-8"), FILE)
    except io.InputError as e:
        raise io.SpecError(str(e)) from None


@lru_cache(maxsize=1)
def repos() -> dict[str, str]:
    """flavour -> the repository its tests' paths are in."""
    return dict(_data().get("repos", {}))


@lru_cache(maxsize=1)
def load() -> tuple[Entry, ...]:
    """The manifest's entries; a broken manifest is replcheck's fault (SpecError)."""
    entries = [_entry(i, raw, repos()) for i, raw in enumerate(_data().get("test", []))]
    seen: set[tuple[str, str]] = set()
    for e in entries:
        if (e.flavour, e.test) in seen:
            raise _bad(e.test, f"listed twice for {e.flavour}")
        seen.add((e.flavour, e.test))
    return tuple(entries)


def out_of_step(entries: tuple[Entry, ...], histories: list[Path]) -> list[str]:
    """Where the manifest and the scenario files disagree, one line each (empty: in step)."""
    named = {s: e for e in entries for s in e.scenarios}
    problems = []
    files = {}
    for path in histories:
        suite = io.load_history(path)["header"]["suite"]
        files[path.stem] = (suite["flavour"], suite["test"])
        if path.stem not in named:
            problems.append(f"{path.name}: no manifest entry names it ({suite['flavour']} {suite['test']})")
    for name, e in sorted(named.items()):
        if name not in files:
            problems.append(f"{e.test} ({e.flavour}): names {name}, which is no scenario file")
        elif files[name] != (e.flavour, e.test):
            problems.append(f"{name}: its header says {files[name]}, its manifest entry {(e.flavour, e.test)}")
    return problems


def counts(entries: tuple[Entry, ...], by: str) -> dict[str, Counter]:
    """Per suite (`by="suite"`, as `<flavour> <suite>`) or per feature (`by="feature"`): tests per status."""
    out: dict[str, Counter] = {}
    for e in entries:
        keys = [f"{e.flavour} {e.suite}"] if by == "suite" else list(e.features)
        for k in keys:
            out.setdefault(k, Counter())[e.status] += 1
    return dict(sorted(out.items()))
