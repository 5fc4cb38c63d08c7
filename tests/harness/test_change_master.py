"""CHANGE MASTER TO on a real server: a new source (through the channel's relay), a GTID mode, a
binlog place, a user; what the harness still refuses, and why."""
from __future__ import annotations

import pytest

from replcheck.harness import runner as R
from replcheck.harness.statements import change_master_statement
from test_runner import _history

THREE = ({"id": "A"}, {"id": "B"}, {"id": "C"})
FROM_A = ({"source": "A", "replica": "B"}, {"source": "A", "replica": "C"})


def test_the_statement_carries_every_clause_the_op_gives():
    assert R.admin_statement({"op": "change_master", "master_use_gtid": "current_pos", "delay": 10}) == \
        "CHANGE MASTER TO MASTER_DELAY = 10, MASTER_USE_GTID = current_pos"
    # a binlog named as the test names it: the server's of that number
    assert R.admin_statement({"op": "change_master", "master_log_file": "master-bin.000003", "master_log_pos": 4}) == \
        "CHANGE MASTER TO MASTER_LOG_FILE = 'bin.000003', MASTER_LOG_POS = 4"
    connect = ("MASTER_HOST='127.0.0.1', MASTER_PORT=4000", "MASTER_USER='rpl', MASTER_PASSWORD='x'")
    assert change_master_statement({"op": "change_master", "connection": "a", "master_host": "C", "master_user": "rpl",
                                    "master_use_gtid": "slave_pos"}, None, connect) == \
        "CHANGE MASTER 'a' TO " + ", ".join(connect) + ", MASTER_USE_GTID = slave_pos"
    for bad in ({"op": "change_master", "master_use_gtid": "slave_pos; DROP"},
                {"op": "change_master", "master_user": "x'; DROP"},
                {"op": "change_master", "master_log_file": "b'; --", "master_log_pos": 4},
                {"op": "change_master", "master_log_file": "bin.000001", "master_log_pos": "4"}):
        with pytest.raises(R.RunnerError):
            R.admin_statement(bad)


def test_what_change_master_cannot_do_on_a_real_server_is_refused():
    R.check_supported(_history([{"at": 1, "op": "change_master", "node": "B", "master_host": "C",
                                 "master_use_gtid": "current_pos", "master_user": "rpl2"}], channels=FROM_A, nodes=THREE))
    with pytest.raises(R.RunnerError, match=r"ops\[0\].*connect_using_group_id.*--rpl-hierarchical"):
        R.check_supported(_history([{"at": 1, "op": "change_master", "node": "B", "connect_using_group_id": True}]))
    # C replicates from no one: the harness has no relay for it
    with pytest.raises(R.RunnerError, match=r"ops\[0\].*master_host on a connection the topology does not give node C"):
        R.check_supported(_history([{"at": 1, "op": "change_master", "node": "C", "master_host": "A",
                                     "master_use_gtid": "slave_pos"}], nodes=THREE))


@pytest.mark.server
def test_a_replica_repointed_to_another_source_as_another_user(short_tmp):
    """B leaves A for C (MASTER_HOST, MASTER_USE_GTID=current_pos, MASTER_USER of a user of its
    own): C's own transaction reaches B, which it could only from C; then B goes back to A by a
    binlog place (A's next binlog, from its start: Using_Gtid No) and as root, and A's next row arrives."""
    from test_harness_mariadb import require_server
    require_server()
    us = 1_000_000
    h = _history([{"at": us, "op": "trx", "node": "A", "trx": "a1"},
                  {"at": 2 * us, "op": "stop_slave", "node": "B"},
                  {"at": 2 * us + 100_000, "op": "change_master", "node": "B", "master_host": "C",
                   "master_use_gtid": "current_pos", "master_user": "rpl2"},
                  {"at": 2 * us + 200_000, "op": "start_slave", "node": "B"},
                  {"at": 3 * us, "op": "trx", "node": "C", "trx": "c1"},
                  {"at": 4 * us, "op": "expect", "node": "B", "show": "slave_status",
                   "fields": {"Using_Gtid": "Current_Pos", "Slave_IO_Running": "Yes", "Master_User": "rpl2"}},
                  {"at": 4 * us + 100_000, "op": "stop_slave", "node": "B"},
                  {"at": 4 * us + 100_000, "op": "flush_logs", "node": "A"},
                  {"at": 4 * us + 200_000, "op": "change_master", "node": "B", "master_host": "A",
                   "master_log_file": "bin.000002", "master_log_pos": 4, "master_user": "root"},
                  {"at": 4 * us + 300_000, "op": "expect", "node": "B", "show": "result", "result": {"errno": None}},
                  {"at": 4 * us + 400_000, "op": "start_slave", "node": "B"},
                  {"at": 5 * us, "op": "trx", "node": "A", "trx": "a2"},
                  {"at": 6 * us, "op": "expect", "node": "B", "show": "slave_status",
                   "fields": {"Using_Gtid": "No", "Slave_IO_Running": "Yes", "Master_User": "root"}}],
                 channels=FROM_A, nodes=THREE, end_us=7 * us)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    stmts = [o for o in obs if o["kind"] == "stmt" and o["op"] == "change_master"]
    assert [(o["master_host"], o["errno"]) for o in stmts] == [("C", None), ("A", None)]
    assert not any("PASSWORD" in str(o) for o in obs)  # the clause with the password is the harness's, never traced
    counts = {o["node"]: o["counts"] for o in obs if o["kind"] == "data"}
    assert counts["B"].get("c1") == 1 and counts["B"].get("a2") == 1 and not counts["A"].get("c1")
    assert [o["value"] for o in obs if o["kind"] == "observed"] == [
        {"Using_Gtid": "Current_Pos", "Slave_IO_Running": "Yes", "Master_User": "rpl2"},
        {"errno": None, "warning": 4190,  # the binlog place turned GTID off (sql_repl.cc, change_master)
         "message": "CHANGE MASTER TO is implicitly changing the value of 'Using_Gtid' from 'Current_Pos' to 'No'"},
        {"Using_Gtid": "No", "Slave_IO_Running": "Yes", "Master_User": "root"}]
