"""A statement a server does not answer within the harness's bound, without a server: the client
raises NoAnswer, and the runner records the statement as not returned, the node's threads, and ends
its ops there (header cut_short) instead of failing. Its real case is corpus/server's entry of seed
11's History 52, stop-all-hung-on-another-connections-delay."""
from __future__ import annotations

import os
import stat

import pytest

from replcheck.harness import runner as R
from replcheck.harness import sqlclient, stuck
from replcheck.harness.errors import HarnessError, NoAnswer
from test_runner import _history

NAMED = ({"source": "B", "replica": "D", "connection": "b", "delay": 2},
         {"source": "C", "replica": "D", "connection": "c"})
NODES = ({"id": "B"}, {"id": "C"}, {"id": "D"})
WAITS_FOR_GTID = "Waiting for other master connection to process the same GTID"
PROCESSLIST = (["Id", "User", "Host", "db", "Command", "Time", "State", "Info", "Progress"],
               [["5", "system user", "", None, "Slave_SQL", "40", WAITS_FOR_GTID, None, "0.000"],
                ["6", "system user", "", None, "Slave_SQL", "41", "Waiting until MASTER_DELAY seconds after master executed "
                 "event", None, "0.000"],
                ["9", "root", "localhost:4711", None, "Query", "90", "Killing slave", "STOP SLAVE 'c'", "0.000"],
                ["12", "root", "localhost:4712", None, "Query", "0", "starting",
                 "CHANGE MASTER 'b' TO MASTER_PASSWORD='secret'", "0.000"]])


def test_the_client_answers_a_statement_past_its_bound_with_no_answer(tmp_path):
    """Not a HarnessError of its own: the runner tells it from the harness's failures."""
    client = tmp_path / "mariadb"
    client.write_text("#!/bin/sh\nexec sleep 30\n")
    client.chmod(client.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(NoAnswer) as e:
        sqlclient.run(str(client), os.devnull, 1, "STOP SLAVE 'c' password", node="D", timeout=0.2, env=os.environ,
                      redact=lambda s: s.replace("password", "***"))
    assert (e.value.node, e.value.timeout_s, e.value.statement) == ("D", 0.2, "STOP SLAVE 'c' ***")
    assert isinstance(e.value, HarnessError)


class _Stuck:
    """A server whose every statement of a STOP SLAVE hangs; SHOW FULL PROCESSLIST answers (or not)."""

    def __init__(self, shows: bool = True):
        self.shows, self.sql_timeout, self.asked = shows, 30.0, []

    def results(self, node, statement, timeout=None):
        self.asked.append(statement)
        if "STOP SLAVE" in statement:
            raise NoAnswer(node, timeout, statement)
        return [(["t"], [["1700000000.5"]])] * 4 + [([], [])]

    def query(self, node, statement, timeout=None):
        self.asked.append(statement)
        assert timeout == stuck.EVIDENCE_S
        if not self.shows:
            raise NoAnswer(node, timeout, statement)
        return PROCESSLIST

    def redact(self, text):
        return text.replace("secret", "***")

    def is_running(self, node):
        return True


def _run(cluster, first=None):
    ops = [first or {"at": 1_000_000, "op": "stop_slave", "node": "D", "connection": "c"},
           {"at": 2_000_000, "op": "start_slave", "node": "D", "connection": "c"}]
    r = R.Runner(_history(ops, channels=NAMED, nodes=NODES))
    r.cluster = cluster
    r.observer.relay_links = lambda node: []
    r.observer.poll = lambda node, force=False, wait=True: None
    r.t0 = r.wall_t0 = 1700000000.0
    r._sleep_until = lambda at: False
    r._run_ops()
    return r, [o for _, _, o in sorted(r.obs, key=lambda x: x[1])]


def test_a_statement_not_answered_is_observed_with_the_nodes_threads_and_ends_the_run():
    r, obs = _run(_Stuck())
    stmt, shown = obs
    assert {k: stmt[k] for k in ("kind", "node", "op", "connection", "errno", "returned", "duration_us")} == {
        "kind": "stmt", "node": "D", "op": "stop_slave", "connection": "c", "errno": None, "returned": False,
        "duration_us": 90_000_000}  # the bound of a STOP SLAVE of an SQL thread: 30 s and 60 s for a group's end
    assert shown["kind"] == "processlist" and shown["node"] == "D" and shown["t"] >= stmt["t"]
    assert [(p["id"], p["command"], p["state"]) for p in shown["rows"][:3]] == [
        (5, "Slave_SQL", WAITS_FOR_GTID), (6, "Slave_SQL", "Waiting until MASTER_DELAY seconds after master executed event"),
        (9, "Query", "Killing slave")]
    assert shown["rows"][3]["info"] == "CHANGE MASTER 'b' TO MASTER_PASSWORD='***'"  # passwords hidden
    assert r.cut_short == {"t": r.cut_short["t"], "node": "D", "op": "stop_slave", "op_index": 0,
                           "reason": "stop_slave on D did not return within 90 s"}
    assert not any("START SLAVE" in s for s in r.cluster.asked)  # no later op ran
    header = r._header("10.11.6-MariaDB")
    assert header["cut_short"] == r.cut_short and any("ended at op 0" in n for n in header["notes"])


def test_a_node_that_shows_nothing_either_still_ends_the_run_saying_so():
    r, obs = _run(_Stuck(shows=False))
    assert [o["kind"] for o in obs] == ["stmt"]
    assert r.cut_short["reason"].endswith("its SHOW PROCESSLIST did not answer either")


def test_a_statement_of_the_harness_s_own_for_an_op_not_answered_ends_the_run_too():
    """A read's SELECT of the rows (or a restart's SHOW SLAVE STATUS): the op's observation is the
    statement the harness sent."""
    class RowsStuck(_Stuck):
        def results(self, node, statement, timeout=None):
            raise NoAnswer(node, 30.0, statement)
    r, obs = _run(RowsStuck(), {"at": 1_000_000, "op": "read", "node": "D"})
    stmt, shown = obs
    assert (stmt["op"], stmt["returned"], stmt["duration_us"], shown["kind"]) == ("read", False, 30_000_000, "processlist")
    assert stmt["statement"].startswith("SELECT UNIX_TIMESTAMP(SYSDATE(6)); SELECT k, COUNT(*) FROM rc.r")
    assert r.cut_short["reason"].startswith("read on D did not return within 30 s (SELECT UNIX_TIMESTAMP")


def test_any_other_failure_of_the_harness_stays_an_internal_error():
    class Broken(_Stuck):
        def results(self, node, statement, timeout=None):
            raise HarnessError("node D: mariadb client exited 1: out of memory")
    with pytest.raises(HarnessError, match="out of memory"):
        _run(Broken())
