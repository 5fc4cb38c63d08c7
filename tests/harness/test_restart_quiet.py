"""A restart that starts no slave thread (`start_slave: false`) on a real MariaDB: the server is
started with --skip-slave-start, so neither thread runs until the History starts them. A STOP SLAVE
after the start came too late: the threads had run, the SQL thread could stop at an incident and the
IO thread connect, all given to no start in the Trace (seed 2's History 123)."""
from __future__ import annotations

import pytest

from replcheck.harness import runner as R
from test_harness_mariadb import require_server

HISTORY = {
    "header": {"schema": "replcheck.history/1", "name": "restart-quiet", "sample_every_us": 250000, "end_us": 3500000,
               "topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B"}]}},
    # the incident waits in B's relay log, its SQL thread stopped, when B crashes
    "ops": [{"at": 0, "op": "trx", "node": "A", "trx": "t1"},
            {"at": 300000, "op": "stop_slave", "node": "B", "thread": "sql"},
            {"at": 500000, "op": "record_incident", "node": "A", "code": 1, "message": "lost", "via": "binlog"},
            {"at": 1000000, "op": "crash", "node": "B"},
            {"at": 1500000, "op": "restart", "node": "B", "start_slave": False}],
}


@pytest.fixture(scope="module")
def server():
    return require_server()


def test_a_restart_that_starts_no_slave_thread_runs_neither(server, short_tmp):
    _, obs = R.Runner(HISTORY, scale=1.0, tmpdir=short_tmp).run()
    crash = next(o["t"] for o in obs if o["kind"] == "crash" and o["node"] == "B")
    after = [o for o in obs if o["node"] == "B" and o["t"] > crash]
    # the incident stays unread by the SQL thread, and the IO thread never connects again (on the old
    # code it connected before the restart's STOP SLAVE, the restart stamped after both)
    assert not [o for o in after if o["kind"] == "sql_stop" and o.get("reason") == "error"]
    assert not [o for o in after if o["kind"] == "clock_query"]
    samples = [o for o in after if o["kind"] == "status"]
    assert samples and all(s["Slave_IO_Running"] == "No" and s["Slave_SQL_Running"] == "No" for s in samples)
