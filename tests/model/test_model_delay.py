"""The delay model against the peer suites' scenarios (peer-rules.md §1: rpl_delayed_slave D1
steps 1-8, rpl_sql_delay D3, rpl_sql_delay_line_topology D4), plus determinism and mutant kills.

Histories are written here (not read from spec/histories) so each test shows its input.
"""
from __future__ import annotations

import math

import pytest

from replcheck.io import dumps_lines, load_history
from replcheck.model.delay import (
    ER_MASTER_DELAY_VALUE_OUT_OF_RANGE, ER_PARSE_ERROR, MAX_MASTER_DELAY, STATE_EXECUTING, STATE_IDLE, STATE_WAITING,
    WL344, WL7318, parse_master_delay)
from replcheck.model.sim import ER_SLAVE_MUST_STOP, Config, simulate
from replcheck.properties.core import VIOLATED
from replcheck.spec import ROOT
from replcheck.systems import systems

US = 1_000_000
EPOCH_S = 1_700_000_000  # the simulator's default epoch, in seconds
W344, W7318, MDB = "model:wl344", "model:wl7318", "model:mariadb-10.11"
BOTH = [W344, W7318]
HISTORY_NAMES = sorted(p.name.removesuffix(".jsonl") for p in ROOT.joinpath("histories").iterdir()
                       if p.name.endswith(".jsonl"))


def trx(at_s, name, node="A", **kw):
    return {"at": int(at_s * US), "op": "trx", "node": node, "trx": name, **kw}


def op(at_s, kind, node="B", **kw):
    return {"at": int(at_s * US), "op": kind, "node": node, **kw}


def ab(kit, delay, ops, end_s=40, **channel):
    """Master A -> replica B with MASTER_DELAY `delay` (None: not set), sampled every second."""
    ch = {"source": "A", "replica": "B", **channel}
    if delay is not None:
        ch["delay"] = delay
    return kit.make_history(["A", "B"], [ch], ops, sample_every_us=US, end_us=end_s * US)


def visible(tr, trx_name, node="B") -> int:
    return tr.first("visible", node=node, trx=trx_name)["t"]


def sample(tr, t_s, node="B") -> dict:
    """The last SHOW SLAVE STATUS taken at t_s (after any statement at that instant)."""
    return tr.all("status", node=node, t=int(t_s * US))[-1]


def stmt(tr, op_name, node="B", **match) -> dict:
    return tr.first("stmt", node=node, op=op_name, **match)


def after(tr, o, kind="status", node="B") -> dict:
    return next(x for x in tr.all(kind, node=node) if tr.index(x) > tr.index(o))


def binlog_ict(tr, node, trx_name) -> int:
    return tr.first("binlog", node=node, trx=trx_name, idx=0)["ict"]


# -- D1 step 1: normal setup ----------------------------------------------------------------------
@pytest.mark.parametrize("system", BOTH)
def test_d1_row_invisible_for_the_delay_then_applied(kit, system):
    tr = kit.run(system, ab(kit, 20, [trx(1, "t1")], end_s=25))
    assert visible(tr, "t1") == 21 * US
    for t in range(2, 21):  # waiting: state, countdown, SQL thread behind the IO thread
        s = sample(tr, t)
        assert (s["Slave_SQL_Running_State"], s["processlist_state"]) == (STATE_WAITING, STATE_WAITING)
        assert s["SQL_Remaining_Delay"] == 21 - t and s["SQL_Delay"] == 20
        assert s["Read_Master_Log_Pos"] > s["Exec_Master_Log_Pos"]
    for t in range(22, 26):  # applied: idle, no remaining delay, in sync with the IO thread
        s = sample(tr, t)
        assert s["Slave_SQL_Running_State"] == STATE_IDLE and s["SQL_Remaining_Delay"] is None
        assert s["Read_Master_Log_Pos"] == s["Exec_Master_Log_Pos"]


# -- D1 step 2: a replica that lags on its own does not wait again ---------------------------------
def test_d1_natural_lag_applies_next_row_at_once(kit):
    tr = kit.run(W344, ab(kit, 20, [trx(1, "q1"), trx(2, "q2", statements=[{"replica_cost_us": 30 * US}]),
                                    trx(3, "q3"), trx(4, "q4", statements=[{"replica_cost_us": 20 * US}])], end_s=80))
    assert visible(tr, "q1") == 21 * US
    assert visible(tr, "q2") == 52 * US  # due at 22 s, then 30 s of work
    # q3 was due at 23 s; read at 52 s it runs at once, with no second delay.
    assert visible(tr, "q3") == 52 * US
    assert all(a["begin"] == a["read"] for a in tr.all("apply", node="B", trx="q3"))
    s = sample(tr, 53)  # q4 is running ("User sleep" in the peer test), not waiting
    assert s["Slave_SQL_Running_State"] == STATE_EXECUTING and s["SQL_Remaining_Delay"] is None
    assert visible(tr, "q4") == 72 * US
    assert sample(tr, 73)["Slave_SQL_Running_State"] == STATE_IDLE


# -- D1 step 3: Seconds_Behind_Master --------------------------------------------------------------
def test_d1_seconds_behind_master_bounds(kit):
    # T = 10 s, delay 2T; the replica needs T to execute the row.
    tr = kit.run(W344, ab(kit, 20, [trx(1, "r6", statements=[{"replica_cost_us": 10 * US}])], end_s=35))
    assert 0 <= sample(tr, 11)["Seconds_Behind_Master"] < 20
    s = sample(tr, 22)  # more than 2T after the master executed it, still executing
    assert s["Slave_SQL_Running_State"] == STATE_EXECUTING and s["Seconds_Behind_Master"] >= 20


# -- D1 steps 4 and 5: STOP SLAVE during the delay -------------------------------------------------
@pytest.mark.parametrize("system", BOTH)
@pytest.mark.parametrize("ddl,start_s", [(False, 12), (True, 21)], ids=["dml", "ddl"])
def test_d1_stop_during_delay_runs_nothing_and_start_keeps_the_clock(kit, system, ddl, start_s):
    tr = kit.run(system, ab(kit, 30, [trx(1, "t7", ddl=ddl), op(11, "stop_slave"), op(start_s, "start_slave")]))
    stop = stmt(tr, "stop_slave")
    assert stop["errno"] is None
    before, stopped = sample(tr, 10), after(tr, stop)
    assert stopped["t"] == 11 * US
    assert (stopped["Relay_Log_Pos"], stopped["Exec_Master_Log_Pos"]) == (before["Relay_Log_Pos"], before["Exec_Master_Log_Pos"])
    assert (stopped["Slave_SQL_Running"], stopped["Slave_SQL_Running_State"], stopped["SQL_Remaining_Delay"]) == ("No", "", None)
    assert not [a for a in tr.all("apply", node="B", trx="t7") if a["t"] < 31 * US]
    # Once the IO thread is back: MariaDB's START SLAVE with GTID fetches the relay log again first.
    started = after(tr, after(tr, stmt(tr, "start_slave"), kind="connect"))
    assert started["Slave_SQL_Running_State"] == STATE_WAITING
    assert started["SQL_Remaining_Delay"] == (31 * US - started["t"]) // US  # due at 1 + 30 s, not start + 30 s
    assert visible(tr, "t7") == 31 * US
    s = sample(tr, 32)
    assert (s["Slave_IO_Running"], s["Slave_SQL_Running"], s["Slave_SQL_Running_State"]) == ("Yes", "Yes", STATE_IDLE)


def test_stop_inside_a_partly_applied_event_group_rolls_back_to_its_start(kit):
    # WL#344 waits per event: with the second statement still waiting, the first is rolled back.
    h = ab(kit, 10, [trx(1, "t", statements=[{"duration_us": 3 * US}, {}]), op(13, "stop_slave"), op(14, "start_slave")])
    tr = kit.run(W344, h)
    assert [a["type"] for a in tr.all("apply", node="B", trx="t") if a["t"] < 13 * US] == ["GTID_LOG_EVENT", "QUERY_EVENT"]
    assert tr.first("rollback", node="B", trx="t")["t"] == 13 * US
    assert after(tr, stmt(tr, "stop_slave"))["Relay_Log_Pos"] == sample(tr, 12)["Relay_Log_Pos"]
    assert visible(tr, "t") == 14 * US  # both statements were due by then


# -- D1 step 6: back to no delay ------------------------------------------------------------------
def test_d1_master_delay_zero_applies_at_once(kit):
    tr = kit.run(W344, ab(kit, 20, [op(1, "stop_slave"), op(2, "change_master", delay=0),
                                    op(3, "start_slave"), trx(4, "t8")], end_s=10))
    assert after(tr, stmt(tr, "change_master"))["SQL_Delay"] == 0
    assert visible(tr, "t8") == 4 * US


@pytest.mark.parametrize("system,errno", [(MDB, ER_SLAVE_MUST_STOP), (W344, None), (W7318, None)])
def test_delay_change_with_the_io_thread_running(kit, system, errno):
    # MariaDB refuses CHANGE MASTER while either thread runs (measured on 10.11, d1-back-to-zero);
    # MySQL 5.7.4+ takes MASTER_DELAY once the SQL thread is stopped, and keeps the relay log.
    tr = kit.run(system, ab(kit, 20, [op(1, "stop_slave", thread="sql"), op(2, "change_master", delay=0),
                                      op(3, "start_slave", thread="sql"), trx(4, "t8")], end_s=10))
    assert stmt(tr, "change_master")["errno"] == errno
    assert not tr.all("relay_log_recovery", node="B")
    assert after(tr, stmt(tr, "change_master"))["SQL_Delay"] == (20 if errno else 0)


@pytest.mark.parametrize("system", [W344, W7318])
def test_d7_delay_change_with_both_threads_stopped_purges_and_fetches_again(kit, system):
    # Known bugs D7: the relay log holding t1 and t2 is purged and both come again from the SQL
    # thread's position (MariaDB by GTID), applied once; the mutant keeps the IO thread's and loses them.
    tr = kit.run(system, "d7-delay-change-relay-log-purged")
    purge = tr.first("relay_log_recovery", node="B")
    assert (purge["reason"], purge["dropped"], purge["t"]) == ("change_master", 6, 4 * US)
    assert [a["trx"] for a in tr.all("apply", node="B") if a["last"] and a["trx"]] == ["t1", "t2", "t3"]
    assert [visible(tr, t) for t in ("t1", "t2")] == [4_500_000, 4_500_000]
    lost = kit.run("mutant:delay-change-keeps-fetch-position", "d7-delay-change-relay-log-purged")
    assert [a["trx"] for a in lost.all("apply", node="B") if a["last"] and a["trx"]] == ["t3"]


@pytest.mark.parametrize("system,warning", [(MDB, 4190), (W344, None), (W7318, None)])
def test_a_relay_log_place_keeps_the_relay_log_or_is_refused(kit, system, warning):
    # RELAY_LOG_FILE/RELAY_LOG_POS: no purge, the SQL thread resumes there (MariaDB notes that the
    # GTID position is no longer used); a place the relay log does not have is an error, nothing changes.
    ops = [trx(1, "t1"), op(2, "stop_slave"), op(3, "change_master", delay=0, relay_log_file="relay.000001", relay_log_pos=172),
           op(4, "change_master", delay=5, relay_log_file="relay.000009", relay_log_pos=4), op(5, "start_slave")]
    tr = kit.run(system, ab(kit, 20, ops, end_s=10))
    kept, missing = tr.all("stmt", node="B", op="change_master")
    assert (kept["errno"], kept["warning"], missing["errno"]) == (None, warning, 1380)
    assert not tr.all("relay_log_recovery", node="B") and after(tr, missing)["SQL_Delay"] == 0
    assert visible(tr, "t1") == 5 * US


def test_p1_as_the_seed_writes_it_purges_the_relay_log(kit):
    # WL#344 P1 with a bare MASTER_DELAY = 0: both threads stopped, the relay logs are purged, and
    # START SLAVE SQL_THREAD UNTIL has nothing to execute (Bug #87102); naming the SQL thread's relay
    # log place (spec/histories/until-recovery) keeps them.
    history = load_history(ROOT / "histories" / "until-recovery.jsonl")
    bare = [{k: v for k, v in o.items() if not k.startswith("relay_log_")} for o in history["ops"]]
    tr = kit.run(W344, {**history, "ops": bare})
    assert tr.first("relay_log_recovery", node="B")["dropped"] == 11  # t1-t3 whole, the DDL
    assert not [a for a in tr.all("apply", node="B") if a["trx"]]
    kept = kit.run(W344, "until-recovery")
    assert not kept.all("relay_log_recovery", node="B")
    assert [a["trx"] for a in kept.all("apply", node="B") if a["last"]] == ["t1", "t2", "t3"]


# -- D1 step 7: RESET SLAVE -----------------------------------------------------------------------
def test_d1_reset_slave_sets_delay_zero(kit):
    tr = kit.run(W344, ab(kit, None, [op(1, "reset_slave"), op(2, "stop_slave"), op(3, "change_master", delay=71),
                                      op(4, "reset_slave"), op(5, "start_slave"), trx(6, "t9")], end_s=10))
    running, reset = tr.all("stmt", node="B", op="reset_slave")
    assert running["errno"] == ER_SLAVE_MUST_STOP  # a running slave refuses
    assert after(tr, stmt(tr, "change_master"))["SQL_Delay"] == 71
    assert reset["errno"] is None and after(tr, reset)["SQL_Delay"] == 0
    assert after(tr, stmt(tr, "start_slave"))["SQL_Delay"] == 0
    assert visible(tr, "t9") == 6 * US


# -- D1 step 8: invalid values --------------------------------------------------------------------
@pytest.mark.parametrize("system,token,errno,shown", [
    (W7318, "-1", ER_PARSE_ERROR, 5), (W7318, "blah", ER_PARSE_ERROR, 5), (W7318, "1.5", ER_PARSE_ERROR, 5),
    (W7318, "2147483648", ER_MASTER_DELAY_VALUE_OUT_OF_RANGE, 5), (W7318, "2147483647", None, 2147483647),
    (W7318, "0", None, 0),
    (W344, "1.5", ER_PARSE_ERROR, 5),  # the seed: a non-negative integer
    # MariaDB reads a decimal or float literal up to its first non-digit, as measured on 10.11
    (MDB, "1.5", None, 1), (MDB, "2.5e1", None, 2), (MDB, "+5", None, 5), (MDB, "0x10", None, 16),
    (MDB, "-1", ER_PARSE_ERROR, 5), (MDB, "2147483648.1", ER_MASTER_DELAY_VALUE_OUT_OF_RANGE, 5),
])
def test_d1_invalid_values(kit, system, token, errno, shown):
    tr = kit.run(system, ab(kit, 5, [op(1, "stop_slave"), op(2, "change_master", delay_sql=token)], end_s=3))
    s = stmt(tr, "change_master")
    assert s["errno"] == errno
    assert after(tr, s)["SQL_Delay"] == shown  # an error leaves the delay unchanged
    if errno == ER_PARSE_ERROR:  # the server's name and the line, as MariaDB's rpl_delayed_slave.result shows them
        server = "MariaDB" if system == MDB else "MySQL"
        assert s["message"] == (f"You have an error in your SQL syntax; check the manual that corresponds to your {server} "
                                f"server version for the right syntax to use near '{token}' at line 1")
    elif errno == ER_MASTER_DELAY_VALUE_OUT_OF_RANGE:
        assert s["message"] == "The requested value 2147483648 for the master delay exceeds the maximum 2147483647"


def test_change_master_on_a_running_slave_is_refused(kit):
    tr = kit.run(W344, ab(kit, 5, [op(1, "change_master", delay=7)], end_s=2))
    s = stmt(tr, "change_master")
    assert s["errno"] == ER_SLAVE_MUST_STOP and after(tr, s)["SQL_Delay"] == 5


@pytest.mark.parametrize("text,want", [
    ("0", (0, None)), ("20", (20, None)), (" 7 ", (7, None)), (str(MAX_MASTER_DELAY), (MAX_MASTER_DELAY, None)),
    (str(MAX_MASTER_DELAY + 1), (None, ER_MASTER_DELAY_VALUE_OUT_OF_RANGE)), ("99999999999999999999", (None, 1729)),
    ("-1", (None, ER_PARSE_ERROR)), ("+5", (None, 1064)), ("1.5", (None, 1064)), ("1e3", (None, 1064)),
    ("blah", (None, 1064)), ("", (None, 1064)), ("\u0663", (None, 1064)),
])
def test_parse_master_delay(text, want):
    assert parse_master_delay(text)[:2] == want


# -- no delay set, no wait: not even for an event dated ahead (sql_delay_event: `if (sql_delay)`) ----
@pytest.mark.parametrize("system", [W344, W7318])
def test_a_future_event_waits_only_when_a_delay_is_set(kit, system):
    ahead = EPOCH_S + 86_400  # a day ahead, as rpl_delayed_slave2 (suite scenario mdb-rpl_delayed_slave2) sets it
    none = kit.run(system, ab(kit, 0, [trx(1, "future", timestamp=ahead)], end_s=3))
    assert visible(none, "future") == 1 * US
    one = kit.run(system, ab(kit, 1, [trx(1, "future", timestamp=ahead)], end_s=3))
    # WL#344 waits for the event's timestamp plus the delay; WL#7318 counts from the commit itself
    assert visible(one, "future") == ((86_400 + 1) * US if system == W344 else 2 * US)


# -- MariaDB rpl_delayed_slave2: the delay counts from the event timestamp, even a future one -------
def test_wl344_delay_counts_from_event_timestamp(kit):
    tr = kit.run(W344, ab(kit, 5, [trx(1, "future", timestamp=EPOCH_S + 30), trx(2, "past", timestamp=EPOCH_S - 10_000)],
                          end_s=50))
    assert visible(tr, "future") == 35 * US
    assert visible(tr, "past") == 35 * US  # due long ago, but queued behind "future"


# -- crash of the replica during the delay --------------------------------------------------------
def test_crash_during_delay_restores_delay_and_due_time(kit):
    tr = kit.run(W344, ab(kit, 20, [trx(1, "t1"), op(5, "crash"), op(7, "restart"), trx(8, "t2")], end_s=35))
    assert tr.first("relay_log_info", node="B")["content"].endswith("\n20\n")
    assert sample(tr, 7)["SQL_Delay"] == 20
    assert visible(tr, "t1") == 21 * US and visible(tr, "t2") == 28 * US


# -- D3 rpl_sql_delay (WL#7318) --------------------------------------------------------------------
D3_TRX = [("create", {"ddl": True}), ("insert", {}), ("update", {}), ("delete", {}),
          ("multi", {"statements": [{}, {}, {}]}), ("drop", {"ddl": True})]


def test_d3_one_delay_per_transaction_from_the_commit(kit):
    tr = kit.run(W7318, ab(kit, 7, [trx(1 + 10 * i, name, **kw) for i, (name, kw) in enumerate(D3_TRX)], end_s=70))
    for i, (name, _) in enumerate(D3_TRX):
        assert math.ceil((binlog_ict(tr, "B", name) - binlog_ict(tr, "A", name)) / US) >= 7
        # synced: not waiting any more
        assert sample(tr, 1 + 10 * i + 9)["Slave_SQL_Running_State"] != STATE_WAITING
    for s in tr.all("status", node="B"):
        assert s["DESIRED_DELAY"] == s["SQL_Delay"] == 7
        assert s["REMAINING_DELAY"] == s["SQL_Remaining_Delay"]
    waited = [a["type"] for a in tr.all("apply", node="B", trx="multi") if a["begin"] > a["read"]]
    assert waited == ["GTID_LOG_EVENT"]


# -- D4 rpl_sql_delay_line_topology ---------------------------------------------------------------
def chain(kit, ops):
    return kit.make_history(["A", "B", "C"], [("A", "B", 5), ("B", "C", 5)], ops, sample_every_us=US, end_us=80 * US)


def test_d4_chain_delays_add_up_per_hop(kit):
    tr = kit.run(W7318, chain(kit, [trx(1 + 2 * i, name, **kw) for i, (name, kw) in enumerate(D3_TRX)]))
    for name, _ in D3_TRX:
        a, b, c = (binlog_ict(tr, n, name) for n in "ABC")
        assert math.ceil((b - a) / US) >= 5 and math.ceil((c - b) / US) >= 5
        assert visible(tr, name, "C") - tr.first("commit", node="A", trx=name)["t"] >= 10 * US


def test_wl344_chain_measures_from_the_origin(kit):
    # The drawback WL#7318 fixes: under WL#344 C counts from A's timestamp, so the hops do not add up.
    tr = kit.run(W344, chain(kit, [trx(1, "g1")]))
    assert visible(tr, "g1", "B") == 6 * US and visible(tr, "g1", "C") == 6 * US


# -- a 3-statement transaction: one wait (WL#7318) versus one per event (WL#344) --------------------
def test_multi_statement_transaction_waits_once_or_per_event(kit):
    # Statements start at 1, 3 and 5 s; commit at 7 s; delay 10 s.
    h = ab(kit, 10, [trx(1, "t", statements=[{"duration_us": 2 * US}] * 3)], end_s=25)
    applies = {s: kit.run(s, h).all("apply", node="B", trx="t") for s in BOTH}
    # WL#7318: the GTID event waits until commit + delay, the rest follows at once.
    assert [a["begin"] for a in applies[W7318]] == [17 * US] * 5
    assert [a["type"] for a in applies[W7318] if a["begin"] > a["read"]] == ["GTID_LOG_EVENT"]
    # WL#344: every event waits for its own timestamp + delay.
    assert [a["begin"] for a in applies[W344]] == [11 * US, 11 * US, 13 * US, 15 * US, 17 * US]
    assert all(a["begin"] == max(a["read"], (a["when"] - EPOCH_S + 10) * US) for a in applies[W344])
    assert len([a for a in applies[W344] if a["begin"] > a["read"]]) == 4


def test_anonymous_gtid_waits_once(kit):
    h = kit.make_history([{"id": "A", "gtid_mode": False}, {"id": "B", "gtid_mode": False}], [("A", "B", 4)],
                         [trx(1, "anon", statements=[{"duration_us": 2 * US}] * 2)], sample_every_us=US, end_us=15 * US)
    applies = kit.run(W7318, h).all("apply", node="B", trx="anon")
    assert applies[0]["type"] == "ANONYMOUS_GTID_LOG_EVENT" and applies[0]["begin"] == 9 * US  # commit 5 s + 4 s
    assert all(a["begin"] == a["read"] == 9 * US for a in applies[1:])


# -- determinism ----------------------------------------------------------------------------------
@pytest.mark.parametrize("rule", [WL344, WL7318])
def test_same_history_gives_byte_identical_trace(kit, rule):
    for name in HISTORY_NAMES:
        h = kit.history(name)
        first = dumps_lines(*simulate(h, Config(rule), "model"))
        second = dumps_lines(*simulate(kit.history(name), Config(rule), "model"))
        assert first == second, name


# -- every declared mutant is caught --------------------------------------------------------------
MUTANTS = [s for s in systems().values() if s.kind == "mutant"]


@pytest.mark.parametrize("system", MUTANTS, ids=lambda s: s.name)
def test_every_mutant_is_killed_on_some_history(kit, system):
    assert system.declares.kills
    killed = [(h, r) for h in HISTORY_NAMES for r in system.declares.kills
              if kit.verdict(r, kit.run(system.name, h)).status == VIOLATED]
    assert killed, f"{system.name} violates none of {system.declares.kills} on any spec history"
