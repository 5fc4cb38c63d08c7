"""WL1720.COUNT.TX and MARIADB.GTID.SLAVE_POS on an intermediate semi-sync master whose SQL thread
waits for an ack after committing a replicated group (corpus/server applier-commit-waits-for-acks:
both took MariaDB's wait for a violation; the kept Trace now passes both)."""
from __future__ import annotations

from pathlib import Path

from conftest import REPO, assert_witness
from test_model_semisync_applier import MDB, MS, US, WAITING, at, counters, history

from replcheck import io
from replcheck.model.delay import STATE_IDLE
from replcheck.properties.core import PASS, TraceView
from replcheck.properties.judge import judge_trace
from replcheck.spec.contract import Trace
from replcheck.systems import flavour_of

KEPT = REPO / "corpus" / "server" / "applier-commit-waits-for-acks.trace.jsonl"


def test_the_kept_server_trace_passes_both():
    header, obs = io.load_trace(KEPT)
    j = judge_trace(Trace(header, obs), flavour_of("server:mariadb-10.11").declares, "server:mariadb-10.11",
                    ("WL1720.COUNT.TX", "MARIADB.GTID.SLAVE_POS"))
    assert not j.violated("WL1720.COUNT.TX") and not j.violated("MARIADB.GTID.SLAVE_POS")


def test_count_tx_counts_a_replicated_group_once_its_wait_ends(kit):
    tr = kit.run(MDB, history(kit))  # t1 waits out the 1 s timeout: no_tx; t2, while OFF: no_tx
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS
    # a server that counts no applier's commit (as the property took it before) is caught
    late = at(tr, "server_status", "C", 1250 * MS)
    late["variables"]["Rpl_semi_sync_master_no_tx"] = 0
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, late, "C at 1.25 s: yes_tx, no_tx = (0, 0), the trace shows (0, 2)")


def test_count_tx_counts_an_acknowledged_replicated_group_as_yes(kit):
    tr = kit.run(MDB, history(kit, replica_of_c=True))
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS
    end = at(tr, "server_status", "C", 3 * US)
    end["variables"]["Rpl_semi_sync_master_yes_tx"], end["variables"]["Rpl_semi_sync_master_no_tx"] = 0, 2
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, end, "C at 3 s: yes_tx, no_tx = (0, 2), the trace shows (2, 0)")


def test_slave_pos_may_stay_before_a_group_whose_commit_waits(kit):
    tr = kit.run(MDB, history(kit))
    assert at(tr, "server_status", "C", 750 * MS)["variables"]["gtid_slave_pos"] == ""  # t1's wait
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
    # once the timeout released it, the position before t1 is wrong
    late = at(tr, "server_status", "C", 1250 * MS)
    late["variables"]["gtid_slave_pos"] = ""
    assert_witness(kit.verdict("MARIADB.GTID.SLAVE_POS", tr), tr, late, "C: gtid_slave_pos '', it replicated up to '0-1-2'")


def test_a_stop_in_the_wait_moves_the_position_past_the_waiting_group_only(kit):
    """STOP SLAVE kills the SQL thread's wait: the commit returns and the group's position moves
    (commit_trx's thd_killed, sql/semisync_master.cc; update_pos before the kill is seen,
    sql/slave.cc). WL344.STOP.NO_EXEC took that move for the stop's own."""
    tr = kit.run(MDB, history(kit, [{"at": 750 * MS, "op": "stop_slave", "node": "C"}]))
    waiting, stopped = at(tr, "status", "C", 500 * MS), tr.first("status", node="C", Slave_SQL_Running="No")
    t1_end = tr.first("relay", node="C", trx="t1", last=True)["master_end"]
    assert waiting["Slave_SQL_Running_State"] == WAITING and stopped["Exec_Master_Log_Pos"] == t1_end
    assert kit.verdict("WL344.STOP.NO_EXEC", tr).status == PASS
    # past the waiting group: t2, relayed meanwhile, is no part of the wait
    t2 = tr.first("relay", node="C", trx="t2", last=True)
    for s in tr.all("status", node="C"):
        if s["Slave_SQL_Running"] == "No":
            s["Exec_Master_Log_Pos"], s["Relay_Log_Pos"] = t2["master_end"], 478
    assert_witness(kit.verdict("WL344.STOP.NO_EXEC", tr), tr, stopped, "the stop at 0.75 s moved C from Relay_Log_Pos 172 to 478")


def test_a_stop_moves_no_position_of_a_thread_not_shown_in_the_wait(kit):
    tr = kit.run(MDB, history(kit, [{"at": 750 * MS, "op": "stop_slave", "node": "C"}]))
    waiting = at(tr, "status", "C", 500 * MS)
    waiting["Slave_SQL_Running_State"] = waiting["processlist_state"] = STATE_IDLE
    assert_witness(kit.verdict("WL344.STOP.NO_EXEC", tr), tr, waiting, "the stop at 0.75 s moved C from Relay_Log_Pos 172 to 325")


def test_the_view_of_a_waiting_group(kit):
    from replcheck.properties.semisync_applier import applier_waits
    tr = kit.run(MDB, history(kit))
    waits = {w["gtid"]: w for w in applier_waits(TraceView(tr.header, tr.obs))}
    assert waits["0-1-1"]["on"] and (waits["0-1-1"]["yes"], waits["0-1-1"]["no"]) == (False, True)
    assert waits["0-1-1"]["late"][0] == 1050 * MS and not waits["0-1-2"]["on"]


def test_a_rejoined_primarys_own_position_is_not_the_groups_release(kit):
    """Seed 17010, History 7 of the semisync family (kept as a file): A crashes, rejoins B as a replica
    with gtid_slave_pos 0-1-2 (its own last GTID) and its semi-sync master enabled (AFTER_SYNC on
    model:wl7318); 0-2-1 from B waits out A's 2 s timeout. 0-1-2's higher sequence number says
    nothing of 0-2-1's release: the wait ends at 11.99 s, not at the first sample."""
    h = io.load_history(Path(__file__).parent / "histories" / "gen-semisync-17010-7.jsonl")
    tr = kit.run("model:wl7318", h)
    assert at(tr, "server_status", "A", 11_200_000)["variables"]["gtid_slave_pos"] == "0-1-2"
    for requirement in ("WL1720.COUNT.TX", "MARIADB.GTID.SLAVE_POS"):
        assert kit.verdict(requirement, tr).status == PASS
    late = at(tr, "server_status", "A", 12_600_000)
    late["variables"]["Rpl_semi_sync_master_no_tx"] = 3
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, late, "A at 12.6 s: yes_tx, no_tx = (0, 3), the trace shows (0, 4)")


def test_a_rejoined_primarys_own_group_applied_again_counts(kit):
    """Seed 17010, History 86: A's t4 (0-1-4), truncated by its recovery as a replica, comes back from
    C and A's SQL thread binlogs it again, waiting out A's 5 s timeout: no_tx 1 from 13.48 s. A group
    of A's own server_id is the SQL thread's at its second binlogging."""
    h = io.load_history(Path(__file__).parent / "histories" / "gen-semisync-17010-86.jsonl")
    tr = kit.run("model:wl7318", h)
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS
    late = at(tr, "server_status", "A", 14 * US)
    assert late["variables"]["Rpl_semi_sync_master_no_tx"] == 1
    late["variables"]["Rpl_semi_sync_master_no_tx"] = 0
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, late, "A at 14 s: yes_tx, no_tx = (0, 0), the trace shows (0, 1)")


def test_a_stop_before_the_start_that_binlogs_a_group_ends_no_wait_of_it(kit):
    """A STOP SLAVE and the START SLAVE that applies t2 in one instant (a failover's catch-up does
    so): t2's wait begins after the stop and runs out the 1 s timeout. The stop counted as its end
    (seed 20261130's History 269 of the semisync family, History 2278 of the domains family)."""
    ops = [{"at": 100 * MS, "op": "stop_slave", "node": "C", "thread": "sql"},
           {"at": 600 * MS, "op": "stop_slave", "node": "C", "thread": "sql"}, {"at": 600 * MS, "op": "start_slave", "node": "C", "thread": "sql"}]
    tr = kit.run(MDB, history(kit, ops))
    assert tr.first("binlog", node="C", trx="t2", last=True)["t"] == 600 * MS
    assert counters(tr, 750 * MS) == (0, 1, "0-1-1") and counters(tr, 1750 * MS) == (0, 2, "0-1-2")
    for requirement in ("WL1720.COUNT.TX", "MARIADB.GTID.SLAVE_POS"):
        assert kit.verdict(requirement, tr).status == PASS
    # t2's wait still ends at its timeout: a sample after it that does not count t2 is caught
    late = at(tr, "server_status", "C", 1750 * MS)
    late["variables"]["Rpl_semi_sync_master_no_tx"] = 1
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, late, "C at 1.75 s: yes_tx, no_tx = (0, 1), the trace shows (0, 2)")


def test_an_appliers_timeout_ends_a_clients_wait_with_no_slave(kit):
    """C has no semi-sync replica: t1's SQL thread waits from 50 ms, a client's c1 from 300 ms; t1's
    timeout at 1.05 s switches OFF and releases c1 after 0.75 s (switch_off signals every waiting
    session). WL1720.WAIT_NO_SLAVE demanded that c1 wait out its own timeout (seed 77's History 688
    of the domains family). Switched ON again, c2 waits out its own."""
    enable = {"op": "set_global", "node": "C", "variable": "rpl_semi_sync_master_enabled"}
    tr = kit.run(MDB, history(kit, [{"at": 300 * MS, "op": "trx", "node": "C", "trx": "c1"}, {"at": 1200 * MS, **enable, "value": False},
                                    {"at": 1300 * MS, **enable, "value": True}, {"at": 1500 * MS, "op": "trx", "node": "C", "trx": "c2"}]))
    c1 = tr.first("commit", node="C", trx="c1")
    assert c1["t"] == 1050 * MS and c1["semisync"] == "no" and tr.first("commit", node="C", trx="c2")["t"] == 2500 * MS
    assert kit.verdict("WL1720.WAIT_NO_SLAVE", tr).status == PASS
    # c1 returning at 0.8 s, before any timeout fell, is still caught
    early = tr.retime(c1, 800 * MS)
    assert_witness(kit.verdict("WL1720.WAIT_NO_SLAVE", tr), tr, early, "c1 returned after 0.5 s with no semi-sync replica, timeout 1 s")
