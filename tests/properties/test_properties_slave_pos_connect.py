"""MARIADB.GTID.SLAVE_POS after a connect by position: the IO thread loads its master's GTID
position of that place into gtid_slave_pos (get_master_version_and_clock, sql/slave.cc).
corpus/server/position-connect-loads-the-masters-gtid-position: 0-42-42 became 0-1-2 at START
SLAVE from bin.000002:4 (10.11.19); another run read the connect's log line only after the
first group it brought was applied."""
from __future__ import annotations

from replcheck import io
from replcheck.properties.core import PASS, VIOLATED
from conftest import REPO, Trace

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
