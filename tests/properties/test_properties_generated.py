"""Generated Histories (generator 14, kept as files) on which a property or a model rule was wrong:
each passes on the model that runs it now, and the same property still fails on the trace changed
to show the fault it is there to catch."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import US, assert_witness

from replcheck.properties.core import PASS, VIOLATED

from test_properties_incident import incidents_wait, run_on

MARIADB, WL7318 = "model:mariadb-10.11", "model:wl7318"


def run(kit, system, name: str):
    """The kept History run on a system by name, or on a System made for the test."""
    history = json.loads((Path(__file__).parent / "histories" / f"{name}.json").read_text())
    return kit.run(system, history) if isinstance(system, str) else run_on(system, history)


def passes_then_fails(kit, tr, requirement: str, change, expect: str) -> None:
    assert kit.verdict(requirement, tr).status != VIOLATED, kit.verdict(requirement, tr)
    target = change(tr)
    assert_witness(kit.verdict(requirement, tr), tr, target, expect)


def test_after_a_failover_the_delay_counts_with_the_new_primarys_clock_difference(kit):
    """B fails over from A to C, whose clock is an hour ahead: its IO thread measures -3600 s at the
    connect, and its SQL thread counts t2 (relayed from A) with it, so t2 is due long before it runs.
    Counted with A's difference (0), t2 began a second early."""
    tr = run(kit, MARIADB, "gen14-semisync-820002-2")

    def old_difference(tr):
        tr.first("clock_query", node="B", source="C")["clock_diff_with_master"] = 0
        return tr.first("apply", node="B", trx="t2", idx=0)
    passes_then_fails(kit, tr, "WL344.WAIT.RULE", old_difference, "B began GTID_LOG_EVENT of t2")


def test_a_replica_stopped_at_an_incident_before_any_sample_shows_nothing_of_its_boot_read(kit):
    """B reads an old-format relay-log.info at its start, then stops at an incident before the first
    SHOW SLAVE STATUS; without that stop, the sample's stopped SQL thread is the read's fault."""
    tr = run(kit, WL7318, "gen14-delay-820014-4")
    passes_then_fails(kit, tr, "WL344.RLI.OLD_FORMAT", lambda tr: tr.drop(tr.first("sql_stop", node="B")),
                      "B read old-format")


def test_the_incidents_wait_counts_by_the_clock_difference_at_its_read(kit):
    """B read the incident with a difference of 2 s and waits to 4.6 s; its reconnect measures 3 s
    during the wait, which does not move it. Stopped at 4 s, it stopped before due."""
    tr = run(kit, incidents_wait(), "gen14-delay-830019-23")
    passes_then_fails(kit, tr, "WL3464.DELAY", lambda tr: tr.retime(tr.first("sql_stop", node="B", reason="error"), 4 * US),
                      "B stopped at the incident at 4 s")


def test_the_incident_read_at_its_relay_counts_with_the_clock_step_before_it(kit):
    """Generator 15: B's clock steps an hour ahead, then the incident arrives and is read at once: by
    the difference measured before the step it is long due, and B stops at it. Without the step it
    was due at 7 s."""
    tr = run(kit, incidents_wait(), "gen15-delay-890023-4")
    passes_then_fails(kit, tr, "WL3464.DELAY", lambda tr: (tr.drop(tr.first("clock_step", node="B")), tr.first("sql_stop", node="B", reason="error"))[1],
                      "B stopped at the incident at 0 s, due at 7 s")


def test_an_io_thread_stopped_by_its_own_fatal_error_is_not_the_incidents(kit):
    """C's IO thread stops at 1236 (its master's binlog purged) as it stops at an incident: the
    sample showing it stopped is the error's. Without the error, it is the incident's fault."""
    tr = run(kit, MARIADB, "gen14-groupid-830049-28")
    passes_then_fails(kit, tr, "WL3464.IO_RUNS", lambda tr: tr.drop(tr.first("error", node="C", thread="io")),
                      "C at 6.3 s: IO thread 'No'")


def test_a_clock_step_after_the_read_in_its_microsecond_does_not_move_the_wait(kit):
    """B restarts and reads t1 at once; its clock steps 1.25 s later in the same µs: the wait begun
    at the read ends when due by the clock before the step. Begun a second later, it waited too long."""
    tr = run(kit, MARIADB, "gen14-delay-830005-1")

    def late(tr):
        a = tr.first("apply", node="B", trx="t1", idx=0)
        a["begin"] = a["t"] = 8 * US
        return a
    passes_then_fails(kit, tr, "WL344.WAIT.NO_EXTRA", late, "B read ANONYMOUS_GTID_LOG_EVENT of t1")


def test_a_copy_the_dba_threw_away_is_not_the_failovers_loss(kit):
    """B's CHANGE MASTER with both threads stopped purged the relay log that held t3's acknowledged
    copy, then A crashed: the new primary B lacks it by the DBA's act. Kept, the copy is owed. (Its ops
    start once the replicas' dump requests have arrived, 400 ms in: before, A had no semi-sync client.)"""
    tr = run(kit, WL7318, "gen14-semisync-800009-0")
    passes_then_fails(kit, tr, "WL6355.FAILOVER.NO_LOSS",
                      lambda tr: tr.drop(tr.first("relay_log_recovery", node="B", reason="change_master")), "0-1-1")


def test_the_seeds_reconnect_by_gtid_acknowledges_what_the_replica_holds(kit):
    """B lost t1's ack and reconnects by GTID: the seeds' server takes the replica's place for its
    reply and releases t1 at the reconnect (MariaDB's dump starts at a binlog's head and does not: a
    declared deviation). Left to the timeout, t1 waited past its release."""
    tr = run(kit, WL7318, "gen14-semisync-830014-3")
    commit = tr.first("commit", node="A", trx="t1")
    assert commit["semisync"] == "yes" and commit["t"] < 5 * US
    passes_then_fails(kit, tr, "WL1720.LIVE.RELEASE", lambda tr: tr.retime(commit, 5 * US), "commit of t1 on A could be released")


def test_a_reconnect_after_the_relay_log_was_thrown_away_acknowledges_nothing_of_it(kit):
    """Generator 15: B held t7 whole, then a CHANGE MASTER with both threads stopped purged its relay
    log; its reconnect holds nothing of t7 to acknowledge, and t7 returns at the ack of its new copy.
    Kept, the relay log held t7 at the reconnect, which then releases it. (Its ops start once the
    replicas' dump requests have arrived, 50 ms in.)"""
    tr = run(kit, WL7318, "gen15-mixed-890017-26")
    passes_then_fails(kit, tr, "WL1720.LIVE.RELEASE",
                      lambda tr: (tr.drop(tr.first("relay_log_recovery", node="B", t=18_450_004)), tr.first("commit", node="A", trx="t7"))[1],
                      "commit of t7 on A could be released")


def test_a_read_after_the_workers_idled_sets_the_lag_anew(kit):
    """B's workers idle after t5 (written at 2 s); the coordinator then reads t2, whose GTID event
    carries its start at 0 s: the lag counts from it, 3 at 3.9 s. Five is more than either allows."""
    tr = run(kit, WL7318, "gen14-delay-830000-11")

    def more(tr):
        s = tr.first("status", node="B", t=3_900_000)
        s["Seconds_Behind_Master"] = 5
        return s
    passes_then_fails(kit, tr, "PARALLEL.SBM.VALUE", more, "B at 3.9 s shows Seconds_Behind_Master 5")


def test_a_replicas_clock_stepped_back_may_show_zero_with_an_old_group_pending(kit):
    """B's clock steps back 2 s after its connect: MariaDB subtracts the difference measured then,
    and shows 0 while t2 (written 2 s before) waits. Without the step, 0 hides a pending group."""
    tr = run(kit, MARIADB, "gen14-parallel-830015-28")
    passes_then_fails(kit, tr, "PARALLEL.SBM.PENDING",
                      lambda tr: (tr.drop(tr.first("clock_step", node="B")), tr.all("status", node="B", t=2_030_000)[-1])[1],
                      "B at 2.03 s shows Seconds_Behind_Master 0")


def test_a_group_begun_before_the_until_position_is_finished(kit):
    """START SLAVE UNTIL a position inside t9: t9 began before it, and the SQL thread finishes it.
    Had the position been t9's start, committing t9 is past it."""
    tr = run(kit, MARIADB, "gen14-parallel-830022-28")

    def at_t9(tr):
        start = next(s for s in tr.all("stmt", node="B", op="start_slave") if (s.get("until") or {}).get("master_log_pos") == 1981)
        start["until"] = {**start["until"], "master_log_pos": tr.first("binlog", node="A", trx="t9", idx=0)["pos"]}
        return start
    passes_then_fails(kit, tr, "PARALLEL.UNTIL", at_t9, "B commits t9, written after its UNTIL position")


def test_a_replicas_own_lost_change_justifies_its_incident(kit):
    """B, failed over but not promoted (its SQL thread stopped at an incident), takes a client's
    MyISAM statement whose binlog write fails: the change stays, and the incident marks it. Without
    the change, the incident marks nothing."""
    tr = run(kit, WL7318, "gen14-domains-840014-16")
    passes_then_fails(kit, tr, "WL3464.NO_FALSE",
                      lambda tr: (tr.drop(tr.first("visible", node="B", trx="t4")), tr.first("binlog", node="B", incident=1))[1],
                      "B wrote an incident at 1.001 s")


def test_a_parallel_replica_is_left_to_the_parallel_pending_rule(kit):
    """B, with workers, committed t5 (SET TIMESTAMP 50 s ahead) before t3: its checkpoint shows 0
    while t3 waits (PARALLEL.SBM.PENDING allows it). Serial, the same 0 hides a pending group."""
    tr = run(kit, WL7318, "gen14-delay-840023-17")

    def serial(tr):
        for p in tr.all("parallel", node="B"):
            tr.drop(p)
        return tr.first("status", node="B", t=18_200_000)
    passes_then_fails(kit, tr, "SBM.PENDING", serial, "B at 18.2 s shows Seconds_Behind_Master 0")


def test_a_later_waiters_timeout_ends_an_earlier_wait(kit):
    """t3 waits with no semi-sync replica (timeout 10 s); the DBA sets 500 ms and t4, binlogged
    later, times out first: the switch to async releases t3 too. Without t4, t3 returned early
    (t4's binlog write goes too: a group binlogged with no commit is an SQL thread's, whose
    timeout would release t3 as well)."""
    tr = run(kit, WL7318, "gen14-semisync-830025-38")

    def alone(tr):
        for o in [tr.first("commit", node="C", trx="t4"), *tr.all("binlog", node="C", trx="t4")]:
            tr.drop(o)
        return tr.first("commit", node="C", trx="t3")
    passes_then_fails(kit, tr, "WL1720.WAIT_NO_SLAVE", alone, "t3 returned after 6.51 s")


def test_a_replica_restarted_without_semi_sync_is_no_semi_sync_replica(kit):
    """B filters marked events on the master but restarted with rpl_semi_sync_slave_enabled off: C,
    which gets t4, is A's semi-sync replica, and A waits for it. Were B still one, t4 went to none."""
    tr = run(kit, WL7318, "gen14-filter-830050-21")

    def still_semi(tr):
        tr.first("restart", node="B")["variables"].pop("rpl_semi_sync_slave_enabled")
        return tr.first("commit", node="A", trx="t4")
    passes_then_fails(kit, tr, "FILTER.SEMISYNC.UNSENT", still_semi, "A held the commit of t4")


def test_a_timestamp_ahead_counts_source_clock_steps_from_the_groups_write(kit):
    """t1 carries SET TIMESTAMP 50 s ahead; A's clock steps an hour ahead before B connects again:
    MariaDB's lag counts t1's timestamp with the new difference (3556). Far beyond that is wrong."""
    tr = run(kit, MARIADB, "gen14-parallel-840028-38")

    def beyond(tr):
        s = tr.first("status", node="B", t=6_500_000)
        s["Seconds_Behind_Master"] += 3600 * 2
        return s
    passes_then_fails(kit, tr, "PARALLEL.SBM.VALUE", beyond, "B at 6.5 s shows Seconds_Behind_Master")


# -- model rules ----------------------------------------------------------------------------------
def test_a_replicas_filter_as_it_runs_decides_what_semi_sync_waits_for(kit):
    """C filtered marked events on the master, stopped, and took FILTER_ON_SLAVE before A's marked
    t4: its next connection gets t4 and acks it, so A waits (MySQL flavour). Returned unsent, the
    commit returned with no ack while ON."""
    tr = run(kit, WL7318, "gen14-filter-800002-27")
    commit = tr.first("commit", node="A", trx="t4")
    assert commit["semisync"] == "yes" and kit.verdict("WL1720.ACK.WAIT", tr).status == PASS
    commit.update(semisync="unsent", t=tr.first("binlog", node="A", trx="t4", last=True)["t"])
    assert kit.verdict("WL1720.ACK.WAIT", tr).status == VIOLATED


def test_a_server_whose_first_start_was_refused_creates_its_relay_log_info(kit):
    """Generator 15: C's start is refused (--rpl-hierarchical without --log-slave-updates) until a
    restart with it: that start finds no relay-log.info and creates one, reading none. An empty one
    written by the server is a malformed relay-log.info."""
    tr = run(kit, "model:groupid", "gen15-groupid-900013-38")
    assert not tr.all("error", node="C", errno=1201) and not tr.all("relay_log_info", node="C")
    restart = tr.all("restart", node="C")[-1]
    passes_then_fails(kit, tr, "WL344.RLI.FORMAT", lambda tr: tr.insert_before(
        tr.next_of("master_status", restart, node="C"), {"t": restart["t"], "kind": "relay_log_info", "node": "C", "content": ""}),
        "C wrote relay-log.info ''")


def test_a_group_applied_without_log_slave_updates_bumps_the_sequence(kit):
    """B applies 0-1-1..0-1-5 with --log-slave-updates off, fails over and commits: its own GTIDs
    follow (0-2-6 on), so R, asking at 0-1-5, gets them all. Numbered from 1, R skips five."""
    tr = run(kit, MARIADB, "gen14-domains-800001-1")
    assert tr.first("visible", node="B", trx="t6")["gtid"] == "0-2-6"
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr).status == PASS
    t7 = tr.first("relay", node="R", trx="t7", idx=0)
    for o in [o for o in tr.obs if o.get("node") == "R" and o.get("trx") == "t6"]:  # numbered from 1, t6 was skipped
        tr.drop(o)
    assert_witness(kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr), tr, t7, "R: 0-2-7 arrived from B before 0-2-6")


def test_a_backup_holds_what_the_donors_engine_committed(kit):
    """A is restored from B while t3 waits for its ack on B under AFTER_SYNC (binlogged, prepared):
    the backup lacks t3, the ID set is the one before it, and A gets t3 by replication."""
    tr = run(kit, WL7318, "gen14-groupid-830001-39")
    assert tr.first("data", node="A")["counts"].get("t3") == 1
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == PASS
    tr.first("data", node="A")["counts"].pop("t3")
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == VIOLATED


def test_a_commit_answered_at_a_shutdown_still_names_its_table(kit):
    """t1's commit waits for its ack when A shuts down: the answer is an error, but t1 was binlogged
    and B's filter keeps it out; the answer names its table. Unnamed, B seems to lack t1."""
    tr = run(kit, WL7318, "gen14-mixed-860006-6")
    commit = tr.first("commit", node="A", trx="t1")
    assert commit["errno"] is not None and commit["table"]
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status != VIOLATED
    del commit["table"]
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == VIOLATED


@pytest.mark.parametrize("kept, replica, witness, seed, family", [
    # the semisync family's failover, drawn before the wait: a commit on B within its drain precedes
    # A's groups in B's binlog, and C, connecting by GTID after them, never gets it
    ("gen14-semisync-820001-27", "C", "C replicates from B but lacks t4", 820001, "semisync"),
    # the domains family's: t8 on B within its drain; and a crash of B in the µs of its promotion
    ("gen15-domains-870009-0", "R", "R replicates from B but lacks t8", 870009, "domains"),
    ("gen15-domains-910004-29", "R", "R replicates from B but lacks t6", 910004, "domains"),
])
def test_clients_write_to_the_new_primary_once_it_took_over(kit, kept, replica, witness, seed, family):
    """A failover waits for the promotion: no client commit, and no crash, on the new primary
    comes before it (at its µs, the operation would run before the group that completes it). In
    the kept Histories, drawn before the wait, the new primary's own group lies before the
    replica's GTID in its binlog: MariaDB's dump skips the domain's groups up to that GTID
    (send_event_to_slave), so it is not owed, as on the real server (corpus/server
    own-group-before-the-new-source-start); asked from the start of the domain it would be."""
    from replcheck.generate import generate

    h = json.loads((Path(__file__).parent / "histories" / f"{kept}.json").read_text())
    tr = kit.run(MARIADB, h)
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == PASS
    connects = tr.all("connect", node=replica, source="B")
    assert connects
    for o in connects:
        o["gtid_pos"] = ""
    assert_witness(kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr), tr, None, witness)
    failovers = 0
    for i in range(40):
        h = generate(seed, i, (family,))
        tr = kit.run(WL7318, h)
        for p in tr.all("promoted"):
            failovers += 1
            after = h["ops"][next(k for k, o in enumerate(h["ops"]) if o["op"] == "failover"):]
            assert not [o for o in after if o["op"] in ("trx", "crash") and o["node"] == p["node"] and o["at"] <= p["t"]], (i, p)
    assert failovers


def test_a_reconnects_clock_query_in_the_reads_microsecond_may_come_before_the_read(kit):
    """B's SQL thread reads t1 in the µs its IO thread reconnects and measures a difference of 2 s
    (0 before): the trace cannot order the two, so t1 may wait to 3.6 s. Measured a µs after the
    read, the difference of 0 is the read's: t1 was due at 1.6 s and began 2 s late."""
    tr = run(kit, MARIADB, "gen15-delay-930010-9")
    passes_then_fails(kit, tr, "WL344.WAIT.NO_EXTRA", lambda tr: (tr.retime(tr.all("clock_query", node="B")[1], 3000),
                                                                 tr.first("apply", node="B", trx="t1", idx=0))[1],
                      "B read GTID_LOG_EVENT of t1 at 0.002 s, due 1.6 s, began 3.6 s")


def test_a_clock_step_measured_in_the_reads_microsecond_may_count_for_the_read(kit):
    """A's clock steps an hour ahead; B reads t1 (dated by it) in the µs its reconnect measures
    -3600 s, and runs it at 7 s, as that difference counts. Measured a µs after the read, the
    earlier -2 s is the read's, and t1 was not due before 3605 s."""
    tr = run(kit, MARIADB, "gen15-delay-930009-7")
    passes_then_fails(kit, tr, "WL344.WAIT.RULE", lambda tr: (tr.retime(tr.all("clock_query", node="B")[1], 2000),
                                                             tr.first("apply", node="B", trx="t1", idx=0))[1],
                      "B began GTID_LOG_EVENT of t1 at 7 s but it was due at 3605 s")


def test_a_reset_slave_without_gtid_fetches_the_sources_binlog_anew(kit):
    """C, without GTID, is RESET SLAVE and restarted: it forgot its place in B's binlog and fetches
    it from the beginning, so t1 and t2 run again, as the DBA's clean start asks. Connected by GTID
    after the reset, it resumes at gtid_slave_pos: a second copy is the replica's fault."""
    tr = run(kit, MARIADB, "gen15-delay-870039-31")

    def by_gtid(tr):
        tr.next_of("connect", tr.first("stmt", node="C", op="reset_slave"), node="C")["by"] = "gtid"
        return None
    passes_then_fails(kit, tr, "GGID.RECOVERY.EXACTLY_ONCE", by_gtid, "C holds t1 2 times")


def test_a_marked_group_a_replica_filters_sets_no_delay_wait(kit):
    """B filters events marked @@skip_replication (FILTER_ON_SLAVE) and holds only the GTID event of
    t3, marked: it ignores it without a wait, and shows it has read all its relay log. Unmarked,
    the event would be delayed to 15 s, and the state would have to say so."""
    tr = run(kit, MARIADB, "gen15-mixed-910012-25")

    def unmarked(tr):
        tr.first("relay", node="B", trx="t3", idx=0)["skip_replication"] = False
        return tr.first("status", node="B", t=11_200_000)
    passes_then_fails(kit, tr, "WL344.STATE.WAITING", unmarked, "B at 11.2 s shows state")


@pytest.mark.parametrize("kept, system, at, shown", [
    # t2, SET TIMESTAMP 50 s ahead, committed; B idled, and the rotation's own events (the relay
    # log's, which move nothing) came before t5's read at 12.6 s: the lag counts from t5 anew
    ("gen15-mixed-880024-39", WL7318, 14_000_000, 6),
    # B idled, its IO thread reconnected, and the master's format description (its binlog's start,
    # 11 s) was the first read: MariaDB counts the lag from it, older than the last commit's
    ("gen15-mixed-880025-5", MARIADB, 14_700_000, 8),
    # generator 16, the same on the seeds' MySQL-like server, which does not count the format
    # description: the group read next (t4, stamped 0 s) counts, older than the description
    ("gen16-mixed-870020-30", WL7318, 3_500_000, 6),
])
def test_a_parallel_replicas_lag_counts_anew_from_the_first_read_after_idling(kit, kept, system, at, shown):
    """The lag may exceed the time since the last commit, never the time since that read."""
    tr = run(kit, system, kept)

    def more(tr):
        s = tr.first("status", node="B", t=at)
        s["Seconds_Behind_Master"] = shown
        return s
    passes_then_fails(kit, tr, "PARALLEL.SBM.VALUE", more, f"B at {at / US:g} s shows Seconds_Behind_Master {shown}")


def test_a_skip_counter_lost_to_a_crash_skips_nothing(kit):
    """B stops at an incident; the DBA sets SQL_SLAVE_SKIP_COUNTER = 1, and B crashes before START
    SLAVE: the counter was in memory, the restarted B stops at the same incident again. Without the
    crash the START would have skipped it, and a stop at it again would be one it had passed."""
    tr = run(kit, WL7318, "gen15-parallel-910016-12")

    def no_crash(tr):
        tr.drop(tr.first("crash", node="B", t=15_541_997))
        return tr.all("sql_stop", node="B", reason="error")[-1]
    passes_then_fails(kit, tr, "WL3464.R4.ONCE", no_crash, "B stopped at an incident at 15.95777 s after skipping 1")


def test_an_incident_read_inside_a_partial_group_keeps_the_groups_start(kit):
    """C's IO thread was cut inside t3 and reconnects by position; the incident follows the artificial
    format description, which rolls nothing back: the stop rolls t3's partial copy back, and C shows
    the place before t3. With no group open at the stop, that place would be one before the incident's."""
    tr = run(kit, WL7318, "gen15-semisync-870026-20")

    def nothing_open(tr):
        tr.drop(tr.first("rollback", node="C", reason="error"))
        return tr.first("status", node="C", t=1_400_000)
    passes_then_fails(kit, tr, "WL3464.HOLD", nothing_open, "C stopped at an incident shows Relay_Log_Pos 558")


@pytest.mark.parametrize("name,at", [("gen18-parallel-164218-46", 2_500_000), ("gen18-parallel-20261130-1641", 2_500_000)])
def test_a_format_description_written_before_its_sources_clock_stepped_back(kit, name, at):
    """B, restarted, reads A's format description (dated before A's clock stepped 2 s back) and the
    group after it at once: MariaDB counts the lag from the format description, 2 s ahead of the
    group's timestamp, and shows 0 while the group waits. Without the step, 0 hides a pending group."""
    tr = run(kit, MARIADB, name)
    passes_then_fails(kit, tr, "PARALLEL.SBM.PENDING",
                      lambda tr: (tr.drop(tr.first("clock_step", node="A")), tr.first("status", node="B", t=at))[1],
                      f"B at {at / US:g} s shows Seconds_Behind_Master 0")


@pytest.mark.parametrize("requirement", ["SBM.PENDING", "SBM.DELAY"])
def test_a_caught_up_test_between_two_sources_binlogs(kit, requirement):
    """R waits out MASTER_DELAY 3 for t3, relayed from M; B, promoted, flushed its logs, and R's IO
    thread, now B's, reads bin.000002:124, the place R's SQL thread stands at in M's binlog: MySQL's
    caught-up test (name and offset) shows 0. At another place, 0 hides the waiting group."""
    tr = run(kit, "model:groupid", "gen18-domains-77-268")

    def elsewhere(tr):
        s = tr.first("status", node="R", t=2_700_000)
        s["Read_Master_Log_Pos"] += 100
        return s
    passes_then_fails(kit, tr, requirement, elsewhere, "R at 2.7 s")


def test_a_wait_for_a_group_read_again_ends_as_the_sample_is_taken(kit):
    """B, stopped with two domains in gtid_slave_pos, reads t10 again and waits out its delay to 7 s;
    the sample at 7 s, logged first, shows 0 left, and t11 is read after it. Had B read t11 before
    the sample, 0 left would be 2 s early."""
    tr = run(kit, MARIADB, "gen18-mixed-20261130-1933")

    def read_before(tr):
        tr.first("apply", node="B", trx="t11", idx=0)["read"] = 6_900_000
        return tr.all("status", node="B", t=7_000_000)[0]
    passes_then_fails(kit, tr, "WL344.SSS.REMAINING", read_before, "B at 7 s: SQL_Remaining_Delay 0")
