"""pytest plugin: tests in any suite can say which requirements they check, and be counted.

    @pytest.mark.requirement("WL344.WAIT.RULE")
    def test_my_server_delays(): ...

`pytest --replcheck-results out/results.json [--replcheck-system my-server]` writes one row per
(test, requirement): pass, violated (the test failed) or not_exercised (skipped), which
`replcheck report` and `replcheck gate` read like any other results file. An unknown requirement
ID stops the run at collection.

Hypothesis profiles: replcheck-dev (fast), replcheck-ci (derandomised, no example database),
replcheck-nightly (deep); chosen with --replcheck-profile or the REPLCHECK_PROFILE variable.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

PROFILES = {
    "replcheck-dev": {"max_examples": 25},
    "replcheck-ci": {"max_examples": 100, "derandomize": True, "database": None, "print_blob": True},
    "replcheck-nightly": {"max_examples": 2000},
}
STATUS = {"passed": "pass", "failed": "violated", "skipped": "not_exercised"}


def pytest_addoption(parser):
    group = parser.getgroup("replcheck")
    group.addoption("--replcheck-results", metavar="PATH", help="write a replcheck results file for the marked tests")
    group.addoption("--replcheck-system", default="pytest", help="the system the marked tests check (a column of the report)")
    group.addoption("--replcheck-profile", choices=sorted(PROFILES), help="Hypothesis settings profile (or REPLCHECK_PROFILE)")


def pytest_configure(config):
    config.addinivalue_line("markers", "requirement(*ids): the replcheck requirements this test checks")
    from hypothesis import settings

    for name, values in PROFILES.items():
        settings.register_profile(name, **values)
    chosen = config.getoption("replcheck_profile") or os.environ.get("REPLCHECK_PROFILE")
    if chosen:
        if chosen not in PROFILES:
            raise pytest.UsageError(f"REPLCHECK_PROFILE={chosen!r} is not one of {', '.join(sorted(PROFILES))}")
        settings.load_profile(chosen)
    config.stash[_ROWS] = []


_ROWS = pytest.StashKey[list]()


def _requirements(item) -> list[str]:
    return [r for m in item.iter_markers("requirement") for r in m.args]


def pytest_collection_modifyitems(config, items):
    from replcheck import catalogue

    known = catalogue.by_id()
    for item in items:
        for req in _requirements(item):
            if req not in known:
                raise pytest.UsageError(f"{item.nodeid}: unknown requirement {req!r} in @pytest.mark.requirement")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not _requirements(item) or not (rep.when == "call" or (rep.when == "setup" and not rep.passed)):
        return
    crash = getattr(rep.longrepr, "reprcrash", None)  # the exception's own message, when pytest has one
    message = (crash.message if crash else rep.longreprtext).strip().splitlines()[0] if rep.failed else ""
    for req in _requirements(item):
        item.config.stash[_ROWS].append({
            "source": "pytest", "system": item.config.getoption("replcheck_system"), "history": item.nodeid,
            "requirement": req, "status": STATUS[rep.outcome], "checked": 1, "evidence": f"pytest:{item.nodeid}",
            "witnesses": [{"message": message, "lines": []}] if rep.failed else [],
            "reproduce": f"pytest {item.nodeid!r}"})


def pytest_sessionfinish(session):
    path = session.config.getoption("replcheck_results")
    if path:
        from replcheck import io

        rows = session.config.stash[_ROWS]
        io.write_atomic(Path(path), json.dumps({"schema": "replcheck.results/1", "findings": [], "rows": rows}, indent=1))
