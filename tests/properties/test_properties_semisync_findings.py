"""The semi-sync properties on the campaigns' findings: what each property got wrong (corpus/finding-*,
a polled server's resolution, a status that switched between samples) and that it still catches the
fault next to it.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, assert_witness
from test_model_semisync import N_VAR, master, semisync_replica
from test_properties_semisync import AS, MS, US, ack_before_relay, add, commit_before_ack, sample

from replcheck import io
from replcheck.io import load_history
from replcheck.generate import families_for, generate
from replcheck.properties.core import INCONCLUSIVE, PASS, PROPERTIES, VIOLATED, TraceView
from replcheck.properties.judge import judge
from replcheck.results import caught
from replcheck.systems import get

# -- campaign findings (corpus/finding-*): what the property got wrong, and that it still bites -----
def test_an_earlier_timeout_or_the_dba_ends_a_wait_with_no_slave(kit):
    # No semi-sync replica, wait_no_slave ON, timeout 2 s: t2's timeout at 2 s switches OFF, which
    # ends t3's wait after 1 s (corpus/finding-wait-no-slave-returns-at-once); disabling semi-sync
    # at 5.5 s (after an OFF/ON at 3 s, 4 s) ends t4's wait after 0.5 s.
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t2"}, {"at": US, "op": "trx", "node": "A", "trx": "t3"},
           {"at": 3 * US, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_enabled", "value": False},
           {"at": 4 * US, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_enabled", "value": True},
           {"at": 5 * US, "op": "trx", "node": "A", "trx": "t4"},
           {"at": 5_500_000, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_enabled", "value": False}]
    h = kit.make_history([master(rpl_semi_sync_master_timeout=2000)], [], ops, sample_every_us=US, end_us=8 * US)
    tr = kit.run(AS, h)
    assert [tr.first("commit", node="A", trx=t)["t"] for t in ("t2", "t3", "t4")] == [2 * US, 2 * US, 5_500_000]
    assert kit.verdict("WL1720.WAIT_NO_SLAVE", tr).status == PASS
    # t3 returning at 1.5 s, before anything ended the waits, is still caught.
    early = tr.retime(tr.first("commit", node="A", trx="t3"), 1_500_000)
    assert_witness(kit.verdict("WL1720.WAIT_NO_SLAVE", tr), tr, early, "t3 returned after 0.5 s with no semi-sync replica")


def test_a_failed_statements_timeout_ends_a_wait_with_no_slave(kit):
    # No semi-sync replica: t3, a DROP TABLE that failed after dropping a table, waits for its ack
    # under MySQL (repl_semi_report_rollback) and times out at 10 s; its switch OFF releases t4,
    # binlogged 1 ms later (corpus/finding-wait-no-slave-cut-short-by-a-failed-statements-timeout:
    # seed 100037's History 29).
    tr = kit.run("model:wl7318", load_history(REPO / "corpus" / "finding-wait-no-slave-cut-short-by-a-failed-statements-timeout.jsonl"))
    t3, t4 = tr.first("commit", node="A", trx="t3"), tr.first("commit", node="A", trx="t4")
    assert (t3["t"], t3["errno"], t4["t"]) == (10 * US, 1051, 10 * US)
    assert kit.verdict("WL1720.WAIT_NO_SLAVE", tr).status != VIOLATED  # t4's wait was cut short: nothing else to judge
    # t3 answered at once, as MariaDB answers a failed statement: nothing timed out to release t4
    tr.retime(t3, 0)
    assert_witness(kit.verdict("WL1720.WAIT_NO_SLAVE", tr), tr, t4, "t4 returned after 9.999 s with no semi-sync replica, timeout 10 s")


def after_n_raised_history(k) -> dict:
    # t1 times out (B's ack needs 0.8 s), becomes visible while OFF; B's ack switches ON again at
    # 0.8 s; wait_for_slave_count is then raised to 3 and a session reads t1.
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t1"},
           {"at": 804_767, "op": "set_global", "node": "A", "variable": N_VAR, "value": 3},
           {"at": 804_767, "op": "read", "node": "A"}]
    return k.make_history([master(rpl_semi_sync_master_timeout=500), semisync_replica("B"), "C"],
                          [{"source": "A", "replica": "B", "latency_us": 400 * MS}, {"source": "A", "replica": "C", "latency_us": MS}],
                          ops, sample_every_us=700 * MS, end_us=2 * US)


def test_a_returned_commit_stays_visible_when_n_is_raised(kit):
    # corpus/finding-after-sync-visible-after-restart: the read after the commit returned is not
    # a read of a waiting transaction.
    tr = kit.run(AS, after_n_raised_history(kit))
    assert tr.first("read", node="A")["seen"] == ["t1"] and tr.first("commit", node="A", trx="t1")["semisync"] == "no"
    assert kit.verdict("WL6355.AFTER_SYNC.INVISIBLE", tr).status != VIOLATED
    # A read of t1 during its wait, while ON and before any replica held it (C relays it at 1 ms),
    # is still caught.
    read = add(tr, {"t": 500, "kind": "read", "node": "A", "seen": ["t1"]})
    assert_witness(kit.verdict("WL6355.AFTER_SYNC.INVISIBLE", tr), tr, read, "a session on A read t1 at 0.0005 s while ON")


def test_shutdown_after_lowering_n_released_the_waiter(kit):
    # corpus/finding-shutdown-commits-without-ack: N = 2 with one semi-sync replica; lowering N to 1
    # releases t1 on B's ack (WL#7169, peer S5), just before a shutdown at the same instant.
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t1"},
           {"at": 150 * MS, "op": "set_global", "node": "A", "variable": N_VAR, "value": 1},
           {"at": 150 * MS, "op": "shutdown", "node": "A"}]
    h = kit.make_history([master(rpl_semi_sync_master_timeout=60000, **{N_VAR: 2}), semisync_replica("B"), "C"],
                         [{"source": "A", "replica": "B", "latency_us": 50 * MS}, {"source": "A", "replica": "C", "latency_us": 400 * MS}],
                         ops, sample_every_us=US, end_us=US)
    tr = kit.run(AS, h)
    c = tr.first("commit", node="A", trx="t1")
    assert (c["t"], c["semisync"]) == (150 * MS, "yes")
    assert kit.verdict("MARIADB.SEMISYNC.SHUTDOWN", tr).status == PASS
    # Without the SET GLOBAL, N stays 2 and B's ack alone does not make the release at shutdown right.
    tr.drop(tr.first("stmt", node="A", op="set_global", variable=N_VAR))
    assert_witness(kit.verdict("MARIADB.SEMISYNC.SHUTDOWN", tr), tr, c, "shutdown of A returned t1 as committed without acks")


def test_disabling_just_before_a_shutdown_is_no_release_by_the_shutdown(kit):
    # corpus/finding-shutdown-after-dba-disable: SET GLOBAL enabled = 0 ends t2's wait (async,
    # no_tx) at 5 ms, and the shutdown at that instant finds no waiter.
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t2"},
           {"at": 5 * MS, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_enabled", "value": False},
           {"at": 5 * MS, "op": "shutdown", "node": "A"}]
    h = kit.make_history([master(rpl_semi_sync_master_timeout=500), semisync_replica("B")],
                         [{"source": "A", "replica": "B", "latency_us": 50 * MS}], ops, sample_every_us=US, end_us=US)
    tr = kit.run(AS, h)
    c = tr.first("commit", node="A", trx="t2")
    assert (c["t"], c["semisync"], c.get("errno")) == (5 * MS, "no", None)
    assert kit.verdict("MARIADB.SEMISYNC.SHUTDOWN", tr).status != VIOLATED
    # Without the SET GLOBAL (and the switch OFF it caused) the same return is the shutdown's doing.
    tr.drop(tr.first("stmt", node="A", op="set_global"))
    for o in tr.all("server_status", node="A", t=5 * MS):
        tr.drop(o)
    assert_witness(kit.verdict("MARIADB.SEMISYNC.SHUTDOWN", tr), tr, c, "shutdown of A returned t2 as committed without acks")


def test_a_read_after_an_unacknowledged_commit_ended_is_not_protected(kit):
    # corpus/finding-failover-read-of-async-commit: t2's wait ends with the shutdown's error; after
    # the restart (semi-sync ON again) a session reads the recovered t2; A crashes and B, which
    # never got t2, takes over. Only a read during the wait makes t2 one the failover must keep.
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t2"}, {"at": 5 * MS, "op": "shutdown", "node": "A"},
           {"at": 5 * MS, "op": "restart", "node": "A"}, {"at": 5 * MS, "op": "read", "node": "A"},
           {"at": 5 * MS, "op": "crash", "node": "A"}, {"at": 5 * MS, "op": "failover", "node": "B"}]
    h = kit.make_history([master(rpl_semi_sync_master_timeout=500), semisync_replica("B")],
                         [{"source": "A", "replica": "B", "latency_us": 50 * MS}], ops, sample_every_us=US, end_us=US)
    tr = kit.run(AS, h)
    assert tr.first("read", node="A")["seen"] == ["t2"] and tr.first("commit", node="A", trx="t2")["semisync"] == "shutdown"
    assert kit.verdict("WL6355.FAILOVER.NO_LOSS", tr).status != VIOLATED
    # The same read during t2's wait (while ON, before the shutdown) is one the failover loses.
    read = tr.retime(tr.first("read", node="A"), 1 * MS)
    assert_witness(kit.verdict("WL6355.FAILOVER.NO_LOSS", tr), tr, read, "0-1-1 (read on A while ON) is missing on the new primary B")


def test_an_ack_the_harness_s_own_relay_held_is_no_time_of_the_io_thread(kit):
    # ss-with-delay on MariaDB with replcheck's relay stalled 0.4 s on B's first ack (a loaded
    # machine): the ack reached A 0.4 s after B queued t1. relay_held says the relay held it.
    tr = kit.run(AS, "ss-with-delay")
    ack = tr.first("ack", node="A", replica="B", pos=277)
    queued = tr.first("relay", node="B", trx="t1", last=True)["t"]
    tr.retime(ack, queued + 400 * MS)
    tr.header["relay_held"] = {"B": [[queued + 100, queued + 400 * MS]]}
    v = kit.verdict("WL1720.ACK.IO_THREAD", tr)
    assert v.status == PASS and v.checked, v
    tr.header["relay_held"] = {"C": [[queued + 100, queued + 400 * MS]]}  # another channel's relay
    assert_witness(kit.verdict("WL1720.ACK.IO_THREAD", tr), tr, ack, "B acknowledged (bin.000001, 277) 0.4 s after queueing it")


def test_an_ack_past_what_a_polled_trace_holds_of_the_binlog_is_not_judged(kit):
    # ss-recover-as-replica on MariaDB with B's ack of t1 late: A's recovery as a replica cut t1
    # from bin.000001, read at the end, so the Trace holds nothing of the file past 322 and the ack
    # of 558 (t1's end) seemed to end no transaction. "recovery" is unobserved on a polled server.
    tr = kit.run(AS, "ss-counters")
    ack = tr.first("ack", node="A", replica="B", pos=399)
    for b in tr.all("binlog", node="A", file="bin.000001"):
        if b["end"] > 322:
            tr.drop(b)
    tr.header["unobserved"] = [*tr.header.get("unobserved", ()), "recovery"]
    assert kit.verdict("WL1720.ACK.LAST_EVENT", tr).status != VIOLATED
    tr.header["unobserved"].remove("recovery")  # a model's Trace holds what a recovery cut: the ack is judged
    assert_witness(kit.verdict("WL1720.ACK.LAST_EVENT", tr), tr, ack, "B acknowledged (bin.000001, 399), which ends no transaction on A")


def _failover_after_unacknowledged(kit, *trxs: tuple[int, str]):
    """AFTER_SYNC, timeout 0.5 s: B's IO thread stops, then each (at, name) commits on A with no
    replica to acknowledge it; A crashes at 0.8 s and B, which has none of them, takes over."""
    ops = [{"at": 0, "op": "stop_slave", "node": "B", "thread": "io"},
           *({"at": at, "op": "trx", "node": "A", "trx": name} for at, name in trxs),
           {"at": 800 * MS, "op": "crash", "node": "A"}, {"at": 900 * MS, "op": "failover", "node": "B"}]
    h = kit.make_history([master(rpl_semi_sync_master_timeout=500, rpl_semi_sync_master_wait_point="AFTER_SYNC"),
                          semisync_replica("B")], [{"source": "A", "replica": "B", "latency_us": MS}], ops,
                         sample_every_us=US, end_us=US)
    return kit.run(AS, h)


def test_an_ack_passed_on_after_the_replica_hung_up_is_not_surely_read(kit):
    # mdb-phantom-after-sync on MariaDB with B's ack of t0 held 0.4 s by replcheck's relay: it was
    # passed on after B's IO thread had stopped, on a connection A's dump thread had left; A never
    # read it and t0 waited out its timeout. On a polled Trace, an ack between an IO thread's stop
    # and its next dump is not surely read.
    tr = _failover_after_unacknowledged(kit, (100 * MS, "t0"))
    end = tr.first("binlog", node="A", trx="t0", last=True)
    add(tr, {"t": 200 * MS, "kind": "ack", "node": "A", "replica": "B", "file": end["file"], "pos": end["end"]})
    tr.header["resolution_us"] = 50 * MS
    assert kit.verdict("WL1720.LIVE.RELEASE", tr).status != VIOLATED
    tr.header["resolution_us"] = 0  # an exact Trace: the master read it, and t0 waited on all the same
    assert_witness(kit.verdict("WL1720.LIVE.RELEASE", tr), tr, tr.first("commit", node="A", trx="t0"),
                   "commit of t0 on A could be released at 0.2 s but returned at 0.6 s")


def test_a_commit_the_timeout_released_is_not_owed_though_the_last_sample_showed_on(kit):
    # mdb-phantom-after-sync on MariaDB under load: t1 reached no replica before B's IO thread
    # stopped; its wait ran out at the timeout, which switched semi-sync OFF before the COMMIT
    # returned (commit_trx: switch_off, then return). The master was not polled meanwhile, so its
    # last sample still showed ON; A crashed and B, without t1, took over.
    tr = _failover_after_unacknowledged(kit, (100 * MS, "t1"))
    c = tr.first("commit", node="A", trx="t1")
    assert (c["t"], c["semisync"]) == (600 * MS, "no")
    for o in tr.all("server_status", node="A"):
        if 100 * MS < o["t"] < 800 * MS:  # unpolled while the statement ran
            tr.drop(o)
    assert kit.verdict("WL6355.FAILOVER.NO_LOSS", tr).status != VIOLATED
    # Returned before its timeout, with no ack, it returned while ON: the failover lost it.
    early = tr.retime(c, 300 * MS)
    assert_witness(kit.verdict("WL6355.FAILOVER.NO_LOSS", tr), tr, early, "0-1-1 (returned on A while ON) is missing on the new primary B")


def test_a_commit_another_sessions_timeout_released_between_two_samples_is_undecided(kit):
    # mdb-phantom-after-sync on MariaDB under load: t0's timeout switched semi-sync OFF, which
    # released t1 too, before its own timeout; the master's polls showed ON before and OFF 1 ms
    # after t1's COMMIT returned (the model's Trace, its switch retimed to such a poll). A crashed;
    # B, which had neither, took over.
    tr = _failover_after_unacknowledged(kit, (100 * MS, "t0"), (300 * MS, "t1"))
    t1 = tr.first("commit", node="A", trx="t1")
    assert (t1["t"], t1["semisync"]) == (600 * MS, "no")
    off = tr.first("server_status", node="A")
    assert (off["t"], off["variables"]["Rpl_semi_sync_master_status"]) == (600 * MS, "OFF")
    tr.retime(off, 601 * MS)  # the switch as the poll after the return shows it
    tr.header["resolution_us"] = 200 * MS
    verdict = kit.verdict("WL6355.FAILOVER.NO_LOSS", tr)
    assert verdict.status == INCONCLUSIVE and "0-1-2 returned on A as its status switched OFF" in verdict.witnesses[0].message
    # An exact trace showing ON until after the return: t1 returned while ON, unacknowledged, and is lost.
    tr.header["resolution_us"] = 0
    assert_witness(kit.verdict("WL6355.FAILOVER.NO_LOSS", tr), tr, t1, "0-1-2 (returned on A while ON) is missing on the new primary B")


@pytest.mark.parametrize("resolution_us, status", [
    (900_000, PASS),  # ins2 returned 0.798 s before the sample: a poll stamped after its read may miss it
    (500_000, VIOLATED),  # outside a finer resolution it must be counted
    (0, VIOLATED),  # a model's trace is exact
])
def test_a_polled_yes_tx_may_miss_a_commit_within_the_resolution_only(kit, resolution_us, status):
    tr = kit.run(AS, "ss-counters")
    tr.header["resolution_us"] = resolution_us
    sample(tr, "A", 3 * US)["variables"]["Rpl_semi_sync_master_yes_tx"] -= 1
    assert kit.verdict("WL1720.COUNT.TX", tr).status == status


def test_a_resolution_past_half_the_timeout_leaves_the_timeout_inconclusive(kit):
    # ss-counters: one commit waits out the 5 s timeout. Sampled every 3 s, a trace cannot tell that
    # wait from a prompt return: no pass and no violation can be claimed, only inconclusive.
    tr = kit.run("model:wl7318", "ss-counters")
    prop = kit.prop("WL1720.TIMEOUT.ASYNC")
    assert prop.run(TraceView(tr.header, tr.obs)).status == "pass"
    coarse = prop.run(TraceView({**tr.header, "resolution_us": 3_000_000}, tr.obs))
    assert coarse.status == "inconclusive" and "cannot tell whether it timed out" in coarse.witnesses[0].message


def test_a_relay_read_slowed_by_load_still_shows_the_event_before_its_ack(kit):
    """A polled relay log stamps an event when the read that found it ended: under load that can be
    later than the ack by more than the resolution. The read before it began at `since`, when the
    event was not whole yet: written in (since, t]. An ack after `since` is no finding; one before
    it (the event was not there when the earlier read began) still is."""
    tr, ack = ack_before_relay(kit)  # the ack at 2000500, B's relay of ins0's last event after it
    relay = next(r for r in tr.all("relay", node="B") if r.get("master_end") == 399)
    assert kit.verdict("WL1720.ACK.RELAY", tr).status == VIOLATED
    relay["since"] = ack["t"] - 1_000  # the read before began just before the ack
    assert kit.verdict("WL1720.ACK.RELAY", tr).status == PASS
    relay["since"] = ack["t"] + 1_000  # the read before began after the ack and did not find it
    assert kit.verdict("WL1720.ACK.RELAY", tr).status == VIOLATED


def _status_sample(tr, node: str, t: int, status: str) -> dict:
    """A server_status sample of node at t, as the last one before it with the status set."""
    last = [o for o in tr.all("server_status", node=node) if o["t"] <= t][-1]
    return add(tr, {**last, "t": t, "variables": {**last["variables"], "Rpl_semi_sync_master_status": status}})


@pytest.mark.parametrize("switch, status", [(None, VIOLATED), ("ON", VIOLATED), ("OFF", "inconclusive")])
def test_a_return_without_holders_is_undecidable_when_the_status_switched_within_the_resolution(kit, switch, status):
    # A loaded run (ss-counters on MariaDB, load 18): del1 returned 52 ms into its wait because
    # another commit's timeout switched the status OFF, which the next sample showed 90 ms later,
    # within the 1.1 s resolution. The trace cannot tell whether it returned while ON.
    tr, _ = commit_before_ack(kit)
    tr.header["resolution_us"] = 500
    if switch:
        _status_sample(tr, "A", 2 * US + 300, switch)
    v = kit.verdict("WL1720.ACK.WAIT", tr)
    assert v.status == status
    if status == "inconclusive":
        assert "cannot tell whether it was ON" in v.witnesses[0].message


@pytest.mark.parametrize("resolution_us, status", [(0, VIOLATED), (300_000, PASS)])
def test_a_commit_binlogged_while_the_status_switched_counts_as_either(kit, resolution_us, status):
    # A loaded run: the status went ON (a replica caught up) between two samples, and a commit was
    # binlogged and acknowledged in between; the server counted it in yes_tx. Sampled, it may have
    # been ON or not: yes or no. Exact (a model), the trace says OFF, so yes_tx is one too many.
    tr = kit.run(AS, "ss-counters")
    c = tr.first("commit", node="A", trx="ins1")
    b = [o for o in tr.all("binlog", node="A", trx="ins1")][0]
    _status_sample(tr, "A", b["t"] - 1, "OFF")
    _status_sample(tr, "A", c["t"] + 1, "ON")
    tr.header["resolution_us"] = resolution_us
    assert kit.verdict("WL1720.COUNT.TX", tr).status == status


def test_a_commit_quicker_than_the_timeout_did_not_time_out_whatever_the_resolution(kit):
    # A loaded run (ss-wait-no-slave, resolution 2 s, timeout 1.1 s): a commit that returned 22 ms
    # after it began cannot have waited out the timeout; TIMEOUT.LOG must not ask for its log line.
    tr, ins0 = commit_before_ack(kit)  # returns unacknowledged, as soon as it began
    prop = kit.prop("WL1720.TIMEOUT.LOG")
    tr.header["resolution_us"] = 6 * US  # past the timeout: only the statement's own duration tells
    assert prop.run(tr.view()).status == PASS
    for line in tr.all("log", node="A"):
        tr.drop(line)
    v = prop.run(tr.view())  # ins500 waited the timeout out, and nothing was logged
    assert v.status == VIOLATED and [w.message for w in v.witnesses] == [
        "commit of ins500 on A timed out with no log naming a binlog position"]


def test_flush_status_starts_the_transaction_counters_again(kit):
    # rpl_semi_sync.result (suite scenario mdb-rpl_semi_sync-flush-status): no_tx 12 and yes_tx 15
    # before FLUSH NO_WRITE_TO_BINLOG STATUS, 0 and 0 after; the counts after it are what follows.
    ops = [{"at": t, "op": "trx", "node": "A", "trx": f"t{t}"} for t in (US, 3 * US // 2)]
    ops += [{"at": 3 * US, "op": "flush_status", "node": "A"}, {"at": 4 * US, "op": "trx", "node": "A", "trx": "t4"}]
    h = kit.make_history([master(), semisync_replica("B")], [{"source": "A", "replica": "B", "latency_us": MS}], ops,
                         sample_every_us=US, end_us=6 * US)
    tr = kit.run(AS, h)
    assert [sample(tr, "A", t * US)["variables"]["Rpl_semi_sync_master_yes_tx"] for t in (2, 3, 5)] == [2, 0, 1]
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS
    # a server that left its counters where they were at FLUSH STATUS
    sample(tr, "A", 5 * US)["variables"]["Rpl_semi_sync_master_yes_tx"] = 3
    assert kit.verdict("WL1720.COUNT.TX", tr).status == VIOLATED


def test_a_generated_history_catches_recovery_keeps_in_doubt():
    # generator 14, seed 0, the semisync family: a crash with a commit in flight, the failover, then
    # restart_as_replica; caught by its kill where its base model holds (bench/mutant_search.py: its
    # first catch, History 4 up to generator 11, History 14 from generator 12, 27 since generator 14).
    system = get("mutant:recovery-keeps-in-doubt")
    history = generate(0, 27, families_for("semisync"))
    j = judge(system, history, system.declares.kills)
    assert caught(j, judge(get(system.declares.base), history, system.declares.kills)), j.violations


def test_a_commit_sent_to_no_replica_that_may_have_waited_may_be_counted_as_no():
    # MariaDB 10.11, flt-semisync-unsent at load 25 (resolution 1.21 s): t2, sent to no semi-sync
    # replica, waited out the timeout (MDEV-38486) and no_tx counted it, but its binlog write was
    # stamped by the first poll that saw it, 0.77 s before it returned: within the resolution, as a
    # commit that never waited. Its statement lasted 1.57 s, so it may have waited: no_tx may count
    # it. So may one no longer than the resolution: the status may have gone OFF and back ON
    # unseen between two samples (seed 8's History 182). One whose client saw the ack may not.
    header, obs = io.load_trace(Path(__file__).parent / "traces" / "mariadb-flt-semisync-unsent-waited-unseen.jsonl")
    prop = next(p for p in PROPERTIES if p.requirement == "WL1720.COUNT.TX")
    assert prop.run(TraceView(header, obs)).status == PASS
    t2 = next(o for o in obs if o["kind"] == "commit" and o["trx"] == "t2")
    assert t2["t"] - t2["start"] > header["resolution_us"]
    t2["start"] = t2["t"] - header["resolution_us"] // 2
    assert t2["semisync"] == "no" and prop.run(TraceView(header, obs)).status == PASS  # its client saw the timeout
    t2["semisync"] = None
    assert prop.run(TraceView(header, obs)).status == PASS
    t2["semisync"] = "yes"
    v = prop.run(TraceView(header, obs))
    assert v.status == VIOLATED and "A at 4.303007 s: yes_tx, no_tx = (1, 2)" in v.witnesses[0].message, v.witnesses


def test_a_server_rebuilt_from_a_backup_counts_from_zero(kit):
    # A rotating campaign's seed 46846, History 27: A committed t1 (no_tx 1), crashed, and was rebuilt
    # from B's backup (`restore`): a new server, whose samples show yes_tx, no_tx = (0, 0).
    tr = kit.run("model:wl7318", generate(46846, 27))
    restore = tr.first("restore", node="A")
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS
    # Without the rebuild, the same samples lose t1's count.
    tr.drop(restore)
    first = next(o for o in tr.all("server_status", node="A") if o["t"] > restore["t"])
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, first, "yes_tx, no_tx = (0, 0), the trace shows (0, 1)")


def test_a_server_rebuilt_from_a_backup_starts_semi_sync_from_its_configuration(kit):
    # corpus/finding-switch-on-at-a-restore: B (rpl_semi_sync_master_enabled in its configuration)
    # timed out OFF, crashed and was rebuilt from A's backup: a new server, ON from its start with
    # no ack, as at a restart; the model shows the status at the restore.
    tr = kit.run("model:mariadb-10.11", load_history(REPO / "corpus" / "finding-switch-on-at-a-restore.jsonl"))
    restore = tr.first("restore", node="B")
    on = tr.next_of("server_status", restore, node="B")
    assert on["t"] == restore["t"] and on["variables"]["Rpl_semi_sync_master_status"] == "ON"
    assert kit.verdict("WL7169.SWITCH_BACK_N", tr).status != VIOLATED  # no ack: the switch is the start's
    # Without the rebuild, the same switch ON had no ack.
    tr.drop(restore)
    assert_witness(kit.verdict("WL7169.SWITCH_BACK_N", tr), tr, on,
                   "B switched ON at 0.500001 s with acks of ('bin.000002', 277) from [] (need 1)")


def test_a_group_the_new_primary_skipped_by_the_dbas_counter_is_not_owed(kit):
    # corpus/finding-failover-new-primary-skipped-by-the-dba: C, told to skip one group, skips t1
    # after its IO thread acknowledged it; A crashes and C takes over without t1, by the DBA's act
    tr = kit.run("model:wl7318", load_history(REPO / "corpus" / "finding-failover-new-primary-skipped-by-the-dba.jsonl"))
    skips = tr.all("skip", node="C", trx="t1")
    assert {s["reason"] for s in skips} == {"sql_slave_skip_counter"}
    assert kit.verdict("WL6355.FAILOVER.NO_LOSS", tr).status != VIOLATED
    # Not skipped, t1 would be lost by the failover itself
    for s in skips:
        tr.drop(s)
    assert_witness(kit.verdict("WL6355.FAILOVER.NO_LOSS", tr), tr, tr.first("commit", node="A", trx="t1"),
                   "0-1-1 (returned on A while ON) is missing on the new primary C")


def test_a_timeout_logged_by_the_replica_thread_names_its_own_position(kit):
    # corpus/finding-timeout-logged-by-the-replica-thread: B, semi-sync master, applies t3 (its SQL
    # thread waits for an ack too), is promoted and commits t5; the waits time out together and the
    # one line names t3's end, which no client commit has. That line is t5's log.
    tr = kit.run("model:mariadb-10.11", load_history(REPO / "corpus" / "finding-timeout-logged-by-the-replica-thread.jsonl"))
    [t3_end] = [b["end"] for b in tr.all("binlog", node="B") if b.get("trx") == "t3" and b["last"]]
    [line] = [o for o in tr.all("log", node="B") if o["message"].startswith("Timeout waiting")]
    assert f"pos: {t3_end})" in line["message"]
    assert kit.verdict("WL1720.TIMEOUT.LOG", tr).status == PASS
    t5 = next(o for o in tr.all("commit", node="B") if o["trx"] == "t5")
    tr.drop(line)
    assert_witness(kit.verdict("WL1720.TIMEOUT.LOG", tr), tr, t5, "commit of t5 on B timed out with no log naming a binlog position")
