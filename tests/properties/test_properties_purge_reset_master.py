"""GGID.PURGE.NO_SKIP after RESET MASTER: the groups it deleted are owed to no one, and the binlog
names it starts again (bin.000001 ...) are not the purged ones (rpl_gtid_startpos: a purge, then
RESET MASTER, RESET SLAVE and MASTER_USE_GTID=no: a slave by position from the new first binlog)."""
from __future__ import annotations

from replcheck.properties.core import VIOLATED
from conftest import Trace

MARIADB = "model:mariadb-10.11"


def _trace(kit):
    h = kit.make_history([{"id": "M", "server_id": 1}, {"id": "R", "server_id": 2}], [("M", "R", 0)], [
        {"at": 100_000, "op": "trx", "node": "M", "trx": "a"}, {"at": 500_000, "op": "stop_slave", "node": "R"},
        {"at": 600_000, "op": "flush_logs", "node": "M"}, {"at": 700_000, "op": "trx", "node": "M", "trx": "b"},
        {"at": 800_000, "op": "flush_logs", "node": "M"},
        {"at": 900_000, "op": "purge_binary_logs", "node": "M", "to": "bin.000003"},
        {"at": 1_000_000, "op": "reset_master", "node": "M"}, {"at": 1_100_000, "op": "trx", "node": "M", "trx": "c"},
        {"at": 1_150_000, "op": "reset_slave", "node": "R"},
        {"at": 1_200_000, "op": "change_master", "node": "R", "master_use_gtid": "no"},
        {"at": 1_300_000, "op": "start_slave", "node": "R"}], end_us=3_000_000)
    return kit.run(MARIADB, h)


def test_a_group_reset_master_deleted_is_not_owed_after_a_purge(kit):
    tr = _trace(kit)
    assert "c" in [v["trx"] for v in tr.all("visible", node="R")] and "b" not in [v["trx"] for v in tr.all("visible", node="R")]
    assert kit.verdict("GGID.PURGE.NO_SKIP", tr).status != VIOLATED


def test_without_the_reset_master_the_purged_group_is_owed(kit):
    tr = _trace(kit)
    without = Trace(tr.header, [o for o in tr.obs if not (o["kind"] == "stmt" and o.get("op") == "reset_master")])
    assert kit.verdict("GGID.PURGE.NO_SKIP", without).status == VIOLATED
