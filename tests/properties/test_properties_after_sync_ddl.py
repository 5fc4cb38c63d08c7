"""WL6355.AFTER_SYNC.INVISIBLE judges a transaction's engine commit, not a DDL's change: a DDL makes
its table before its binlog write, so no wait point hides it (the suites' rpl_semi_sync_after_sync
run on MariaDB: bug45672_create_t1 listed while its commit waited out the timeout)."""
from __future__ import annotations

from conftest import assert_witness
from test_model_semisync import master, semisync_replica
from test_properties_semisync import AS, MS, US

from replcheck.properties.core import PASS, VIOLATED

INVISIBLE = "WL6355.AFTER_SYNC.INVISIBLE"


def run(kit):
    # B's ack needs 0.8 s: both commits wait while ON, the model holding each until the ack.
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "create_t1", "ddl": True},
           {"at": 100 * MS, "op": "trx", "node": "A", "trx": "t2"}]
    h = kit.make_history([master(rpl_semi_sync_master_timeout=5000), semisync_replica("B")],
                         [{"source": "A", "replica": "B", "latency_us": 400 * MS}], ops, sample_every_us=US, end_us=3 * US)
    tr = kit.run(AS, h)
    assert [tr.first("commit", node="A", trx=t)["semisync"] for t in ("create_t1", "t2")] == ["yes", "yes"]
    assert kit.verdict(INVISIBLE, tr).status == PASS
    return tr


def test_a_ddl_seen_while_its_commit_waits_is_not_judged(kit):
    tr = run(kit)
    # as MariaDB does: the table is listed as soon as the statement made it, during the wait
    tr.retime(tr.first("visible", node="A", trx="create_t1"), 2 * MS)
    assert kit.verdict(INVISIBLE, tr).status != VIOLATED


def test_a_transaction_seen_while_its_commit_waits_is_still_caught(kit):
    tr = run(kit)
    seen = tr.retime(tr.first("visible", node="A", trx="t2"), 102 * MS)
    assert_witness(kit.verdict(INVISIBLE, tr), tr, seen, "t2 became visible on A at 0.102 s while ON")
