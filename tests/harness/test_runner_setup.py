"""What a run sets up before the servers do anything: whether its commits name their table (a
History that filters, by its topology or by SET GLOBAL), and the servers' folder, whose absence is
the machine's failure, never the input's."""
from __future__ import annotations

import pytest

from replcheck.harness import runner as R
from replcheck.harness.errors import HarnessError
from replcheck.harness.mariadb import Cluster
from test_harness_mariadb import require_server

TOPOLOGY = {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B"}]}


def _history(ops: list[dict], variables: dict | None = None) -> dict:
    nodes = [{"id": "A"}, {"id": "B", **({"variables": variables} if variables else {})}]
    return {"header": {"schema": "replcheck.history/1", "name": "t", "topology": {**TOPOLOGY, "nodes": nodes},
                       "end_us": 1_000_000}, "ops": ops}


@pytest.mark.parametrize("ops, variables, filtering", [
    ([], None, False),
    ([], {"replicate_events_marked_for_skip": "FILTER_ON_SLAVE"}, True),
    ([{"at": 0, "op": "set_global", "node": "B", "variable": "replicate_events_marked_for_skip",
       "value": "FILTER_ON_SLAVE"}], None, True),
    ([{"at": 0, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 1}], None, False),
])
def test_commits_name_their_table_when_the_history_filters(ops, variables, filtering):
    assert R.Runner(_history(ops, variables)).filtering is filtering


def test_a_servers_folder_that_cannot_be_made_is_the_machines_failure(tmp_path):
    server = require_server()
    missing = tmp_path / "no" / "such"
    with pytest.raises(HarnessError, match=f"cannot make the servers' folder in {missing}"):
        Cluster(TOPOLOGY, server=server, tmpdir=str(missing)).start()


def test_a_semi_sync_master_s_commits_may_take_its_longest_ack_timeout():
    # mdb-rpl_semi_sync_after_sync_row: 60 s set, later 5 s; the client's usual 30 s gave its
    # piled-up commits up as lost connections though the server committed them at the timeout
    ops = [{"at": 0, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_enabled", "value": 1},
           {"at": 0, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_timeout", "value": 60000},
           {"at": 500_000, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_timeout", "value": 5000}]
    assert R.Runner(_history(ops), scale=1).ack_timeouts_s == {"A": 60.0}
    assert R.Runner(_history(ops[:1]), scale=1).ack_timeouts_s == {"A": 10.0}  # the server's default
    assert R.Runner(_history([]), scale=1).ack_timeouts_s == {}
