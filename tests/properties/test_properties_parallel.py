"""Every parallel-applier property passes (the CASES table, run by test_property_cases.py) on an honest trace and catches a realistic fault: a worker
committing ahead of a group its source wrote before (where commit order is kept), Seconds_Behind_Master
0 while a worker still holds an old group, and a group committed twice or never after a crash left
gaps."""
from __future__ import annotations

import pytest
from conftest import REPO, US, assert_witness
from test_properties_incident import Case, pick

from replcheck.io import load_history
from replcheck.model.delay import STATE_EXECUTING, STATE_WAITING
from replcheck.properties.core import NOT_EXERCISED, PASS

ORDER, SBM, GAPS, UNTIL = "par-commit-order", "par-delayed-sbm", "par-mts-gaps", "par-until"
MARIADB, MYSQL = "model:mariadb-10.11", "model:mysql-8.0"


def swapped_commits(k):
    # t3's worker commits before t2's, the order MySQL without replica_preserve_commit_order allows
    tr = k.run(MARIADB, ORDER)
    t3 = tr.retime(tr.first("visible", node="B", trx="t3"), 3 * US)
    return tr, t3


def zero_while_a_worker_runs(k):
    tr = k.run(MARIADB, SBM)
    s = tr.all("status", node="B", t=4 * US)[-1]
    s["Seconds_Behind_Master"] = 0
    return tr, s


def gap_applied_twice(k):
    tr = k.run(MYSQL, GAPS)
    t1 = tr.first("visible", node="B", trx="t1")
    tr.insert_before(t1, {**tr.first("visible", node="B", trx="t2"), "t": t1["t"]})
    return tr, None


def gap_left_behind(k):
    # t1, below the gaps t2 and t3, never committed after the restart: lost
    tr = k.run(MYSQL, GAPS)
    tr.drop(tr.first("visible", node="B", trx="t1"))
    return tr, tr.first("crash", node="B")


def committed_past_until(k):
    # t3, written after the UNTIL position (the end of t2), committed before the SQL thread starts again
    tr = k.run(MARIADB, UNTIL)
    t2 = tr.first("visible", node="B", trx="t2")
    t3 = {**t2, "trx": "t3", "gtid": "0-1-3"}
    tr.obs.insert(tr.index(t2) + 1, t3)
    return tr, t3


def worker_ahead_of_the_delay(k):
    # t1's worker began 0.5 s after it arrived, MASTER_DELAY 1 not run out
    tr = k.run(MARIADB, SBM)
    t1 = tr.first("visible", node="B", trx="t1")
    t1["start"] = 1_500_000
    return tr, t1


CASES: dict[str, Case] = {
    "PARALLEL.COMMIT.ORDER": Case(lambda k: k.run(MARIADB, ORDER), swapped_commits,
                                  "B commits t2 after t3, though its source wrote t3 after it"),
    "PARALLEL.SBM.PENDING": Case(lambda k: k.run(MARIADB, SBM), zero_while_a_worker_runs,
                                 "B at 4000000 shows Seconds_Behind_Master 0 but its workers have not committed t1"),
    "PARALLEL.RECOVERY.GAPS": Case(lambda k: k.run(MYSQL, GAPS), gap_left_behind,
                                   "B crashed holding groups past t1, and never commits it"),
    "PARALLEL.UNTIL": Case(lambda k: k.run(MARIADB, UNTIL), committed_past_until,
                           "B commits t3, written after its UNTIL position"),
    "PARALLEL.DELAY": Case(lambda k: k.run(MARIADB, SBM), worker_ahead_of_the_delay,
                           "B's worker began t1 at 1500000, before its MASTER_DELAY 1 ran out"),
}


def test_a_group_committed_twice_across_the_crash(kit):
    tr, _ = gap_applied_twice(kit)
    assert_witness(kit.verdict("PARALLEL.RECOVERY.GAPS", tr), tr, None, "B commits t2 2 times across its crash")


@pytest.mark.parametrize("requirement,history,system,witness", [
    ("PARALLEL.COMMIT.ORDER", ORDER, "mutant:commit-order-lost", "B commits t2 after t3, though"),
    ("PARALLEL.SBM.PENDING", SBM, "mutant:caught-up-with-workers-busy", "shows Seconds_Behind_Master 0 but its workers"),
    ("PARALLEL.RECOVERY.GAPS", GAPS, "mutant:mts-gaps-not-filled", "B commits t2 2 times across its crash"),
    ("PARALLEL.UNTIL", UNTIL, "mutant:until-gives-up-queued", "B stopped at its UNTIL position"),
])
def test_each_mutant_is_caught_by_its_property(kit, requirement, history, system, witness):
    tr = kit.run(system, history)
    assert_witness(kit.verdict(requirement, tr), tr, None, witness)


def test_order_is_not_judged_where_the_server_does_not_keep_it(kit):
    # MySQL with replica_preserve_commit_order OFF commits t2 and t3 before t1: allowed
    tr = kit.run(MYSQL, GAPS)
    assert [o["trx"] for o in tr.all("visible", node="B")][:2] == ["t2", "t3"]
    assert kit.verdict("PARALLEL.COMMIT.ORDER", tr).status == NOT_EXERCISED


def test_a_serial_trace_exercises_none(kit):
    tr = kit.run(MARIADB, "flt-skip-counter")
    assert {kit.verdict(r, tr).status for r in CASES} == {NOT_EXERCISED}


def test_the_groups_workers_gave_up_at_a_stop_are_pending_again(kit):
    # Campaign finding (seed 6014, History 2971): B's coordinator queued t8, t7, t9 and t10; STOP SLAVE
    # gave up those no worker had started, and B started again serially, UNTIL a position inside t10.
    tr = kit.run(MARIADB, load_history(REPO / "corpus" / "finding-queued-groups-pending-after-stop.jsonl"))
    assert [o["trx"] for o in tr.all("rollback", node="B", reason="stop")] == ["t8", "t7", "t9", "t10"]
    assert kit.verdict("WL344.STATE.WAITING", tr).status == PASS
    assert kit.verdict("PARALLEL.UNTIL", tr).status == NOT_EXERCISED  # the UNTIL run is serial
    # at the next sample t7 is in hand, due long ago: a sample that shows B waiting for it is wrong
    start = tr.first("parallel", node="B", workers=0)
    s = next(o for o in tr.obs[tr.index(start):] if o["kind"] == "status" and o["node"] == "B" and o["t"] > start["t"])
    assert s["Slave_SQL_Running_State"] == STATE_EXECUTING
    s.update(Slave_SQL_Running_State=STATE_WAITING, processlist_state=STATE_WAITING)
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, s, f"B at {s['t']} shows state {STATE_WAITING!r}")
    # the UNTIL run is serial by the `parallel` observation its start logs after the statement;
    # without it the run is the workers', and t10, written past the position, is committed
    tr = kit.run(MARIADB, load_history(REPO / "corpus" / "finding-queued-groups-pending-after-stop.jsonl"))
    tr.drop(tr.first("parallel", node="B", workers=0))
    assert_witness(kit.verdict("PARALLEL.UNTIL", tr), tr, None, "B commits t10, written after its UNTIL position")
