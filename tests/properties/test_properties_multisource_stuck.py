"""MULTISOURCE.INDEPENDENT on a Trace a real server's hang cut short: a STOP SLAVE 'name' it did not
answer is a violation when the server showed the connection being stopped waiting for another
connection's GTID while that one is busy (MariaDB 10.11, seed 11's History 52, kept in corpus/server),
undecidable without such evidence: how long the harness waited is no verdict."""
from __future__ import annotations

import pytest

from conftest import US, assert_witness
from test_properties_domains import MDB
from test_properties_multisource import DIAMOND, _stamped_ahead

from replcheck.properties.core import INCONCLUSIVE, PASS, VIOLATED
from replcheck.properties.multisource import STATE_OTHER_CONNECTION
from replcheck.properties.delay import STATE_WAITING

IDLE = "Slave has read all relay log; waiting for more updates"


def stuck_stop(k, b_state=STATE_OTHER_CONNECTION, c_state=STATE_WAITING, shown=(STATE_OTHER_CONNECTION, STATE_WAITING)):
    """The diamond's STOP SLAVE 'b' edited into one the server did not answer: the run ends there
    (header cut_short), 'b' and 'c' sampled just before it in these states, and SHOW PROCESSLIST
    after it showing these SQL thread states (None: it did not answer either)."""
    tr = k.run(MDB, DIAMOND)
    stop = tr.first("stmt", node="D", op="stop_slave", connection="b")
    tr.obs = [o for o in tr.obs[:tr.index(stop) + 1] if o["kind"] != "sql_stop" or o["t"] < stop["t"]]  # nothing stopped
    stop.update(returned=False, duration_us=90 * US)
    for conn, state in (("b", b_state), ("c", c_state)):
        tr.all("status", node="D", connection=conn)[-1].update(Slave_SQL_Running="Yes", Slave_SQL_Running_State=state)
    if shown is not None:
        rows = [{"id": i, "user": "system user", "command": "Slave_SQL", "time": 40, "state": s, "info": None}
                for i, s in enumerate(shown, 5)]
        rows.append({"id": 9, "user": "root", "command": "Query", "time": 90, "state": "Killing slave", "info": "STOP SLAVE 'b'"})
        tr.obs.append({"t": stop["t"] + 10, "kind": "processlist", "node": "D", "rows": rows})
    tr.header["cut_short"] = {"t": stop["t"] - 90 * US, "node": "D", "op": "stop_slave", "op_index": 3,
                              "reason": "stop_slave on D did not return within 90 s"}
    return tr, stop


def test_a_stop_hung_on_another_connections_gtid_is_a_violation_naming_both_states(kit):
    tr, stop = stuck_stop(kit)
    assert_witness(kit.verdict("MULTISOURCE.INDEPENDENT", tr), tr, stop,
                   f"D: stop_slave 'b' did not return: connection 'b''s SQL thread is '{STATE_OTHER_CONNECTION}' "
                   f"while connection 'c''s is '{STATE_WAITING}'")


@pytest.mark.parametrize("edit", [
    dict(shown=None),  # the server showed nothing
    dict(shown=(STATE_WAITING,)),  # no thread waits for another connection's GTID (any more)
    dict(b_state=STATE_WAITING, c_state=STATE_OTHER_CONNECTION),  # the one waiting is not the one being stopped
    dict(c_state=IDLE, shown=(STATE_OTHER_CONNECTION, IDLE)),  # the other connection holds nothing
])
def test_a_stop_not_answered_without_that_evidence_is_undecidable(kit, edit):
    tr, stop = stuck_stop(kit, **edit)
    verdict = kit.verdict("MULTISOURCE.INDEPENDENT", tr)
    assert verdict.status == INCONCLUSIVE, verdict
    assert "did not return within 90 s" in verdict.witnesses[0].message and tr.line(stop) in verdict.witnesses[0].lines


def test_the_stop_answered_passes_and_no_property_reads_one_not_answered_as_done(kit):
    assert kit.verdict("MULTISOURCE.INDEPENDENT", kit.run(MDB, DIAMOND)).status == PASS
    tr, _ = stuck_stop(kit)
    view = tr.view()
    assert [(o["op"], o["connection"]) for o in view.unanswered] == [("stop_slave", "b")]
    assert not any(o.get("returned") is False for o in view.connected + view.kind("stmt"))
    assert view.cut_short["op"] == "stop_slave"
    assert {kit.verdict(r, tr).status for r in ("MULTISOURCE.RESTART.NO_LOSS", "MULTISOURCE.IGNORE_DUPLICATES.ONCE")} <= {
        PASS, "not_exercised"}
    assert kit.verdict("MULTISOURCE.INDEPENDENT", tr).status == VIOLATED


def test_another_statement_not_answered_leaves_the_connections_unjudged_past_it(kit):
    """A restart's SHOW SLAVE 'b' STATUS (the harness's own statement for the op) stuck as the
    replay of seed 11's History 52 on a loaded machine saw it: no stop to judge, so undecidable."""
    tr, stop = stuck_stop(kit)
    stop.update(op="restart", statement="SHOW SLAVE 'b' STATUS")
    del stop["connection"]
    verdict = kit.verdict("MULTISOURCE.INDEPENDENT", tr)
    assert verdict.status == INCONCLUSIVE, verdict
    assert verdict.witnesses[0].message.startswith("D: restart (SHOW SLAVE 'b' STATUS) did not return within 90 s; the server "
                                                   "showed SQL threads in")
    assert verdict.witnesses[0].message.endswith("the connections are not judged past it")


def test_a_trace_cut_short_owes_nothing_at_its_end(kit):
    """Its end is where the server stopped answering, not the History's: 'c' idle with t1 relayed
    and not applied there is no violation (it is at the History's end)."""
    tr = kit.run(MDB, _stamped_ahead(2))
    tr.obs = [o for o in tr.obs if o["t"] < 30 * US]
    tr.all("status", node="D", connection="c")[-1]["Slave_SQL_Running_State"] = IDLE
    assert kit.verdict("MULTISOURCE.INDEPENDENT", tr).status == VIOLATED
    tr.header["cut_short"] = {"t": 29 * US, "node": "D", "op": "read", "op_index": 2, "reason": "read on D did not return"}
    assert kit.verdict("MULTISOURCE.INDEPENDENT", tr).status != VIOLATED


def test_whose_thread_waits_follows_from_the_delays_when_no_sample_showed_it(kit):
    """As in the real Trace: the last samples show both threads idle (every status read hung after
    them); the thread waiting out a MASTER_DELAY is the one connection's with a delay, the other is
    the connection left over. Under STOP ALL SLAVES the waiting one is stopped whichever it is."""
    tr, stop = stuck_stop(kit, b_state=IDLE, c_state=IDLE)
    assert kit.verdict("MULTISOURCE.INDEPENDENT", tr).status == INCONCLUSIVE  # nothing tells b's thread from c's
    next(c for c in tr.header["topology"]["channels"] if c.get("connection") == "c")["delay"] = 2
    expect = f"connection 'b''s SQL thread is '{STATE_OTHER_CONNECTION}' while connection 'c''s is '{STATE_WAITING}'"
    assert_witness(kit.verdict("MULTISOURCE.INDEPENDENT", tr), tr, stop, f"D: stop_slave 'b' did not return: {expect}")
    stop["op"] = "stop_all_slaves"
    del stop["connection"]
    assert_witness(kit.verdict("MULTISOURCE.INDEPENDENT", tr), tr, stop, f"D: stop_all_slaves did not return: {expect}")
