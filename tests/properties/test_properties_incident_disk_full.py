"""WL3464.DISK_FULL: a full disk under the binlog leaves no gap. The model's inc-disk-full scenario
passes; a trace edited to write an incident while the disk is full, or to return OK for a commit
whose group is missing from the binlog, violates with a witness naming that observation."""
from __future__ import annotations

from conftest import assert_witness


def test_an_incident_written_while_the_disk_is_full_is_caught(kit):
    tr = kit.run("model:mariadb-10.11", "inc-disk-full")
    t2 = tr.first("binlog", node="A", trx="t2", idx=0)
    incident = tr.insert_before(t2, dict(t2, type="INCIDENT_EVENT", trx=None, gtid=None, incident=1, message=""))
    assert_witness(kit.verdict("WL3464.DISK_FULL", tr), tr, incident,
                   "A wrote an incident at 62.5 s while its binlog disk was full (from 2 s)")


def test_a_commit_that_returned_ok_without_its_group_is_caught(kit):
    tr = kit.run("model:mariadb-10.11", "inc-disk-full")
    for o in tr.all("binlog", node="A", trx="t3"):
        tr.drop(o)
    assert_witness(kit.verdict("WL3464.DISK_FULL", tr), tr, tr.first("commit", node="A", trx="t3"),
                   "t3 returned OK at 62.5 s on A (its binlog disk full from 2 s) but its group is not in the binlog")
