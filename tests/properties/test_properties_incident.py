"""Every registered incident property (WL#3464) passes on an honest trace and catches a realistic fault.

Passing traces come from the reference model on the inc-* scenarios (or on a small history written
here); violating traces from an incident mutant, or from a model trace edited to re-create one
fault (no rotation after the incident, a wrong Last_SQL_Error, the IO thread shown stopped, an
apply while stopped, a skip of two events, a delayed replica stopping early...). Each violation
must be reported with a witness naming the faulty observation.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import pytest
from conftest import REPO, Trace, assert_witness

from replcheck import io
from replcheck.properties.core import PASS, PROPERTIES, VIOLATED
from replcheck.systems import get, systems

US = 1_000_000
INCIDENT_PROPERTIES = [p for p in PROPERTIES if p.feature == "incident"]
INCIDENT_REQUIREMENTS = {p.requirement for p in INCIDENT_PROPERTIES}
INC_MUTANTS = [s.name for s in systems().values() if s.kind == "mutant" and INCIDENT_REQUIREMENTS & set(s.declares.kills)]
M = "model:wl7318"  # the incident mutants are WL#7318 systems: compare them with this model
RPL = "inc-rpl-incident"
CORPUS = REPO / "corpus"


def incidents_wait():
    """MariaDB's flavour with an incident waiting its MASTER_DELAY, as WL#344 and 10.11's stored
    sql/slave.cc have it (10.11.19's build delays group events only: delay_group_events_only): the
    counts of an incident's due time are judged on what such a replica does."""
    mariadb = get("model:mariadb-10.11")
    mechanics = replace(mariadb.config.mechanics, delay_group_events_only=False)
    return replace(mariadb, name="test:mariadb-incidents-wait", config=replace(mariadb.config, mechanics=mechanics))


def run_on(system, history: dict) -> Trace:
    return Trace(*system.run(history))

# -- small histories ------------------------------------------------------------------------------
def unknown_code_history(k) -> dict:
    """An incident code no replica knows (7), with a transaction before and after it. No skip
    counter is set, so a replica that ignores the incident has nothing to hide behind."""
    ops = [{"at": 1 * US, "op": "trx", "node": "A", "trx": "t1"},
           {"at": 2 * US, "op": "record_incident", "node": "A", "code": 7, "message": "future incident"},
           {"at": 3 * US, "op": "trx", "node": "A", "trx": "t2"}]
    return k.make_history(["A", "B"], [{"source": "A", "replica": "B", "latency_us": 1000}], ops,
                          name="unknown-code", sample_every_us=US, end_us=5 * US)

# -- fault builders -------------------------------------------------------------------------------
def pick(tr, kind: str, **match):
    """The trace as it is, with the observation its witness must name."""
    return tr, tr.first(kind, **match)

def status_at(tr, t: int, node: str = "B") -> dict:
    return tr.all("status", node=node, t=t)[-1]

def no_rotation(k):
    # The master writes the incident but does not rotate: replace4 follows in the same binlog.
    tr = k.run(M, RPL)
    inc = tr.first("binlog", node="A", type="INCIDENT_EVENT")
    tr.drop(tr.first("binlog", node="A", type="ROTATE_EVENT"))
    tr.drop(tr.first("binlog", node="A", type="FORMAT_DESCRIPTION_EVENT", file="bin.000002"))
    shift = inc["end"] - 124  # bin.000002's events started after its FDE at 124
    for b in tr.all("binlog", node="A", file="bin.000002"):
        b.update(file="bin.000001", pos=b["pos"] + shift, end=b["end"] + shift)
    return tr, inc

def injector_maps_code(k):
    # The injector records every incident as LOST_EVENTS: code 7 never reaches the binlog.
    tr = k.run(M, "inc-gaps")
    tr.first("binlog", node="A", type="INCIDENT_EVENT", incident=7)["incident"] = 1
    return tr, tr.first("stmt", node="A", op="record_incident", via="injector")

def wrong_last_sql_error(k):
    # SHOW SLAVE STATUS shows an empty message where the incident had none ('<none>' expected).
    tr = k.run(M, RPL)
    s = status_at(tr, 4 * US)
    s["Last_SQL_Error"] = "The incident LOST_EVENTS occured on the master. Message: "
    return tr, s

def io_thread_shown_stopped(k):
    # The first sample after the stop shows the IO thread down though no one stopped it.
    tr = k.run(M, RPL)
    s = status_at(tr, 4 * US)
    s["Slave_IO_Running"] = "No"
    return tr, s

def applies_while_stopped(k):
    # replace4 (relayed right after the incident) is applied while the SQL thread is stopped on it.
    tr = k.run(M, RPL)
    for o in tr.all("apply", node="B", trx="replace4") + tr.all("visible", node="B", trx="replace4"):
        tr.retime(o, 3_001_001)
    return tr, tr.first("apply", node="B", trx="replace4", idx=0)

def skip_takes_two(k):
    # SKIP_COUNTER = 1 skips the incident and the whole next group too (known bugs I8 mutant b).
    tr = k.run(M, RPL)
    for a in tr.all("apply", node="B", trx="replace4"):
        a.update(kind="skip", reason="sql_slave_skip_counter")
        for f in ("source", "read", "begin", "when", "ict", "server_id", "last"):
            a.pop(f, None)
    for o in tr.all("visible", node="B", trx="replace4") + tr.all("binlog", node="B", trx="replace4"):
        tr.drop(o)
    return tr, tr.first("skip", node="B", trx="replace4", idx=0)

def stops_before_due(k):
    # MASTER_DELAY 5: the incident (master time 2 s) is due at 7 s; the replica stops at 6 s,
    # right after t1, as if the incident were exempt from the delay like a ROTATE.
    tr = k.run(M, "inc-delayed-skip-group")
    return tr, tr.retime(tr.first("sql_stop", node="B", errno=1590), 6 * US)

@dataclass(frozen=True)
class Case:
    passing: Callable  # kit -> Trace
    violating: Callable  # kit -> (Trace, the observation the witness must name)
    expect: str  # substring of that witness's message

def model(history) -> Callable:
    return lambda k: k.run(M, history if isinstance(history, str) else history(k))

CASES: dict[str, Case] = {
    "WL3464.R1": Case(  # the no-incident mutant also drops a requested LOST_EVENTS incident
        model(RPL), lambda k: pick(k.run("mutant:no-incident", RPL), "stmt", node="A", op="record_incident"),
        "A was asked for incident 1 ('') via binlog; its binlog has none"),
    "WL3464.R2": Case(
        model("inc-gaps"), injector_maps_code,
        "A was asked for incident 7 ('a code this replica does not know') via injector; its binlog has none"),
    "WL3464.ROTATE": Case(
        model(RPL), no_rotation,
        "A: the incident at bin.000001:559 is followed by [('GTID_LOG_EVENT', 'bin.000001'), "
        "('QUERY_EVENT', 'bin.000001')], not a rotation to a fresh binlog"),
    "WL3464.R3.1": Case(
        model(RPL), lambda k: pick(k.run("mutant:incident-ignored", RPL), "relay", node="B", type="INCIDENT_EVENT"),
        "B did not stop at incident 1 ('') relayed at 3.001 s"),
    "WL3464.R3.2": Case(
        model(unknown_code_history),
        lambda k: pick(k.run("mutant:incident-ignored", unknown_code_history(k)), "relay", node="B",
                       type="INCIDENT_EVENT"),
        "B did not stop at incident 7 ('future incident') relayed at 2.001 s"),
    "WL3464.MSG": Case(
        model(RPL), wrong_last_sql_error,
        "B stopped with 'The incident LOST_EVENTS occured on the master. Message: <none>' for incident 1 ('<none>')"),
    "WL3464.IO_RUNS": Case(
        model(RPL), io_thread_shown_stopped,
        "B at 4 s: IO thread 'No' while stopped at an incident"),
    "WL3464.HOLD": Case(
        model(RPL), applies_while_stopped,
        "B applied GTID_LOG_EVENT of replace4 while stopped at an incident"),
    "WL3464.R4": Case(
        model(RPL), skip_takes_two,
        "B: skip 1 after the incident skipped [('INCIDENT_EVENT', None), ('GTID_LOG_EVENT', 'replace4'), "),
    "WL3464.R4.ONCE": Case(  # MariaDB's GTID reconnect sends the skipped incident again; the seed's rotation keeps it away
        model("inc-skip-then-reconnect"),
        lambda k: pick(k.run("model:mariadb-10.11", "inc-skip-then-reconnect"), "sql_stop", node="B", errno=1590, t=11_001_000),
        "B stopped at an incident at 11.001 s after skipping 1; its masters wrote 1: one it had skipped came back"),
    "WL3464.REACH": Case(
        model("inc-skip-then-reconnect"),
        lambda k: pick(k.run("model:mariadb-10.11", "inc-lost-on-gtid-reconnect"), "binlog", node="A", type="INCIDENT_EVENT"),
        "B applied create_t1 and then after_gap, binlogged on either side of the incident at bin.000001:246 on A, "
        "without stopping at it"),
    "WL3464.SKIP_GROUP": Case(
        model("inc-delayed-skip-group"),
        lambda k: pick(k.run("mutant:skip-mid-group", "inc-delayed-skip-group"), "skip", node="B", trx="multi", idx=0),
        "B skipped GTID_LOG_EVENT of multi but applied its QUERY_EVENT"),
    "WL3464.GAP": Case(
        model("inc-gaps"), lambda k: pick(k.run("mutant:no-incident", "inc-gaps"), "visible", node="A", trx="lost1"),
        "lost1 changed A but never reached its binlog, and GTID_LOG_EVENT of t2 follows, no incident"),
    "WL3464.NO_FALSE": Case(
        model("inc-cache-overflow"),
        lambda k: pick(k.run("mutant:incident-on-rollback", "inc-cache-overflow"), "binlog", node="A",
                       type="INCIDENT_EVENT", t=2 * US),
        "A wrote an incident at 2 s ('error writing to the binary log') with no lost change before it"),
    "WL3464.DELAY": Case(
        model("inc-delayed-skip-group"), stops_before_due,
        "B stopped at the incident at 6 s, due at 7 s"),
    "WL3464.GTID_SKIP": Case(
        model("inc-gtid-skip-survives-restart"),
        lambda k: pick(k.run("mutant:skip-keeps-gtid-position", "inc-gtid-skip-survives-restart"), "skip",
                       node="B", trx="unwanted", idx=0),
        "B skipped unwanted (0-1-1) at 3.000001 s but applied it at 6.001 s"),
    "WL3464.DISK_FULL": Case(
        lambda k: k.run("model:mariadb-10.11", "inc-disk-full"),
        lambda k: pick(k.run("mutant:disk-full-fails-write", "inc-disk-full"), "commit", node="A", trx="t2"),
        "t2 began at 2.5 s on A, whose binlog disk was full, and failed with 1026"),
}

# -- one passing and one violating trace per property ---------------------------------------------
def test_a_clock_step_after_the_connect_moves_the_incidents_due_time(kit):
    # MariaDB counts the delay with the clock difference it measured at its connect, on its own clock:
    # stepped 1.25 s ahead after that, the replica stops at the incident (due at 3 s by true time) 1.25 s early.
    ops = [{"at": 0, "op": "record_incident", "node": "A", "code": 9, "message": "recorded by the test", "via": "injector"},
           {"at": 0, "op": "clock_step", "node": "B", "delta_us": 1_250_000}]
    h = kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "delay": 3, "latency_us": 200_000}], ops,
                         sample_every_us=US, end_us=6 * US)
    tr = run_on(incidents_wait(), h)
    stop = tr.first("sql_stop", node="B", errno=1590)
    assert stop["t"] < 3 * US and kit.verdict("WL3464.DELAY", tr).status == PASS
    tr.retime(stop, stop["t"] - US // 2)  # earlier than even the measured count allows
    assert kit.verdict("WL3464.DELAY", tr).status == VIOLATED


def test_a_stop_seen_while_its_incident_was_being_written_is_not_one_coming_back(kit):
    # A real server's incident is placed when its statement returned; the replica's stop at it may be
    # sampled before that. Its `written` interval says it may have been written before the stop.
    tr = kit.run(M, RPL)
    stop = tr.first("sql_stop", node="B", errno=1590)
    incident = tr.first("binlog", node="A", type="INCIDENT_EVENT")
    began = incident["t"]
    tr.retime(incident, stop["t"] + 3000)  # seen stopped 3 ms before the statement returned
    once = kit.verdict("WL3464.R4.ONCE", tr)
    assert once.status == VIOLATED and "after skipping 0; its masters wrote 0" in once.witnesses[0].message
    incident["written"] = [began, stop["t"] + 3000]
    assert kit.verdict("WL3464.R4.ONCE", tr).status == PASS


def test_cases_name_registered_requirements():
    assert set(CASES) == INCIDENT_REQUIREMENTS
    assert len(INCIDENT_PROPERTIES) == 17  # the catalogue's incident requirements, one check each

# -- more faults and honest variants --------------------------------------------------------------
@pytest.mark.parametrize("spelling", ["occurred on the master", "occurred on the source", "occured on the source"])
def test_message_spelling_variants_pass(kit, spelling):
    # MariaDB and later MySQL say 'occurred', MySQL 8 'on the source': the same stop, still correct.
    tr = kit.run(M, RPL)
    msg = f"The incident LOST_EVENTS {spelling}. Message: <none>"
    tr.first("sql_stop", node="B", errno=1590)["message"] = msg
    for s in tr.all("status", node="B"):
        if s["Last_SQL_Errno"] == 1590:
            s["Last_SQL_Error"] = msg
    v = kit.verdict("WL3464.MSG", tr)
    assert v.status == PASS and v.checked == 1, v

def test_wrong_symbol_in_stop_message_violates_msg(kit):
    # The stop calls a LOST_EVENTS incident NONE.
    tr = kit.run(M, RPL)
    stop = tr.first("sql_stop", node="B", errno=1590)
    stop["message"] = "The incident NONE occured on the master. Message: <none>"
    assert_witness(kit.verdict("WL3464.MSG", tr), tr, stop,
                   "B stopped with 'The incident NONE occured on the master. Message: <none>' for incident 1")

def test_unknown_code_needs_no_known_symbol(kit):
    # For code 7 the model says UNKNOWN; the message part must still be the incident's own.
    tr = kit.run(M, "inc-gaps")
    v = kit.verdict("WL3464.MSG", tr)
    assert v.status == PASS and v.checked == 4, v
    stop = tr.first("sql_stop", node="B", message="The incident UNKNOWN occured on the master. "
                    "Message: a code this replica does not know")
    stop["message"] = "The incident UNKNOWN occured on the master. Message: <none>"
    assert_witness(kit.verdict("WL3464.MSG", tr), tr, stop, "for incident 7 ('a code this replica does not know')")

def test_position_past_the_incident_violates_hold(kit):
    # Stopped at the incident, the sample shows the master position of its end (599), not its start.
    tr = kit.run(M, RPL)
    s = status_at(tr, 5 * US)
    s["Exec_Master_Log_Pos"] = 599
    assert_witness(kit.verdict("WL3464.HOLD", tr), tr, s,
                   "B stopped at an incident shows Relay_Log_Pos 607, Exec_Master_Log_Pos 599; "
                   "the incident is at 607, master 559")

def test_change_master_to_master_use_gtid_throws_the_incident_away_with_its_relay_log(kit):
    # B (MASTER_DELAY 3) stopped at the first incident; STOP SLAVE, CHANGE MASTER TO MASTER_USE_GTID,
    # START SLAVE purge its relay logs, and B waits out its delay for the second incident.
    tr = kit.run("model:wl344", io.load_history(CORPUS / "finding-incident-relay-dropped-by-master-use-gtid.jsonl"))
    for requirement in ("WL344.STATE.WAITING", "WL3464.HOLD"):
        assert kit.verdict(requirement, tr).status == PASS, requirement
    assert kit.verdict("SBM.PENDING", tr).status != VIOLATED
    # the hold lasts up to the CHANGE MASTER: a sample before it past the incident is still wrong
    s = status_at(tr, 11 * US)
    s["Relay_Log_Pos"] = 4
    assert_witness(kit.verdict("WL3464.HOLD", tr), tr, s, "B stopped at an incident shows Relay_Log_Pos 4")
    # waiting for the second incident (due 14 s) is right; shown idle at 12 s, wrong
    tr = kit.run("model:wl344", io.load_history(CORPUS / "finding-incident-relay-dropped-by-master-use-gtid.jsonl"))
    s = status_at(tr, 12 * US)
    s.update(Slave_SQL_Running_State="Executing event", processlist_state="Executing event", SQL_Remaining_Delay=None)
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, s, "but it is delaying (due 14 s)")


def test_io_thread_stopped_by_dba_is_not_a_fault(kit):
    # inc-cache-overflow: STOP SLAVE while stopped at the incident; the IO thread is then No by request.
    tr = kit.run(M, "inc-cache-overflow")
    assert any(s["Slave_IO_Running"] == "No" for s in tr.all("status", node="B", t=7 * US))
    assert kit.verdict("WL3464.IO_RUNS", tr).status != VIOLATED

def test_io_thread_stopped_by_dba_before_the_incident_is_not_a_fault(kit):
    # Campaign finding: STOP SLAVE IO_THREAD at 2.5 s, the delayed SQL thread meets the incident at 3 s.
    history = io.load_history(CORPUS / "finding-io-thread-at-incident.jsonl")
    tr = kit.run(M, history)
    assert kit.verdict("WL3464.IO_RUNS", tr).status != VIOLATED
    # The same trace without the DBA's STOP SLAVE IO_THREAD: the IO thread then stopped at the incident.
    stop = tr.first("sql_stop", node="B", errno=1590)
    tr.drop(tr.first("stmt", node="B", op="stop_slave", thread="io"))
    for s in tr.all("status", node="B"):
        if s["t"] < stop["t"]:
            s["Slave_IO_Running"] = "Yes"
    assert_witness(kit.verdict("WL3464.IO_RUNS", tr), tr, status_at(tr, 3_600_000),
                   "B at 3.6 s: IO thread 'No' while stopped at an incident")

def test_own_write_of_a_restored_slave_is_no_gap(kit):
    # Campaign finding: A, restored as B's slave after a failover, does not binlog its client's t3
    # (--rpl-hierarchical, GGID.FILTER): no master lost a change.
    tr = kit.run("model:groupid", io.load_history(CORPUS / "finding-gap-filtered-write-on-restored-master.jsonl"))
    assert kit.verdict("WL3464.GAP", tr).status != VIOLATED
    # Without the restore A would be a master that made t3 visible and never binlogged it.
    tr.drop(tr.first("restore", node="A"))
    assert_witness(kit.verdict("WL3464.GAP", tr), tr, tr.first("visible", node="A", trx="t3"),
                   "t3 changed A but never reached its binlog")

def test_incident_applied_after_skip_violates_r4(kit):
    # SKIP_COUNTER = 1 and START SLAVE, but the replica executes the incident instead of skipping it.
    tr = kit.run(M, RPL)
    tr.first("skip", node="B", type="INCIDENT_EVENT").update(kind="apply", source="A")
    assert_witness(kit.verdict("WL3464.R4", tr), tr, tr.first("stmt", node="B", op="start_slave"),
                   "B: skip 1 after the incident skipped [], then applied ('INCIDENT_EVENT', None)")

def test_a_skip_that_passes_a_filtered_group_may_stop_at_the_next_incident(kit):
    # Mixed-family finding: B skips t4's incident, passes t5 (filtered) and stops at A's next
    # incident, the event after the first; a second skip follows, then t12.
    tr = kit.run(M, io.load_history(CORPUS / "finding-skip-passes-a-filtered-group-to-the-next-incident.jsonl"))
    assert tr.first("filtered", node="B", trx="t5") and len(tr.all("skip", node="B", type="INCIDENT_EVENT")) == 2
    assert kit.verdict("WL3464.R4", tr).status == PASS
    # t12 applied without stopping at the second incident: the skip went past an event
    second = tr.all("skip", node="B", type="INCIDENT_EVENT")[1]
    tr.drop(tr.all("sql_stop", node="B")[1])
    tr.drop(second)
    assert_witness(kit.verdict("WL3464.R4", tr), tr, tr.first("stmt", node="B", op="start_slave"),
                   "B: skip 1 after the incident skipped [('INCIDENT_EVENT', None)], then applied ('GTID_LOG_EVENT', 't12')")


def test_dba_skip_set_before_the_incident_passes_r31(kit):
    # A skip counter already pending when the incident arrives consumes it: the DBA acted, not a fault.
    ops = [{"at": 1 * US, "op": "stop_slave", "node": "B", "thread": "sql"},
           {"at": 2 * US, "op": "record_incident", "node": "A", "code": 1, "message": "planned"},
           {"at": 3 * US, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 1},
           {"at": 4 * US, "op": "start_slave", "node": "B", "thread": "sql"},
           {"at": 5 * US, "op": "trx", "node": "A", "trx": "t1"}]
    h = kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "latency_us": 1000}], ops,
                         sample_every_us=US, end_us=6 * US)
    tr = kit.run(M, h)
    assert tr.first("skip", node="B", type="INCIDENT_EVENT")["t"] == 4 * US
    assert tr.all("sql_stop", node="B", errno=1590) == []
    v = kit.verdict("WL3464.R3.1", tr)
    assert v.status == PASS and v.checked == 1, v

def test_mysql8_incident_errno_counts_as_a_stop(kit):
    # inc-rpl-incident as a MySQL 8.0 server would show it.
    tr = kit.run(M, RPL)
    msg = "The incident LOST_EVENTS occurred on the source. Message: <none>"
    tr.first("sql_stop", node="B", errno=1590).update(errno=13119, message=msg)
    for s in tr.all("status", node="B"):
        if s["Last_SQL_Errno"] == 1590:
            s.update(Last_SQL_Errno=13119, Last_SQL_Error=msg)
    verdicts = {r: kit.verdict(r, tr) for r in ("WL3464.MSG", "WL3464.IO_RUNS", "WL3464.HOLD", "WL3464.R4")}
    assert all(v.status == PASS and v.checked > 0 for v in verdicts.values()), verdicts

# -- each incident mutant is killed ---------------------------------------------------------------
KILLS = {  # mutant -> an inc-* history on which one of its `kills` is violated
    "mutant:no-incident": "inc-gaps",
    "mutant:incident-ignored": RPL,
    "mutant:incident-on-rollback": "inc-cache-overflow",
    "mutant:skip-mid-group": "inc-delayed-skip-group",
    "mutant:skip-keeps-gtid-position": "inc-gtid-skip-survives-restart",
    "mutant:binlog-write-error-ignored": "hist-binlog-write-error-ignored",
    "mutant:parallel-exec-pos-not-at-rotate": "hist-parallel-exec-pos-not-at-rotate",
    "mutant:disk-full-fails-write": "inc-disk-full",
}

@pytest.mark.parametrize("mutant", INC_MUTANTS)
def test_incident_mutant_killed(kit, mutant):
    history = KILLS[mutant]  # a new incident mutant without a killing history fails here
    killed = [r for r in systems()[mutant].declares.kills if kit.verdict(r, kit.run(mutant, history)).status == VIOLATED]
    assert killed, f"{mutant} survives {systems()[mutant].declares.kills} on {history}"
    # The same history passes (and exercises) the killing property on the correct model.
    assert all(kit.verdict(r, kit.run(M, history)).status == PASS for r in killed)

def test_incident_ignored_also_killed_on_unknown_code(kit):
    # Its other kill, R3.2: no inc-* scenario shows it (inc-gaps' skip counters hide it), this does.
    h = unknown_code_history(kit)
    assert kit.verdict("WL3464.R3.2", kit.run("mutant:incident-ignored", h)).status == VIOLATED
    assert kit.verdict("WL3464.R3.2", kit.run(M, h)).status == PASS

def test_a_skipped_incident_is_not_paired_with_a_later_stop_on_a_real_server(kit):
    """MariaDB 10.11 on inc-skip-then-reconnect, relay logs read: the DBA skips the incident the GTID
    reconnect sent again (relay.000002:658); the next reconnect sends it once more into a relay
    log of the same name (at 615) and B stops there. That stop names no relay place: it is the
    third copy's, not the skipped one's (HOLD judged the skipped copy by it and found the third
    copy's positions). R4.ONCE is the violation (declared for MariaDB)."""
    from pathlib import Path
    from replcheck.properties.core import TraceView

    header, obs = io.load_trace(Path(__file__).parent / "traces" / "mariadb-inc-skip-then-reconnect-relay-read.jsonl")
    view = TraceView(header, obs)
    assert kit.prop("WL3464.HOLD").run(view).status == PASS
    once = kit.prop("WL3464.R4.ONCE").run(view)
    assert once.status == VIOLATED and "one it had skipped came back" in once.witnesses[0].message

# -- a cut inside a group: the incident a GTID reconnect sends again, a skip a crash throws away -----

def skip_ops(t: int, count: int) -> list[dict]:
    """STOP SLAVE SQL_THREAD, SET GLOBAL sql_slave_skip_counter = count, START SLAVE SQL_THREAD at t."""
    return [{"at": t, "op": "stop_slave", "node": "B", "thread": "sql"},
            {"at": t, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": count},
            {"at": t, "op": "start_slave", "node": "B", "thread": "sql"}]

def cut_pair(kit, ops: list[dict], end_s: int = 12) -> dict:
    return kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "latency_us": 1000}], ops,
                            sample_every_us=US, end_us=end_s * US)

def test_a_stop_at_a_skipped_incident_sent_again_inside_a_cut_group_is_r4_once_s(kit):
    # B's connection drops inside t1; the GTID reconnect sends the incident again, inside t1's copy,
    # before the DBA skips the first copy. B then stops at the copy with t1's start rolled back: its
    # position is t1's start, not the copy's. That the incident came back is R4.ONCE's violation
    # (declared by MariaDB's model); HOLD does not judge the place the dump put it.
    # (the incident of a binlog failure: MariaDB goes on in the same binlog, so a GTID reconnect to
    # t1 starts before it)
    h = cut_pair(kit, [{"at": 0, "op": "trx", "node": "A", "trx": "lost", "engine": "myisam",
                        "binlog_failure": "cache_overflow"},
                       {"at": US, "op": "cut_io", "node": "B", "after_events": 2},
                       {"at": 2 * US, "op": "trx", "node": "A", "trx": "t1", "statements": [{}, {}]},
                       *skip_ops(5 * US, 1)])
    tr = kit.run("model:mariadb-10.11", h)
    copy = [r for r in tr.all("relay", node="B", type="INCIDENT_EVENT")][1]
    assert tr.first("relay", node="B", trx="t1")["t"] < copy["t"] < 5 * US
    v = kit.verdict("WL3464.HOLD", tr)
    assert v.status == PASS and v.checked > 0, v
    assert kit.verdict("WL3464.R4.ONCE", tr).status == VIOLATED
    tr.drop(tr.first("skip", node="B", type="INCIDENT_EVENT"))  # not skipped before: HOLD judges that stop's place
    assert_witness(kit.verdict("WL3464.HOLD", tr), tr, None, "B stopped at an incident shows Relay_Log_Pos")

def test_a_skip_a_crash_threw_away_before_the_groups_end_skipped_nothing(kit):
    # The cut leaves only t1's GTID event in B's relay log; SKIP_COUNTER = 2 takes the incident and
    # enters t1, then B crashes before the rest of t1 arrives. The crash throws that skip away (the
    # counter with it): after the restart t1 comes again whole, and applying it is not resuming
    # inside a skipped group, nor applying a skipped group again.
    h = cut_pair(kit, [{"at": 0, "op": "cut_io", "node": "B", "after_events": 1, "then": "stop"},
                       {"at": US, "op": "record_incident", "node": "A", "code": 1},
                       {"at": 2 * US, "op": "trx", "node": "A", "trx": "t1"},
                       *skip_ops(3 * US, 2),
                       {"at": 4 * US, "op": "crash", "node": "B"}, {"at": 5 * US, "op": "restart", "node": "B"},
                       *skip_ops(7 * US, 1)])
    tr = kit.run("model:mariadb-10.11", h)
    assert [s["type"] for s in tr.all("skip", node="B", trx="t1")] == ["GTID_LOG_EVENT"]
    assert [a["idx"] for a in tr.all("apply", node="B", trx="t1")] == [0, 1, 2]
    for requirement in ("WL3464.SKIP_GROUP", "WL3464.GTID_SKIP"):
        assert kit.verdict(requirement, tr).status in (PASS, "not_exercised"), requirement
    assert kit.verdict("WL3464.SKIP_GROUP", tr).checked > 0
    # Had the skipped GTID event ended its group, t1 would have been skipped whole: applying it
    # after the restart re-applies a skipped group.
    tr.first("relay", node="B", trx="t1", idx=0)["last"] = True
    later = tr.first("visible", node="B", trx="t1")
    assert_witness(kit.verdict("WL3464.GTID_SKIP", tr), tr, later, "B skipped t1 (0-1-1) at 3 s but applied it")
    # And an event of t1 applied before the crash is in the copy the skip entered.
    tr.first("relay", node="B", trx="t1", idx=0)["last"] = False
    applied = tr.retime(tr.first("apply", node="B", trx="t1", idx=1), 3 * US + 1)
    assert_witness(kit.verdict("WL3464.SKIP_GROUP", tr), tr, applied, "B skipped GTID_LOG_EVENT of t1 but applied its QUERY_EVENT")


@pytest.mark.parametrize("since, status", [(None, VIOLATED), (7_900_000, PASS)])
def test_a_copy_of_an_incident_fetched_again_is_not_tied_to_the_first_stop(kit, since, status):
    # A loaded run of inc-cache-overflow on MariaDB (resolution 2.9 s): B stopped at the incident,
    # the DBA skipped it, and START SLAVE fetched the binlog again (GTID), relaying a second copy at
    # another relay position. Within the resolution, that copy looked like the cause of the first
    # stop, and the stop's position "wrong". The read that found the copy began after that stop.
    tr = kit.run("model:mariadb-10.11", "inc-cache-overflow")
    tr.header["resolution_us"] = 5_500_000
    stop = tr.first("sql_stop", node="B")
    del stop["relay_file"], stop["relay_pos"]  # a real server's stop does not say where
    first, again = tr.all("relay", node="B", type="INCIDENT_EVENT")
    assert first["pos"] != again["pos"] and again["t"] - stop["t"] < tr.header["resolution_us"]
    if since is not None:
        first["since"], again["since"] = first["t"] - 1000, since
    assert kit.verdict("WL3464.HOLD", tr).status == status


def test_a_polled_stop_is_judged_as_seen_by_the_end_of_its_poll():
    # MariaDB 10.11, inc-rpl-incident at time scale 0.1: the poll that saw B stopped at the incident
    # began at 0.298821 s, before the incident's statement was sent (0.300316 s), and ended at
    # 0.325808 s. The stop came no later than that end: one incident written, none skipped, no
    # incident came back. Judged by the poll's start alone, it would be one.
    from replcheck.io import load_trace
    from replcheck.properties.core import PROPERTIES, TraceView

    header, obs = load_trace(REPO / "tests/properties/traces/mariadb-inc-rpl-incident-stop-seen-before-written.jsonl")
    prop = next(p for p in PROPERTIES if p.requirement == "WL3464.R4.ONCE")
    v = prop.run(TraceView(header, obs))
    assert v.status == "pass" and v.checked, v
    for o in obs:
        o.pop("seen_until", None)
    v = prop.run(TraceView(header, obs))
    assert v.status == "violated" and "B stopped at an incident at 0.298821 s after skipping 0; its masters wrote 0" in v.witnesses[0].message


def test_a_relay_log_place_used_again_after_relay_log_recovery_is_another_event():
    # MariaDB 10.11, inc-gtid-skip-survives-restart: B stopped at the incident at relay.000002:615
    # (seen by a poll that ended before the relay log was read), skipped it with the counter, and
    # after a crash and relay_log_recovery numbered its relay logs again: at relay.000002:615 it then
    # applied a Binlog_checkpoint. That is not the incident applied; were the relay log the same
    # (no relay_log_recovery), an apply at its place would be.
    from replcheck.io import load_trace
    from replcheck.properties.core import PROPERTIES, TraceView

    header, obs = load_trace(REPO / "tests/properties/traces/mariadb-inc-gtid-skip-survives-restart.jsonl")
    prop = next(p for p in PROPERTIES if p.requirement == "WL3464.R3.1")
    incident = next(o for o in obs if o["kind"] == "relay" and o["type"] == "INCIDENT_EVENT")
    later = [o for o in obs if o["kind"] == "apply" and (o["relay_file"], o["relay_pos"]) == (incident["file"], incident["pos"])]
    assert [o["type"] for o in later] == ["BINLOG_CHECKPOINT_EVENT"] and later[0]["t"] > incident["t"]
    v = prop.run(TraceView(header, obs))
    assert v.status == "pass" and v.checked, v
    # neither the recovery nor the copies relayed to the incident's place after it in the Trace
    again = [o for o in obs if o["kind"] == "relay" and (o["file"], o["pos"]) == (incident["file"], incident["pos"]) and o is not incident]
    unbounded = [{k: x for k, x in o.items() if k != "since"} for o in obs
                 if o["kind"] != "relay_log_recovery" and not any(o is x for x in again)]
    v = prop.run(TraceView(header, unbounded))
    assert v.status == "violated" and v.witnesses[0].message.startswith("B did not stop at incident 1"), v


def test_what_ran_at_a_place_before_relay_log_recovery_is_not_a_later_copys_incident():
    # MariaDB 10.11, a campaign's History (corpus incident-copy-after-relay-log-recovery): B applied a
    # Rotate at relay.000003:658; relay_log_recovery threw its relay logs away twice; a later copy of
    # A's incident, relayed to a new relay.000003 at 658 while B was stopped at the copy before it,
    # was never read. Without those throw-aways, and with no read to bound when the copy was written,
    # the Rotate would be that incident applied.
    from replcheck.io import load_trace
    from replcheck.properties.core import PROPERTIES, TraceView

    header, obs = load_trace(REPO / "corpus/server/incident-copy-after-relay-log-recovery.trace.jsonl")
    prop = next(p for p in PROPERTIES if p.requirement == "WL3464.R3.1")
    copy = [o for o in obs if o["kind"] == "relay" and o["type"] == "INCIDENT_EVENT"][-1]
    before = [o for o in obs if o["kind"] == "apply" and (o["relay_file"], o["relay_pos"]) == (copy["file"], copy["pos"])]
    assert [o["type"] for o in before] == ["ROTATE_EVENT"] and before[0]["t"] < copy["t"]
    v = prop.run(TraceView(header, obs))
    assert v.status == "pass" and v.checked, v
    unbounded = [{k: x for k, x in o.items() if k != "since"} for o in obs if o["kind"] != "relay_log_recovery"]
    v = prop.run(TraceView(header, unbounded))
    assert v.status == "violated" and "relayed at 2.855917 s" in v.witnesses[0].message, v


@pytest.mark.parametrize("state", ["Connecting", "Preparing"])
def test_an_io_thread_reconnecting_at_an_incident_is_running(kit, state):
    # MariaDB shows a running IO thread as Connecting or Preparing while it (re)connects and
    # registers (sql/slave.cc); a real server's sample at an incident stop may catch either.
    tr = kit.run(M, RPL)
    status_at(tr, 4 * US)["Slave_IO_Running"] = state
    assert kit.verdict("WL3464.IO_RUNS", tr).status == "pass"


def test_an_incident_thrown_away_with_the_relay_log_at_a_restart_is_never_reached(kit):
    # A real server's Trace (corpus/server): B relayed an incident while its SQL thread was stopped and
    # crashed; its restart started the slave threads by GTID, which threw the relay logs away. What
    # later runs at the incident's relay log place is another event of the relay log fetched again.
    header, obs = io.load_trace(REPO / "corpus" / "server" / "relayed-incident-thrown-away-at-restart.trace.jsonl")
    tr = Trace(header, [{k: x for k, x in o.items() if k != "_line"} for o in obs])
    assert kit.verdict("WL3464.R3.1", tr).status != VIOLATED  # never reached: nothing to judge
    incident = tr.first("relay", node="B", type="INCIDENT_EVENT")
    # had the relay log been kept (no recovery, nothing relayed to the incident's place again), B should have stopped at it
    tr.drop(tr.first("relay_log_recovery", node="B"))
    for o in [o for o in tr.all("relay", node="B") if (o["file"], o["pos"]) == (incident["file"], incident["pos"]) and o is not incident]:
        tr.drop(o)
    assert_witness(kit.verdict("WL3464.R3.1", tr), tr, incident, "B did not stop at incident 1")


def test_a_delay_change_while_stopped_at_an_incident_starts_a_new_relay_log(kit):
    # the relay log thrown away: Relay_Log_Pos 4 in the new one, the position executed unchanged
    ops = [{"at": 0, "op": "record_incident", "node": "A", "code": 0, "message": "", "via": "injector"},
           {"at": 3 * US, "op": "stop_slave", "node": "B", "thread": "io"}, {"at": 3 * US, "op": "change_master", "node": "B", "delay": 9}]
    history = {"header": {"schema": "replcheck.history/1", "name": "inc-delay-change", "sample_every_us": 700_000, "end_us": 6 * US,
                          "topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]}},
               "ops": ops}
    tr = kit.run(M, history)
    last = tr.all("status", node="B")[-1]
    assert last["Relay_Log_Pos"] == 4 and kit.verdict("WL3464.HOLD", tr).status == PASS
    last["Exec_Master_Log_Pos"] += 48  # past the incident
    assert_witness(kit.verdict("WL3464.HOLD", tr), tr, last, "B stopped at an incident shows Relay_Log_Pos 4")


def test_skip_one_at_an_incident_passes_the_groups_a_filter_keeps_out(kit):
    # after the skipped incident, t2 (@@skip_replication, ignored on B) is passed and t3 is the next applied
    ops = [{"at": 0, "op": "record_incident", "node": "A", "code": 1, "message": "x", "via": "injector"},
           {"at": US, "op": "trx", "node": "A", "trx": "t2", "skip_replication": True},
           {"at": 2 * US, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 1},
           {"at": 2 * US, "op": "start_slave", "node": "B", "thread": "sql"}, {"at": 3 * US, "op": "trx", "node": "A", "trx": "t3"}]
    history = {"header": {"schema": "replcheck.history/1", "name": "inc-skip-filtered", "sample_every_us": 700_000, "end_us": 5 * US,
                          "topology": {"nodes": [{"id": "A"}, {"id": "B", "variables": {"replicate_events_marked_for_skip": "FILTER_ON_SLAVE"}}],
                                       "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]}}, "ops": ops}
    tr = kit.run(M, history)
    assert tr.first("filtered", node="B", trx="t2") and kit.verdict("WL3464.R4", tr).status == PASS
    tr.drop(tr.first("skip", node="B", type="INCIDENT_EVENT"))  # the incident not skipped
    assert kit.verdict("WL3464.R4", tr).status == VIOLATED
