"""Every registered delay property passes on an honest trace and catches a realistic fault.

Passing traces come from the reference models; violating traces from a mutant system or from a
model trace edited to re-create one fault (an event applied early, a stale status field, a
dropped error...). Each violation must be reported with a witness naming the faulty observation.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest
from conftest import REPO, Trace, assert_witness

from replcheck.io import load_history, load_trace
from replcheck.model.delay import STATE_IDLE, STATE_WAITING
from replcheck.properties.core import NOT_EXERCISED, PASS, PROPERTIES, VIOLATED, TraceView
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
def next_status(tr, after: dict, node: str = "B") -> dict:
    return next(s for s in tr.all("status", node=node) if tr.index(s) > tr.index(after))


def status_at(tr, t: int, node: str = "B") -> dict:
    return tr.first("status", node=node, t=t)


def shift_trx(k, system: str, history: str, node: str, trx: str, t: int):
    """The replica applies (and shows) the whole transaction at t instead of when the model did."""
    tr = k.run(system, history)
    for o in tr.all("apply", node=node, trx=trx) + tr.all("visible", node=node, trx=trx):
        tr.retime(o, t)
    return tr, tr.first("apply", node=node, trx=trx, idx=0)


def edit_status(k, system: str, history: str, t: int, **fields):
    tr = k.run(system, history)
    s = status_at(tr, t)
    s.update(fields)
    return tr, s


def pick(tr, kind: str = "apply", **match):
    """The trace as it is, with the observation its witness must name."""
    return tr, tr.first(kind, **match)


def stop_still_waiting(k):
    # STOP SLAVE returned but the SQL thread is still sleeping on the event.
    tr = k.run(W344, "d1-stop-start-dml")
    after = next_status(tr, tr.first("sql_stop", node="B"))
    after.update(Slave_SQL_Running="Yes", Slave_SQL_Running_State=STATE_WAITING, SQL_Remaining_Delay=20,
                 processlist_state=STATE_WAITING)
    return tr, after


def stop_moves_position(k):
    # The stop leaves the replica past t7 although t7 was never applied.
    tr = k.run(W344, "d1-stop-start-dml")
    after = next_status(tr, tr.first("sql_stop", node="B"))
    after.update(Relay_Log_Pos=325, Exec_Master_Log_Pos=277)
    return tr, after


def stale_delay_after(k, history: str, op: str, shown: int):
    tr = k.run(W344, history)
    after = next_status(tr, tr.first("stmt", node="B", op=op))
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
    next_status(tr, s)["SQL_Delay"] = 2147483648
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
    s = next_status(tr, tr.first("restart", node="B"))
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
    next_status(tr, r)["SQL_Delay"] = delay
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

# -- a sample and a statement in the same microsecond ---------------------------------------------
SAME_INSTANT = {
    # A refused CHANGE MASTER samples B waiting; STOP SLAVE and RESET SLAVE follow in that µs.
    "waiting-state-without-delay": (W7318, "WL344.STATE.WAITING", 918391,
                                    dict(Slave_SQL_Running_State=STATE_IDLE, processlist_state=STATE_IDLE,
                                         SQL_Remaining_Delay=None),
                                    f"B at 0.918391 s shows state {STATE_IDLE!r} but it is delaying (due 5 s)"),
    # STOP SLAVE IO_THREAD samples B waiting (delay 7); CHANGE MASTER TO MASTER_DELAY = 2 follows.
    "remaining-delay-after-clock-step": (W344, "WL344.SSS.REMAINING", 6166132, dict(SQL_Remaining_Delay=44),
                                         "B at 6.166132 s: SQL_Remaining_Delay 44 but 48.434 s are left"),
}


@pytest.mark.parametrize("finding", SAME_INSTANT)
def test_statement_later_in_the_same_microsecond_is_not_yet_in_force(kit, finding):
    # A sample is judged by what the trace logged before it: RESET SLAVE or CHANGE MASTER logged
    # after it in the same µs neither discards its pending event nor changes its delay.
    system, requirement, t, fields, expect = SAME_INSTANT[finding]
    history = load_history(CORPUS / f"finding-{finding}.jsonl")
    tr = kit.run(system, history)
    assert kit.verdict(requirement, tr).status == PASS
    s = tr.first("status", node="B", t=t)
    s.update(fields)
    assert_witness(kit.verdict(requirement, tr), tr, s, expect)


def test_a_stop_before_a_group_ends_makes_its_passed_events_pending_again(kit):
    # Campaign finding (seed 5003, History 4657): B skipped t1's first two events (the rest not yet
    # fetched), crashed, and restarted at t1's GTID event, the group position, waiting out its delay.
    tr = kit.run(W7318, load_history(CORPUS / "finding-waiting-after-restart-mid-group.jsonl"))
    assert tr.first("skip", node="B", idx=0) and tr.first("sql_stop", node="B", reason="crash")
    assert kit.verdict("WL344.STATE.WAITING", tr).status == PASS
    s = tr.first("status", node="B", t=1800000)
    assert s["Slave_SQL_Running_State"] == STATE_WAITING
    s.update(Slave_SQL_Running_State=STATE_IDLE, processlist_state=STATE_IDLE, SQL_Remaining_Delay=None)
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, s,
                   f"B at 1.8 s shows state {STATE_IDLE!r} but it is delaying (due 3 s)")


def test_only_the_stop_until_made_is_judged_for_where_it_left_the_thread(kit):
    # Campaign finding (seed 1001, History 452): a crash stopped B's UNTIL thread first, and the
    # restarted thread runs without the condition (it lives in memory only).
    tr = kit.run(W7318, load_history(CORPUS / "finding-until-not-kept-across-a-restart.jsonl"))
    assert tr.first("sql_stop", node="B", reason="crash") and not tr.all("sql_stop", node="B", reason="until")
    assert kit.verdict("WL344.P1.UNTIL", tr).status != VIOLATED
    # The UNTIL stop itself, shown short of the position with events beyond it relayed: violated.
    tr = kit.run(W344, "until-recovery")
    assert kit.verdict("WL344.P1.UNTIL", tr).status == PASS
    s = next_status(tr, tr.first("sql_stop", node="B", reason="until"))
    s["Exec_Master_Log_Pos"] = 4
    assert_witness(kit.verdict("WL344.P1.UNTIL", tr), tr, s, "B stopped at 4 before reaching UNTIL")


def test_restore_ends_the_stop_of_a_crashed_slave(kit):
    # Campaign finding: B crashes (its SQL thread stops) and is restored from A's backup as A's
    # slave; what the new slave then applies is not "executed while stopped".
    tr = kit.run(W7318, load_history(CORPUS / "finding-stop-no-exec-across-restore.jsonl"))
    assert kit.verdict("WL344.STOP.NO_EXEC", tr).status != VIOLATED
    # Without the restore, B would have applied events with its SQL thread stopped by the crash.
    tr.drop(tr.first("restore", node="B"))
    assert_witness(kit.verdict("WL344.STOP.NO_EXEC", tr), tr, tr.first("apply", node="B", type="ROTATE_EVENT", t=107348),
                   "B executed ROTATE_EVENT of None at 0.107348 s while stopped since 0 s")


def test_a_clock_step_in_the_same_microsecond_after_a_binlog_write_does_not_move_it(kit):
    """Found by a campaign (seed 6, History 799): B binlogged t1 and then, in the same µs, its
    clock stepped; the step must count only for what the trace shows after it."""
    tr = kit.run(W7318, "d1-normal-setup")
    write = tr.first("binlog", node="A", trx="t1", type="GTID_LOG_EVENT")
    step = {"t": write["t"], "kind": "clock_step", "node": "A", "delta_us": 1_250_000}
    tr.obs.insert(tr.index(write) + 1, step)
    assert kit.verdict("WL7318.ICT", tr).status == "pass"
    tr.drop(step)
    tr.insert_before(write, step)  # a step before the write: its commit timestamp must show it
    v = kit.verdict("WL7318.ICT", tr)
    assert v.status == "violated" and "A binlogged t1" in v.witnesses[0].message


def test_a_chain_hop_polled_out_of_order_is_still_judged(kit):
    # MariaDB 10.11, chain-per-hop under load: C's apply of g1 was polled 38 ms before B's (the
    # resolution is 79 ms), so B's execution comes after C's in the trace. It is still the one C
    # read: the hop is judged (here, the early apply item 8 of #14 is about), not skipped.
    header, obs = load_trace(REPO / "tests" / "properties" / "traces" / "mariadb-chain-per-hop-polled-out-of-order.jsonl")
    verdict = kit.prop("WL344.CHAIN.IMMEDIATE").run(TraceView(header, obs))
    assert verdict.checked == 30 and "C began GTID_LOG_EVENT of g1 at 1.234639 s, B executed it at 1.273056 s" in \
        verdict.witnesses[0].message



def test_a_chain_hop_whose_two_rules_lie_within_the_resolution_is_not_judged(kit):
    # MariaDB 10.11, chain-per-hop at load 19 (resolution 1.41 s, 2 s delays): C began g2 1.1 s
    # before its due time counted from B's execution (BUG#52308: MariaDB counts from the original
    # timestamp), which the tolerance let pass. Both executions are stamped up to the resolution
    # late: where counting from B and counting from the original timestamp lie within twice the
    # resolution, the trace cannot say which the server did (conform then runs it at a larger
    # scale). With a finer resolution the same trace shows the violation.
    header, obs = load_trace(REPO / "tests" / "properties" / "traces" / "mariadb-chain-per-hop-coarse.jsonl")
    prop = kit.prop("WL344.CHAIN.IMMEDIATE")
    v = prop.run(TraceView(header, obs))
    assert v.status == "inconclusive" and "cannot tell it from counting from the original timestamp" in v.witnesses[0].message
    v = prop.run(TraceView({**header, "resolution_us": 300_000}, obs))
    assert v.status == VIOLATED and "C began GTID_LOG_EVENT of g2 at 4.893605 s, B executed it at 4.344859 s: due 6 s" in \
        " ".join(w.message for w in v.witnesses)


def test_a_polled_sample_compares_the_two_states_only_where_nothing_woke_the_sql_thread(kit):
    # MariaDB 10.11, mdb-purge-statement at load 13 (resolution 0.51 s): over the master's FLUSH
    # LOGS, both processlist reads of B's sample showed 'waiting for more updates' and both SHOW
    # SLAVE STATUS 'Reading event from the relay log', at one relay-log place: the relay log was
    # written meanwhile (the IO thread's read position moved), and the woken thread went back to
    # waiting with nothing applied. Both come from the same THD's proc_info (show_master_info,
    # sql/slave.cc): not a violation. A sample with nothing around it is still compared.
    header, obs = load_trace(REPO / "tests" / "properties" / "traces" / "mariadb-purge-statement-state-flip.jsonl")
    prop = kit.prop("WL344.SSS.RUNNING_STATE")
    flip = next(o for o in obs if o["kind"] == "status" and o["t"] == 2649185)
    assert flip["Slave_SQL_Running_State"] != flip["processlist_state"]
    verdict = prop.run(TraceView(header, obs))
    assert verdict.status == PASS and verdict.checked == 6
    quiet = next(o for o in obs if o["kind"] == "status" and o["t"] == 2199677)
    quiet["Slave_SQL_Running_State"] = "Reading event from the relay log"
    verdict = prop.run(TraceView(header, obs))
    assert verdict.status == VIOLATED and "B: Slave_SQL_Running_State 'Reading event from the relay log', " \
        "processlist 'Slave has read all relay log; waiting for more updates'" == verdict.witnesses[0].message


@pytest.mark.parametrize("late_s, judged", [(0.5, False), (1.5, True)])
def test_a_polled_server_may_show_waiting_up_to_a_second_past_the_due_time(kit, late_s, judged):
    """MariaDB sleeps the whole seconds left from when it looked (sql_delay_event): on a real
    server's trace, waiting less than a second past the due time is not judged by
    WL344.STATE.WAITING (WAIT.NO_EXTRA's question); longer is."""
    tr = kit.run(W344, "d1-normal-setup")
    tr.header["resolution_us"] = 100_000
    at = 21 * US + int(late_s * US)
    for o in tr.all("apply", node="B", trx="t1") + tr.all("visible", node="B", trx="t1"):
        tr.retime(o, at + 300_000)
    s = tr.retime(status_at(tr, 22 * US), at)
    s.update(Slave_SQL_Running_State=STATE_WAITING, processlist_state=STATE_WAITING, SQL_Remaining_Delay=0)
    verdict = kit.verdict("WL344.STATE.WAITING", tr)
    if judged:
        assert_witness(verdict, tr, s, f"B at 22.5 s shows state {STATE_WAITING!r} but it is not delaying (due 21 s)")
    else:
        assert verdict.status == PASS


def test_a_sample_just_before_a_relay_log_read_is_not_judged_on_what_was_read_after_it(kit):
    """The relay log is read at each poll, before the sample: the IO thread may write an event the
    SQL thread then waits on before the sample is taken, read only at the next poll."""
    tr = kit.run(W344, "d1-normal-setup")
    tr.header["resolution_us"] = 100_000
    s = tr.first("status", node="B", Slave_SQL_Running_State=STATE_WAITING)  # the first sample of the wait
    for r in tr.all("relay", node="B", trx="t1"):
        tr.retime(r, s["t"] + 50_000)
    assert kit.verdict("WL344.STATE.WAITING", tr).status == PASS
    tr.header["resolution_us"] = 10_000  # the read came after the resolution: the sample is judged
    assert kit.verdict("WL344.STATE.WAITING", tr).status == VIOLATED


def test_a_waiting_replica_s_deadline_off_by_a_second_is_a_clock_estimate_error(kit):
    """MariaDB measures the clock difference in whole seconds at its IO thread's connect: a coarse
    time() a few ms behind the master's at a second's turn gives -1 s on one machine, which
    SQL_Remaining_Delay shows one short. WL344.CLOCK.COMPENSATE judges the deadline it shows
    (models and real servers alike: the same clocks, the estimate must be 0)."""
    tr = kit.run(W344, "d1-normal-setup")
    assert kit.verdict("WL344.CLOCK.COMPENSATE", tr).status == PASS
    s = tr.first("status", node="B", t=10 * US)
    s["SQL_Remaining_Delay"] -= 1
    assert_witness(kit.verdict("WL344.CLOCK.COMPENSATE", tr), tr, s,
                   "B at 10 s counts to 20 s (SQL_Remaining_Delay 10) but the event is due at 21 s: -1 s, "
                   "the error of the clock difference it measured in whole seconds at its IO thread's connect "
                   "(clock_diff_with_master)")


@pytest.mark.parametrize("until, judged", [(10 * US + 5_000, True), (11 * US + 5_000, False)])
def test_a_polled_deadline_is_judged_only_when_the_sample_s_second_is_known(kit, until, judged):
    tr = kit.run(W344, "d1-normal-setup")
    tr.header["resolution_us"] = 100_000
    for o in tr.all("status", node="B"):
        o["sampled_until"] = o["t"] + 5_000
    s = tr.first("status", node="B", t=10 * US)
    s.update(SQL_Remaining_Delay=s["SQL_Remaining_Delay"] - 1, sampled_until=until)
    verdict = kit.verdict("WL344.CLOCK.COMPENSATE", tr)
    assert (verdict.status == VIOLATED) == judged, verdict
    del s["sampled_until"]  # a polled sample that does not say how long it took is not judged either
    assert kit.verdict("WL344.CLOCK.COMPENSATE", tr).status == PASS


def test_a_late_clock_answer_on_mariadb_is_a_deadline_a_second_long(kit):
    """MariaDB 10.11, clock-reply-late: the channel's relay held the answer to B's clock query into
    the next second (clock_diff_with_master 1 on one machine), and B counted every delay to a
    second past the due time. The witness names the clock query; the model's trace of the same
    History holds."""
    header, obs = load_trace(REPO / "tests" / "properties" / "traces" / "mariadb-clock-reply-late.jsonl")
    verdict = kit.prop("WL344.CLOCK.COMPENSATE").run(TraceView(header, obs))
    [q] = [o for o in obs if o["kind"] == "clock_query"]
    assert (q["clock_diff_with_master"], q["held"]) == (1, True)
    assert verdict.status == VIOLATED and verdict.witnesses
    assert all("+1 s" in w.message and "clock_diff_with_master 1" in w.message for w in verdict.witnesses)
    assert kit.verdict("WL344.CLOCK.COMPENSATE", kit.run(W344, "clock-reply-late")).status == PASS


def test_a_dropped_connection_delays_relaying_for_its_own_reasons(kit):
    # B's connection drops inside t1 and takes its latency to come back: t1's last event is relayed
    # late, and not because of B's delay (WL344.IO.UNAFFECTED judges what the delay does).
    history = kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "delay": 2, "latency_us": 300_000}], [
        {"at": 0, "op": "cut_io", "node": "B", "after_events": 2},
        {"at": US, "op": "trx", "node": "A", "trx": "t1"},
        {"at": 3 * US, "op": "trx", "node": "A", "trx": "t2"}], sample_every_us=US, end_us=8 * US)
    tr = kit.run(W344, history)
    cut = tr.first("io_cut", node="B")
    late = tr.first("relay", node="B", trx="t1", idx=2)
    assert late["t"] - tr.first("binlog", node="A", trx="t1", idx=2)["t"] == 2 * 300_000  # the reconnect, then the event
    v = kit.verdict("WL344.IO.UNAFFECTED", tr)
    assert v.status == PASS and v.checked == 3, v  # t2's events, relayed on time
    tr.drop(cut)  # nothing said the connection dropped: the lateness is the delay's
    assert_witness(kit.verdict("WL344.IO.UNAFFECTED", tr), tr, late, "B relayed XID_EVENT of t1")


@pytest.mark.parametrize("keep_own_sample, status", [(False, PASS), (True, VIOLATED)])
def test_a_refused_delay_is_judged_only_by_a_sample_before_the_next_statement(kit, keep_own_sample, status):
    # A loaded run of d1-invalid-values on MariaDB (resolution 2.2 s): the first sample after the
    # refused MASTER_DELAY = 2147483648 came after the next two statements, the second of which set
    # 1.5 (SQL_Delay 1). That sample says nothing about the refused one.
    tr = kit.run(W344, "d1-invalid-values")
    tr.header["resolution_us"] = 2_500_000
    refused = tr.first("stmt", op="change_master", delay_sql="2147483648")
    own, between = [o for o in tr.all("status", node="B") if refused["t"] <= o["t"] < refused["t"] + 2 * US]
    tr.drop(between)
    if keep_own_sample:
        own["SQL_Delay"] = 7  # a sample before the next statement that shows another delay: violated
    else:
        tr.drop(own)
    assert kit.verdict("WL344.CM.RANGE", tr).status == status


@pytest.mark.parametrize("read_took_us, status", [(None, PASS), (10_000, VIOLATED)])
def test_remaining_delay_is_judged_within_how_long_the_sample_took_not_the_resolution(kit, read_took_us, status):
    # clock-reply-late on MariaDB under load (resolution 0.9 s): every SQL_Remaining_Delay was a
    # second long, and a tolerance of 1 s + the resolution passed them all. A polled sample says how
    # long its read took (sampled_until): that, not the gap between polls, is its uncertainty.
    tr = kit.run(W344, "d1-normal-setup")
    tr.header["resolution_us"] = 900_000
    s = next(o for o in tr.all("status", node="B", t=10 * US) if o["Slave_SQL_Running_State"] == STATE_WAITING)
    tr.retime(s, s["t"] + 300_000)  # read 0.3 s into the second: 10.7 s left, SQL_Remaining_Delay 11
    s["SQL_Remaining_Delay"] += 1  # the clock difference off by a second
    if read_took_us is not None:
        s["sampled_until"] = s["t"] + read_took_us
    assert kit.verdict("WL344.SSS.REMAINING", tr).status == status


def test_a_chain_hop_counts_from_the_commit_stamp_on_the_clock_that_wrote_it(kit):
    # Campaign finding (seed 1000, History 45826): B's clock stepped 1.25 s ahead while it executed
    # t4, so it stamped the commit 1.85 s; C (WL#7318, delay 10) counts from that stamp's whole
    # second, 1 s on B's clock, -0.25 s in true time, and begins t4 at 9.75 s.
    tr = kit.run(W7318, load_history(CORPUS / "finding-chain-ict-stamped-after-a-clock-step.jsonl"))
    a = tr.first("apply", node="C", trx="t4", idx=0)
    assert (a["begin"], a["ict"] % 1_000_000_000) == (9_750_000, 1_850_000)
    assert kit.verdict("WL344.CHAIN.IMMEDIATE", tr).status == PASS
    # a quarter of a second earlier is before any second B's clock could have stamped
    for o in tr.all("apply", node="C", trx="t4"):
        o["begin"] = o["t"] = 9_500_000
    assert_witness(kit.verdict("WL344.CHAIN.IMMEDIATE", tr), tr, None, "C began GTID_LOG_EVENT of t4 at 9.5 s")


def test_a_filtered_group_a_polled_trace_cannot_see_passed_decides_no_wait(kit):
    # Real-server campaign finding: B filters t2 (replicate_ignore_table) and, once its delay is
    # over, passes it without a row; a polled trace does not show that (unobserved: filtered), so t2
    # seems still unapplied while B waits for t3. Whether B is waiting is then not the trace's to tell.
    history = kit.history("flt-delay")
    history["ops"].append({"at": 6_500_000, "op": "trx", "node": "A", "trx": "t3"})
    tr = kit.run("model:mariadb-10.11", history)
    assert any(s["Slave_SQL_Running_State"].startswith("Waiting until") for s in tr.all("status", node="B") if s["t"] >= 8_000_000)
    for o in tr.all("apply", node="B", trx="t2"):
        tr.obs.remove(o)  # as polled: a filtered group's pass leaves no row to see
    tr.header["unobserved"] = ["filtered"]
    assert kit.verdict("WL344.STATE.WAITING", tr).status == "pass"
    tr.header["unobserved"] = []  # a trace that claims to show every group passed: t2 is then pending, not waited for
    assert kit.verdict("WL344.STATE.WAITING", tr).status == "violated"


def test_a_clock_step_logged_after_a_sample_in_its_own_microsecond_did_not_move_its_wait(kit):
    # A campaign's model Trace: B's SHOW SLAVE STATUS at 7.399999 s (waiting, 19 s left), then in the
    # same µs its clock steps an hour on. The wait the sample shows was counted on the clock before.
    header, obs = load_trace(REPO / "tests/properties/traces/mariadb-model-clock-step-after-a-sample.jsonl")
    tr = Trace(header, [{k: x for k, x in o.items() if k != "_line"} for o in obs])  # numbered as they stand
    sample = tr.first("status", node="B", t=7_399_999)
    step = tr.first("clock_step", node="B", t=7_399_999)
    assert (sample["Slave_SQL_Running_State"], sample["SQL_Remaining_Delay"]) == (STATE_WAITING, 19) and tr.index(sample) < tr.index(step)
    for requirement in ("WL344.STATE.WAITING", "WL344.SSS.REMAINING"):
        assert kit.verdict(requirement, tr).status == PASS
    sample.update(Slave_SQL_Running_State=STATE_IDLE, SQL_Remaining_Delay=None)  # as if the step had ended the wait
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, sample, "but it is delaying")
