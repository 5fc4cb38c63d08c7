"""Every registered delay property passes on an honest trace and catches a realistic fault.

Passing traces come from the reference models; violating traces from a mutant system or from a
model trace edited to re-create one fault (an event applied early, a stale status field, a
dropped error...). Each violation must be reported with a witness naming the faulty observation.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest
from conftest import REPO, assert_state_caught, assert_witness

from replcheck.io import load_history
from replcheck.model.delay import STATE_IDLE, STATE_WAITING
from replcheck.model.semisync import STATE_ACK_WAIT as ACK_WAIT
from replcheck.properties.core import NOT_EXERCISED, PASS, PROPERTIES, VIOLATED
from replcheck.spec import ROOT
from replcheck.systems import systems

US = 1_000_000
DELAY_PROPERTIES = [p for p in PROPERTIES if p.feature == "delay"]
HISTORY_NAMES = sorted(p.name.removesuffix(".jsonl") for p in ROOT.joinpath("histories").iterdir()
                       if p.name.endswith(".jsonl"))
MODELS = [s.name for s in systems().values() if s.kind == "model"]
W344, W7318 = "model:wl344", "model:wl7318"
CORPUS = REPO / "corpus"


# -- fault builders -------------------------------------------------------------------------------
def shift_trx(k, system: str, history: str, node: str, trx: str, t: int):
    """The replica applies (and shows) the whole transaction at t instead of when the model did."""
    tr = k.run(system, history)
    for o in tr.all("apply", node=node, trx=trx) + tr.all("visible", node=node, trx=trx):
        tr.retime(o, t)
    return tr, tr.first("apply", node=node, trx=trx, idx=0)


def edit_status(k, system: str, history: str, t: int, **fields):
    tr = k.run(system, history)
    s = tr.first("status", node="B", t=t)
    s.update(fields)
    return tr, s


def pick(tr, kind: str = "apply", **match):
    """The trace as it is, with the observation its witness must name."""
    return tr, tr.first(kind, **match)


def stop_still_waiting(k):
    # STOP SLAVE returned but the SQL thread is still sleeping on the event.
    tr = k.run(W344, "d1-stop-start-dml")
    after = tr.next_of("status", tr.first("sql_stop", node="B"), node="B")
    after.update(Slave_SQL_Running="Yes", Slave_SQL_Running_State=STATE_WAITING, SQL_Remaining_Delay=20,
                 processlist_state=STATE_WAITING)
    return tr, after


def stop_moves_position(k):
    # The stop leaves the replica past t7 although t7 was never applied.
    tr = k.run(W344, "d1-stop-start-dml")
    after = tr.next_of("status", tr.first("sql_stop", node="B"), node="B")
    after.update(Relay_Log_Pos=325, Exec_Master_Log_Pos=277)
    return tr, after


def stale_delay_after(k, history: str, op: str, shown: int):
    tr = k.run(W344, history)
    after = tr.next_of("status", tr.first("stmt", node="B", op=op), node="B")
    after["SQL_Delay"] = shown
    return tr, after


def invalid_accepted(k):
    # 'blah' is taken as valid (no error).
    tr = k.run(W344, "d1-invalid-values")
    s = tr.first("stmt", op="change_master", delay_sql="blah")
    s.update(errno=None, message="")
    return tr, s


def out_of_range_accepted(k):
    # 2147483648 is not range-checked: accepted and shown.
    tr = k.run(W344, "d1-invalid-values")
    s = tr.first("stmt", op="change_master", delay_sql="2147483648")
    s.update(errno=None, message="", delay=2147483648)
    tr.next_of("status", s, node="B")["SQL_Delay"] = 2147483648
    return tr, s


def nonzero_default(k):
    tr = k.run(W344, "d1-reset-slave")
    s = tr.first("status", node="B")
    s["SQL_Delay"] = 3600
    return tr, s


def binlog_query_accepted(k):
    tr = k.run(W344, "binlog-statement")
    s = tr.first("stmt", op="binlog_statement", event_types=["FORMAT_DESCRIPTION_EVENT", "QUERY_EVENT"])
    s.update(errno=None, message="")
    return tr, s


def delay_lost_on_restart(k):
    tr = k.run(W344, "crash-during-delay")
    s = tr.next_of("status", tr.first("restart", node="B"), node="B")
    s["SQL_Delay"] = 0
    return tr, s


def delay_not_saved(k):
    # relay-log.info written without the delay (0 instead of 20).
    tr = k.run(W344, "crash-during-delay")
    r = tr.first("relay_log_info", node="B")
    r["content"] = "5\n./relay.000001\n172\nbin.000001\n124\n0\n"
    return tr, r


def too_few_fields_silently_read(k):
    tr = k.run(W344, "rli-too-few-fields")
    tr.drop(tr.first("error", node="B"))
    return pick(tr, "relay_log_info", node="B")


def boot_read_then_delay(k, history: str, delay: int):
    # The server read relay-log.info at boot, then shows the wrong delay (garbage taken as a field).
    tr = k.run(W344, history)
    r = tr.first("relay_log_info", node="B")
    tr.next_of("status", r, node="B")["SQL_Delay"] = delay
    return tr, r


def relayed_late(k):
    tr = k.run(W344, "d1-normal-setup")
    for r in tr.all("relay", node="B", trx="t1"):
        tr.retime(r, 6 * US)
    return tr, tr.first("relay", node="B", trx="t1", idx=0)


def commit_waits_for_replica(k):
    tr = k.run(W344, "d1-normal-setup")
    return tr, tr.retime(tr.first("commit", node="A", trx="t1"), 21 * US)


def until_runs_past(k):
    # UNTIL end of t3 also executes drop_all_tables before stopping (the disaster it should avoid).
    tr = k.run(W344, "until-recovery")
    stop = tr.first("sql_stop", node="B", reason="until")
    inserted = []
    for r in tr.all("relay", node="B", trx="drop_all_tables"):
        a = {f: r[f] for f in ("node", "source", "type", "trx", "idx", "last", "gtid", "server_id", "when", "ict")}
        a.update(t=stop["t"], kind="apply", read=stop["t"], begin=stop["t"], relay_file=r["file"], relay_pos=r["pos"])
        inserted.append(tr.insert_before(stop, a))
    return tr, inserted[0]


ANON_FUTURE = {  # no GTIDs; the statement carries SET TIMESTAMP 30 s ahead of its commit
    "nodes": [{"id": "A", "gtid_mode": False}, {"id": "B", "gtid_mode": False}],
    "channels": [("A", "B", 4)],
    "ops": [{"at": 1 * US, "op": "trx", "node": "A", "trx": "anon", "timestamp": 1_700_000_030}],
}


def anon_per_event_wait(k):
    h = k.make_history(ANON_FUTURE["nodes"], ANON_FUTURE["channels"], ANON_FUTURE["ops"],
                       sample_every_us=US, end_us=40 * US)
    return pick(k.run("mutant:per-event-wait", h), node="B", trx="anon", type="QUERY_EVENT")


def chain_hop_lag(k, system: str):
    # A -> B -> C; B has no delay but needs 20 s for "slow", C is delayed 5 s from B.
    h = k.make_history(["A", "B", "C"], [{"source": "A", "replica": "B"}, ("B", "C", 5)],
                       [{"at": US, "op": "trx", "node": "A", "trx": "slow", "statements": [{"replica_cost_us": 20 * US}]}],
                       sample_every_us=US, end_us=40 * US)
    return k.run(system, h)


def ict_in_milliseconds(k):
    tr = k.run(W7318, "d1-normal-setup")
    b = tr.first("binlog", node="A", trx="t1", type="GTID_LOG_EVENT")
    b["ict"] //= 1000
    return tr, b


@dataclass(frozen=True)
class Case:
    passing: Callable  # kit -> Trace
    violating: Callable  # kit -> (Trace, the observation the witness must name)
    expect: str  # substring of that witness's message


def model(system: str, history: str) -> Callable:
    return lambda k: k.run(system, history)


CASES: dict[str, Case] = {
    "WL344.WAIT.RULE": Case(
        model(W344, "d1-normal-setup"),
        lambda k: shift_trx(k, W344, "d1-normal-setup", "B", "t1", 11 * US),
        "B began GTID_LOG_EVENT of t1 at 11 s but it was due at 21 s (WL#344 rule)"),
    "WL344.WAIT.NO_EXTRA": Case(
        model(W344, "d1-natural-lag"),
        lambda k: shift_trx(k, W344, "d1-normal-setup", "B", "t1", 25 * US),
        "B read GTID_LOG_EVENT of t1 at 1 s, due 21 s, began 25 s"),
    "WL344.WAIT.EXEMPT": Case(
        model(W344, "rotate-during-delay"),
        lambda k: pick(k.run("mutant:fake-event-now", "d1-normal-setup"), node="B", type="ROTATE_EVENT"),
        "B waited 20 s before ROTATE_EVENT (when=0)"),
    "WL344.STOP.IMMEDIATE": Case(
        model(W344, "d1-stop-start-dml"), stop_still_waiting,
        "after the stop at 11 s B shows SQL thread 'Yes', state 'Waiting until MASTER_DELAY"),
    "WL344.STOP.NO_EXEC": Case(
        model(W344, "d1-stop-start-dml"), stop_moves_position,
        "the stop at 11 s moved B from Relay_Log_Pos 172 to 325"),
    "WL344.CHAIN.IMMEDIATE": Case(
        model(W7318, "chain-per-hop"),
        # WL#344 itself: C measures from A's timestamp, not from B's execution (the seed's note).
        lambda k: pick(k.run(W344, "chain-per-hop"), node="C", trx="g1", idx=0),
        "C began GTID_LOG_EVENT of g1 at 6 s, B executed it at 6 s: due 11 s with delay 5"),
    "WL344.CLOCK.COMPENSATE": Case(
        model(W344, "clock-offsets"),
        lambda k: pick(k.run("mutant:no-clock-compensation", "clock-offsets"), node="B", trx="t1", idx=0),
        "B began GTID_LOG_EVENT of t1 at 1 s but it was due at 5 s (clocks of A and B differ)"),
    "WL344.CM.SET": Case(
        model(W344, "d1-back-to-zero"),
        lambda k: stale_delay_after(k, "d1-back-to-zero", "change_master", 20),
        "MASTER_DELAY = 0 but SQL_Delay shows 20"),
    "WL344.CM.INVALID": Case(
        model(W7318, "d1-invalid-values"), invalid_accepted,  # model:wl344 takes 1.5 as MariaDB does
        "MASTER_DELAY = blah: want error 1064 and SQL_Delay 5 unchanged, got error None"),
    "WL344.CM.RANGE": Case(
        model(W344, "d1-invalid-values"), out_of_range_accepted,
        "MASTER_DELAY = 2147483648: want error 1729 and SQL_Delay 5 unchanged, got error None and SQL_Delay 2147483648"),
    "WL344.CM.DEFAULT": Case(
        model(W344, "d1-reset-slave"), nonzero_default,
        "B never set MASTER_DELAY but SQL_Delay is 3600"),
    "WL344.CM.NO_LOSS": Case(
        model(W344, "d7-delay-change-relay-log-purged"),
        lambda k: pick(k.run("mutant:delay-change-keeps-fetch-position", "d7-delay-change-relay-log-purged"), "data", node="B"),
        "B held t1 unapplied (relayed at 0.5 s) at the CHANGE MASTER TO MASTER_DELAY = 0 at 4 s, and holds it 0 times"),
    "WL344.RESET.DELAY0": Case(
        model(W344, "d1-reset-slave"),
        lambda k: stale_delay_after(k, "d1-reset-slave", "reset_slave", 71),
        "after RESET SLAVE B shows SQL_Delay 71"),
    "WL344.BINLOG.RESTRICT": Case(
        model(W344, "binlog-statement"), binlog_query_accepted,
        "BINLOG with ['FORMAT_DESCRIPTION_EVENT', 'QUERY_EVENT'] succeeded (errno None)"),
    "WL344.STATE.WAITING": Case(
        model(W344, "d1-normal-setup"),
        lambda k: edit_status(k, W344, "d1-normal-setup", 10 * US, Slave_SQL_Running_State=STATE_IDLE,
                              processlist_state=STATE_IDLE, SQL_Remaining_Delay=None),
        f"B at 10 s shows state {STATE_IDLE!r} but it is delaying (due 21 s)"),
    "WL344.SSS.REMAINING": Case(
        model(W344, "d1-normal-setup"),
        lambda k: edit_status(k, W344, "d1-normal-setup", 10 * US, SQL_Remaining_Delay=20),
        "B at 10 s: SQL_Remaining_Delay 20 but 11.000 s are left"),
    "WL344.SSS.SQL_DELAY": Case(
        model(W344, "d1-normal-setup"),
        lambda k: edit_status(k, W344, "d1-normal-setup", 10 * US, SQL_Delay=0),
        "B at 10 s shows SQL_Delay 0, configured 20"),
    "WL344.SSS.RUNNING_STATE": Case(
        model(W344, "d1-normal-setup"),
        lambda k: edit_status(k, W344, "d1-normal-setup", 10 * US, Slave_SQL_Running_State=""),
        f"B: Slave_SQL_Running_State '', processlist {STATE_WAITING!r}"),
    "WL344.RLI.DURABLE": Case(
        model(W344, "crash-during-delay"), delay_lost_on_restart,
        "B had delay 20 before its crash at 5 s, 0 after restart"),
    "WL344.RLI.FORMAT": Case(
        model(W344, "crash-during-delay"), delay_not_saved,
        "delay should be 20"),
    "WL344.RLI.FIELDS_MIN": Case(
        model(W344, "rli-too-few-fields"), too_few_fields_silently_read,
        r"B read '4\n./relay.000001\n4\nbin.000001\n4\n' without an error"),
    "WL344.RLI.OLD_FORMAT": Case(
        model(W344, "rli-upgrade-old-format"),
        lambda k: boot_read_then_delay(k, "rli-upgrade-old-format", 99999999),
        "then (99999999, 'Yes')"),
    "WL344.RLI.GARBAGE": Case(
        model(W344, "rli-new-format-garbage"),
        lambda k: boot_read_then_delay(k, "rli-new-format-garbage", 98765),
        "(delay 7), then SQL_Delay 98765"),
    "WL344.IO.UNAFFECTED": Case(
        model(W344, "d1-normal-setup"), relayed_late,
        "B relayed GTID_LOG_EVENT of t1 5 s after it was binlogged"),
    "WL344.MASTER.UNAFFECTED": Case(
        model(W344, "d1-normal-setup"), commit_waits_for_replica,
        "commit of t1 returned at 21 s, binlogged at 1 s"),
    "WL344.P1.UNTIL": Case(
        model(W344, "until-recovery"), until_runs_past,
        "B executed drop_all_tables beyond UNTIL ('bin.000001', 583)"),
    "WL7318.F1": Case(
        lambda k: chain_hop_lag(k, W7318),
        lambda k: pick(chain_hop_lag(k, "mutant:origin-timestamp"), node="C", trx="slow", idx=0),
        "C began GTID_LOG_EVENT of slow at 21 s but it was due at 26 s (B's commit)"),
    "WL7318.F2": Case(
        model(W7318, "long-transaction"),
        lambda k: pick(k.run("mutant:start-timestamp", "long-transaction"), node="B", trx="long", idx=0),
        "B began GTID_LOG_EVENT of long at 61 s but it was due at 71 s (immediate_commit_timestamp + delay)"),
    "WL7318.F3": Case(
        model(W7318, "long-transaction"),
        lambda k: pick(k.run("mutant:per-event-wait", "future-timestamp"), node="B", trx="future", type="QUERY_EVENT"),
        "B paused 29 s inside future before QUERY_EVENT"),
    "WL7318.ANON": Case(
        model(W7318, "anonymous-gtid"), anon_per_event_wait,
        "B paused 29 s inside anon before QUERY_EVENT"),
    "WL7318.F4": Case(
        model(W7318, "d1-normal-setup"),
        lambda k: edit_status(k, W7318, "d1-normal-setup", 10 * US, REMAINING_DELAY=5),
        "B: P_S (20, 5) vs SHOW SLAVE STATUS (20, 11)"),
    "WL7318.F5": Case(
        model(W7318, "d1-normal-setup"),
        lambda k: edit_status(k, W7318, "d1-normal-setup", 10 * US, DESIRED_DELAY=20_000),  # milliseconds
        "B: DESIRED_DELAY 20000, configured 20 s"),
    "WL7318.F6": Case(
        model(W7318, "mixed-versions"),
        # A 5.7 master sends no commit timestamp and the 8.0 replica does not delay at all.
        lambda k: shift_trx(k, W7318, "mixed-versions", "B", "t2", 2 * US),
        "B began GTID_LOG_EVENT of t2 at 2 s but it was due at 5 s (WL#344 fallback)"),
    "WL7318.ICT": Case(
        model(W7318, "d1-normal-setup"), ict_in_milliseconds,
        "A binlogged t1 at local 1700000001000000 µs with immediate_commit_timestamp 1700000001000"),
    "WL7318.NF1": Case(
        model(W7318, "fan-out"),
        lambda k: shift_trx(k, W7318, "fan-out", "C", "f1", 2 * US),
        "C began GTID_LOG_EVENT of f1 at 2 s but it was due at 8 s (delay on a replica inside a larger topology)"),
}


# -- one passing and one violating trace per property ---------------------------------------------
def test_cases_name_registered_requirements():
    assert set(CASES) == {p.requirement for p in DELAY_PROPERTIES}


# -- the headline cases ---------------------------------------------------------------------------
@pytest.mark.parametrize("system,requirement", [(W344, "WL344.WAIT.RULE"), (W7318, "WL7318.F2")])
def test_early_apply_violates_wait_rule(kit, system, requirement):
    tr = kit.run(system, "d1-normal-setup")
    assert kit.verdict(requirement, tr).status == PASS
    tr, gtid = shift_trx(kit, system, "d1-normal-setup", "B", "t1", 11 * US)
    assert_witness(kit.verdict(requirement, tr), tr, gtid,
                   "B began GTID_LOG_EVENT of t1 at 11 s but it was due at 21 s")


def test_no_delay_sets_no_bound_on_an_event_dated_ahead(kit):
    # rpl_delayed_slave2: with MASTER_DELAY = 0 the server applies a day-ahead event at once
    h = kit.history("d1-normal-setup")
    h = {**h, "header": {**h["header"], "topology": {**h["header"]["topology"], "channels": [
        {**h["header"]["topology"]["channels"][0], "delay": 0}]}},
         "ops": [{**o, "timestamp": 1_700_086_400} for o in h["ops"]]}
    tr = kit.run(W344, h)
    # applied at once: no bound to judge (it was a violation when the timestamp bounded it)
    assert tr.first("apply", trx="t1")["t"] < 2 * US and kit.verdict("WL344.WAIT.RULE", tr).status == NOT_EXERCISED


def test_stop_applying_waited_event_violates_no_exec(kit):
    tr = kit.run("mutant:stop-applies-waited-event", "d1-stop-start-ddl")
    v = kit.verdict("WL344.STOP.NO_EXEC", tr)
    stop = tr.first("sql_stop", node="B", reason="stop")
    applied = tr.first("apply", node="B", trx="create_t_check", idx=0)
    expect = "B executed the delayed GTID_LOG_EVENT of create_t_check (due 31 s) at the stop 11 s"
    assert_witness(v, tr, applied, expect)
    w = next(w for w in v.witnesses if expect in w.message)
    assert w.lines == (tr.line(stop), tr.line(applied))  # the stop and the event it let through
    # The model itself keeps the CREATE TABLE waiting through the stop.
    assert kit.verdict("WL344.STOP.NO_EXEC", kit.run(W344, "d1-stop-start-ddl")).status == PASS


def test_a_commit_timestamp_due_on_the_replicas_clock_is_not_a_wait_the_stop_broke(kit):
    # MySQL 8.0 counts a commit timestamp's delay on the replica's own clock (sql_delay_event): B,
    # 1.25 s ahead, finds t1 (committed at 0, delay 3 s) due at 1.75 s and applies it as its SQL
    # thread starts at 2.3 s, a STOP SLAVE in the same instant (generated: seed 17001, History 25).
    h = kit.make_history(["A", "B"], [("A", "B", 3)], [
        {"at": 0, "op": "clock_step", "node": "B", "delta_us": 1_250_000}, {"at": 0, "op": "stop_slave", "node": "B", "thread": "sql"},
        {"at": 0, "op": "trx", "node": "A", "trx": "t1"}, {"at": 2_300_000, "op": "start_slave", "node": "B", "thread": "sql"},
        {"at": 2_300_000, "op": "stop_slave", "node": "B", "thread": "sql"}])
    tr = kit.run("model:mysql-8.0", h)
    applied = tr.first("apply", node="B", trx="t1", idx=0)
    assert applied["t"] == 2_300_000 and kit.verdict("WL344.STOP.NO_EXEC", tr).status == PASS
    tr.obs.remove(tr.first("clock_step", node="B"))  # on a clock not ahead, t1 was due at 3 s
    assert_witness(kit.verdict("WL344.STOP.NO_EXEC", tr), tr, applied,
                   "B executed the delayed GTID_LOG_EVENT of t1 (due 3 s) at the stop 2.3 s")


@pytest.mark.parametrize("system", [s for s in MODELS if systems()[s].declares.expected_violations])
def test_declared_expected_violations_happen(kit, system):
    # A declared exception that no history shows any more is stale. A flavour model answers for the
    # declarations it adds; those it inherits are shown on its seed model (as the derived gate does).
    s = systems()[system]
    for requirement in s.own_declarations(systems().get(s.seed)):
        statuses = {h: kit.verdict(requirement, kit.run(system, h)).status for h in HISTORY_NAMES}
        assert VIOLATED in statuses.values(), (requirement, statuses)


# -- relay-log.info the server rejects ------------------------------------------------------------
BAD_RLI = {
    "non-numeric position": "5\n./relay.000001\nx\nbin.000001\n4\n7\n",
    "delay above 2^31-1": "5\n./relay.000001\n4\nbin.000001\n4\n2147483648\n",
    "non-ASCII digit delay": "5\n./relay.000001\n4\nbin.000001\n4\n\u00b2\n",
}


@pytest.mark.parametrize("content", BAD_RLI.values(), ids=BAD_RLI.keys())
def test_rejected_relay_log_info_judged_as_rejected(kit, content):
    # The model refuses the file (error 1201, slave not started); no property may object to that.
    h = kit.make_history(["A", {"id": "B", "relay_log_info": content}], [{"source": "A", "replica": "B"}],
                         [{"at": US, "op": "trx", "node": "A", "trx": "t1"}], sample_every_us=US, end_us=3 * US)
    tr = kit.run(W344, h)
    assert tr.first("error", node="B")["errno"] == 1201
    view = tr.view()
    verdicts = [p.run(view) for p in DELAY_PROPERTIES]
    assert [(v.requirement, v.witnesses[:1]) for v in verdicts if v.status == VIOLATED] == []


# -- a delay change with unapplied events (known bugs D7) ------------------------------------------
@pytest.mark.parametrize("system", [W344, W7318])
def test_a_transaction_fetched_twice_across_the_delay_change_is_caught(kit, system):
    # Rewound too far, the IO thread would fetch t1 again: two copies once replication is quiet.
    tr = kit.run(system, "d7-delay-change-relay-log-purged")
    assert kit.verdict("WL344.CM.NO_LOSS", tr).status == PASS
    data = tr.first("data", node="B")
    data["counts"]["t1"] = 2
    assert_witness(kit.verdict("WL344.CM.NO_LOSS", tr), tr, data, "and holds it 2 times once replication is quiet")


def test_a_replica_not_replicating_at_the_end_is_not_judged_for_what_it_lacks(kit):
    # The mutant's replica lacks t1 and t2; stopped at the end, it may only lag.
    history = load_history(ROOT / "histories" / "d7-delay-change-relay-log-purged.jsonl")
    history["ops"].append({"at": 8_000_000, "op": "stop_slave", "node": "B"})
    tr = kit.run("mutant:delay-change-keeps-fetch-position", history)
    assert kit.verdict("WL344.CM.NO_LOSS", tr).status == "not_exercised"


def test_a_delay_change_with_a_thread_running_keeps_the_relay_log(kit):
    # MySQL 5.7.4+: MASTER_DELAY with the IO thread running; t1 and t2 come from the kept relay log.
    history = load_history(ROOT / "histories" / "d7-delay-change-relay-log-purged.jsonl")
    history["ops"] = [o for o in history["ops"] if o.get("thread") != "io"]
    tr = kit.run(W7318, history)
    assert not tr.all("relay_log_recovery", node="B")
    verdict = kit.verdict("WL344.CM.NO_LOSS", tr)
    assert verdict.status == PASS and verdict.checked == 2



def test_a_group_filtered_after_the_delay_change_is_not_lost(kit):
    # B's replicate_ignore_db keeps t1 out: held at the change, passed after it, never applied
    history = {"header": {"schema": "replcheck.history/1", "name": "cm-filtered", "sample_every_us": 700_000, "end_us": 6 * US,
                          "topology": {"nodes": [{"id": "A"}, {"id": "B", "variables": {"replicate_ignore_db": "rc"}}],
                                       "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]}},
               "ops": [{"at": 0, "op": "stop_slave", "node": "B", "thread": "sql"}, {"at": 0, "op": "trx", "node": "A", "trx": "t1"},
                       {"at": 450_000, "op": "change_master", "node": "B", "delay": 2},
                       {"at": 450_000, "op": "start_slave", "node": "B"}]}
    tr = kit.run(W7318, history)
    assert tr.first("filtered", node="B", trx="t1") and kit.verdict("WL344.CM.NO_LOSS", tr).status == PASS
    tr.drop(tr.first("filtered", node="B", trx="t1"))  # not passed: it is lost
    assert_witness(kit.verdict("WL344.CM.NO_LOSS", tr), tr, None, "B held t1 unapplied")


@pytest.mark.parametrize("system", [W7318, "model:groupid"])
def test_a_marked_group_the_master_withholds_after_the_delay_change_is_not_lost(kit, system):
    # Model campaign finding (seed 500112, History 27): B held marked t1 at the change, which purged
    # its relay log; it fetched again asking FILTER_ON_MASTER, so A never sent t1 and nothing shows it
    history = {"header": {"schema": "replcheck.history/1", "name": "cm-withheld", "sample_every_us": 700_000, "end_us": 6 * US,
                          "topology": {"nodes": [{"id": "A"}, {"id": "B", "variables": {"replicate_events_marked_for_skip": "FILTER_ON_SLAVE"}}],
                                       "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]}},
               "ops": [{"at": 0, "op": "stop_slave", "node": "B", "thread": "sql"},
                       {"at": 0, "op": "trx", "node": "A", "trx": "t1", "skip_replication": True},
                       {"at": 450_000, "op": "stop_slave", "node": "B"}, {"at": 450_000, "op": "change_master", "node": "B", "delay": 2},
                       {"at": 450_000, "op": "set_global", "node": "B", "variable": "replicate_events_marked_for_skip", "value": "FILTER_ON_MASTER"},
                       {"at": 450_001, "op": "start_slave", "node": "B"}]}
    tr = kit.run(system, history)
    assert tr.first("relay_log_recovery", node="B") and not tr.all("filtered", node="B")
    assert kit.verdict("WL344.CM.NO_LOSS", tr).status == PASS
    tr.first("stmt", node="B", op="set_global")["value"] = "REPLICATE"  # then A sends t1 again: it is owed
    assert_witness(kit.verdict("WL344.CM.NO_LOSS", tr), tr, None, "B held t1 unapplied")


@pytest.mark.parametrize("system", [W7318, "model:mariadb-10.11"])
def test_what_a_failover_took_from_a_replica_is_not_lost_by_its_delay_change(kit, system):
    # corpus/finding-delay-change-after-failover: R held t1 from M when the failover gave it B,
    # which never had t1; R's delay change fetched again from B. The failover lost t1, not it.
    tr = kit.run(system, load_history(CORPUS / "finding-delay-change-after-failover.jsonl"))
    change = tr.first("stmt", node="R", op="change_master")
    assert not tr.all("binlog", node="B", trx="t1") and kit.verdict("WL344.CM.NO_LOSS", tr).status == NOT_EXERCISED
    # Had B binlogged t1, the fetch from R's SQL thread's place would have brought it again.
    for o in tr.all("binlog", node="M", trx="t1"):
        tr.insert_before(change, {**o, "node": "B", "server_id": 1, "t": change["t"]})
    assert_witness(kit.verdict("WL344.CM.NO_LOSS", tr), tr, change, "R held t1 unapplied")


def test_a_clock_step_after_the_sql_threads_start_in_its_microsecond_does_not_move_its_wait(kit):
    # Generated (seed 494321, History 43, generator 13): B's SQL thread starts at 1.000001 s and
    # reads t1 there; B's clock steps 1.25 s on, logged after the start in the same µs. The wait
    # sql_delay_event set at the read is not moved by the step (its deadline is on the clock as read).
    tr = kit.run("model:mariadb-10.11", load_history(REPO / "tests" / "properties" / "histories" / "gen13-delay-494321-43.jsonl"))
    assert kit.verdict("WL344.WAIT.NO_EXTRA", tr).status == PASS
    start = tr.first("stmt", node="B", op="start_slave", until={"master_log_file": "bin.000001", "master_log_pos": 325})
    step = tr.first("clock_step", node="B")
    assert start["t"] == step["t"] == tr.first("apply", node="B", trx="t1", type="GTID_LOG_EVENT")["read"]
    # the step logged before the start: the thread read t1 on the stepped clock, due 1.25 s earlier
    i, j = tr.obs.index(start), tr.obs.index(step)
    tr.obs[i], tr.obs[j] = tr.obs[j], tr.obs[i]
    assert_witness(kit.verdict("WL344.WAIT.NO_EXTRA", tr), tr, tr.first("apply", node="B", trx="t1", type="GTID_LOG_EVENT"),
                   "B read GTID_LOG_EVENT of t1 at 1.000001 s, due 5.35 s, began 6.6 s")


@pytest.mark.parametrize("system", ["model:mariadb-10.11", W7318, "model:groupid"])
def test_an_sql_thread_waiting_for_an_ack_holds_no_event_to_delay(kit, system):
    # Model campaign finding (seed 200092, History 18): C, a delayed replica whose own semi-sync
    # master is enabled, commits t1 at 2 s and waits for an ack (no semi-sync replica: until the
    # 0.5 s timeout). t2, relayed meanwhile and due at 3 s, is read and delayed for only after; a
    # STOP SLAVE before it is due leaves it unapplied, so no later read tells when the thread took it.
    c = {"id": "C", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 500}}
    history = kit.make_history(["A", c], [{"source": "A", "replica": "C", "latency_us": 50_000, "delay": 2}],
                               [{"at": 0, "op": "trx", "node": "A", "trx": "t1"},
                                {"at": 1_200_000, "op": "trx", "node": "A", "trx": "t2"},
                                {"at": 2_900_000, "op": "stop_slave", "node": "C"}],
                               sample_every_us=250_000, end_us=4 * US)
    tr = kit.run(system, history)
    assert tr.first("status", node="C", t=2_250_000)["Slave_SQL_Running_State"] == ACK_WAIT
    # once the timeout released it, the thread delays for t2: the ack wait's state is a violation
    assert_state_caught(kit, tr, "C", 2_750_000, ACK_WAIT, f"C at 2.75 s shows state {ACK_WAIT!r} but it is delaying (due 3 s)")
