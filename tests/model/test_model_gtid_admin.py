"""RESET MASTER and SET GLOBAL gtid_slave_pos in the model (MariaDB sql_repl.cc reset_master and
rpl_gtid_pos_check, sys_vars.cc Sys_var_gtid_slave_pos): what each answers and what it changes."""
from __future__ import annotations

import pytest

from replcheck.model import domains as DOM

MARIADB = "model:mariadb-10.11"


def test_a_gtid_list_is_parsed_or_refused_as_the_server_does():
    assert DOM.parse_gtid_list(" 1-2-3, 2-4-6") == {1: (1, 2, 3), 2: (2, 4, 6)}
    assert DOM.parse_gtid_list("") == {}
    assert DOM.parse_gtid_list("-1-2-3") == (DOM.ER_INCORRECT_GTID_STATE, "Could not parse GTID list")
    assert DOM.parse_gtid_list("1-2 -3")[0] == DOM.ER_INCORRECT_GTID_STATE
    assert DOM.parse_gtid_list("1-2-3,1-4-5")[0] == DOM.ER_DUPLICATE_GTID_DOMAIN
    # a binlog state may name a domain once per server (rpl_gtid_basic: '0-1-10,1-2-20,0-3-30')
    assert DOM.parse_gtid_state("0-1-10,1-2-20,0-3-30") == [(0, 1, 10), (1, 2, 20), (0, 3, 30)]
    assert DOM.parse_gtid_state("0-1") is None


def test_a_slave_position_behind_the_servers_own_binlog_warns_or_under_strict_mode_fails():
    own = [(0, 1, 5)]
    assert DOM.slave_pos_conflict({0: (0, 1, 5)}, own, 1, strict=False) == (None, None, "")
    errno, warning, message = DOM.slave_pos_conflict({0: (0, 1, 3)}, own, 1, strict=False)
    assert (errno, warning) == (None, DOM.ER_MASTER_GTID_POS_CONFLICTS_WITH_BINLOG)
    assert message.startswith("Specified GTID 0-1-3 conflicts with the binary log which contains a more recent GTID 0-1-5")
    assert DOM.slave_pos_conflict({0: (0, 1, 3)}, own, 1, strict=True)[0] == DOM.ER_MASTER_GTID_POS_CONFLICTS_WITH_BINLOG
    assert DOM.slave_pos_conflict({}, own, 1, strict=False)[1] == DOM.ER_MASTER_GTID_POS_MISSING_DOMAIN
    # another server's GTID last in the domain: not this server's to keep in order
    assert DOM.slave_pos_conflict({}, [(0, 2, 9)], 1, strict=True) == (None, None, "")


def _stmts(tr, node, op):
    return [o for o in tr.all("stmt", node=node) if o.get("op") == op]


def test_gtid_slave_pos_is_refused_while_a_slave_thread_runs_and_taken_once_stopped(kit):
    h = kit.make_history(["M", "R"], [("M", "R", 0)], [
        {"at": 1_000_000, "op": "trx", "node": "M"},
        {"at": 2_000_000, "op": "set_global", "node": "R", "variable": "gtid_slave_pos", "value": "0-1-1"},
        {"at": 3_000_000, "op": "stop_slave", "node": "R"},
        {"at": 3_500_000, "op": "trx", "node": "M"},
        {"at": 3_600_000, "op": "trx", "node": "M"},
        {"at": 4_000_000, "op": "set_global", "node": "R", "variable": "gtid_slave_pos", "value": "0-1-2"},
        {"at": 5_000_000, "op": "start_slave", "node": "R"}], end_us=7_000_000)
    tr = kit.run(MARIADB, h)
    refused, taken = _stmts(tr, "R", "set_global")
    assert refused["errno"] == 1198 and taken["errno"] is None
    # the slave asked from 0-1-2: the master's third transaction only
    assert [v["gtid"] for v in tr.all("visible", node="R")] == ["0-1-1", "0-1-3"]


def test_reset_master_starts_the_binlog_and_the_gtids_over(kit):
    h = kit.make_history(["M"], [], [
        {"at": 1_000_000, "op": "trx", "node": "M"}, {"at": 1_500_000, "op": "flush_logs", "node": "M"},
        {"at": 2_000_000, "op": "reset_master", "node": "M"},
        {"at": 3_000_000, "op": "trx", "node": "M"}], end_us=4_000_000)
    tr = kit.run(MARIADB, h)
    assert [c["gtid"] for c in tr.all("commit", node="M")] == ["0-1-1", "0-1-1"]
    assert _stmts(tr, "M", "reset_master")[0]["errno"] is None
    assert [b["file"] for b in tr.all("binlog", node="M")][-2:] == ["bin.000001", "bin.000001"]


@pytest.mark.parametrize("scenario,statement,requirements", [
    # rpl_gtid_mdev4820: the master's rows 2 and 3 go with RESET MASTER; without the reset the
    # slave's next group would arrive before the group logged before it
    ("mdb-rpl_gtid_mdev4820-reset-master", "reset_master", ("DOMAIN.CONNECT.NO_LOSS",)),
    # rpl_semi_sync_gtid_reconnect: inserts 2 and 3 go with the master's binlog, never applied
    ("mdb-rpl_semi_sync_gtid_reconnect", "reset_master", ("GGID.RECOVERY.EXACTLY_ONCE",)),
    # rpl_gtid_startpos: after RESET MASTER the master numbers its GTIDs from 0-1-1 again
    ("mdb-rpl_gtid_startpos-slave-binlog", "reset_master", ("MARIADB.GTID.UNIQUE", "DURABLE.GTID.NO_REUSE")),
    # rpl_gtid_startpos: the slave's position emptied, it fetches and applies the master's groups
    # again (its table dropped before); without the SET those are second copies
    ("mdb-rpl_gtid_startpos-empty-pos-conflict", "set_global", ("GGID.RECOVERY.EXACTLY_ONCE",)),
    # rpl_gtid_errorhandling: gtid_slave_pos set to 0-1-1 skips the master's first insert by choice
    ("mdb-rpl_gtid_errorhandling-conflicting-pos", "set_global", ("GGID.RECOVERY.EXACTLY_ONCE",)),
])
def test_what_the_dba_reset_is_no_violation_and_without_the_statement_it_is(kit, scenario, statement, requirements):
    from conftest import Trace
    from replcheck import io
    from replcheck.properties.core import PASS, VIOLATED
    from replcheck.spec import ROOT

    tr = kit.run(MARIADB, io.load_history(ROOT / "histories" / "suites" / f"{scenario}.jsonl"))
    for rid in requirements:
        assert kit.verdict(rid, tr).status == PASS, rid
    # the statement, and for RESET MASTER its form SET GLOBAL gtid_binlog_state too
    resets = {"reset_master", "gtid_binlog_state"} if statement == "reset_master" else {statement}
    without = Trace(tr.header, [o for o in tr.obs if not (o["kind"] == "stmt" and (
        o.get("op") in resets or o.get("variable") in resets))])
    for rid in requirements:
        assert kit.verdict(rid, without).status == VIOLATED, rid


def test_gtid_binlog_state_needs_an_empty_binlog_and_then_starts_it_from_the_state_given(kit):
    h = kit.make_history(["M"], [], [
        {"at": 1_000_000, "op": "trx", "node": "M"},
        {"at": 2_000_000, "op": "set_global", "node": "M", "variable": "gtid_binlog_state", "value": "0-1-7"},
        {"at": 3_000_000, "op": "reset_master", "node": "M"},
        {"at": 4_000_000, "op": "set_global", "node": "M", "variable": "gtid_binlog_state", "value": "0-1-7"},
        {"at": 5_000_000, "op": "trx", "node": "M"}], end_us=6_000_000)
    tr = kit.run(MARIADB, h)
    refused, taken = _stmts(tr, "M", "set_global")
    assert refused["errno"] == DOM.ER_BINLOG_MUST_BE_EMPTY and taken["errno"] is None
    assert [c["gtid"] for c in tr.all("commit", node="M")] == ["0-1-1", "0-1-8"]


def test_the_io_thread_shows_2003_while_its_master_is_down_and_clears_it_on_connecting(kit):
    # rpl_semi_sync_master_shutdown.result: wait_for_slave_io_error [errno=2003] with the master shut
    # down; started again, the IO thread connects and its error is gone (slave.cc connect_to_master)
    h = kit.make_history(["M", "R"], [("M", "R", 0)], [
        {"at": 1_000_000, "op": "trx", "node": "M"}, {"at": 2_000_000, "op": "shutdown", "node": "M"},
        {"at": 3_000_000, "op": "show_slave_status", "node": "R"}, {"at": 4_000_000, "op": "restart", "node": "M"},
        {"at": 5_000_000, "op": "show_slave_status", "node": "R"}], end_us=6_000_000)
    tr = kit.run(MARIADB, h)
    down = [s for s in tr.all("status", node="R") if s["t"] == 3_000_000][-1]
    up = [s for s in tr.all("status", node="R") if s["t"] == 5_000_000][-1]
    assert (down["Last_IO_Errno"], down["Slave_IO_Running"]) == (2003, "Connecting")
    assert (up["Last_IO_Errno"], up["Slave_IO_Running"]) == (0, "Yes")


def test_gtid_io_pos_may_name_the_position_the_dba_set(kit):
    # rpl_gtid_errorhandling on 10.11.19: after SET GLOBAL gtid_slave_pos = "0-1-4" and START SLAVE
    # the master refuses (1236) and Gtid_IO_Pos shows 0-1-4, which no binlog holds
    from conftest import Trace
    from replcheck import io
    from replcheck.properties.core import PASS, VIOLATED
    from replcheck.spec import ROOT

    tr = kit.run(MARIADB, io.load_history(ROOT / "histories" / "suites" / "mdb-rpl_gtid_errorhandling-not-in-binlog.jsonl"))
    refused = next(o for o in tr.obs if o["kind"] == "error" and o.get("errno") == 1236)
    sample = next(o for o in reversed(tr.obs[:tr.obs.index(refused)]) if o["kind"] == "status" and o["node"] == "slave")
    at = tr.obs.index(refused) + 1
    shown = [*tr.obs[:at], {**sample, "t": refused["t"], "Gtid_IO_Pos": "0-1-4"}, *tr.obs[at:]]
    assert kit.verdict("MARIADB.GTID.IO_POS", Trace(tr.header, shown)).status == PASS
    unset = [o for o in shown if not (o["kind"] == "stmt" and o.get("value") == "0-1-4")]
    assert kit.verdict("MARIADB.GTID.IO_POS", Trace(tr.header, unset)).status == VIOLATED


def test_gtid_binlog_pos_follows_a_binlog_state_set_by_the_dba(kit):
    # rpl_gtid_basic: SET GLOBAL gtid_binlog_state = '0-1-10,1-2-20,0-3-30' after RESET MASTER; a
    # sample then shows each domain's most recent GTID of that state
    from conftest import Trace
    from replcheck import io
    from replcheck.properties.core import PASS, VIOLATED
    from replcheck.spec import ROOT

    tr = kit.run(MARIADB, io.load_history(ROOT / "histories" / "suites" / "mdb-rpl_gtid_basic-binlog-state.jsonl"))
    state = next(o for o in tr.obs if o["kind"] == "stmt" and o.get("value") == "0-1-10,1-2-20,0-3-30")
    at = tr.obs.index(state) + 1
    sample = {"t": state["t"], "kind": "server_status", "node": "server_1", "variables": {"gtid_binlog_pos": "0-3-30,1-2-20"}}
    shown = [*tr.obs[:at], sample, *tr.obs[at:]]
    assert kit.verdict("MARIADB.GTID.BINLOG_POS", Trace(tr.header, shown)).status == PASS
    unset = [o for o in shown if o is not state]
    assert kit.verdict("MARIADB.GTID.BINLOG_POS", Trace(tr.header, unset)).status == VIOLATED


def test_gtid_binlog_state_lists_each_servers_last_gtid_per_domain(kit):
    # rpl_gtid_basic: after SET GLOBAL gtid_binlog_state = '0-1-10,1-2-20,0-3-30' and a commit in
    # domain 0 (numbered after the highest, 30) the state keeps 0-3-30 and shows 0-1-31 last in its domain
    h = kit.make_history(["M"], [], [
        {"at": 1_000_000, "op": "set_global", "node": "M", "variable": "gtid_binlog_state", "value": "0-1-10,1-2-20,0-3-30"},
        {"at": 2_000_000, "op": "trx", "node": "M"},
        {"at": 3_000_000, "op": "expect", "node": "M", "show": "variables", "fields": {"gtid_binlog_state": "x"}}], end_us=4_000_000)
    [shown] = kit.run(MARIADB, h).all("observed", node="M")
    assert shown["value"] == {"gtid_binlog_state": "0-3-30,0-1-31,1-2-20"}


def test_after_reset_slave_an_anonymous_group_coming_again_is_applied_again(kit):
    # rpl_semi_sync.result (MySQL 5.6, GTID_MODE off): after RESET MASTER the master's new binlog
    # numbers its groups from the start again, and the slave, RESET SLAVE forgetting its position
    # (anonymous groups are in no gtid_executed), applies them all
    nodes = [{"id": "M", "server_id": 1, "gtid_mode": False}, {"id": "R", "server_id": 2, "gtid_mode": False}]
    h = kit.make_history(nodes, [("M", "R", 0)], [
        {"at": 1_000_000, "op": "trx", "node": "M", "trx": "a"}, {"at": 2_000_000, "op": "stop_slave", "node": "R"},
        {"at": 2_100_000, "op": "reset_master", "node": "M"}, {"at": 2_200_000, "op": "reset_slave", "node": "R"},
        {"at": 2_300_000, "op": "start_slave", "node": "R"}, {"at": 3_000_000, "op": "trx", "node": "M", "trx": "b"}],
        end_us=5_000_000)
    assert [v["trx"] for v in kit.run("model:mysql-5.7", h).all("visible", node="R")] == ["a", "b"]


def test_an_ack_of_the_binlog_before_reset_master_acknowledges_nothing_after_it(kit):
    # MySQL 5.6 rpl_semi_sync: after RESET MASTER the new binlog's places repeat the old one's, so
    # the slave's ack of the old CREATE TABLE names the place of the new one; the semi-sync
    # properties tell the binlogs apart by the resets before each place
    from conftest import Trace
    from replcheck import io
    from replcheck.properties.core import PASS, VIOLATED
    from replcheck.spec import ROOT

    tr = kit.run("model:mysql-5.7", io.load_history(ROOT / "histories" / "suites" / "my56-rpl_semi_sync-reset-master.jsonl"))
    assert kit.verdict("WL7169.N_DISTINCT", tr).status == PASS
    without = Trace(tr.header, [o for o in tr.obs if not (o["kind"] == "stmt" and o.get("op") == "reset_master")])
    assert kit.verdict("WL7169.N_DISTINCT", without).status == VIOLATED


@pytest.mark.parametrize("by_position", [True, False])
def test_a_mariadb_slave_by_position_applies_the_gtids_a_reset_master_issues_again(kit, by_position):
    # rpl_semi_sync_after_sync_row.result (Using_Gtid=No): after RESET MASTER and RESET SLAVE the
    # master's new 0-1-1 is applied (no SQL-thread GTID check without GTID); by slave_pos the slave
    # asks for its old position instead and the reset master's binlog does not have it (1236)
    place = {"master_log_file": "bin.000001", "master_log_pos": 4} if by_position else {"master_use_gtid": "slave_pos"}
    h = kit.make_history([{"id": "M", "server_id": 1}, {"id": "R", "server_id": 2}], [("M", "R", 0)], [
        {"at": 100_000, "op": "stop_slave", "node": "R"}, {"at": 200_000, "op": "change_master", "node": "R", **place},
        {"at": 300_000, "op": "start_slave", "node": "R"},
        {"at": 1_000_000, "op": "trx", "node": "M", "trx": "a"}, {"at": 2_000_000, "op": "stop_slave", "node": "R"},
        {"at": 2_100_000, "op": "reset_master", "node": "M"}, {"at": 2_200_000, "op": "reset_slave", "node": "R"},
        {"at": 2_250_000, "op": "change_master", "node": "R", **place},  # RESET SLAVE turned Using_Gtid to Slave_Pos
        {"at": 2_300_000, "op": "start_slave", "node": "R"}, {"at": 3_000_000, "op": "trx", "node": "M", "trx": "b"}],
        end_us=5_000_000)
    tr = kit.run(MARIADB, h)
    assert [c["gtid"] for c in tr.all("commit", node="M")] == ["0-1-1", "0-1-1"]
    assert [v["trx"] for v in tr.all("visible", node="R")] == (["a", "b"] if by_position else ["a"])


def test_reset_master_shows_the_semisync_counters_at_zero_as_it_switches_on(kit):
    # semisync_master.cc after_reset_master: the state and the counters change under one lock, so
    # the status of the switch ON shows no_tx 0 (rpl_semi_sync_after_sync_row.result, after the
    # commits that timed out with no slave: RESET MASTER, then ON with no_tx 0)
    nodes = [{"id": "M", "server_id": 1, "variables": {"rpl_semi_sync_master_enabled": True,
                                                       "rpl_semi_sync_master_timeout": 1000}}, {"id": "R", "server_id": 2}]
    h = kit.make_history(nodes, [("M", "R", 0)], [
        {"at": 100_000, "op": "stop_slave", "node": "R"}, {"at": 1_000_000, "op": "trx", "node": "M", "trx": "a"},
        {"at": 3_000_000, "op": "reset_master", "node": "M"}], end_us=4_000_000)
    shown = [(o["variables"]["Rpl_semi_sync_master_no_tx"], o["variables"]["Rpl_semi_sync_master_yes_tx"])
             for o in kit.run(MARIADB, h).all("server_status", node="M", t=3_000_000)
             if o["variables"]["Rpl_semi_sync_master_status"] == "ON"]
    assert shown and set(shown) == {(0, 0)}


@pytest.mark.parametrize("system, note", [(MARIADB, True), ("model:mysql-5.7", False)])
def test_reset_slave_turns_a_mariadb_slave_by_position_back_to_slave_pos(kit, system, note):
    # MDEV-19801 (rpl_using_gtid_default.result): RESET SLAVE of a slave by position (Using_Gtid=No) of a
    # master with GTIDs notes 4190 and connects by GTID again; MySQL keeps its position-based set-up
    h = kit.make_history([{"id": "M", "server_id": 1}, {"id": "R", "server_id": 2}], [("M", "R", 0)], [
        {"at": 100_000, "op": "stop_slave", "node": "R"},
        {"at": 200_000, "op": "change_master", "node": "R", "master_log_file": "bin.000001", "master_log_pos": 4},
        {"at": 300_000, "op": "reset_slave", "node": "R"}, {"at": 400_000, "op": "start_slave", "node": "R"},
        {"at": 1_000_000, "op": "trx", "node": "M", "trx": "a"}], end_us=2_000_000)
    tr = kit.run(system, h)
    [reset] = tr.all("stmt", node="R", op="reset_slave")
    assert (reset["warning"], reset["message"]) == ((4190, "RESET SLAVE is implicitly changing the value of 'Using_Gtid' "
                                                           "from 'No' to 'Slave_Pos'") if note else (None, ""))
    connect = tr.all("connect", node="R")[-1]  # the connect after START SLAVE
    assert connect["by"] == ("gtid" if note else "position")


@pytest.mark.parametrize("system, note", [(MARIADB, True), ("model:mysql-5.7", False)])
def test_a_binlog_place_turns_a_mariadb_gtid_slave_to_position_with_a_note(kit, system, note):
    # MariaDB sql_repl.cc, change_master: MASTER_LOG_FILE/POS with MASTER_USE_GTID unchanged sets
    # Using_Gtid=No with note 4190 (10.11.19, tests/harness/test_change_master.py); MASTER_USE_GTID
    # given with the place says how it connects, and notes nothing
    h = kit.make_history([{"id": "M", "server_id": 1}, {"id": "R", "server_id": 2}], [("M", "R", 0)], [
        {"at": 100_000, "op": "stop_slave", "node": "R"},
        {"at": 200_000, "op": "change_master", "node": "R", "master_log_file": "bin.000001", "master_log_pos": 4},
        {"at": 300_000, "op": "change_master", "node": "R", "master_use_gtid": "slave_pos"}], end_us=1_000_000)
    first, second = kit.run(system, h).all("stmt", node="R", op="change_master")
    assert (first["errno"], first["warning"], first["message"]) == (
        (None, 4190, "CHANGE MASTER TO is implicitly changing the value of 'Using_Gtid' from 'Slave_Pos' to 'No'")
        if note else (None, None, ""))
    assert (second["errno"], second["warning"]) == (None, None)


def test_a_connect_by_position_loads_the_masters_gtid_position_of_that_place(kit):
    # rpl_gtid_startpos's MDEV-4483 steps on 10.11.19: 0-42-42 set, then START SLAVE by position
    # after the master's second group: gtid_slave_pos is 0-1-2 before any group arrives
    # (get_master_version_and_clock, sql/slave.cc: SELECT binlog_gtid_pos(file, pos), loaded)
    shown = {"at": 4_500_000, "op": "expect", "node": "R", "show": "variables", "fields": {"gtid_slave_pos": "0-1-2"}}
    h = kit.make_history(["M", "R"], [("M", "R", 0)], [
        {"at": 1_000_000, "op": "trx", "node": "M"}, {"at": 1_100_000, "op": "trx", "node": "M"},
        {"at": 2_000_000, "op": "stop_slave", "node": "R"},
        {"at": 2_500_000, "op": "set_global", "node": "R", "variable": "gtid_slave_pos", "value": "0-42-42"},
        {"at": 3_000_000, "op": "change_master", "node": "R", "master_use_gtid": "no"},
        {"at": 3_900_000, "op": "expect", "node": "R", "show": "variables", "fields": {"gtid_slave_pos": "0-42-42"}},
        {"at": 4_000_000, "op": "start_slave", "node": "R"}, shown], end_us=5_000_000)
    tr = kit.run(MARIADB, h)
    assert [o["value"] for o in tr.all("observed", node="R")] == [{"gtid_slave_pos": "0-42-42"}, {"gtid_slave_pos": "0-1-2"}]
