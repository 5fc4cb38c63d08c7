"""MARIADB.GTID.SLAVE_POS after a connect by position: the IO thread loads its master's GTID
position of that place into gtid_slave_pos (get_master_version_and_clock, sql/slave.cc).
corpus/server/position-connect-loads-the-masters-gtid-position: 0-42-42 became 0-1-2 at START
SLAVE from bin.000002:4 (10.11.19); another run read the connect's log line only after the
first group it brought was applied."""
from __future__ import annotations

import json
from pathlib import Path

from replcheck import io
from replcheck.properties.core import PASS, VIOLATED
from conftest import REPO, Trace

MARIADB = "model:mariadb-10.11"

KEPT = REPO / "corpus" / "server" / "position-connect-loads-the-masters-gtid-position.trace.jsonl"
LATE = REPO / "tests" / "properties" / "traces" / "mariadb-position-connect-logged-after-its-apply.jsonl"
CONNECTED = "replication started in log 'bin.000002' at position 4"


def _trace(path) -> Trace:
    head, obs = io.load_trace(path)
    return Trace(head, [{k: x for k, x in o.items() if k != "_line"} for o in obs])


def test_the_connect_by_position_loads_the_masters_position_of_its_place(kit):
    tr = _trace(KEPT)
    assert "0-1-2" in [o["variables"]["gtid_slave_pos"] for o in tr.all("server_status", node="server_2")
                       if o["t"] > tr.first("stmt", node="server_2", op="set_global", value="0-42-42")["t"]]
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS


def test_without_a_connect_by_position_the_position_set_stands(kit):
    tr = _trace(KEPT)
    for o in tr.all("log", node="server_2"):
        if CONNECTED in o["message"]:
            tr.drop(o)
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", tr)
    assert v.status == VIOLATED and any("gtid_slave_pos '0-1-2'" in w.message for w in v.witnesses)


def test_the_load_takes_effect_at_the_start_slave_not_at_the_poll_that_read_its_line(kit):
    tr = _trace(LATE)
    line = next(o for o in tr.all("log", node="server_2") if CONNECTED in o["message"])
    assert tr.first("visible", node="server_2", gtid="0-1-3")["t"] < line["t"]
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS


def _named(tr: Trace, name: str) -> Trace:
    """The same run as if server_2 replicated through a connection named m1: the channel and its
    START SLAVEs carry the name, and the connect's log line begins with "Master 'NAME': " as a
    multi-source replica's lines do (corpus/server/multi-source-position-of-the-last-read)."""
    for c in tr.header["topology"]["channels"]:
        c["connection"] = "m1"
    for o in tr.all("stmt", node="server_2", op="start_slave"):
        o["connection"] = "m1"
    for o in tr.all("log", node="server_2"):
        if CONNECTED in o["message"]:
            o["message"] = f"Master '{name}': {o['message']}"
    return tr


def test_a_named_connection_s_connect_by_position_loads_its_own_master_s_position(kit):
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", _named(_trace(KEPT), "m1")).status == PASS
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", _named(_trace(KEPT), "m2"))  # no such connection: nothing loaded
    assert v.status == VIOLATED and any("gtid_slave_pos '0-1-2'" in w.message for w in v.witnesses)


def test_a_connect_by_position_loads_nothing_a_crash_recovery_cut_from_the_binlog(kit):
    """Seed 17004, History 811 of generator 17's groupid family (kept as a file): A wrote t1
    (0-1-562) to a binlog its machine crash lost before the sync; B and C later connect by
    position to a newer binlog, whose position no longer holds t1, and gtid_slave_pos stays empty.
    With t1 still counted, the same empty position is taken for a lost load."""
    tr = kit.run(MARIADB, json.loads((Path(__file__).parent / "histories" / "gen17-groupid-17004-811.json").read_text()))
    assert tr.all("recovery", node="A") and not tr.all("visible", node="B", trx="t1")
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
    for r in tr.all("recovery", node="A"):
        r["truncated"] = None
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", tr)
    assert v.status == VIOLATED and any("gtid_slave_pos '', it replicated up to '0-1-562'" in w.message for w in v.witnesses)


def _corpus_run(kit, name: str) -> Trace:
    return kit.run(MARIADB, io.load_history(REPO / "corpus" / f"{name}.jsonl"))


def test_a_connect_inside_a_group_loads_the_group_s_gtid(kit):
    """corpus/finding-connect-by-position-inside-a-group: B's IO thread, cut after t5's first
    statement, connects again at bin.000001:368, inside t5 (0-1-2). binlog_gtid_pos reads every
    event before the place, t5's GTID event too (gtid_state_from_pos, sql/sql_repl.cc): 0-1-2 is
    loaded, whether or not t5 then commits."""
    tr = _corpus_run(kit, "finding-connect-by-position-inside-a-group")
    assert tr.first("connect", node="B", master_log_pos=368) and tr.first("binlog", node="A", gtid="0-1-2", idx=0)["end"] < 368
    for o in tr.all("binlog", node="B", gtid="0-1-2") + tr.all("visible", node="B", gtid="0-1-2"):
        tr.drop(o)  # t5 never commits on B: the position shown is the load's
    samples = [o for o in tr.all("server_status", node="B") if "gtid_slave_pos" in o["variables"]]
    assert samples and {o["variables"]["gtid_slave_pos"] for o in samples} == {"0-1-2"}
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
    samples[0]["variables"]["gtid_slave_pos"] = "0-1-1"
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", tr)
    assert v.status == VIOLATED and any(tr.line(samples[0]) in w.lines for w in v.witnesses)


def test_a_group_read_before_a_load_and_committed_after_it_does_not_show(kit):
    """corpus/finding-commit-of-a-group-read-before-a-load: B, restarted, read t11 (0-1-1) and t12
    (0-1-2) from its relay log, then its IO thread connected by position at A's binlog end and
    loaded 0-1-2,1-1-4 with a later sub_id than theirs (rpl_slave_state::load): t11's commit at
    4 s does not show."""
    tr = _corpus_run(kit, "finding-commit-of-a-group-read-before-a-load")
    connect, t11 = tr.first("connect", node="B", master_log_pos=1202), tr.first("visible", node="B", gtid="0-1-1")
    assert tr.index(tr.first("apply", node="B", gtid="0-1-1", idx=0)) < tr.index(connect) < tr.index(t11)
    after = [o for o in tr.all("server_status", node="B") if t11["t"] < o["t"] < tr.first("visible", node="B", gtid="0-1-2")["t"]
             and "gtid_slave_pos" in o["variables"]]
    assert after and {o["variables"]["gtid_slave_pos"] for o in after} == {"0-1-2,1-1-4"}
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
    after[0]["variables"]["gtid_slave_pos"] = "0-1-1,1-1-4"
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", tr)
    assert v.status == VIOLATED and any(tr.line(after[0]) in w.lines for w in v.witnesses)


def test_a_load_after_the_node_s_last_group_shows_at_a_sample_after_it(kit):
    """The trace cut at the first sample that shows the load (0-1-2, the connect by position from
    bin.000002:4), begun by a restart rather than a START SLAVE: the load takes effect at the
    restart, and no group or statement of the node comes between it and the sample."""
    tr = _trace(KEPT)
    start = tr.all("stmt", node="server_2", op="start_slave")[-1]
    shown = next(o for o in tr.all("server_status", node="server_2") if tr.index(o) > tr.index(start)
                 and o["variables"].get("gtid_slave_pos") == "0-1-2")
    tr.obs = tr.obs[:tr.index(shown) + 1]
    del start["op"]
    start["kind"] = "restart"
    assert not any(o["node"] == "server_2" and o["kind"] in ("stmt", "apply", "visible", "binlog", "skip", "filtered")
                   for o in tr.obs[tr.index(start):])
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
    shown["variables"]["gtid_slave_pos"] = "0-1-1"
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", tr)
    assert v.status == VIOLATED and any(tr.line(shown) in w.lines for w in v.witnesses)
