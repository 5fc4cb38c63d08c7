"""The samples go on while a statement runs long, without a server: the poller does not wait behind
one node's statement to sample the others, and a STOP SLAVE of an SQL thread, which may wait up to
60 s for a group's end, leaves its own node sampled meanwhile (seed 8's History 95: C's STOP SLAVE
SQL_THREAD took 62 s, no node was sampled meanwhile, and B's relay was seen 62 s late)."""
from __future__ import annotations

import threading

from replcheck.harness import runner as R
from conftest import HANG_GUARD_S
from test_runner import B, _history

STOPPED = {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "No"}


class _Cluster:
    """Answers every poll with nothing to see and records which node it was; `on_stop` runs while a
    STOP SLAVE statement is in the server's hands."""

    def __init__(self, on_stop=lambda: None):
        self.polled: list[str] = []
        self.on_stop = on_stop
        self.sql_timeout = 30
        self.second_c = threading.Event()

    def is_running(self, node: str) -> bool:
        return True

    def results(self, node: str, statement: str, timeout=None) -> list:
        if "STOP SLAVE" in statement:
            self.on_stop()
            return [(["t"], [["1.0"]]), ([], []), ([], []), (["t"], [["2.0"]])]
        self.polled.append(node)
        if self.polled.count("C") == 2:
            self.second_c.set()
        return []  # no sample to read


def _runner(cluster: _Cluster) -> R.Runner:
    r = R.Runner(_history([], nodes=({"id": "A"}, {"id": "B"}, {"id": "C"})))
    r.cluster = cluster
    r.observer.read_link = lambda *a, **k: None  # no relay logs to read
    return r


def test_the_poller_samples_the_other_nodes_while_a_statement_holds_one():
    cluster = _Cluster()
    r = _runner(cluster)
    poller = threading.Thread(target=r.observer.poll_loop, daemon=True)
    with r.node_locks["B"]:  # a statement on B, as long as the poller takes to sample C twice
        poller.start()
        # a bound against a poller stuck behind B's lock, never reached otherwise
        sampled = cluster.second_c.wait(timeout=HANG_GUARD_S)
    r.stop.set()
    poller.join()
    assert sampled and cluster.polled[:4] == ["A", "C", "A", "C"]


def test_a_stop_of_the_sql_thread_leaves_its_node_sampled_meanwhile():
    seen = []
    cluster = _Cluster(on_stop=lambda: seen.append((r.node_locks["B"].locked(), dict(r.stopping))))
    r = _runner(cluster)
    r.ops.statement({"at": 0, "op": "stop_slave", "node": "B", "thread": "sql"})
    assert seen == [(False, {B: ("Slave_SQL_Running",)})]
    assert r.stopping == {} and not r.node_locks["B"].locked()
    assert [o["op"] for _, _, o in r.obs if o["kind"] == "stmt"] == ["stop_slave"]
    seen.clear()
    r.ops.statement({"at": 0, "op": "stop_slave", "node": "B", "thread": "io"})  # returns at once: no sample meanwhile
    assert seen == [(True, {})]


def test_a_sample_that_finds_the_thread_stopped_before_its_stop_returned_is_not_the_status():
    r = _runner(_Cluster())
    status = lambda: [o["Slave_SQL_Running"] for _, _, o in r.obs if o["kind"] == "status"]  # noqa: E731
    r.observer._status(B, 10, {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes"}, None, False)
    r.stopping[B] = ("Slave_SQL_Running",)
    r.observer._status(B, 20, {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes"}, None, True)  # still running: sampled
    r.observer._status(B, 30, STOPPED, None, False)
    assert status() == ["Yes", "Yes"]
    del r.stopping[B]  # the statement returned: its stop observed, then the sample after it
    r.observer._status(B, 40, STOPPED, None, True)
    assert status() == ["Yes", "Yes", "No"]
