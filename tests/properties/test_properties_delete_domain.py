"""FLUSH BINARY LOGS DELETE_DOMAIN_ID as the GTID properties take it: the DBA's choice, after which
the server may issue the deleted domain's GTIDs anew (MARIADB.GTID.UNIQUE, DURABLE.GTID.NO_REUSE);
a deletion the server refused changes nothing."""
from __future__ import annotations

import pytest

from replcheck.properties.core import PASS, VIOLATED

MDB = "model:mariadb-10.11"


def _reissue(kit):
    """1-1-1, then its binlog purged and domain 1 deleted; the same session GTID 1-1-1 again."""
    return kit.make_history(["M"], [], [
        {"at": 1_000_000, "op": "trx", "node": "M", "trx": "first", "domain": 1},
        {"at": 2_000_000, "op": "flush_logs", "node": "M"},
        {"at": 3_000_000, "op": "purge_binary_logs", "node": "M", "to": "bin.000002"},
        {"at": 4_000_000, "op": "flush_logs", "node": "M", "delete_domain_id": [1]},
        {"at": 5_000_000, "op": "trx", "node": "M", "trx": "again", "domain": 1, "gtid_seq_no": 1}], end_us=6_000_000)


@pytest.mark.parametrize("requirement", ["MARIADB.GTID.UNIQUE", "DURABLE.GTID.NO_REUSE"])
def test_a_domain_deleted_may_issue_its_gtids_again_but_not_after_a_refused_deletion(kit, requirement):
    tr = kit.run(MDB, _reissue(kit))
    assert [o["gtid"] for o in tr.all("binlog", node="M") if o.get("trx") and o.get("idx", 0) == 0] == ["1-1-1", "1-1-1"]
    assert kit.verdict(requirement, tr).status == PASS
    refused = next(o for o in tr.all("stmt", node="M") if o.get("delete_domain_id"))
    refused["errno"] = 1076  # the server refused it: the first 1-1-1 still counts
    assert kit.verdict(requirement, tr).status == VIOLATED


@pytest.mark.parametrize("requirement", ["GGID.RECOVERY.EXACTLY_ONCE", "GGID.PURGE.NO_SKIP", "DOMAIN.CONNECT.REFUSED"])
def test_a_deleted_domain_is_owed_to_no_replica_and_new_to_one_asking(kit, requirement):
    """rpl_gtid_delete_domain: the slave, past the master's domain 11, connects once the master deleted it,
    and never gets the master's later 11-111-1; had the deletions been refused, that would be a loss."""
    from replcheck import io
    from replcheck.spec import ROOT
    h = io.load_history(ROOT.joinpath("histories", "suites", "mdb-rpl_gtid_delete_domain.jsonl"))
    tr = kit.run(MDB, h)
    assert kit.verdict(requirement, tr).status == PASS
    for o in tr.all("stmt", node="master"):
        if o.get("delete_domain_id"):
            o["errno"] = 1076
    assert kit.verdict(requirement, tr).status == VIOLATED


def test_gtid_binlog_pos_loses_a_deleted_domain(kit):
    """A server's gtid_binlog_pos after DELETE_DOMAIN_ID=(11) no longer names 11-111-1 (binlog state
    0-1-1, rpl_gtid_delete_domain.result): a sample showing 0-1-1 holds; had the deletion been
    refused, its binlog would still end with 11-111-1 there."""
    from replcheck import io
    from replcheck.spec import ROOT
    tr = kit.run(MDB, io.load_history(ROOT.joinpath("histories", "suites", "mdb-rpl_gtid_delete_domain.jsonl")))
    deletion = next(o for o in tr.all("stmt", node="master") if o.get("delete_domain_id"))
    sample = {"t": deletion["t"], "kind": "server_status", "node": "master", "variables": {"gtid_binlog_pos": "0-1-1"}}
    tr.obs.insert(tr.index(deletion) + 1, sample)
    assert kit.verdict("MARIADB.GTID.BINLOG_POS", tr).status == PASS
    deletion["errno"] = 1076
    assert kit.verdict("MARIADB.GTID.BINLOG_POS", tr).status == VIOLATED
