"""Requirement coverage (replcheck/coverage.py): Histories that exercised each requirement, the
conditions its check reached, the weakly covered and those under the generator's floor."""
from __future__ import annotations

from replcheck import catalogue, coverage, io, report, systems
from replcheck.properties.core import NOT_EXERCISED, PASS, VIOLATED, Verdict
from replcheck.properties.judge import judge
from conftest import REPO

CONDITIONS = ("WL344.STOP.NO_EXEC", "WL1720.LIVE.RELEASE", "GGID.PURGE.NO_SKIP", "DURABLE.GTID.STATE_AT_START")


def row(report_: dict, requirement: str) -> dict:
    return next(x for x in report_["requirements"] if x["requirement"] == requirement)


def test_counts_histories_that_exercised_each_requirement_once_per_history():
    cov = coverage.Coverage()
    stop = "WL344.STOP.NO_EXEC"
    # one History: two systems judged it (counted once), one reached a condition
    cov.add("delay", [Verdict(stop, PASS, 3, conditions=("stop during a delay wait",)), Verdict(stop, VIOLATED, 1)])
    cov.add("delay", [Verdict(stop, PASS, 1)])
    for _ in range(998):  # and 998 Histories that did not exercise it
        cov.add("delay", [Verdict(stop, NOT_EXERCISED)])
    cov.add("semisync", [Verdict("WL1720.ACK.WAIT", NOT_EXERCISED)])
    out = cov.as_dict()
    assert out["histories"] == {"delay": 1000, "semisync": 1}
    r = row(out, stop)
    assert (r["histories"], r["families"], r["family_rate"]) == (2, ["delay"], 2 / 1000)
    assert r["conditions"] == {"stop during a delay wait": 1, "crash during a delay wait": 0}
    assert stop in out["under_floor"] and stop not in out["weakly_covered"]  # 2 in 1,001: not under 1 in 1,000
    # never exercised in 1,001 Histories: weakly covered, and under the floor of the families that ran
    assert "WL344.WAIT.RULE" in out["weakly_covered"] and "WL344.WAIT.RULE" in out["under_floor"]
    # one semisync History cannot tell a share under 1 in 100 from none
    assert "WL1720.ACK.WAIT" in out["weakly_covered"] and "WL1720.ACK.WAIT" not in out["under_floor"]
    # a family that did not run judges nothing about its own requirements' floor
    assert row(out, "GGID.UNIQUE")["family_rate"] is None and "GGID.UNIQUE" not in out["under_floor"]
    text = "\n".join(coverage.lines(out))
    assert "WL344.STOP.NO_EXEC 0.20%" in text and "stop during a delay wait 1; crash during a delay wait 0" in text
    few = coverage.Coverage()
    few.add("delay", [Verdict(stop, NOT_EXERCISED)])
    assert coverage.lines(few.as_dict())[1:3] == ["  under 1 in 100 of their families' Histories: none",
                                                  "  weakly covered (under 1 in 1000): too few Histories to tell"]


def test_every_declared_condition_is_reached_by_some_history_and_only_declared_ones_are_reported():
    declared = {r.id: set(r.conditions) for r in catalogue.load() if r.conditions}
    assert set(declared) == set(CONDITIONS)
    reached: dict[str, set] = {r: set() for r in CONDITIONS}
    for name, system in (("crash-during-delay", "model:wl344"), ("d1-stop-start-ddl", "model:wl344"),
                         ("gg-purge", "model:groupid"), ("ss-counters", "model:wl7318"),
                         ("gg-hier-basic", "model:groupid"), ("gg-dirty-fde", "model:groupid"),
                         ("mdb-state-file-missing", "model:mariadb-10.11")):
        history = io.load_history(REPO / "spec" / "histories" / f"{name}.jsonl")
        for v in judge(systems.get(system), history, CONDITIONS).verdicts:
            reached[v.requirement] |= set(v.conditions)
    assert reached == declared


def test_a_history_without_the_condition_reports_none():
    history = io.load_history(REPO / "spec" / "histories" / "d1-stop-start-ddl.jsonl")
    history = {**history, "ops": [o for o in history["ops"] if o["op"] != "stop_slave"]}
    (v,) = judge(systems.get("model:wl344"), history, ("WL344.STOP.NO_EXEC",)).verdicts
    assert v.conditions == ()


def test_the_report_carries_a_campaigns_coverage():
    cov = coverage.Coverage()
    cov.add("delay", [Verdict("WL344.STOP.NO_EXEC", PASS, 1)])
    results = {"schema": "replcheck.results/1", "rows": [], "findings": [], "coverage": cov.as_dict(), "_path": "c/summary.json"}
    document = report.build_report([results])
    assert document["coverage"][0]["input"] == "c/summary.json"
    assert "requirement coverage over 1 Histories (delay 1)" in report.markdown(document)
