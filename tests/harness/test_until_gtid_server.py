"""START SLAVE UNTIL master_gtid_pos and FLUSH BINARY LOGS DELETE_DOMAIN_ID on a real MariaDB,
as the harness builds them, against what the model answers for the same History."""
from __future__ import annotations

import pytest

from replcheck import systems
from replcheck.harness import runner as R
from test_runner import _history

US = 1_000_000


def _ops():
    """The slave stopped; the master writes 1-1-1, 2-1-1, 1-1-2; UNTIL '1-1-1' stops both threads
    after 1-1-1 (domain 2 not listed: not sent); the master's DELETE_DOMAIN_ID=(2) is refused while
    its binlog holds 2-1-1, and warns for a domain it never had."""
    return [{"at": US // 2, "op": "stop_slave", "node": "B"},
            {"at": US, "op": "trx", "node": "A", "trx": "d1a", "domain": 1},
            {"at": 2 * US, "op": "trx", "node": "A", "trx": "d2a", "domain": 2},
            {"at": 3 * US, "op": "trx", "node": "A", "trx": "d1b", "domain": 1},
            {"at": 4 * US, "op": "start_slave", "node": "B", "until": {"master_gtid_pos": "1-1-1"}},
            {"at": 6 * US, "op": "expect", "node": "B", "show": "slave_status",
             "fields": {"Slave_IO_Running": "No", "Slave_SQL_Running": "No", "Last_SQL_Errno": 0}},
            {"at": 6 * US, "op": "expect", "node": "B", "show": "rows", "rows": ["d1a"]},
            {"at": 7 * US, "op": "flush_logs", "node": "A", "delete_domain_id": [2]},
            {"at": 7 * US + 100_000, "op": "expect", "node": "A", "show": "result", "result": {"errno": 1076}},
            {"at": 8 * US, "op": "flush_logs", "node": "A", "delete_domain_id": [99]},
            {"at": 8 * US + 100_000, "op": "expect", "node": "A", "show": "result",
             "result": {"errno": None, "warning": 1076,
                        "message": "The gtid domain being deleted ('99') is not in the current binlog state"}}]


def _check(obs: list[dict]) -> None:
    observed = [o["value"] for o in obs if o["kind"] == "observed"]
    assert observed[0] == {"Slave_IO_Running": "No", "Slave_SQL_Running": "No", "Last_SQL_Errno": 0}
    assert sorted(observed[1]) == ["d1a"]
    assert observed[2]["errno"] == 1076 and observed[2]["message"].startswith(
        "Could not delete gtid domain. Reason: binlog files may contain gtids from the domain ('2') being deleted")
    assert (observed[3]["errno"], observed[3]["warning"], observed[3]["message"]) == (
        None, 1076, "The gtid domain being deleted ('99') is not in the current binlog state")


def test_the_model_answers_the_history_as_the_server_test_expects():
    h = _history(_ops(), channels=({"source": "A", "replica": "B", "latency_us": 1000},), end_us=9 * US)
    _check(systems.get("model:mariadb-10.11").run(h)[1])


@pytest.mark.server
def test_until_master_gtid_pos_and_delete_domain_id_on_mariadb(short_tmp):
    from test_harness_mariadb import require_server
    require_server()
    h = _history(_ops(), channels=({"source": "A", "replica": "B", "latency_us": 1000},), end_us=9 * US)
    _, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    starts = [o for o in obs if o["kind"] == "stmt" and o["op"] == "start_slave"]
    assert [(o["errno"], o.get("until")) for o in starts] == [(None, {"master_gtid_pos": "1-1-1"})]
    flushes = [o for o in obs if o["kind"] == "stmt" and o["op"] == "flush_logs"]
    assert [(o["errno"], o["delete_domain_id"]) for o in flushes] == [(1076, [2]), (None, [99])]
    assert flushes[0]["message"].startswith("Could not delete gtid domain. Reason: binlog files may contain gtids "
                                            "from the domain ('2') being deleted")
    _check(obs)
