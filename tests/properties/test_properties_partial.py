"""Every partial-group property passes on an honest trace and catches a realistic fault: a group
resumed in its middle after a Rotate inside it moved the group position (Bug #72313), a full copy
applied on top of a partial one, a group counted as received at its GTID event (Bug #69943)."""
from __future__ import annotations

import pytest
from conftest import assert_witness
from test_properties_incident import Case, pick

from replcheck.generate import generate
from replcheck.properties import core
from replcheck.properties.core import PASS, PROPERTIES
from replcheck.properties.judge import judge
from replcheck.results import caught
from replcheck.systems import get

CUT = "partial-cut-reconnect"
RESTART = "partial-rotate-restart"
FAILOVER = "partial-copy-failover"


def resumed_mid_group(k):
    tr = k.run("mutant:rotate-mid-group", RESTART)
    return tr, tr.all("apply", node="B", trx="t2", idx=2)[-1]


def full_copy_on_partial(k):
    tr = k.run("mutant:partial-copy-kept", FAILOVER)
    return tr, tr.all("apply", node="C", trx="t2", idx=0)[1]


def io_pos_at_first_event(k):
    return pick(k.run("mutant:gtid-received-at-first-event", CUT), "status", node="B", Gtid_IO_Pos="0-1-2")


CASES: dict[str, Case] = {
    "PARTIAL.GROUP.WHOLE": Case(lambda k: k.run("model:wl7318", FAILOVER), full_copy_on_partial,
                                "C started t2 while its copy of t2 was open at event 2"),
    "PARTIAL.IO_POS.WHOLE": Case(lambda k: k.run("model:mariadb-10.11", CUT), io_pos_at_first_event,
                                 "B: Gtid_IO_Pos names 0-1-2, of which its relay log holds only the start"),
}


def test_every_partial_property_has_a_case():
    assert set(CASES) == {p.requirement for p in PROPERTIES if p.feature == "partial"}


def test_a_rotate_inside_a_group_does_not_move_its_position(kit):
    # Bug #72313: STOP/START SLAVE SQL_THREAD after the reconnect's fake Rotate resumes at t2's
    # second statement; the model resumes at its GTID event and applies t2 once.
    assert_witness(kit.verdict("PARTIAL.GROUP.WHOLE", resumed_mid_group(kit)[0]), *resumed_mid_group(kit),
                   "B applied event 2 of t2 without events 0..1 of the same copy before it")
    tr = kit.run("model:wl7318", RESTART)
    assert [o["idx"] for o in tr.all("apply", node="B", trx="t2")] == [0, 1, 0, 1, 2, 3, 4]
    assert tr.first("data", node="B")["counts"] == {"t1": 1, "t2": 1, "t3": 1}


def test_mariadb_reconnect_skips_what_it_holds_and_mysql_resumes_by_position(kit):
    for system in ("model:mariadb-10.11", "model:wl7318"):
        tr = kit.run(system, CUT)
        relayed = [o["idx"] for o in tr.all("relay", node="B", trx="t2")]
        assert relayed == [0, 1, 2, 3, 4], (system, relayed)  # one copy in the relay log, no event twice
        assert tr.first("data", node="B")["counts"] == {"t1": 1, "t2": 1, "t3": 1}


def test_partial_copy_is_rolled_back_at_the_new_sources_fde(kit):
    tr = kit.run("model:wl7318", FAILOVER)
    assert tr.first("rollback", node="C", trx="t2")["reason"] == "partial_group"
    assert tr.first("data", node="C")["counts"] == {"t1": 1, "t2": 1, "t3": 1}
    v = kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr)
    assert v.status == PASS and v.checked > 0, v


def test_whole_group_lost_when_received_at_its_gtid_event(kit):
    # Bug #69943: the reconnect asks past t2, whose partial copy is then rolled back: t2 is lost.
    tr = kit.run("mutant:gtid-received-at-first-event", CUT)
    assert tr.first("data", node="B")["counts"] == {"t1": 1, "t3": 1}
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == "violated"


def test_a_replica_logs_a_cut_group_without_the_reconnects_events(kit):
    # The reconnect's fake Rotate and artificial FDE sit inside t2's copy in B's relay log; B's own
    # binlog (log_slave_updates) gets t2's five events in a row: with them inside, a replica of B
    # took that Rotate for the middle of t2 and rolled t2's first half back at that FDE.
    for system in ("model:mariadb-10.11", "model:wl7318"):
        tr = kit.run(system, CUT)
        relayed = [o["type"] for o in tr.all("relay", node="B")]
        assert "ROTATE_EVENT" in relayed[relayed.index("GTID_LOG_EVENT", 5):], (system, relayed)
        binlog = tr.all("binlog", node="B")
        at = binlog.index(tr.first("binlog", node="B", trx="t2"))
        assert [(o["trx"], o["idx"]) for o in binlog[at:at + 5]] == [("t2", i) for i in range(5)], (system, binlog)


@pytest.mark.parametrize("index,family,mutant", [
    # History 7 until generator 13 added disk_full, 4 until generator 14 added the shared vocabulary
    (0, "incident", "mutant:gtid-received-at-first-event"),
    (56, "delay", "mutant:rotate-mid-group"),  # History 5 until generator 12's set_delays, 39 until generator 14
    # the rarest: a cut that stops an IO thread inside a group, then a failover to the other
    # replica (the first of seed 0's semisync family: History 14 up to generator 11; History 4 since
    # generator 12, whose crash_and_failover may follow a partition; the machines' test searches for it from scratch)
    # (4 until generator 14; 5 until a semi-sync client counted from its dump request's arrival)
    (14, "semisync", "mutant:partial-copy-kept"),
])
def test_generated_histories_catch_each_partial_mutant(index, family, mutant):
    # generator 14, seed 0, its family's History: a History with a cut_io operation catches the mutant where
    # its base model holds
    history = generate(0, index, (family,))
    assert any(o["op"] == "cut_io" for o in history["ops"])
    system = get(mutant)
    j = judge(system, history, system.declares.kills)
    assert caught(j, judge(get(system.declares.base), history, system.declares.kills)), j.violations


# A polled server's trace (cut-stop-mid-group-delayed on MariaDB 10.11.19, trimmed): B's relay log
# is read before each sample, and each relay observation says since when it was written (the read
# before it began). STOP SLAVE IO_THREAD left t1's GTID event alone in the relay log; the rest came
# after START SLAVE IO_THREAD, read at 2.058 s, written since 1.854 s.
def _relay(t, since, idx, last, gtid="0-1-1"):
    return {"t": t, "kind": "relay", "node": "B", "source": "A", "type": "XID_EVENT" if last else "GTID_LOG_EVENT",
            "trx": "t1", "idx": idx, "last": last, "gtid": gtid, "since": since}


def _polled(*status):
    header = {"schema": "replcheck.trace/1", "system": "mariadb:10.11", "resolution_us": 350_000, "unobserved": [],
              "topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B"}]}}
    obs = [_relay(611_830, 551_493, 0, False), _relay(2_058_298, 1_853_855, 7, True)]
    obs += [{"t": t, "kind": "status", "node": "B", "Gtid_IO_Pos": pos} for t, pos in status]
    return core.TraceView(header, sorted(obs, key=lambda o: o["t"]))


def _io_pos(view):
    return next(v for v in core.run_properties(view, "partial") if v.requirement == "PARTIAL.IO_POS.WHOLE")


def test_a_polled_sample_is_judged_by_when_the_last_event_may_have_been_written():
    # As the server showed it: nothing named during the stop, 0-1-1 once it is whole.
    v = _io_pos(_polled((626_702, ""), (2_274_576, "0-1-1")))
    assert (v.status, v.checked) == (PASS, 1), v
    # Named while only its GTID event was in (its last event written after the sample): caught.
    v = _io_pos(_polled((1_309_136, "0-1-1")))
    assert v.status == "violated" and "names 0-1-1, of which its relay log holds only the start" in v.witnesses[0].message
    # Named at 2.006 s: the last event was read at 2.058 s but may have been written from 1.854 s
    # on; the sample cannot say which came first and is not judged either way.
    assert _io_pos(_polled((2_005_971, "0-1-1"))).status == "not_exercised"


def test_a_skip_that_a_cut_left_mid_group_has_not_recorded_its_gtid(kit):
    # B's connection drops after t13's GTID and statement events; SQL_SLAVE_SKIP_COUNTER = 3 skips those
    # two and waits inside the group for the rest, which never comes: gtid_slave_pos stays empty (the
    # GTID is recorded at the group's end). Showing 0-1-1 would be a violation.
    nodes = [{"id": "A"}, {"id": "B", "variables": {"replicate_events_marked_for_skip": "REPLICATE"}}]
    ops = [{"at": 0, "op": "cut_io", "node": "B", "after_events": 2, "then": "stop"},
           {"at": 0, "op": "stop_slave", "node": "B", "thread": "sql"}, {"at": 0, "op": "trx", "node": "A", "trx": "t13"},
           {"at": 0, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 3},
           {"at": 0, "op": "start_slave", "node": "B", "thread": "sql"}]
    h = kit.make_history(nodes, [{"source": "A", "replica": "B", "latency_us": 50_000}], ops, sample_every_us=700_000, end_us=3_000_000)
    tr = kit.run("model:mariadb-10.11", h)
    assert [s["trx"] for s in tr.all("skip", node="B")] == ["t13", "t13"]
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == PASS
    sample = tr.all("server_status", node="B")[-1]
    sample["variables"]["gtid_slave_pos"] = "0-1-1"
    assert_witness(kit.verdict("MARIADB.GTID.SLAVE_POS", tr), tr, sample, "B: gtid_slave_pos '0-1-1'")
