"""MARIADB.GTID.SLAVE_POS on a replica that applies one domain through several connections
(corpus/server/multi-source-position-of-the-last-read, mdev-9544 on 10.11.19): gtid_slave_pos
shows the committed group read last, which a poll cannot order across connections; it may be any
connection's last group, but not one another connection's group was surely read after."""
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
