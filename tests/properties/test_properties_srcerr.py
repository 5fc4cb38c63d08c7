"""Errors on the source: the property passes on the models' traces of statements
that fail before or after changing anything, and catches a partial change the binlog lacks (the
bug of Bug #13270 / #23333) and one logged without its error code; the generated History and the
group-ID machine find the mutant from scratch."""
from __future__ import annotations

import pytest
from conftest import REPO, Trace, assert_witness
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from test_properties_incident import Case, pick

from replcheck import io
from replcheck.generate import generate
from replcheck.properties.core import PASS, PROPERTIES
from replcheck.properties.judge import judge
from replcheck.results import caught
from replcheck.properties.machines.base import SEARCH_PHASES, machine_for
from replcheck.properties.machines import GroupIdMachine
from replcheck.systems import get

H = "srcerr-partial-statement"
MUTANT = "mutant:failed-change-not-logged"

CASES: dict[str, Case] = {
    "SRCERR.BINLOG.CHANGES": Case(
        lambda k: k.run("model:groupid", H), lambda k: pick(k.run(MUTANT, H), "commit", node="A", trx="dup_myisam"),
        "A: dup_myisam failed with 1062 after changing data, which its binlog does not hold"),
}


def test_every_srcerr_property_has_a_case():
    assert set(CASES) == {p.requirement for p in PROPERTIES if p.feature == "srcerr"}


def test_what_each_failed_statement_leaves(kit):
    for system in ("model:groupid", "model:mariadb-10.11", "model:wl7318"):
        tr = kit.run(system, H)
        logged = {o["trx"] for o in tr.all("binlog", node="A") if o.get("trx") and o.get("last")}
        assert logged == {"ok1", "dup_myisam", "ddl_part", "ok2"}, system  # the rolled-back and the early failures: nothing
        assert tr.first("data", node="B")["counts"] == {"ok1": 1, "dup_myisam": 1, "ddl_part": 1, "ok2": 1}, system
        # the partial INSERT's Query event carries its error; the DDL's part done carries none
        assert tr.first("binlog", node="A", trx="dup_myisam", idx=1)["error_code"] == 1062
        assert "error_code" not in tr.first("binlog", node="A", trx="ddl_part", idx=1)
        commits = {c["trx"]: c for c in tr.all("commit", node="A")}
        assert {t: c.get("errno") for t, c in commits.items()} == {
            "ok1": None, "dup_innodb": 1062, "dup_myisam": 1062, "ddl_nothing": 1050, "ddl_part": 1051, "ok2": None}
        # semi-sync: what was binlogged waited for the ack, failed or not (on MariaDB a failed statement
        # after its answer, at its session's end); what was not, returned at once
        failed = "later" if system == "model:mariadb-10.11" else "yes"
        assert {t: commits[t].get("semisync") for t in logged} == {"ok1": "yes", "dup_myisam": failed, "ddl_part": failed, "ok2": "yes"}
        assert commits["dup_innodb"]["t"] == commits["dup_innodb"]["start"]
        for r in ("SRCERR.BINLOG.CHANGES", "WL1720.COUNT.TX", "WL1720.ACK.WAIT"):
            assert kit.verdict(r, tr).status == PASS, (system, r)


def test_a_partial_change_logged_without_its_error_is_caught(kit):
    tr = kit.run("model:groupid", H)
    query = tr.first("binlog", node="A", trx="dup_myisam", idx=1)
    del query["error_code"]
    assert_witness(kit.verdict("SRCERR.BINLOG.CHANGES", tr), tr, tr.first("commit", node="A", trx="dup_myisam"),
                   "its Query event carries error code 0: a replica does not expect the error")


def test_a_rolled_back_statement_in_the_binlog_is_caught(kit):
    tr = kit.run("model:groupid", H)
    gone = tr.first("visible", node="A", trx="dup_myisam")
    tr.drop(gone)
    assert_witness(kit.verdict("SRCERR.BINLOG.CHANGES", tr), tr, tr.first("commit", node="A", trx="dup_myisam"),
                   "A: dup_myisam failed with 1062 and changed nothing, yet its binlog holds it")


def test_generated_history_catches_the_mutant():
    # seed 0's History 4 of the groupid family (its first from generator 10 to 13): its failing_statement after changes
    system = get(MUTANT)
    history = generate(0, 4, ("groupid",))
    assert caught(judge(system, history, system.declares.kills), judge(get(system.declares.base), history, system.declares.kills))


@pytest.mark.slow  # a search from scratch
def test_the_group_id_machine_finds_the_mutant_from_scratch():
    system = get(MUTANT)
    search = type("GroupIdMachineKills", (GroupIdMachine,), {"REQUIREMENTS": system.declares.kills})
    budget = settings(max_examples=200, stateful_step_count=12, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck), print_blob=False, phases=SEARCH_PHASES)
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine_for(search, system), settings=budget)
    assert str(info.value).split(":")[0] == "SRCERR.BINLOG.CHANGES", str(info.value)
    assert "failing_statement" in str(info.value.__notes__ if hasattr(info.value, "__notes__") else info.value)


def test_an_incident_a_statement_that_changed_nothing_left_is_caught(kit):
    # rpl_binlog_max_cache_size overflow: the InnoDB statement rolls back and leaves nothing, the
    # MyISAM one its changes and the incident that marks them (MDEV-21443: no incident for a rollback)
    history = "inc-cache-overflow"
    assert kit.verdict("SRCERR.BINLOG.CHANGES", kit.run("model:mariadb-10.11", history)).status == PASS
    tr = kit.run("mutant:incident-on-rollback", history)
    assert_witness(kit.verdict("SRCERR.BINLOG.CHANGES", tr), tr, tr.first("commit", node="A", trx="innodb_big"),
                   "A: innodb_big failed with 1197 and changed nothing, yet an incident in its binlog marks a gap")


def test_an_incident_written_after_the_failed_statement_returned_is_not_its_own(kit):
    # A real server's Trace (corpus/server): t1 fails with 1197 and changes nothing; the incident after
    # it is the next statement's (record_incident), written only once t1's COMMIT had returned.
    tr = Trace(*io.load_trace(REPO / "corpus" / "server" / "incident-recorded-after-a-failed-transaction.trace.jsonl"))
    assert kit.verdict("SRCERR.BINLOG.CHANGES", tr).status == PASS
    failed, incident = tr.first("commit", node="A", trx="t1"), tr.first("binlog", node="A", type="INCIDENT_EVENT")
    assert failed["errno"] == 1197 and incident["written"][0] > failed["t"]
    incident["written"] = [failed["start"], failed["t"]]  # written while t1 failed
    assert kit.verdict("SRCERR.BINLOG.CHANGES", tr).status == PASS  # still after the record_incident statement: its
    tr.obs.remove(tr.first("stmt", node="A", op="record_incident"))  # without it, t1's own, for no change
    assert_witness(kit.verdict("SRCERR.BINLOG.CHANGES", tr), tr, failed, "t1 failed with 1197 and changed nothing, yet an incident")


def test_an_incident_recorded_in_the_instant_a_statement_failed_is_not_its_own(kit):
    # MySQL refuses SET SESSION gtid_domain_id (1193): t1 changes nothing; a DBA's record_incident in
    # the same microsecond writes the incident, listed after its statement (generated: seed 17001, 549).
    history = kit.make_history(["A", "B"], [("A", "B", 0)], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1", "domain": 1},
        {"at": 0, "op": "record_incident", "node": "A", "code": 9, "message": "recorded by the test"}])
    tr = kit.run("model:mysql-8.0", history)
    failed = tr.first("commit", node="A", trx="t1")
    assert failed["errno"] == 1193 and tr.first("binlog", node="A", type="INCIDENT_EVENT")["t"] == failed["t"]
    assert kit.verdict("SRCERR.BINLOG.CHANGES", tr).status == PASS
    tr.obs.remove(tr.first("stmt", node="A", op="record_incident"))
    assert_witness(kit.verdict("SRCERR.BINLOG.CHANGES", tr), tr, failed, "t1 failed with 1193 and changed nothing, yet an incident")
