"""A non-transactional (MyISAM) multi-statement transaction: each statement is binlogged at its end
as a GTID group of its own (the statement cache, binlog_commit_flush_stmt_cache in MariaDB's
sql/log.cc; MySQL's sql/binlog.cc alike), in every flavour. A campaign's server showed three groups
where the model wrote one (corpus/server/myisam-statements-are-groups-of-their-own)."""
from __future__ import annotations

import pytest

from replcheck.systems import systems

US = 1_000_000
MODELS = [s.name for s in systems().values() if s.kind == "model"]


def history(kit, engine: str) -> dict:
    """A -> B; t2 writes three rows, one a statement, 0.2 s apart."""
    stmts = [{"duration_us": 200_000}, {"duration_us": 200_000}, {}]
    ops = [{"at": 1 * US, "op": "trx", "node": "A", "trx": "t2", "engine": engine, "statements": stmts},
           {"at": 2 * US, "op": "read", "node": "B"}]
    return kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "latency_us": 1000, "delay": 0}],
                            ops, sample_every_us=US, end_us=3 * US)


def groups(tr, node: str) -> list[tuple[str, list[str]]]:
    """The node's binlog groups of its own commits: GTID, and the types of its events."""
    out: dict[str, list[str]] = {}
    for b in tr.all("binlog", node=node):
        if b.get("trx") == "t2":
            out.setdefault(b["gtid"], []).append(b["type"])
    return list(out.items())


@pytest.mark.parametrize("system", MODELS)
def test_each_myisam_statement_is_a_group_written_at_its_end(kit, system):
    tr = kit.run(system, history(kit, "myisam"))
    got = groups(tr, "A")
    assert len(got) == 3 and all(types[-1] == "QUERY_EVENT" and "XID_EVENT" not in types for _, types in got)
    commits = tr.all("commit", node="A", trx="t2")
    # each group's commit names its own GTID, at its statement's end: the client never waits for the last
    assert [c["gtid"] for c in commits] == [g for g, _ in got]
    assert [c["t"] for c in commits] == [1 * US, 1 * US + 200_000, 1 * US + 400_000]
    # each group's row becomes visible; a client counts one copy of the transaction (its first row)
    for node in ("A", "B"):
        assert [v["gtid"] for v in tr.all("visible", node=node, trx="t2")] == [g for g, _ in got]
        assert tr.all("data", node=node)[-1]["counts"]["t2"] == 1
    assert tr.first("read", node="B")["seen"] == ["t2"]


def test_an_innodb_transaction_stays_one_group(kit):
    tr = kit.run("model:mariadb-10.11", history(kit, "innodb"))
    (gtid, types), = groups(tr, "A")
    assert types[-1] == "XID_EVENT" and [c["gtid"] for c in tr.all("commit", node="A", trx="t2")] == [gtid]
