"""The delay properties on what a polled server shows: samples and statements in one microsecond,
clock estimates, a second's resolution and reads that take time.

A real server is observed by polling, so a property may judge a sample only on what the sample can
know; each case is a model trace edited to a server's timing, passing where the server is within its
rules and violating where it is not.
"""
from __future__ import annotations

import pytest
from conftest import REPO, Trace, assert_state_caught, assert_witness

from replcheck.io import load_history, load_trace
from replcheck.model.delay import STATE_IDLE, STATE_WAITING
from replcheck.properties.core import PASS, VIOLATED, TraceView

US = 1_000_000
W344, W7318 = "model:wl344", "model:wl7318"
CORPUS = REPO / "corpus"


# -- a sample and a statement in the same microsecond ---------------------------------------------
SAME_INSTANT = {
    # A refused CHANGE MASTER samples B waiting; STOP SLAVE and RESET SLAVE follow in that µs.
    "waiting-state-without-delay": (W7318, "WL344.STATE.WAITING", 918391,
                                    dict(Slave_SQL_Running_State=STATE_IDLE, processlist_state=STATE_IDLE,
                                         SQL_Remaining_Delay=None),
                                    f"B at 0.918391 s shows state {STATE_IDLE!r} but it is delaying (due 5 s)"),
    # STOP SLAVE IO_THREAD samples B waiting (delay 7); CHANGE MASTER TO MASTER_DELAY = 2 follows.
    "remaining-delay-after-clock-step": (W344, "WL344.SSS.REMAINING", 6166132, dict(SQL_Remaining_Delay=44),
                                         "B at 6.166132 s: SQL_Remaining_Delay 44 but 48.434 s are left"),
}


@pytest.mark.parametrize("finding", SAME_INSTANT)
def test_statement_later_in_the_same_microsecond_is_not_yet_in_force(kit, finding):
    # A sample is judged by what the trace logged before it: RESET SLAVE or CHANGE MASTER logged
    # after it in the same µs neither discards its pending event nor changes its delay.
    system, requirement, t, fields, expect = SAME_INSTANT[finding]
    history = load_history(CORPUS / f"finding-{finding}.jsonl")
    tr = kit.run(system, history)
    assert kit.verdict(requirement, tr).status == PASS
    s = tr.first("status", node="B", t=t)
    s.update(fields)
    assert_witness(kit.verdict(requirement, tr), tr, s, expect)


def test_a_stop_before_a_group_ends_makes_its_passed_events_pending_again(kit):
    # Campaign finding (seed 5003, History 4657): B skipped t1's first two events (the rest not yet
    # fetched), crashed, and restarted at t1's GTID event, the group position, waiting out its delay.
    tr = kit.run(W7318, load_history(CORPUS / "finding-waiting-after-restart-mid-group.jsonl"))
    assert tr.first("skip", node="B", idx=0) and tr.first("sql_stop", node="B", reason="crash")
    assert_state_caught(kit, tr, "B", 1800000, STATE_IDLE, f"B at 1.8 s shows state {STATE_IDLE!r} but it is delaying (due 3 s)")


def test_only_the_stop_until_made_is_judged_for_where_it_left_the_thread(kit):
    # Campaign finding (seed 1001, History 452): a crash stopped B's UNTIL thread first, and the
    # restarted thread runs without the condition (it lives in memory only).
    tr = kit.run(W7318, load_history(CORPUS / "finding-until-not-kept-across-a-restart.jsonl"))
    assert tr.first("sql_stop", node="B", reason="crash") and not tr.all("sql_stop", node="B", reason="until")
    assert kit.verdict("WL344.P1.UNTIL", tr).status != VIOLATED
    # The UNTIL stop itself, shown short of the position with events beyond it relayed: violated.
    tr = kit.run(W344, "until-recovery")
    assert kit.verdict("WL344.P1.UNTIL", tr).status == PASS
    s = tr.next_of("status", tr.first("sql_stop", node="B", reason="until"), node="B")
    s["Exec_Master_Log_Pos"] = 4
    assert_witness(kit.verdict("WL344.P1.UNTIL", tr), tr, s, "B stopped at 4 before reaching UNTIL")


def test_an_until_after_a_rewinding_parallel_stop_may_show_a_place_before_groups_committed(kit):
    # A real server's Trace (corpus/server): B (four workers, domains 0 and 1) stopped at the start of
    # its relay log; START SLAVE UNTIL bin.000001:896 read it again, passed t1..t5 over by GTID and
    # stopped at t4's start (1151), showing Exec_Master_Log_Pos 780: t3, which spans 896, was committed.
    tr = Trace(*load_trace(CORPUS / "server" / "until-after-a-rewinding-stop.trace.jsonl"))
    assert tr.first("stmt", node="B", op="start_slave", until={"master_log_file": "bin.000001", "master_log_pos": 896})
    final = tr.next_of("status", tr.first("sql_stop", node="B", reason="until"), node="B")
    assert (final["Exec_Master_Log_Pos"], final["Relay_Log_Pos"]) == (780, 4)
    assert kit.verdict("WL344.P1.UNTIL", tr).status == PASS
    # had B not committed t3 before the start, the stop would leave it short of UNTIL
    for a in tr.all("apply", node="B", trx="t3"):
        tr.drop(a)
    assert_witness(kit.verdict("WL344.P1.UNTIL", tr), tr, None, "B stopped at 780 before reaching UNTIL")


def test_a_polled_apply_may_have_been_read_before_the_difference_was_measured_again(kit):
    # A real server's Trace (corpus/server): B's relay copy of t10 was written from 2.02 s on; its IO
    # thread, cut at 2.09 s, measured clock_diff_with_master -2 instead of -3 at 2.10 s; t10's row showed
    # at 2.14 s. Read before the new measure, t10 was due at once; read after it, at 2.75 s.
    tr = Trace(*load_trace(CORPUS / "server" / "read-before-the-difference-was-measured-again.trace.jsonl"))
    assert [q["clock_diff_with_master"] for q in tr.all("clock_query", node="B") if 1_900_000 < q["t"] < 2_200_000] == [-3, -2]
    for r in ("WL344.WAIT.RULE", "WL7318.NF1"):
        assert kit.verdict(r, tr).status == PASS, r
    # a copy that may have been written before any connect measured a difference counts from the first one
    for o in tr.all("relay", node="B", trx="t10"):
        o["since"] = -1
    assert kit.verdict("WL344.WAIT.RULE", tr).status == PASS
    # had the copy been written only after the new measure, B began t10 before it was due
    for o in tr.all("relay", node="B", trx="t10"):
        o["since"] = o["t"]
    assert_witness(kit.verdict("WL344.WAIT.RULE", tr), tr, None, "B began GTID_LOG_EVENT of t10 at 2.137495 s but it was due at 2.75 s")


def test_restore_ends_the_stop_of_a_crashed_slave(kit):
    # Campaign finding: B crashes (its SQL thread stops) and is restored from A's backup as A's
    # slave; what the new slave then applies is not "executed while stopped".
    tr = kit.run(W7318, load_history(CORPUS / "finding-stop-no-exec-across-restore.jsonl"))
    assert kit.verdict("WL344.STOP.NO_EXEC", tr).status != VIOLATED
    # Without the restore, B would have applied events with its SQL thread stopped by the crash.
    tr.drop(tr.first("restore", node="B"))
    assert_witness(kit.verdict("WL344.STOP.NO_EXEC", tr), tr, tr.first("apply", node="B", type="ROTATE_EVENT", t=107348),
                   "B executed ROTATE_EVENT of None at 0.107348 s while stopped since 0 s")


def test_a_clock_step_in_the_same_microsecond_after_a_binlog_write_does_not_move_it(kit):
    """Found by a campaign (seed 6, History 799): B binlogged t1 and then, in the same µs, its
    clock stepped; the step must count only for what the trace shows after it."""
    tr = kit.run(W7318, "d1-normal-setup")
    write = tr.first("binlog", node="A", trx="t1", type="GTID_LOG_EVENT")
    step = {"t": write["t"], "kind": "clock_step", "node": "A", "delta_us": 1_250_000}
    tr.obs.insert(tr.index(write) + 1, step)
    assert kit.verdict("WL7318.ICT", tr).status == "pass"
    tr.drop(step)
    tr.insert_before(write, step)  # a step before the write: its commit timestamp must show it
    v = kit.verdict("WL7318.ICT", tr)
    assert v.status == "violated" and "A binlogged t1" in v.witnesses[0].message


def test_a_chain_hop_polled_out_of_order_is_still_judged(kit):
    # MariaDB 10.11, chain-per-hop under load: C's apply of g1 was polled 38 ms before B's (the
    # resolution is 79 ms), so B's execution comes after C's in the trace. It is still the one C
    # read: the hop is judged (here, the early apply item 8 of #14 is about), not skipped.
    header, obs = load_trace(REPO / "tests" / "properties" / "traces" / "mariadb-chain-per-hop-polled-out-of-order.jsonl")
    verdict = kit.prop("WL344.CHAIN.IMMEDIATE").run(TraceView(header, obs))
    assert verdict.checked == 30 and "C began GTID_LOG_EVENT of g1 at 1.234639 s, B executed it at 1.273056 s" in \
        verdict.witnesses[0].message



def test_a_chain_hop_whose_two_rules_lie_within_the_resolution_is_not_judged(kit):
    # MariaDB 10.11, chain-per-hop at load 19 (resolution 1.41 s, 2 s delays): C began g2 1.1 s
    # before its due time counted from B's execution (BUG#52308: MariaDB counts from the original
    # timestamp), which the tolerance let pass. Both executions are stamped up to the resolution
    # late: where counting from B and counting from the original timestamp lie within twice the
    # resolution, the trace cannot say which the server did (conform then runs it at a larger
    # scale). With a finer resolution the same trace shows the violation.
    header, obs = load_trace(REPO / "tests" / "properties" / "traces" / "mariadb-chain-per-hop-coarse.jsonl")
    prop = kit.prop("WL344.CHAIN.IMMEDIATE")
    v = prop.run(TraceView(header, obs))
    assert v.status == "inconclusive" and "cannot tell it from counting from the original timestamp" in v.witnesses[0].message
    v = prop.run(TraceView({**header, "resolution_us": 300_000}, obs))
    assert v.status == VIOLATED and "C began GTID_LOG_EVENT of g2 at 4.893605 s, B executed it at 4.344859 s: due 6 s" in \
        " ".join(w.message for w in v.witnesses)


def test_a_polled_sample_compares_the_two_states_only_where_nothing_woke_the_sql_thread(kit):
    # MariaDB 10.11, mdb-purge-statement at load 13 (resolution 0.51 s): over the master's FLUSH
    # LOGS, both processlist reads of B's sample showed 'waiting for more updates' and both SHOW
    # SLAVE STATUS 'Reading event from the relay log', at one relay-log place: the relay log was
    # written meanwhile (the IO thread's read position moved), and the woken thread went back to
    # waiting with nothing applied. Both come from the same THD's proc_info (show_master_info,
    # sql/slave.cc): not a violation. A sample with nothing around it is still compared.
    header, obs = load_trace(REPO / "tests" / "properties" / "traces" / "mariadb-purge-statement-state-flip.jsonl")
    prop = kit.prop("WL344.SSS.RUNNING_STATE")
    flip = next(o for o in obs if o["kind"] == "status" and o["t"] == 2649185)
    assert flip["Slave_SQL_Running_State"] != flip["processlist_state"]
    verdict = prop.run(TraceView(header, obs))
    assert verdict.status == PASS and verdict.checked == 6
    quiet = next(o for o in obs if o["kind"] == "status" and o["t"] == 2199677)
    quiet["Slave_SQL_Running_State"] = "Reading event from the relay log"
    verdict = prop.run(TraceView(header, obs))
    assert verdict.status == VIOLATED and "B: Slave_SQL_Running_State 'Reading event from the relay log', " \
        "processlist 'Slave has read all relay log; waiting for more updates'" == verdict.witnesses[0].message


@pytest.mark.parametrize("late_s, judged", [(0.5, False), (1.5, True)])
def test_a_polled_server_may_show_waiting_up_to_a_second_past_the_due_time(kit, late_s, judged):
    """MariaDB sleeps the whole seconds left from when it looked (sql_delay_event): on a real
    server's trace, waiting less than a second past the due time is not judged by
    WL344.STATE.WAITING (WAIT.NO_EXTRA's question); longer is."""
    tr = kit.run(W344, "d1-normal-setup")
    tr.header["resolution_us"] = 100_000
    at = 21 * US + int(late_s * US)
    for o in tr.all("apply", node="B", trx="t1") + tr.all("visible", node="B", trx="t1"):
        tr.retime(o, at + 300_000)
    s = tr.retime(tr.first("status", node="B", t=22 * US), at)
    s.update(Slave_SQL_Running_State=STATE_WAITING, processlist_state=STATE_WAITING, SQL_Remaining_Delay=0)
    verdict = kit.verdict("WL344.STATE.WAITING", tr)
    if judged:
        assert_witness(verdict, tr, s, f"B at 22.5 s shows state {STATE_WAITING!r} but it is not delaying (due 21 s)")
    else:
        assert verdict.status == PASS


def test_a_sample_just_before_a_relay_log_read_is_not_judged_on_what_was_read_after_it(kit):
    """The relay log is read at each poll, before the sample: the IO thread may write an event the
    SQL thread then waits on before the sample is taken, read only at the next poll."""
    tr = kit.run(W344, "d1-normal-setup")
    tr.header["resolution_us"] = 100_000
    s = tr.first("status", node="B", Slave_SQL_Running_State=STATE_WAITING)  # the first sample of the wait
    for r in tr.all("relay", node="B", trx="t1"):
        tr.retime(r, s["t"] + 50_000)
    assert kit.verdict("WL344.STATE.WAITING", tr).status == PASS
    tr.header["resolution_us"] = 10_000  # the read came after the resolution: the sample is judged
    assert kit.verdict("WL344.STATE.WAITING", tr).status == VIOLATED


def test_a_waiting_replica_s_deadline_off_by_a_second_is_a_clock_estimate_error(kit):
    """MariaDB measures the clock difference in whole seconds at its IO thread's connect: a coarse
    time() a few ms behind the master's at a second's turn gives -1 s on one machine, which
    SQL_Remaining_Delay shows one short. WL344.CLOCK.COMPENSATE judges the deadline it shows
    (models and real servers alike: the same clocks, the estimate must be 0)."""
    tr = kit.run(W344, "d1-normal-setup")
    assert kit.verdict("WL344.CLOCK.COMPENSATE", tr).status == PASS
    s = tr.first("status", node="B", t=10 * US)
    s["SQL_Remaining_Delay"] -= 1
    assert_witness(kit.verdict("WL344.CLOCK.COMPENSATE", tr), tr, s,
                   "B at 10 s counts to 20 s (SQL_Remaining_Delay 10) but the event is due at 21 s: -1 s, "
                   "the error of the clock difference it measured in whole seconds at its IO thread's connect "
                   "(clock_diff_with_master)")


@pytest.mark.parametrize("until, judged", [(10 * US + 5_000, True), (11 * US + 5_000, False)])
def test_a_polled_deadline_is_judged_only_when_the_sample_s_second_is_known(kit, until, judged):
    tr = kit.run(W344, "d1-normal-setup")
    tr.header["resolution_us"] = 100_000
    for o in tr.all("status", node="B"):
        o["sampled_until"] = o["t"] + 5_000
    s = tr.first("status", node="B", t=10 * US)
    s.update(SQL_Remaining_Delay=s["SQL_Remaining_Delay"] - 1, sampled_until=until)
    verdict = kit.verdict("WL344.CLOCK.COMPENSATE", tr)
    assert (verdict.status == VIOLATED) == judged, verdict
    del s["sampled_until"]  # a polled sample that does not say how long it took is not judged either
    assert kit.verdict("WL344.CLOCK.COMPENSATE", tr).status == PASS


def test_a_late_clock_answer_on_mariadb_is_a_deadline_a_second_long(kit):
    """MariaDB 10.11, clock-reply-late: the channel's relay held the answer to B's clock query into
    the next second (clock_diff_with_master 1 on one machine), and B counted every delay to a
    second past the due time. The witness names the clock query; the model's trace of the same
    History holds."""
    header, obs = load_trace(REPO / "tests" / "properties" / "traces" / "mariadb-clock-reply-late.jsonl")
    verdict = kit.prop("WL344.CLOCK.COMPENSATE").run(TraceView(header, obs))
    [q] = [o for o in obs if o["kind"] == "clock_query"]
    assert (q["clock_diff_with_master"], q["held"]) == (1, True)
    assert verdict.status == VIOLATED and verdict.witnesses
    assert all("+1 s" in w.message and "clock_diff_with_master 1" in w.message for w in verdict.witnesses)
    assert kit.verdict("WL344.CLOCK.COMPENSATE", kit.run(W344, "clock-reply-late")).status == PASS


def test_a_dropped_connection_delays_relaying_for_its_own_reasons(kit):
    # B's connection drops inside t1 and takes its latency to come back: t1's last event is relayed
    # late, and not because of B's delay (WL344.IO.UNAFFECTED judges what the delay does).
    history = kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "delay": 2, "latency_us": 300_000}], [
        {"at": 0, "op": "cut_io", "node": "B", "after_events": 2},
        {"at": US, "op": "trx", "node": "A", "trx": "t1"},
        {"at": 3 * US, "op": "trx", "node": "A", "trx": "t2"}], sample_every_us=US, end_us=8 * US)
    tr = kit.run(W344, history)
    cut = tr.first("io_cut", node="B")
    late = tr.first("relay", node="B", trx="t1", idx=2)
    assert late["t"] - tr.first("binlog", node="A", trx="t1", idx=2)["t"] == 2 * 300_000  # the reconnect, then the event
    v = kit.verdict("WL344.IO.UNAFFECTED", tr)
    assert v.status == PASS and v.checked == 3, v  # t2's events, relayed on time
    tr.drop(cut)  # nothing said the connection dropped: the lateness is the delay's
    assert_witness(kit.verdict("WL344.IO.UNAFFECTED", tr), tr, late, "B relayed XID_EVENT of t1")


def test_a_stream_the_harness_s_own_relay_held_is_no_time_of_the_io_thread(kit):
    # d1-stop-start-dml on MariaDB with replcheck's relay stalled 0.5 s (a loaded machine): B
    # relayed t1 0.5 s late. The header's relay_held says the relay, not the IO thread, held it.
    history = kit.make_history(["A", "B"], [{"source": "A", "replica": "B", "delay": 2, "latency_us": 1000}], [
        {"at": US, "op": "trx", "node": "A", "trx": "t1"}], sample_every_us=US, end_us=4 * US)
    tr = kit.run(W344, history)
    binlogged = tr.first("binlog", node="A", trx="t1", idx=0)["t"]
    late = tr.retime(tr.first("relay", node="B", trx="t1", idx=0), binlogged + 501_000)
    tr.header["relay_held"] = {"B": [[binlogged + 200, binlogged + 500_200]]}
    v = kit.verdict("WL344.IO.UNAFFECTED", tr)
    assert v.status == PASS and v.checked == len(tr.all("relay", node="B", trx="t1")), v
    tr.header["relay_held"] = {"C": [[binlogged + 200, binlogged + 500_200]]}  # another channel's relay
    assert_witness(kit.verdict("WL344.IO.UNAFFECTED", tr), tr, late, "B relayed GTID_LOG_EVENT of t1 0.501 s")
    # Relayed 0.8 s late, with the stream and an ack held over the same 0.5 s (one stall of the
    # harness): the time counts once, so 0.3 s is still the IO thread's.
    tr.retime(late, binlogged + 800_000)
    tr.header["relay_held"] = {"B": [[binlogged + 200, binlogged + 500_200], [binlogged + 100, binlogged + 500_000]]}
    assert_witness(kit.verdict("WL344.IO.UNAFFECTED", tr), tr, late, "B relayed GTID_LOG_EVENT of t1 0.8 s")


def test_a_failover_delays_relaying_from_the_new_source_for_its_own_reasons(kit):
    # A goes down before B (delay 5, latency 0.4 s) got t1; C, failed over, binlogs t1 at 2 s and
    # its semi-sync wait for an ack no replica sends holds the promotion to 12 s. Only then is B
    # repointed to C and relays t1, 10.4 s after C binlogged it, though no delay held it.
    history = kit.make_history(["A", "B", "C"], [{"source": "A", "replica": "B", "delay": 5, "latency_us": 400_000},
                                                 {"source": "A", "replica": "C", "latency_us": 1000}], [
        {"at": 0, "op": "trx", "node": "A", "trx": "t1", "statements": [{"replica_cost_us": 2 * US}]},
        {"at": 10_000, "op": "shutdown", "node": "A"},
        {"at": 10_000, "op": "failover", "node": "C"},
        {"at": 10_000, "op": "set_global", "node": "C", "variable": "rpl_semi_sync_master_enabled", "value": True},
        {"at": 13 * US, "op": "trx", "node": "C", "trx": "t2"}], sample_every_us=US, end_us=20 * US)
    tr = kit.run(W344, history)
    late = tr.first("relay", node="B", source="C", trx="t1", idx=0)
    assert late["t"] - tr.first("binlog", node="C", trx="t1", idx=0)["t"] == 10_400_000
    v = kit.verdict("WL344.IO.UNAFFECTED", tr)
    assert v.status == PASS and v.checked == 3, v  # t2's events, relayed on time
    tr.retime(tr.first("promoted", node="C"), 10_000)  # B was C's replica all along: the lateness is the delay's
    assert_witness(kit.verdict("WL344.IO.UNAFFECTED", tr), tr, late, "B relayed GTID_LOG_EVENT of t1 10.4 s")


@pytest.mark.parametrize("keep_own_sample, status", [(False, PASS), (True, VIOLATED)])
def test_a_refused_delay_is_judged_only_by_a_sample_before_the_next_statement(kit, keep_own_sample, status):
    # A loaded run of d1-invalid-values on MariaDB (resolution 2.2 s): the first sample after the
    # refused MASTER_DELAY = 2147483648 came after the next two statements, the second of which set
    # 1.5 (SQL_Delay 1). That sample says nothing about the refused one.
    tr = kit.run(W344, "d1-invalid-values")
    tr.header["resolution_us"] = 2_500_000
    refused = tr.first("stmt", op="change_master", delay_sql="2147483648")
    own, between = [o for o in tr.all("status", node="B") if refused["t"] <= o["t"] < refused["t"] + 2 * US]
    tr.drop(between)
    if keep_own_sample:
        own["SQL_Delay"] = 7  # a sample before the next statement that shows another delay: violated
    else:
        tr.drop(own)
    assert kit.verdict("WL344.CM.RANGE", tr).status == status


@pytest.mark.parametrize("read_took_us, status", [(None, PASS), (10_000, VIOLATED)])
def test_remaining_delay_is_judged_within_how_long_the_sample_took_not_the_resolution(kit, read_took_us, status):
    # clock-reply-late on MariaDB under load (resolution 0.9 s): every SQL_Remaining_Delay was a
    # second long, and a tolerance of 1 s + the resolution passed them all. A polled sample says how
    # long its read took (sampled_until): that, not the gap between polls, is its uncertainty.
    tr = kit.run(W344, "d1-normal-setup")
    tr.header["resolution_us"] = 900_000
    s = next(o for o in tr.all("status", node="B", t=10 * US) if o["Slave_SQL_Running_State"] == STATE_WAITING)
    tr.retime(s, s["t"] + 300_000)  # read 0.3 s into the second: 10.7 s left, SQL_Remaining_Delay 11
    s["SQL_Remaining_Delay"] += 1  # the clock difference off by a second
    if read_took_us is not None:
        s["sampled_until"] = s["t"] + read_took_us
    assert kit.verdict("WL344.SSS.REMAINING", tr).status == status


def test_a_chain_hop_counts_from_the_commit_stamp_on_the_clock_that_wrote_it(kit):
    # Campaign finding (seed 1000, History 45826): B's clock stepped 1.25 s ahead while it executed
    # t4, so it stamped the commit 1.85 s; C (WL#7318, delay 10) counts from that stamp's whole
    # second, 1 s on B's clock, -0.25 s in true time, and begins t4 at 9.75 s.
    tr = kit.run(W7318, load_history(CORPUS / "finding-chain-ict-stamped-after-a-clock-step.jsonl"))
    a = tr.first("apply", node="C", trx="t4", idx=0)
    assert (a["begin"], a["ict"] % 1_000_000_000) == (9_750_000, 1_850_000)
    assert kit.verdict("WL344.CHAIN.IMMEDIATE", tr).status == PASS
    # a quarter of a second earlier is before any second B's clock could have stamped
    for o in tr.all("apply", node="C", trx="t4"):
        o["begin"] = o["t"] = 9_500_000
    assert_witness(kit.verdict("WL344.CHAIN.IMMEDIATE", tr), tr, None, "C began GTID_LOG_EVENT of t4 at 9.5 s")


def test_a_filtered_group_a_polled_trace_cannot_see_passed_decides_no_wait(kit):
    # Real-server campaign finding: B filters t2 (replicate_ignore_table) and, once its delay is
    # over, passes it without a row; a polled trace does not show that (unobserved: filtered), so t2
    # seems still unapplied while B waits for t3. Whether B is waiting is then not the trace's to tell.
    history = kit.history("flt-delay")
    history["ops"].append({"at": 6_500_000, "op": "trx", "node": "A", "trx": "t3"})
    tr = kit.run("model:mariadb-10.11", history)
    assert any(s["Slave_SQL_Running_State"].startswith("Waiting until") for s in tr.all("status", node="B") if s["t"] >= 8_000_000)
    for o in tr.all("apply", node="B", trx="t2"):
        tr.obs.remove(o)  # as polled: a filtered group's pass leaves no row to see
    tr.header["unobserved"] = ["filtered"]
    assert kit.verdict("WL344.STATE.WAITING", tr).status == "pass"
    tr.header["unobserved"] = []  # a trace that claims to show every group passed: t2 is then pending, not waited for
    assert kit.verdict("WL344.STATE.WAITING", tr).status == "violated"


def test_a_clock_step_logged_after_a_sample_in_its_own_microsecond_did_not_move_its_wait(kit):
    # A campaign's model Trace: B's SHOW SLAVE STATUS at 7.399999 s (waiting, 19 s left), then in the
    # same µs its clock steps an hour on. The wait the sample shows was counted on the clock before.
    header, obs = load_trace(REPO / "tests/properties/traces/mariadb-model-clock-step-after-a-sample.jsonl")
    tr = Trace(header, [{k: x for k, x in o.items() if k != "_line"} for o in obs])  # numbered as they stand
    sample = tr.first("status", node="B", t=7_399_999)
    step = tr.first("clock_step", node="B", t=7_399_999)
    assert (sample["Slave_SQL_Running_State"], sample["SQL_Remaining_Delay"]) == (STATE_WAITING, 19) and tr.index(sample) < tr.index(step)
    for requirement in ("WL344.STATE.WAITING", "WL344.SSS.REMAINING"):
        assert kit.verdict(requirement, tr).status == PASS
    sample.update(Slave_SQL_Running_State=STATE_IDLE, SQL_Remaining_Delay=None)  # as if the step had ended the wait
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, sample, "but it is delaying")


def test_a_group_skipped_before_the_poll_that_read_its_relay_copy_is_not_held_at_a_delay_change(kit):
    # MariaDB 10.11, seed 9's History 46: B's counter skipped t1 (relay.000002:652-694) at 0.95 s; the
    # poll that read that copy in the relay log came at 1.13 s, before B's CHANGE MASTER TO
    # MASTER_DELAY = 1. The skip names the copy's place: B held nothing.
    header, obs = load_trace(REPO / "tests" / "properties" / "traces" / "mariadb-skip-before-its-relay-copy-was-read.jsonl")
    tr = Trace(header, [{k: x for k, x in o.items() if k != "_line"} for o in obs])
    assert not [w for w in kit.verdict("WL344.CM.NO_LOSS", tr).witnesses if w.message.startswith("B ")]
    for o in tr.all("skip", node="B", trx="t1"):
        o["relay_pos"] += 1000  # another copy's skip: the one read later was still held
    change = next(o for o in tr.all("stmt", node="B") if o["op"] == "change_master")
    assert_witness(kit.verdict("WL344.CM.NO_LOSS", tr), tr, change, "B held t1 unapplied")
