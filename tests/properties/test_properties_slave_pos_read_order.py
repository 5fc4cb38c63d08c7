"""MARIADB.GTID.SLAVE_POS where the GTID recorded last is not the highest: gtid_slave_pos shows,
per domain, the one recorded with the highest sub_id (rpl_slave_state::iterate, sql/rpl_gtid.cc).
On a replica that applies one domain through several connections (corpus/server/multi-source-
position-of-the-last-read, mdev-9544 on 10.11.19) that is the committed group read last, which a
poll cannot order across connections; it may be any connection's last group, but not one another
connection's group was surely read after. A connect's load and a skip take theirs too."""
from __future__ import annotations

from replcheck import io
from replcheck.properties.core import PASS, VIOLATED
from conftest import REPO, Trace

KEPT = "multi-source-position-of-the-last-read"
SHOWN = 19562450  # a sample of server_4 long after every group committed, showing 0-2-5


def _trace(**header) -> Trace:
    head, obs = io.load_trace(REPO / "corpus" / "server" / f"{KEPT}.trace.jsonl")
    return Trace({**head, **header}, [{k: x for k, x in o.items() if k != "_line"} for o in obs])


def _flagged(kit, tr: Trace) -> bool:
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", tr)
    sample = tr.first("server_status", node="server_4", t=SHOWN)
    return v.status == VIOLATED and any(tr.line(sample) in w.lines for w in v.witnesses)


def test_another_connection_s_last_group_may_be_the_one_shown(kit):
    tr = _trace()
    assert "0-3-5" in {o["gtid"] for o in tr.all("visible", node="server_4")}  # seen committing with 0-2-5
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS


def test_a_group_its_connection_read_past_is_not(kit):
    tr = _trace()
    for o in tr.all("server_status", node="server_4"):
        if o["variables"].get("gtid_slave_pos") == "0-2-5":
            o["variables"]["gtid_slave_pos"] = "0-2-4"
    assert _flagged(kit, tr)


def test_a_replica_with_one_connection_in_the_domain_shows_its_last_commit(kit):
    tr = _trace()
    for o in tr.obs:
        if o["node"] == "server_4" and "connection" in o:
            o["connection"] = ""
    assert _flagged(kit, tr)


def test_nor_a_group_committed_before_another_connection_relayed_its_own(kit):
    # at a finer resolution: m1 relayed 0-1-5 and applied it after m2's 0-2-5 had committed
    tr = _trace(resolution_us=100000)
    assert not _flagged(kit, tr)
    m1 = [o for o in tr.all("relay", node="server_4", connection="m1", gtid="0-1-5")]
    applied = tr.first("apply", node="server_4", connection="m1", gtid="0-1-5", last=True)
    for o in m1:
        tr.retime(o, 17000000)
    tr.retime(applied, 17100000)
    assert _flagged(kit, tr)


def _corpus_run(kit, system: str, name: str) -> Trace:
    return kit.run(system, io.load_history(REPO / "corpus" / f"{name}.jsonl"))


def _last_shown(tr: Trace, node: str) -> dict:
    return [o for o in tr.all("server_status", node=node) if "gtid_slave_pos" in o["variables"]][-1]


def test_a_commit_returning_after_a_connect_s_load_leaves_the_loaded_position(kit):
    # corpus/finding-commit-returning-after-a-connect-load: C's commit of t3 (0-1-1) waited for an
    # ack while its IO thread connected again by position past t2, loading 0-1-2 with a later
    # sub_id than t3's, taken when t3 was read: the commit returning at the timeout (10 s) leaves
    # 0-1-2, until C applies t2 and t4 at 14 s.
    tr = _corpus_run(kit, "model:mariadb-10.11", "finding-commit-returning-after-a-connect-load")
    assert tr.first("visible", node="C", gtid="0-1-1")["t"] == 0
    assert tr.first("connect", node="C", master_log_pos=510)["t"] < 10_000_000 < tr.first("visible", node="C", gtid="0-1-2")["t"]
    after = [o for o in tr.all("server_status", node="C")
             if 10_000_000 < o["t"] < 14_000_000 and "gtid_slave_pos" in o["variables"]]
    assert after and all(o["variables"]["gtid_slave_pos"] == "0-1-2" for o in after)
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
    after[0]["variables"]["gtid_slave_pos"] = "0-1-1"
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", tr)
    assert v.status == VIOLATED and any(tr.line(after[0]) in w.lines for w in v.witnesses)


def test_a_skip_recorded_after_a_later_group_s_commit_is_the_position_on_an_exact_trace(kit):
    # corpus/finding-skip-after-a-later-group-committed-out-of-order: B committed t3 (0-1-2) before
    # t1 (0-1-1), crashed, and skipped t1 with the counter: the GTID recorded last shows, 0-1-1.
    tr = _corpus_run(kit, "model:wl7318", "finding-skip-after-a-later-group-committed-out-of-order")
    skip = tr.first("skip", node="B", gtid="0-1-1", reason="sql_slave_skip_counter")
    assert tr.first("visible", node="B", gtid="0-1-2")["t"] < skip["t"]
    sample = _last_shown(tr, "B")
    assert sample["variables"]["gtid_slave_pos"] == "0-1-1,1-1-1"
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
    sample["variables"]["gtid_slave_pos"] = "0-1-2,1-1-1"
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", tr)
    assert v.status == VIOLATED and any(tr.line(sample) in w.lines for w in v.witnesses)


def test_a_group_skipped_after_a_load_is_read_after_it(kit):
    # corpus/finding-skip-of-a-group-read-before-a-connect-load: B read t7 (0-1-2), a STOP SLAVE
    # rolled it back, a connect by position loaded 0-1-1 and the skip counter then skipped t7: the
    # skip read its GTID event again, after the load, so 0-1-2 shows.
    tr = _corpus_run(kit, "model:mariadb-10.11", "finding-skip-of-a-group-read-before-a-connect-load")
    skip = tr.first("skip", node="B", gtid="0-1-2", reason="sql_slave_skip_counter")
    assert tr.first("apply", node="B", gtid="0-1-2")["t"] < tr.first("connect", node="B", master_log_pos=590)["t"] <= skip["t"]
    after = [o for o in tr.all("server_status", node="B") if skip["t"] < o["t"] < 2_000_000]
    assert after and all(o["variables"]["gtid_slave_pos"] == "0-1-2,1-1-1" for o in after)
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
    after[0]["variables"]["gtid_slave_pos"] = "0-1-1,1-1-1"
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", tr)
    assert v.status == VIOLATED and any(tr.line(after[0]) in w.lines for w in v.witnesses)
