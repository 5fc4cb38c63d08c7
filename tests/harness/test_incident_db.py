"""A recorded incident on a node whose binlog filters keep rc out (its statement runs on a table
of a database they let through), and a replica's own client commit, which its SQL thread never
applied."""
from __future__ import annotations

import pytest

from replcheck.features import load_features
from replcheck.harness import runner as R
from replcheck.harness.statements import INCIDENT_DB, incident_db, incident_statement
from test_harness_mariadb import require_server
from test_runner import _history


@pytest.mark.parametrize("variables, db", [
    ({}, "rc"), ({"binlog_do_db": "other"}, "other"), ({"binlog_do_db": "rc, other"}, "rc"),
    ({"binlog_ignore_db": "rc"}, INCIDENT_DB), ({"binlog_ignore_db": "other"}, "rc"),
])
def test_the_incident_table_is_in_a_database_the_binlog_filters_let_through(variables, db):
    assert incident_db(variables) == db
    assert incident_statement(3, db).startswith(f"USE `{db}`; INSERT INTO `{db}`.x (k, pad) VALUES (3, ")


@pytest.fixture(scope="module")
def server():
    return require_server()


def test_an_incident_under_binlog_do_db_and_a_replica_s_own_commit(server, short_tmp):
    # seed 11's Histories 6 (A: binlog_do_db = other, its incident never written) and 3 (B's own t1,
    # reported as applied by B's delayed SQL thread)
    load_features()
    h = _history([{"at": 0, "op": "record_incident", "node": "A", "code": 1, "message": "m"},
                  {"at": 300_000, "op": "trx", "node": "B", "trx": "t1"}],
                 nodes=({"id": "A", "variables": {"binlog_do_db": "other"}}, {"id": "B"}),
                 channels=({"source": "A", "replica": "B", "delay": 2},), end_us=1_500_000, sample_every_us=300_000)
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    stmt = next(o for o in obs if o["kind"] == "stmt" and o["op"] == "record_incident")
    assert stmt["errno"] == 1705  # ER_STMT_CACHE_FULL: the rows reached the statement cache and overflowed it
    assert [o["incident"] for o in obs if o["kind"] == "binlog" and o["node"] == "A" and o["type"] == "INCIDENT_EVENT"] == [1]
    assert any(o["kind"] == "commit" and o["node"] == "B" and o["trx"] == "t1" for o in obs)
    assert not [o for o in obs if o["kind"] == "apply" and o["trx"] == "t1"]
    assert any(o["kind"] == "visible" and o["node"] == "B" and o["trx"] == "t1" for o in obs)
