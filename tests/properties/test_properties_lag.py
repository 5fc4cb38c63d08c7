"""Every Seconds_Behind_Master property passes on the reference model's trace and catches a fault:
the MDEV-32265 mutant (caught up kept across a restart during the delay) or a sample edited to show
a NULL, a 0 or a value the servers' arithmetic does not give. Real MariaDB samples are judged too."""
from __future__ import annotations

from conftest import REPO, assert_witness
from test_properties_incident import Case, pick

from replcheck.generate import generate
from replcheck.io import load_history, load_trace
from replcheck.properties.core import PASS, PROPERTIES, TraceView
from replcheck.properties.delay import STATE_WAITING
from replcheck.properties.delay_timing import index

US = 1_000_000
MDB = "model:mariadb-10.11"
LAG = "lag-stop-start-during-delay"
KEPT = "mutant:caught-up-kept"


def model(history: str, system: str = MDB):
    return lambda k: k.run(system, history)


def edit(t: int, **fields):
    """The model's sample of B at t, edited."""
    def build(k):
        tr = k.run(MDB, LAG)
        s = tr.first("status", node="B", t=t)
        s.update(fields)
        return tr, s
    return build


CASES: dict[str, Case] = {
    "SBM.NULL": Case(model(LAG), edit(3_500_000, Seconds_Behind_Master=5),
                     "B at 3.5 s: SQL thread not running but Seconds_Behind_Master 5"),
    "SBM.CAUGHT_UP": Case(model(LAG), edit(7_000_000, Seconds_Behind_Master=6), "B at 7 s: caught up"),
    "SBM.PENDING": Case(model("future-timestamp"), lambda k: pick(k.run(KEPT, LAG), "status", node="B", t=2_000_000),
                        "B at 2 s shows Seconds_Behind_Master 0 but GTID_LOG_EVENT of t1, written 2.000 s ago, is unapplied"),
    "SBM.VALUE": Case(model(LAG), edit(2_000_000, Seconds_Behind_Master=7),
                      "B at 2 s: Seconds_Behind_Master 7 but GTID_LOG_EVENT of t1 in hand was written 2.000 s ago"),
    "SBM.DELAY": Case(model(LAG), lambda k: pick(k.run(KEPT, LAG), "status", node="B", t=2_000_000),
                      "B at 2 s waits for MASTER_DELAY 6 with 4 s left but shows Seconds_Behind_Master 0"),
    "SBM.RESTART": Case(model(LAG), lambda k: pick(k.run(KEPT, LAG), "status", node="B", t=4_500_000),
                        "after START SLAVE at 4 s: B at 4.5 s waits for MASTER_DELAY 6 with 2 s left"),
    # a lag set back by an event that is no transaction (Bug #66921: the master's format description
    # copied into a new relay log) shows as a jump between two samples of one wait
    "SBM.NO_JUMP": Case(model(LAG), edit(3_000_000, Seconds_Behind_Master=9),
                        "B: Seconds_Behind_Master 2 at 2.5 s, 9 at 3 s, with no transaction read or committed between"),
}


def test_every_lag_property_has_a_case():
    assert set(CASES) == {p.requirement for p in PROPERTIES if p.feature == "lag"}


def test_the_fake_event_timestamp_never_feeds_the_lag(kit):
    # A sample while the SQL thread holds the dump thread's fake Rotate (timestamp 0) would show the
    # replica's age since 1970 if that timestamp counted.
    tr = kit.run(MDB, LAG)
    rotate = tr.all("relay", node="B", type="ROTATE_EVENT")[-1]
    for a in tr.all("apply", node="B", type="ROTATE_EVENT"):
        if a["relay_pos"] == rotate["pos"] and a["relay_file"] == rotate["file"]:
            tr.retime(a, 6_000_000)
    s = tr.first("status", node="B", t=4_500_000)
    s["Seconds_Behind_Master"] = 1_700_000_004
    v = kit.verdict("SBM.VALUE", tr)
    assert v.status == "violated" and any("counts from the timestamp 0 of ROTATE_EVENT" in w.message for w in v.witnesses), v


def test_a_wait_for_a_fake_event_stamped_0_is_not_held_to_the_lag(kit):
    # Campaign finding (seed 5009, History 4738): C's new MASTER_DELAY 2147483647 makes the reconnect's
    # fake Rotate (timestamp 0) wait ~68 years, while the lag still counts from t1, the last event with
    # a timestamp. Samples waiting for t1 itself are still held to SBM + SQL_Remaining_Delay = SQL_Delay.
    tr = kit.run("model:groupid", load_history(REPO / "corpus" / "finding-lag-not-set-by-a-fake-event.jsonl"))
    fake = tr.first("status", node="C", SQL_Delay=2147483647, Slave_SQL_Running_State=STATE_WAITING)
    assert fake["Seconds_Behind_Master"] < 100 and fake["SQL_Remaining_Delay"] > 400_000_000
    assert kit.verdict("SBM.DELAY", tr).status == PASS
    s = tr.first("status", node="C", t=1300000)
    assert (s["SQL_Delay"], s["SQL_Remaining_Delay"]) == (5, 4)
    s["Seconds_Behind_Master"] = 3
    v = kit.verdict("SBM.DELAY", tr)
    assert v.status == "violated" and "C at 1.3 s: Seconds_Behind_Master 3 and 4 s left exceed MASTER_DELAY 5" in v.witnesses[0].message


def test_a_fake_event_waited_for_in_the_sample_s_own_microsecond_is_not_held_to_the_lag(kit):
    # 1,000,000-History campaign finding (seed 1000, History 98913): START SLAVE SQL_THREAD applies the
    # reconnect's fake Rotate and the FDE at 0.9 s, then waits ~68 years for the fake Gtid_list
    # (timestamp 0), sampled in that same µs with Seconds_Behind_Master 0.
    history = load_history(REPO / "corpus" / "finding-lag-not-set-by-a-fake-gtid-list.jsonl")
    tr = kit.run("model:wl344", history)
    s = tr.first("status", node="B", t=900000, Slave_SQL_Running_State=STATE_WAITING)
    assert (s["Seconds_Behind_Master"], s["SQL_Delay"]) == (0, 2147483647)
    assert kit.verdict("SBM.DELAY", tr).status != "violated"
    # had the Gtid_list a timestamp, the lag would count from it: 0 with ~447,483,647 s left is wrong
    tr = kit.run("model:wl344", history)
    tr.first("relay", node="B", type="GTID_LIST_EVENT")["when"] = 1700000000
    v = kit.verdict("SBM.DELAY", tr)
    assert v.status == "violated" and v.witnesses[0].message.startswith("B at 0.9 s waits for MASTER_DELAY 2147483647"), v


def test_real_mariadb_samples_are_judged():
    # A polled MariaDB 10.11 trace: the sample-only checks judge it; those that need the relay log don't.
    header, obs = load_trace(REPO / "tests/properties/traces/mariadb-chain-per-hop-polled-out-of-order.jsonl")
    view = TraceView(header, obs)
    got = {p.requirement: p.run(view) for p in PROPERTIES if p.feature == "lag"}
    assert all(got[r].status == PASS and got[r].checked for r in ("SBM.NULL", "SBM.CAUGHT_UP", "SBM.DELAY")), got
    assert got["SBM.PENDING"].status == got["SBM.VALUE"].status == "not_exercised"


def test_a_sample_lacking_a_field_is_not_judged(kit):
    # Found by bench/fuzz.py (seed 7, case 13546): a hand-made sample with Seconds_Behind_Master but no
    # Relay_Master_Log_File was a KeyError (exit 3). Such a sample decides nothing; the others are judged.
    tr = kit.run(MDB, LAG)
    s = tr.first("status", node="B", t=3_500_000)
    del s["Relay_Master_Log_File"]
    s["Seconds_Behind_Master"] = 5  # would be violated if judged (SQL thread stopped)
    v = kit.verdict("SBM.NULL", tr)
    assert v.status == PASS and v.checked, v


def test_a_group_the_replica_s_filters_keep_out_is_not_pending_on_a_polled_trace():
    # MariaDB 10.11, flt-replicate-rules at load 25 (ops slipped 1.4 s, so B was sampled 3.5 s
    # after t2): t2, on the MyISAM table replicate_ignore_table names, is passed by the SQL thread
    # without a row, which polling cannot show (header unobserved: filtered). It is not the event
    # in hand: Seconds_Behind_Master 0 is right. Where the trace could show filtering, an unapplied
    # t2 would be one.
    header, obs = load_trace(REPO / "tests/properties/traces/mariadb-flt-replicate-rules-filtered-pending.jsonl")
    prop = next(p for p in PROPERTIES if p.requirement == "SBM.PENDING")
    late = next(o for o in obs if o["kind"] == "status" and o["node"] == "B" and o["t"] == 3533161)
    assert late["Seconds_Behind_Master"] == 0 and "filtered" in header["unobserved"]
    assert prop.run(TraceView(header, obs)).status == "not_exercised"  # nothing else was ever in hand
    seeing = {**header, "unobserved": [k for k in header["unobserved"] if k != "filtered"]}
    v = prop.run(TraceView(seeing, obs))
    assert v.status == "violated" and "shows Seconds_Behind_Master 0 but GTID_LOG_EVENT of t2" in v.witnesses[0].message


def test_a_relay_log_a_gtid_start_threw_away_is_not_pending_on_a_polled_trace():
    # MariaDB 10.11, par-delayed-sbm-gtid-start: STOP SLAVE and START SLAVE of both threads while t2
    # waits for its delay. With MASTER_USE_GTID the start purges the relay logs (start_slave_threads,
    # sql/slave.cc) and the IO thread fetches t2 again; t2 commits from the second copy. The runner
    # observes the purge as the models do (relay_log_recovery, reason gtid): the first copy is not
    # the event in hand. Without that observation (the runner before it) the samples after t2's
    # commit showed SBM.PENDING violated, an artefact of the polled trace.
    header, obs = load_trace(REPO / "tests/properties/traces/mariadb-par-delayed-sbm-gtid-start.jsonl")
    [purge] = [o for o in obs if o["kind"] == "relay_log_recovery"]
    assert purge["node"] == "B" and purge["reason"] == "gtid" and purge["dropped"] > 0
    got = {p.requirement: p.run(TraceView(header, obs)) for p in PROPERTIES if p.requirement in ("SBM.PENDING", "PARALLEL.SBM.PENDING")}
    assert got["SBM.PENDING"].status == "not_exercised"  # no sample shows 0 with anything in hand
    assert got["PARALLEL.SBM.PENDING"].status == PASS and got["PARALLEL.SBM.PENDING"].checked, got
    # B runs workers, whose samples are PARALLEL.SBM.PENDING's: read as a serial replica's (its
    # `parallel` observations left out), the purge still decides what SBM.PENDING takes as in hand:
    # t1 at 1.59 s, relayed 0.53 s before, not the first copy of t2
    serial = [o for o in obs if o["kind"] != "parallel"]
    assert next(p for p in PROPERTIES if p.requirement == "SBM.PENDING").run(TraceView(header, serial)).status == PASS
    unseen = [o for o in serial if o is not purge]
    v = next(p for p in PROPERTIES if p.requirement == "SBM.PENDING").run(TraceView(header, unseen))
    assert v.status == "violated" and "shows Seconds_Behind_Master 0 but GTID_LOG_EVENT of t2" in v.witnesses[0].message


def test_a_whole_second_read_just_after_a_second_s_turn_may_show_the_previous_second():
    # MariaDB 10.11, chain-per-hop: B sampled 1.6 ms after 3 s shows Seconds_Behind_Master 1 for g2,
    # written in second 1 (2.002 s exact by that second's start): time(0) read the kernel's coarse
    # clock, still in second 2 for up to a tick (4 ms here). Judged with the lag the harness records,
    # the value is right; were the clock exact, it would be a second off.
    header, obs = load_trace(REPO / "tests/properties/traces/mariadb-chain-per-hop-coarse-clock.jsonl")
    prop = next(p for p in PROPERTIES if p.requirement == "SBM.VALUE")
    coarse = prop.run(TraceView({**header, "clock_read_lag_us": 4000}, obs))
    assert coarse.status == PASS and coarse.checked, coarse
    exact = prop.run(TraceView({**header, "clock_read_lag_us": 0}, obs))
    assert exact.status == "violated"
    assert exact.witnesses[0].message == "B at 3.001565 s: Seconds_Behind_Master 1 but GTID_LOG_EVENT of g2 in hand was written 2.002 s ago"


def _remeasured(k, finding: str):
    """The model's Trace of a corpus History where B's IO thread measured a new clock difference with
    A after A's clock stepped an hour, and that measurement."""
    tr = k.run(MDB, load_history(REPO / "corpus" / f"finding-{finding}.jsonl"))
    queries = tr.all("clock_query", node="B")
    return tr, next(q for q in queries if q["clock_diff_with_master"] != queries[0]["clock_diff_with_master"])


def test_a_restarted_wait_is_not_held_to_a_lag_counted_with_a_new_clock_difference(kit):
    tr, query = _remeasured(kit, "lag-restart-after-a-new-clock-difference")
    assert kit.verdict("SBM.RESTART", tr).status == PASS
    tr.drop(query)  # the same lag with no new measurement to explain it
    v = kit.verdict("SBM.RESTART", tr)
    assert v.status == "violated" and "exceed MASTER_DELAY" in v.witnesses[0].message


def test_a_wait_a_stop_cut_short_is_not_held_to_a_lag_counted_with_a_new_clock_difference(kit):
    # t1, stamped an hour ahead, waited for from B's old clock difference (0), its IO thread measured
    # -3600 s at once; the wait was cut by a failover's STOP SLAVE, so t1's apply shows a later read
    tr, query = _remeasured(kit, "lag-wait-cut-short-after-a-new-clock-difference")
    assert tr.obs.index(tr.first("sql_stop", node="B")) < tr.obs.index(tr.first("apply", node="B", trx="t1"))
    assert kit.verdict("SBM.DELAY", tr).status != "violated"
    tr.drop(query)
    v = kit.verdict("SBM.DELAY", tr)
    assert v.status == "violated" and "exceed MASTER_DELAY" in v.witnesses[0].message


def test_a_new_clock_difference_moves_the_lag_with_no_transaction(kit):
    tr, query = _remeasured(kit, "lag-jump-at-a-new-clock-difference")
    assert kit.verdict("SBM.NO_JUMP", tr).status == PASS
    tr.drop(query)
    v = kit.verdict("SBM.NO_JUMP", tr)
    assert v.status == "violated" and "with no transaction read or committed between" in v.witnesses[0].message


def test_the_lag_on_a_polled_trace_may_count_from_a_later_event_of_the_group_in_hand():
    # MariaDB 10.11, seed 2's History 75: B showed 15 s while the property took t6's GTID event (A's
    # COMMIT second) to be in hand, 11.02 s old; the SQL thread was past it, at t6's row events, which
    # carry their statement's second, 4 s older. A lag from none of the group's timestamps is still wrong.
    header, obs = load_trace(REPO / "tests/properties/traces/mariadb-sbm-row-events-older-than-their-gtid.jsonl")
    prop = next(p for p in PROPERTIES if p.requirement == "SBM.VALUE")
    assert prop.run(TraceView(header, obs)).status == PASS
    s = next(o for o in obs if o["kind"] == "status" and o["node"] == "B" and o["t"] == 15769604)
    assert s["Seconds_Behind_Master"] == 15
    s["Seconds_Behind_Master"] = 30
    v = prop.run(TraceView(header, obs))
    assert v.status == "violated" and "B at 15.769604 s: Seconds_Behind_Master 30" in v.witnesses[0].message


def test_the_lag_may_jump_back_to_an_older_statement_of_the_group_in_hand():
    # MariaDB 10.11, seed 2's History 75 (corpus/server): B waited MASTER_DELAY for t6's GTID event
    # (its COMMIT's second) showing 9, then read t6's first statement, 4 s older, and showed 14 with
    # nothing new relayed or committed. Had the statements carried the GTID's second, 14 is a jump.
    header, obs = load_trace(REPO / "corpus/server/chain-hop-executes-its-relay-copy.trace.jsonl")
    prop = next(p for p in PROPERTIES if p.requirement == "SBM.NO_JUMP")
    assert prop.run(TraceView(header, obs)).status == PASS
    sbm = [o["Seconds_Behind_Master"] for o in obs if o["kind"] == "status" and o["node"] == "B" and 14_700_000 < o["t"] < 15_000_000]
    assert sbm == [9, 14]
    t6 = [o for o in obs if o["kind"] == "relay" and o["node"] == "B" and o["trx"] == "t6"]
    for o in t6:
        o["when"] = t6[0]["when"]
    v = prop.run(TraceView(header, obs))
    assert v.status == "violated" and "B: Seconds_Behind_Master 9 at 14.771211 s, 14 at 14.937589 s" in v.witnesses[0].message


def test_a_null_lag_with_both_threads_running_is_judged_by_the_null_rule_alone(kit):
    # a damaged or buggy sample: SBM.NULL names it, and the rules that count the lag pass it by
    tr, s = edit(2_000_000, Seconds_Behind_Master=None)(kit)
    assert_witness(kit.verdict("SBM.NULL", tr), tr, s, "B at 2 s")
    assert all(kit.verdict(r, tr).status == PASS for r in ("SBM.VALUE", "SBM.DELAY", "SBM.RESTART", "SBM.NO_JUMP"))


def test_a_partial_group_from_a_source_the_replica_left_is_nothing_it_is_behind_on(kit):
    # Semisync-family finding (seed 17004, History 191): C holds three events of t1 from A, whose
    # end never came; a failover repoints C to B, which never had t1. C is caught up with B and
    # shows 0. Had C reconnected to A, t1's rest would still be due: 0 is then a violation.
    tr = kit.run("model:wl7318", load_history(REPO / "corpus" / "finding-lag-partial-group-of-a-left-source.jsonl"))
    assert tr.first("rollback", node="C", trx="t1") and tr.first("status", node="C", t=2_100_000)["Seconds_Behind_Master"] == 0
    assert kit.verdict("SBM.PENDING", tr).status != "violated"
    for c in tr.all("connect", node="C"):
        c["source"] = "A"
    assert_witness(kit.verdict("SBM.PENDING", tr), tr, tr.first("status", node="C", t=2_100_000),
                   "C at 2.1 s shows Seconds_Behind_Master 0 but GTID_LOG_EVENT of t1")


def test_the_lag_counts_from_the_write_of_the_transaction_in_hand_not_of_a_torn_one_with_its_gtid(kit):
    # Groupid-family finding (seed 300022, History 26): A crashed inside t2's binlog write, recovery
    # truncated it, and A, its clock then stepped 1.25 s ahead, numbered t4 with the same GTID. B's
    # lag at 1.8 s (2 s) counts from t4's write, not from the torn t2's (A's clock not yet stepped).
    tr = kit.run("model:groupid", load_history(REPO / "corpus" / "finding-lag-origin-of-a-gtid-renumbered-after-a-torn-write.jsonl"))
    t2, t4 = (tr.first("binlog", node="A", trx=t, idx=1) for t in ("t2", "t4"))
    assert t2["gtid"] == t4["gtid"] and t2["t"] < t4["t"]
    s = tr.first("status", node="B", t=1_800_000)
    assert s["Seconds_Behind_Master"] == 2 and kit.verdict("SBM.VALUE", tr).status == PASS
    s["Seconds_Behind_Master"] = 4
    assert_witness(kit.verdict("SBM.VALUE", tr), tr, s, "B at 1.8 s: Seconds_Behind_Master 4 but QUERY_EVENT of t4 in hand")


def test_the_event_pending_at_a_sample_does_not_depend_on_what_was_asked_before(kit):
    """Generated History 11 (seed 0): B's crash at 3.6 s rolls t1 back behind t2 and t3, which its
    parallel workers had committed; the restart applies t1 again at 3.949335 s. A sample then has t1
    pending whether the samples before the crash were asked first (B had passed t1 at 3 s) or not."""
    tr = kit.run("model:wl344", generate(0, 11))

    def pending_at(samples: list[dict]) -> dict[int, tuple]:
        ix = index(TraceView(tr.header, tr.obs))
        return {s["_line"]: (r and r["_line"], applied) for s in samples
                for r, applied in [ix.pending("B", s["t"], s["_line"])]}

    samples = list(TraceView(tr.header, tr.obs).of_node("B", "status"))
    in_order, alone = pending_at(samples), pending_at(samples[::-1])
    assert in_order == alone
    assert alone[tr.line(tr.all("status", node="B", t=3_949_335)[-1])] == (tr.line(tr.first("relay", node="B", trx="t1")), 3_949_335)
