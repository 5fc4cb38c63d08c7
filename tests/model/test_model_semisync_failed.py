"""A statement that failed after its change was binlogged (a MyISAM INSERT cut by a duplicate key):
MariaDB answers its error at once and waits for its ack when the session ends the transaction,
unseen by the client, counted, timed out and released as any wait (conformance ss-failed-statement,
measured on 10.11.19); the seed models wait before they answer, as at any transaction's end."""
from __future__ import annotations

import pytest

from replcheck.properties.core import PASS, VIOLATED

US, MS = 1_000_000, 1_000
MDB = "model:mariadb-10.11"
FAILED = {"engine": "myisam", "error": {"errno": 1062, "after_changes": True}}


def variables(tr, t: int) -> dict:
    return tr.all("server_status", node="A", t=t)[-1]["variables"]


def counted(tr, t: int) -> tuple[int, int]:
    v = variables(tr, t)
    return v["Rpl_semi_sync_master_yes_tx"], v["Rpl_semi_sync_master_no_tx"]


def timeouts(tr) -> list[dict]:
    return [o for o in tr.all("log", node="A", level="Warning") if o["message"].startswith("Timeout waiting")]


def small(kit, ops, replica=None, end_s: int = 6, **a_variables) -> dict:
    """A (semi-sync master, 3 s timeout) and B, a semi-sync replica if `replica` is its latency."""
    a = {"id": "A", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 3000, **a_variables}}
    b = {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}} if replica else {"id": "B"}
    return kit.make_history([a, b], [{"source": "A", "replica": "B", "latency_us": replica or MS}], ops,
                            sample_every_us=500 * MS, end_us=end_s * US)


def test_mariadb_answers_at_once_and_its_session_waits_out_the_timeout(kit):
    tr = kit.run(MDB, "ss-failed-statement")
    t1 = tr.first("commit", node="A", trx="t1")
    assert (t1["t"], t1["errno"], t1["semisync"]) == (1 * US, 1062, "later")
    assert variables(tr, 1500 * MS)["Rpl_semi_sync_master_wait_sessions"] == 1 and counted(tr, 1500 * MS) == (0, 0)
    end = tr.first("binlog", node="A", trx="t1", last=True)["end"]
    first, second = timeouts(tr)  # each a full timeout after its statement's answer, naming its end
    assert first["t"] == 4 * US and f"pos: {end})" in first["message"] and second["t"] == 10 * US
    t2 = tr.first("commit", node="A", trx="t2")  # a commit waiting meanwhile is released with it
    assert (t2["t"], t2["semisync"]) == (4 * US, "no") and counted(tr, 4500 * MS) == (0, 2)
    assert tr.first("commit", node="A", trx="t4")["t"] == 7 * US
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS
    for requirement in ("WL1720.TIMEOUT.LOG", "WL1720.TIMEOUT.ASYNC", "WL1720.OFF.NO_WAIT", "WL1720.ACK.WAIT"):
        assert kit.verdict(requirement, tr).status != VIOLATED, requirement


@pytest.mark.parametrize("system", ["model:wl344", "model:wl7318", "model:groupid"])
def test_the_seeds_answer_once_the_wait_ends(kit, system):
    t1 = kit.run(system, "ss-failed-statement").first("commit", node="A", trx="t1")
    assert (t1["t"], t1["semisync"]) == (4 * US, "no")


def test_mariadb_after_sync_waits_before_the_answer(kit):
    # wait_after_sync (sql/semisync_master.cc) waits at the group's binlog sync, whatever ends it
    tr = kit.run(MDB, small(kit, [{"at": 1 * US, "op": "trx", "node": "A", "trx": "t1", **FAILED}],
                            rpl_semi_sync_master_wait_point="AFTER_SYNC"))
    t1 = tr.first("commit", node="A", trx="t1")
    assert (t1["t"], t1["semisync"]) == (4 * US, "no")


def test_an_ack_releases_the_session_counted_yes(kit):
    tr = kit.run(MDB, small(kit, [{"at": 1 * US, "op": "trx", "node": "A", "trx": "t1", **FAILED}], replica=100 * MS))
    assert tr.first("commit", node="A", trx="t1")["semisync"] == "later"
    assert counted(tr, 1 * US) == (0, 0) and counted(tr, 1500 * MS) == (1, 0) and not timeouts(tr)
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS


@pytest.mark.parametrize("down", ["crash", "shutdown"])
def test_the_servers_end_ends_the_wait_with_no_answer(kit, down):
    ops = [{"at": 1 * US, "op": "trx", "node": "A", "trx": "t1", **FAILED},
           {"at": 2 * US, "op": down, "node": "A"}, {"at": 2500 * MS, "op": "restart", "node": "A"}]
    tr = kit.run(MDB, small(kit, ops))
    assert [c["t"] for c in tr.all("commit", node="A", trx="t1")] == [1 * US]  # answered once, at once
    assert not timeouts(tr) and variables(tr, 3 * US)["Rpl_semi_sync_master_wait_sessions"] == 0
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS
