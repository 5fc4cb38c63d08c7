"""Scenario preconditions (properties/preconditions.py): each kind on a trace that shows it and one
that does not; three conformance runs that were judged as if they had happened; what an
unmet precondition does to the verdicts of the requirements a scenario exercises."""
from __future__ import annotations

import pytest

from replcheck import io, scenarios
from replcheck.properties import preconditions
from replcheck.properties.core import INCONCLUSIVE, NOT_EXERCISED, PASS, VIOLATED
from replcheck.properties.judge import judge_trace
from replcheck.spec.contract import Trace


def _unmet(tr, *requires):
    return preconditions.unmet(tr.view(), requires)


def _scenario(name: str) -> scenarios.Scenario:
    return next(s for s in scenarios.load_scenarios() if s.name == name)


def _conclude(name: str, tr):
    """The scenario's verdicts on an edited trace of its History, by requirement; its unmet preconditions."""
    s = _scenario(name)
    verdicts, unmet = scenarios.conclude(s, judge_trace(Trace(tr.header, tr.obs)))
    return {v.requirement: v for v in verdicts if v.requirement in s.exercises}, unmet


# -- each kind, shown and not shown ------------------------------------------------------------------
def test_statement(kit):
    tr = kit.run("model:mariadb-10.11", "d1-invalid-values")
    first = {"kind": "statement", "node": "B", "op": "change_master", "nth": 1, "errno": 1198}
    assert _unmet(tr, first, {"kind": "statement", "node": "B", "op": "stop_slave"}) == []
    stmt = tr.first("stmt", op="change_master")
    stmt.update(errno=None)
    [u] = _unmet(tr, first)
    assert u.lines == (tr.line(stmt),) and "statement 1 of change_master on B failed with error 1198" in u.message
    assert "it succeeded" in u.message
    [u] = _unmet(tr, {"kind": "statement", "node": "A", "op": "change_master"})
    assert "no such statement ran" in u.message and u.lines == ()


def test_observed(kit):
    tr = kit.run("model:mariadb-10.11", "inc-cache-overflow")
    incident = {"kind": "observed", "match": {"kind": "binlog", "node": "A", "type": "INCIDENT_EVENT"}}
    assert _unmet(tr, incident) == []
    for o in tr.all("binlog", type="INCIDENT_EVENT"):
        tr.drop(o)
    [u] = _unmet(tr, incident)
    assert u.message == "precondition not observed: binlog on A (type=INCIDENT_EVENT) observed; no such observation"


def test_waiting_commit(kit):
    tr = kit.run("model:mariadb-10.11", "ss-shutdown")
    waiting = {"kind": "waiting_commit", "node": "A", "at": {"kind": "shutdown"}}
    assert _unmet(tr, waiting) == []
    # A commit that had its answer before the shutdown was not waiting at it.
    commit = tr.first("commit", trx="t1")
    commit.update(errno=None, semisync="no")
    tr.retime(commit, tr.first("shutdown")["t"] - 1)
    [u] = _unmet(tr, waiting)
    assert "a commit on A was waiting at shutdown on A" in u.message and u.lines == (tr.line(tr.first("shutdown")),)
    assert "every transaction binlogged on A before it had its COMMIT answered" in u.message
    [u] = _unmet(tr, {"kind": "waiting_commit", "node": "A", "at": {"kind": "crash"}})
    assert "it never happened" in u.message


def test_waiting_commit_shown_by_the_server_when_its_binlog_lost_it(kit):
    # A polled trace reads binlogs at the end: a replica-role recovery truncated t2 (MDEV-21117);
    # the last status sample before the crash shows its session waiting, and that suffices.
    tr = kit.run("model:mariadb-10.11", "ss-recover-as-replica")
    waiting = {"kind": "waiting_commit", "node": "A", "at": {"kind": "crash"}}
    for o in tr.all("binlog", node="A", trx="t2"):
        tr.drop(o)
    [sample] = [s for s in tr.all("server_status", node="A") if s["t"] < tr.first("crash")["t"]][-1:]
    assert sample["variables"]["Rpl_semi_sync_master_wait_sessions"] == 0  # sampled before t2 began
    [u] = _unmet(tr, waiting)
    sample["variables"]["Rpl_semi_sync_master_wait_sessions"] = 1  # as the runner's sample just before a kill -9
    assert _unmet(tr, waiting) == []
    assert "every transaction binlogged on A before it had its COMMIT answered" in u.message


def test_thread_running(kit):
    tr = kit.run("model:mariadb-10.11", "io-stop-during-delay")
    running = {"kind": "thread_running", "node": "B", "thread": "sql", "at": {"kind": "stmt", "op": "stop_slave"}}
    assert _unmet(tr, running) == []
    stop = tr.first("stmt", op="stop_slave")
    last = [s for s in tr.all("status", node="B") if tr.index(s) < tr.index(stop)][-1]
    last["Slave_SQL_Running"] = "No"
    [u] = _unmet(tr, running)
    assert "Slave_SQL_Running 'No'" in u.message and u.lines == (tr.line(last), tr.line(stop))
    [u] = _unmet(tr, {**running, "at": {"kind": "stmt", "op": "reset_slave"}})
    assert "it never happened" in u.message


@pytest.mark.parametrize("pre,problem", [
    ({"kind": "guess"}, "a precondition is a table with kind one of"),
    ({"kind": "statement", "node": "B"}, "statement needs op"),
    ({"kind": "statement", "node": "B", "op": "x", "when": 1}, "statement takes no when"),
    ({"kind": "observed", "match": {"node": "B"}}, "match is an observation pattern (a table with kind)"),
    ({"kind": "thread_running", "node": "B", "thread": "both", "at": {}}, "thread 'both' is not io or sql"),
    ({"kind": "statement", "node": "B", "op": "x", "nth": 0}, "nth 0 is not a whole number from 1"),
])
def test_a_bad_precondition_is_named(pre, problem):
    assert problem in preconditions.problem(pre)


def test_a_bad_precondition_in_the_scenario_file_is_one_line(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('[[scenario]]\nname = "x"\nhistory = "d1-back-to-zero.jsonl"\nexercises = ["WL344.CM.SET"]\n'
                   'requires = [{kind = "statement", node = "B"}]\n')
    with pytest.raises(io.InputError, match=r"scenario\[0\]\.requires\[0\]: statement needs op"):
        scenarios.load_scenarios(bad)


# -- the three runs of the issue -------------------------------------------------------------------
def test_ss_shutdown_whose_transaction_never_reached_the_server_is_inconclusive(kit):
    """The full suite's run: t1 lost its connection in the handshake, so it never committed and
    no commit waited at the shutdown; the semi-sync shutdown rule was never tried."""
    tr = kit.run("model:mariadb-10.11", "ss-shutdown")
    for o in [o for o in tr.obs if o.get("trx") == "t1" and o["kind"] != "commit"]:
        tr.drop(o)
    tr.first("commit", trx="t1").update(gtid=None, semisync=None, errno=2013,
                                        message="Lost connection to server at 'handshake: reading initial communication packet'")
    verdicts, [unmet] = _conclude("ss-shutdown", tr)
    assert "a commit on A was waiting at shutdown on A" in unmet.message
    assert unmet.lines == (tr.line(tr.first("shutdown")),)
    for r in _scenario("ss-shutdown").exercises:
        assert verdicts[r].status == INCONCLUSIVE and verdicts[r].witnesses[0] == unmet, r


def test_d1_back_to_zero_whose_change_master_was_refused_is_inconclusive(kit):
    """The full suite's run: CHANGE MASTER got 1198 (the IO thread still ran), so the delay never went back to 0."""
    tr = kit.run("model:mariadb-10.11", "d1-back-to-zero")
    cm = tr.first("stmt", op="change_master")
    cm.update(errno=1198, message="This operation cannot be performed as you have a running slave ''; run STOP SLAVE '' first")
    verdicts, [unmet] = _conclude("d1-back-to-zero", tr)
    assert "every change_master on B succeeded; change_master at 2 s: error 1198" in unmet.message
    assert unmet.lines == (tr.line(cm),)
    assert verdicts["WL344.CM.SET"].status == INCONCLUSIVE and verdicts["WL344.CM.SET"].witnesses[0] == unmet
    # The edit left the delay at 20 s while B applied t8 at once: a violation the trace shows stays
    # one, whatever the scenario meant to do (the server's run applied it 20 s late: inconclusive).
    assert verdicts["WL344.WAIT.RULE"].status == VIOLATED


def test_what_the_system_cannot_observe_stays_not_exercised(kit):
    tr = kit.run("model:mariadb-10.11", "ss-lost-ack-reconnect")
    tr.header["unobserved"] = ["ack"]
    verdicts, unmet = _conclude("ss-lost-ack-reconnect", tr)
    assert unmet == [] and verdicts["WL1720.COUNT.TX"].status == NOT_EXERCISED  # it needs acks


def test_every_scenario_holds_on_the_reference_model(kit):
    """What verify checks: each History tests what its scenario claims, on the model of MariaDB."""
    for s in scenarios.load_scenarios():
        tr = kit.run(scenarios.REFERENCE, s.history.stem)
        verdicts, unmet = scenarios.conclude(s, judge_trace(Trace(tr.header, tr.obs)))
        assert unmet == [], s.name
        assert [v.requirement for v in verdicts if v.status == INCONCLUSIVE] == [], s.name


def test_a_history_run_on_its_own_keeps_its_scenarios_claims(tmp_path):
    s = _scenario("ss-shutdown")
    assert scenarios.for_history(s.history) == s
    copy = tmp_path / "ss-shutdown.jsonl"
    copy.write_text(s.history.read_text())
    assert scenarios.for_history(copy) is None  # an edited copy claims nothing
