"""Properties judged on real servers' Traces (corpus/server). stop-after-an-ignored-group: a group B's
filters keep out arrived between its last status sample and STOP SLAVE SQL_THREAD, and the SQL thread
passed it before the stop took effect; a server's Trace cannot show that pass ("filtered" is
unobserved), so the moved position is no WL344.STOP.NO_EXEC violation there. incidents-back-to-back:
a stop that names no relay-log place is the first unskipped incident's (WL3464.HOLD).
semisync-waits-with-no-replica: a semi-sync master's commit is not WL344.MASTER.UNAFFECTED's to judge.
replica-reconnects-after-source-restart: a source's restart just before a write delays the relay.
unsent-commits-released-by-a-later-ack: WL1720.COUNT.TX's unsent commits may be yes_tx's.
filtered-group-passed-before-its-commit-returned: a filtered group moves gtid_slave_pos from its binlog write.
group-in-hand-at-the-sample: a sample may show the start of the group whose change its poll saw.
reset-master-begins-gtids-again: a visible row is its own transaction's, whatever GTID it shares.
after-sync-ddl-and-timeout-release: AFTER_SYNC hides no DDL, nor a row past its commit's return.
requested-incident-placed-at-its-own-second: a requested incident is its statement's wherever its interval places it.
incident-placed-before-its-lost-change: a failing statement's incident marks its lost change wherever placed.
delay-change-holds-a-filtered-group: a group B's filters keep out is owed no copy after a delay change.
unsent-commit-timed-out: an unsent commit whose client saw the timeout may be in no_tx.
failed-statement-waits-at-the-session-end: a failed statement's binlogged group is counted when its
session's wait ends, which the Trace does not show.
server-default-ack-timeout: an absent rpl_semi_sync_master_timeout is the server's default.
filtered-group-never-visible-before-the-next: a group B's filters keep out is owed before no other.
myisam-statement-groups-visible-as-one: a visible MyISAM transaction holds each statement's group.
delay-counted-from-the-connect-after-a-purge: a copy fetched after a purge waits by that connect's difference.
parallel-coordinator-waits-ahead-of-its-workers: a coordinator delays a later group while a worker runs
an earlier one, and counts the lag until its workers are idle.
switch-on-seen-after-a-later-commit: a switch back ON is judged by the binlog's end when it may have been made.
unsent-commits-counted-through-an-unseen-off: an unsent commit may be in no_tx, by an OFF no sample saw.
stop-finishes-a-non-transactional-group: a stop that waits for a group's end is not judged by its length.
stop-waits-for-a-workers-group: a stop that waits for a worker's group is not judged by its length.
stop-waits-for-a-workers-ack: nor one that waits for a worker's ack, which may move the place past its group.
parallel-relay-place-used-again-after-a-purge: a relay-log place's later copy was not applied at the sample.
delay-read-before-a-reconnect-in-its-group: a wait read before a reconnect counts by the difference before
it, and the lag by the group's statements relayed into the next relay log."""
from __future__ import annotations

import re

from replcheck import io
from replcheck.properties.core import VIOLATED
from conftest import REPO, Trace, assert_witness

KEPT = "stop-after-an-ignored-group"


def _server_trace(name: str) -> tuple[dict, list[dict]]:
    """A corpus/server Trace's header and observations, unnumbered as a judge takes them."""
    header, obs = io.load_trace(REPO / "corpus" / "server" / f"{name}.trace.jsonl")
    return header, [{k: x for k, x in o.items() if k != "_line"} for o in obs]


def _trace(unobserved: list[str]) -> Trace:
    header, obs = _server_trace(KEPT)
    return Trace({**header, "unobserved": unobserved}, obs)


def test_a_filtered_group_passed_before_the_stop_moves_the_position(kit):
    header, _ = _server_trace(KEPT)
    assert "filtered" in header["unobserved"]
    assert kit.verdict("WL344.STOP.NO_EXEC", _trace(header["unobserved"])).status != VIOLATED


def test_a_trace_that_shows_filtering_must_show_the_pass(kit):
    header, _ = _server_trace(KEPT)
    v = kit.verdict("WL344.STOP.NO_EXEC", _trace([k for k in header["unobserved"] if k != "filtered"]))
    assert v.status == VIOLATED and any("moved B from Relay_Log_Pos 2929 to 3165" in w.message for w in v.witnesses)


def test_a_stop_at_the_first_of_two_incidents_is_judged_at_the_first(kit):
    # corpus/server/incidents-back-to-back: B relayed incidents at relay.000002:666 and :723 and
    # stopped at the first; a real server's stop names no relay-log place
    header, obs = _server_trace("incidents-back-to-back")
    assert kit.verdict("WL3464.HOLD", Trace(header, obs)).status != VIOLATED
    stop = next(o for o in obs if o["kind"] == "sql_stop" and o.get("errno") == 1590)
    moved = [{**o, "Relay_Log_Pos": 700} if o["kind"] == "status" and o["node"] == "B" and o["t"] > stop["t"]
             and o["Slave_SQL_Running"] == "No" else o for o in obs]
    v = kit.verdict("WL3464.HOLD", Trace(header, moved))
    assert v.status == VIOLATED and any("Relay_Log_Pos 700" in w.message and "incident is at 666" in w.message for w in v.witnesses)


def test_a_semi_sync_master_s_commit_is_the_semi_sync_properties_to_judge(kit):
    # corpus/server/semisync-waits-with-no-replica: t1 and t2 waited out the timeout together
    header, obs = _server_trace("semisync-waits-with-no-replica")
    assert kit.verdict("WL344.MASTER.UNAFFECTED", Trace(header, obs)).status != VIOLATED
    nodes = [{**n, "variables": {k: x for k, x in n.get("variables", {}).items() if k != "rpl_semi_sync_master_enabled"}}
             for n in header["topology"]["nodes"]]
    plain = {**header, "topology": {**header["topology"], "nodes": nodes}}
    v = kit.verdict("WL344.MASTER.UNAFFECTED", Trace(plain, obs))
    assert v.status == VIOLATED and any("commit of t1 returned at" in w.message for w in v.witnesses)


def test_a_replica_reconnecting_to_a_restarted_source_relays_late(kit):
    # corpus/server/replica-reconnects-after-source-restart: A restarted, committed t1 at once, and
    # B's IO thread came back at its next connect retry
    header, obs = _server_trace("replica-reconnects-after-source-restart")
    assert kit.verdict("WL344.IO.UNAFFECTED", Trace(header, obs)).status != VIOLATED
    undisturbed = [o for o in obs if not (o["node"] == "A" and o["kind"] in ("restart", "shutdown", "crash"))]
    v = kit.verdict("WL344.IO.UNAFFECTED", Trace(header, undisturbed))
    assert v.status == VIOLATED and any("B relayed GTID_LOG_EVENT of t1" in w.message for w in v.witnesses)


def test_an_unsent_commit_released_by_a_later_ack_is_counted_yes(kit):
    # corpus/server/unsent-commits-released-by-a-later-ack: t1 and t2 (marked, sent to no semi-sync
    # replica) were released by B's ack of t3's place, and yes_tx counted them
    header, obs = _server_trace("unsent-commits-released-by-a-later-ack")
    assert kit.verdict("WL1720.COUNT.TX", Trace(header, obs)).status != VIOLATED
    unacked = [o for o in obs if not (o["kind"] == "ack" and o["pos"] == 1106)]
    v = kit.verdict("WL1720.COUNT.TX", Trace(header, unacked))
    assert v.status == VIOLATED and any("yes_tx, no_tx = (4, 0)" in w.message for w in v.witnesses)


def test_a_filtered_group_counts_from_its_binlog_write(kit):
    # corpus/server/filtered-group-passed-before-its-commit-returned: B filters everything; t3's
    # commit waited 0.5 s for semi-sync while B had passed its group already
    header, obs = _server_trace("filtered-group-passed-before-its-commit-returned")
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", Trace(header, obs)).status != VIOLATED
    unwritten = [o for o in obs if not (o["kind"] == "binlog" and o.get("trx") == "t3")]
    v = kit.verdict("MARIADB.GTID.SLAVE_POS", Trace(header, unwritten))
    assert v.status == VIOLATED and any("gtid_slave_pos '0-1-3'" in w.message for w in v.witnesses)


def test_a_sample_may_show_the_start_of_the_group_its_poll_saw_done(kit):
    # corpus/server/group-in-hand-at-the-sample: B's poll at 0.106 s saw create_t1's table while its
    # status still read Relay_Log_Pos 615 (the group's Gtid event); the stop then showed 769
    header, obs = _server_trace("group-in-hand-at-the-sample")
    assert kit.verdict("WL344.STOP.NO_EXEC", Trace(header, obs)).status != VIOLATED
    # without that apply, nothing between the sample and the stop moved B
    kept = [o for o in obs if not (o["kind"] == "apply" and o["node"] == "server_2" and o.get("trx") == "create_t1")]
    v = kit.verdict("WL344.STOP.NO_EXEC", Trace(header, kept))
    assert v.status == VIOLATED and any("moved server_2 from Relay_Log_Pos 615 to 769" in w.message for w in v.witnesses)


def test_a_row_is_paired_with_its_own_commit_when_a_reset_gave_its_gtid_again(kit):
    # corpus/server/reset-master-begins-gtids-again: drop_t1 (0-1-2) was acknowledged; after RESET
    # MASTER ins1 took 0-1-2 again and waited for an ack that never came (AFTER_COMMIT: seen while
    # it waited, as MariaDB's default is declared to be). drop_t1's change is not ins1's row.
    header, obs = _server_trace("reset-master-begins-gtids-again")
    start = next(o["start"] for o in obs if o["kind"] == "commit" and o["trx"] == "ins1")
    v = kit.verdict("WL6355.AFTER_SYNC.INVISIBLE", Trace(header, obs))
    assert v.status == VIOLATED and v.witnesses
    assert all(_seen_at(w.message) >= start for w in v.witnesses), [w.message for w in v.witnesses]
    # drop_t1's change renamed as ins1's: seen long before ins1 began, while it waits
    early = next(o for o in obs if o["kind"] == "visible" and o["trx"] == "drop_t1" and o["node"] == "master")
    early["trx"] = "ins1"
    v = kit.verdict("WL6355.AFTER_SYNC.INVISIBLE", Trace(header, obs))
    assert any(_seen_at(w.message) < start for w in v.witnesses)


def _seen_at(message: str) -> int:
    """'X became visible on N at 1.9 s while ON ...': when, in µs."""
    return round(float(re.search(r" at ([0-9.]+) s", message).group(1)) * 1_000_000)


def test_after_sync_judges_neither_a_ddl_nor_a_row_seen_at_its_commits_return(kit):
    # corpus/server/after-sync-ddl-and-timeout-release: bug45672_create_t1's table was listed while
    # its commit waited out the timeout; bug45672_ins5's row was seen in the poll its commit returned
    # in, and bug45672_ins3's (0.2 ms, after the switch OFF) in a poll whose clock read came before it began
    header, obs = _server_trace("after-sync-ddl-and-timeout-release")
    assert kit.verdict("WL6355.AFTER_SYNC.INVISIBLE", Trace(header, obs)).status != VIOLATED
    # ins5's row seen in a poll 1.5 s before its commit returned (more than the resolution): during
    # its wait, while ON
    seen = next(o for o in obs if o["kind"] == "visible" and o["trx"] == "bug45672_ins5")
    assert header["resolution_us"] < 1_500_000
    seen["t"] -= 1_500_000
    v = kit.verdict("WL6355.AFTER_SYNC.INVISIBLE", Trace(header, obs))
    assert v.status == VIOLATED and any("bug45672_ins5 became visible on master" in w.message for w in v.witnesses)


def test_a_requested_incident_placed_later_in_its_statements_interval_is_that_statements(kit):
    # A real server's Trace (corpus/server): A's fourth record_incident began at 7.93 s; a
    # Binlog_checkpoint stamped second 8 came just before its incident in the binlog, so the collector
    # placed the incident at 8.0 s, inside the statement's `written` interval. It is the one asked for.
    tr = Trace(*_server_trace("requested-incident-placed-at-its-own-second"))
    stmt = [s for s in tr.all("stmt", node="A") if s["op"] == "record_incident"][-1]
    incident = [b for b in tr.all("binlog", node="A") if b["type"] == "INCIDENT_EVENT"][-1]
    assert incident["t"] > stmt["t"] == incident["written"][0]
    assert kit.verdict("WL3464.R1", tr).status == "pass" and kit.verdict("WL3464.NO_FALSE", tr).status != VIOLATED
    incident["written"] = [stmt["t"] + 1, incident["written"][1]]  # written after the statement began: not its
    assert_witness(kit.verdict("WL3464.R1", tr), tr, stmt, "its binlog has none")
    assert_witness(kit.verdict("WL3464.NO_FALSE", tr), tr, incident, "with no lost change before it")


def test_an_incident_written_by_a_failing_statement_marks_its_lost_change_wherever_placed(kit):
    # A real server's Trace (corpus/server): t4's statement overflowed its binlog cache and wrote an
    # incident; t5, of another session, committed in between, so the incident was placed at t5's
    # commit, before t4's change (seen at its return). The incident's interval names t4's statement.
    tr = Trace(*_server_trace("incident-placed-before-its-lost-change"))
    lost = next(o for o in tr.all("visible", node="A") if o["trx"] == "t4")
    commit = next(o for o in tr.all("commit", node="A") if o["trx"] == "t4")
    incident = next(b for b in tr.all("binlog", node="A") if b["type"] == "INCIDENT_EVENT")
    assert incident["t"] < lost["t"] and incident["written"] == [commit["start"], commit["t"]]
    assert kit.verdict("WL3464.GAP", tr).status == "pass" and kit.verdict("WL3464.NO_FALSE", tr).status == "pass"
    incident["written"] = [commit["start"] - 1, commit["t"]]  # written by another statement: not t4's mark
    assert_witness(kit.verdict("WL3464.GAP", tr), tr, lost, "never reached its binlog")
    assert_witness(kit.verdict("WL3464.NO_FALSE", tr), tr, incident, "with no lost change before it")


def test_a_delay_change_owes_no_copy_of_a_group_the_replicas_filters_keep_out(kit):
    # A real server's Trace (corpus/server): B held t1 (rc.r) at CHANGE MASTER TO MASTER_DELAY = 3,
    # and its replicate_wild_do_table = rc.m% passed it, which a server's Trace does not show.
    header, obs = _server_trace("delay-change-holds-a-filtered-group")
    assert "filtered" in header["unobserved"]
    assert kit.verdict("WL344.CM.NO_LOSS", Trace(header, obs)).status == "pass"
    b = next(n for n in header["topology"]["nodes"] if n["id"] == "B")
    b["variables"] = {k: x for k, x in b["variables"].items() if k != "replicate_wild_do_table"}  # no filter: t1 lost
    tr = Trace(header, obs)
    change = next(o for o in tr.all("stmt", node="B") if o["op"] == "change_master" and o.get("delay") == 3)
    assert_witness(kit.verdict("WL344.CM.NO_LOSS", tr), tr, change, "B held t1 unapplied")


def test_an_unsent_commit_whose_client_saw_the_timeout_may_be_counted_no(kit):
    # A real server's Trace (corpus/server): t6, marked and sent to no semi-sync replica, waited out
    # A's timeout in 0.1 s, within the resolution; its client saw "no", and A counted no_tx 1.
    tr = Trace(*_server_trace("unsent-commit-timed-out"))
    t6 = next(o for o in tr.all("commit", node="A") if o["trx"] == "t6")
    assert t6["semisync"] == "no" and t6["t"] - t6["start"] < tr.header["resolution_us"]
    assert kit.verdict("WL1720.COUNT.TX", tr).status == "pass"
    for c in tr.all("commit", node="A", skip_replication=True):  # their clients saw acks: the no_tx is no commit's
        c["semisync"] = "yes"
    sample = next(o for o in tr.all("server_status", node="A") if o["variables"].get("Rpl_semi_sync_master_no_tx") == 1)
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, sample, "yes_tx, no_tx = (5, 1)")


def test_a_failed_statements_group_is_counted_when_its_sessions_wait_ends(kit):
    # A real server's Trace (corpus/server): t3 failed after its MyISAM row was binlogged and
    # answered at once; A counted it in no_tx 10 s later, when its session's wait timed out
    tr = Trace(*_server_trace("failed-statement-waits-at-the-session-end"))
    t3 = tr.first("commit", node="A", trx="t3")
    assert t3["errno"] == 1062 and t3["gtid"] and t3["t"] - t3["start"] < tr.header["resolution_us"]
    for req in ("WL1720.COUNT.TX", "WL1720.TIMEOUT.LOG", "WL1720.TIMEOUT.ASYNC"):
        assert kit.verdict(req, tr).status != VIOLATED, req
    # counted twice is still caught
    sample = next(o for o in tr.all("server_status", node="A") if o["variables"]["Rpl_semi_sync_master_no_tx"] == 1)
    sample["variables"]["Rpl_semi_sync_master_no_tx"] = 2
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, sample, "yes_tx, no_tx = (0, 2)")


def test_an_absent_ack_timeout_is_the_servers_default(kit):
    # A real server's Trace (corpus/server): no rpl_semi_sync_master_timeout anywhere; t1 waited the
    # default 10 s and its timeout released t4 after 7 s
    tr = Trace(*_server_trace("server-default-ack-timeout"))
    assert "rpl_semi_sync_master_timeout" not in str(tr.header["topology"])
    assert kit.verdict("WL1720.TIMEOUT.ASYNC", tr).status != VIOLATED
    # a wait past the default is still caught
    t4 = tr.retime(tr.first("commit", node="A", trx="t4"), 17_000_000)
    assert_witness(kit.verdict("WL1720.TIMEOUT.ASYNC", tr), tr, t4, "timeout 10 s")


def test_a_group_the_replicas_filters_keep_out_is_not_waited_for_by_the_next(kit):
    # A real server's Trace (corpus/server): B's replicate_wild_do_table = rc.m% passed t3 (rc.r),
    # then t4 (rc.m) became visible; neither the relay log nor the pass is observed there.
    header, obs = _server_trace("filtered-group-never-visible-before-the-next")
    assert {"relay", "filtered"} <= set(header["unobserved"])
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", Trace(header, obs)).status == "pass"
    b = next(n for n in header["topology"]["nodes"] if n["id"] == "B")
    b["variables"] = {k: x for k, x in b["variables"].items() if k != "replicate_wild_do_table"}  # no filter: t3 owed
    tr = Trace(header, obs)
    t4 = next(o for o in tr.all("visible", node="B") if o["trx"] == "t4")
    assert_witness(kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr), tr, t4, "0-1-4 arrived from A before 0-1-3")


def test_a_visible_myisam_transaction_holds_each_of_its_statements_groups(kit):
    # A real server's Trace (corpus/server): t3's two MyISAM statements are 0-1-2 and 0-1-3; its
    # rows' visibility on B is named by 0-1-2, then t4 (0-1-4) becomes visible.
    tr = Trace(*_server_trace("myisam-statement-groups-visible-as-one"))
    assert {c["gtid"] for c in tr.all("commit", node="A") if c["trx"] == "t3"} == {"0-1-2", "0-1-3"}
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr).status == "pass"
    for c in tr.all("commit", node="A"):  # t3 as one group only: 0-1-3 is no transaction's, never seen on B
        if c["gtid"] == "0-1-3":
            c["trx"] = "t3b"
    t4 = next(o for o in tr.all("visible", node="B") if o["trx"] == "t4")
    assert_witness(kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr), tr, t4, "0-1-4 arrived from A before 0-1-3")


def test_a_copy_fetched_again_after_a_purge_waits_by_the_difference_of_that_connect(kit):
    # A real server's Trace (corpus/server): B's clock stepped an hour while stopped; START SLAVE
    # by GTID threw the relay log away and fetched t1 again into the same place, measuring 3604 s.
    header, obs = _server_trace("delay-counted-from-the-connect-after-a-purge")
    assert [q["clock_diff_with_master"] for q in obs if q["kind"] == "clock_query" and q["node"] == "B"][:2] == [3, 3604]
    for requirement in ("WL344.STATE.WAITING", "WL344.SSS.REMAINING"):
        assert kit.verdict(requirement, Trace(header, obs)).status == "pass"
    # without the connect's measurement the wait counts by the difference before the step: 3601 s late
    tr = Trace(header, [o for o in obs if not (o["kind"] == "clock_query" and o["t"] > 900_000)])
    sample = next(o for o in tr.all("status", node="B") if o["t"] > 1_400_000 and o.get("SQL_Remaining_Delay") == 7)
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, sample, "it is not delaying")


def test_a_parallel_coordinator_waits_for_a_later_group_and_counts_the_lag_of_a_busy_worker(kit):
    # A real server's Trace (corpus/server): B (2 workers, MASTER_DELAY 2) waited at 3.68 s for t4
    # (due 4 s) while a worker ran t1 (due 2 s); at 14.57 s it had read and placed everything, t3
    # still in a worker, and showed Seconds_Behind_Master 11.
    header, obs = _server_trace("parallel-coordinator-waits-ahead-of-its-workers")
    for requirement in ("WL344.STATE.WAITING", "WL344.SSS.REMAINING", "SBM.CAUGHT_UP"):
        assert kit.verdict(requirement, Trace(header, obs)).status == "pass"
    # read as a serial replica's, the first unapplied group is the one waited for and caught up is idle
    tr = Trace(header, [o for o in obs if o["kind"] != "parallel"])
    waiting = next(o for o in tr.all("status", node="B") if o["t"] == 3_676_373)
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, waiting, "is not delaying (due 2 s)")
    busy = next(o for o in tr.all("status", node="B") if o["t"] == 14_566_193)
    assert_witness(kit.verdict("SBM.CAUGHT_UP", tr), tr, busy, "Seconds_Behind_Master 11")


def test_a_parallel_replica_with_every_relayed_group_committed_shows_no_lag_when_caught_up(kit):
    # the same Trace: at 15.41 s t3 is committed too, and the workers are idle
    tr = Trace(*_server_trace("parallel-coordinator-waits-ahead-of-its-workers"))
    idle = next(o for o in tr.all("status", node="B") if o["t"] == 15_409_790)
    idle["Seconds_Behind_Master"] = 5
    assert_witness(kit.verdict("SBM.CAUGHT_UP", tr), tr, idle, "Seconds_Behind_Master 5")


def test_a_switch_on_is_judged_by_the_binlog_end_when_it_may_have_been_made(kit):
    # A real server's Trace (corpus/server): C's ack of t4's end switched A back ON, and t5 was
    # binlogged before the sample that showed ON; the switch lies within the resolution before it.
    tr = Trace(*_server_trace("switch-on-seen-after-a-later-commit"))
    on = next(o for o in tr.all("server_status", node="A") if o["t"] > 800_000
              and o["variables"]["Rpl_semi_sync_master_status"] == "ON")
    t5 = next(o for o in tr.all("binlog", node="A") if o.get("trx") == "t5" and o["last"])
    assert t5["t"] == on["t"] and t5["end"] == 1342
    assert kit.verdict("WL7169.SWITCH_BACK_N", tr).status == "pass"
    for a in tr.all("ack", node="A"):  # C's ack short of t3's end (950), the one a timeout left unacked
        if a["pos"] == 1106:
            a["pos"] = 900
    assert_witness(kit.verdict("WL7169.SWITCH_BACK_N", tr), tr, on, "A switched ON at 0.891188 s")


def test_an_unsent_commit_may_be_counted_no_by_an_off_no_sample_saw(kit):
    # A real server's Trace (corpus/server): t5 timed out, t6 and t7 committed while OFF and B's ack
    # switched A back ON, all between two samples showing ON; A counted no_tx 3.
    tr = Trace(*_server_trace("unsent-commits-counted-through-an-unseen-off"))
    t6 = next(o for o in tr.all("commit", node="A") if o["trx"] == "t6")
    assert t6["semisync"] is None and t6.get("skip_replication")
    assert kit.verdict("WL1720.COUNT.TX", tr).status == "pass"
    for c in tr.all("commit", node="A", skip_replication=True):  # t1's and t5's clients saw acks: only t6 and t7 may be no_tx
        c["semisync"] = "yes" if c["trx"] != "t6" else None
    sample = next(o for o in tr.all("server_status", node="A") if o["variables"].get("Rpl_semi_sync_master_no_tx") == 3)
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, sample, "yes_tx, no_tx = (4, 3)")


def test_a_stop_that_finishes_a_non_transactional_group_is_not_judged_by_its_length(kit):
    # A real server's Trace (corpus/server): C's relay was cut inside t3 (MyISAM), and STOP SLAVE
    # SQL_THREAD waited 62 s for the group's end, as C logged (sql_slave_killed, SLAVE_WAIT_GROUP_DONE).
    tr = Trace(*_server_trace("stop-finishes-a-non-transactional-group"))
    stop = next(o for o in tr.all("stmt", node="C", op="stop_slave") if o["duration_us"] > 60 * 1_000_000)
    assert stop["duration_us"] > 100 * tr.header["resolution_us"]
    assert kit.verdict("WL344.STOP.IMMEDIATE", tr).status == "pass"
    tr.obs = [o for o in tr.obs if not (o["kind"] == "log" and "non-transactional changes; waiting" in o["message"])]
    assert kit.verdict("WL344.STOP.IMMEDIATE", tr).status == "pass"  # MASTER_DELAY 0: no sleep to interrupt
    tr.header = {**tr.header, "topology": {**tr.header["topology"], "channels": [
        {**c, "delay": 1} for c in tr.header["topology"]["channels"]]}}
    assert_witness(kit.verdict("WL344.STOP.IMMEDIATE", tr), tr, stop, "STOP SLAVE on C took 62.0857 s")


def test_a_stop_that_returns_as_a_worker_commits_its_group_is_not_judged_by_its_length(kit):
    # A real server's Trace (corpus/server): B's STOP SLAVE took 2.61 s while a worker finished t1
    # (rpl_parallel::wait_for_done), and returned as t1 committed.
    header, obs = _server_trace("stop-waits-for-a-workers-group")
    assert kit.verdict("WL344.STOP.IMMEDIATE", Trace(header, obs)).status == "pass"
    tr = Trace(header, obs)
    for o in tr.all("parallel", node="B"):
        o["workers"] = 0  # a serial SQL thread: nothing explains the wait
    stop = next(o for o in tr.all("stmt", node="B") if o["op"] == "stop_slave")
    assert_witness(kit.verdict("WL344.STOP.IMMEDIATE", tr), tr, stop, "STOP SLAVE on B took 2.605762 s")


def test_a_relay_log_place_applied_again_after_a_purge_was_applied_before_it_too(kit):
    # A real server's Trace (corpus/server): B (4 workers) applied the Rotate at relay.000002:256 at
    # 15.20 s; relay logs thrown away later, a new Rotate took the place, applied at 38.85 s. At 18.26
    # s B showed caught up and Seconds_Behind_Master 3 while a worker ran t12 (3 s on B).
    tr = Trace(*_server_trace("parallel-relay-place-used-again-after-a-purge"))
    rotates = [o for o in tr.all("apply", node="B", type="ROTATE_EVENT") if (o["relay_file"], o["relay_pos"]) == ("relay.000002", 256)]
    assert [o["t"] for o in rotates][-2:] == [15_195_117, 38_845_512]
    assert kit.verdict("SBM.CAUGHT_UP", tr).status == "pass"
    # at 22.64 s t12 is committed too, and the workers are idle
    idle = next(o for o in tr.all("status", node="B") if o["t"] == 22_640_134)
    idle["Seconds_Behind_Master"] = 3
    assert_witness(kit.verdict("SBM.CAUGHT_UP", tr), tr, idle, "Seconds_Behind_Master 3")


KEPT_84 = "delay-read-before-a-reconnect-in-its-group"


def test_a_wait_read_before_a_reconnect_counts_by_the_difference_measured_before_it(kit):
    # A real server's Trace (corpus/server): B (MASTER_DELAY 9) read t7's GTID event before its IO
    # thread, cut after that event, reconnected and measured clock_diff_with_master -3603 s instead
    # of -3602: it showed SQL_Remaining_Delay 10 at 15.91 s and waited until past 25.08 s.
    header, obs = _server_trace(KEPT_84)
    assert [q["clock_diff_with_master"] for q in obs if q["kind"] == "clock_query"][-2:] == [-3602, -3603]
    for requirement in ("WL344.STATE.WAITING", "WL344.SSS.REMAINING"):
        assert kit.verdict(requirement, Trace(header, obs)).status == "pass"
    # had the earlier connect measured -3603 too, the wait would have ended a second sooner
    tr = Trace(header, obs)
    q = next(o for o in tr.all("clock_query", node="B") if o["t"] == 12_409_277)
    q["clock_diff_with_master"] = -3603
    late = next(o for o in tr.all("status", node="B") if o["t"] == 25_078_059)
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, late, "is not delaying (due 24 s)")
    left = next(o for o in tr.all("status", node="B") if o["t"] == 17_385_772)
    assert_witness(kit.verdict("WL344.SSS.REMAINING", tr), tr, left, "SQL_Remaining_Delay 8 but 6.614 s are left")


def test_the_lag_counts_from_a_statement_of_the_group_relayed_into_the_next_relay_log(kit):
    # the same Trace: t7's statements (stamped 4 s before its GTID event) came after the reconnect,
    # into relay.000007; executing the first, B showed 15 s, 10 s a second before
    tr = Trace(*_server_trace(KEPT_84))
    t7 = [(o["type"], o["file"]) for o in tr.all("relay", node="B") if o.get("trx") == "t7"]
    assert t7[0] == ("GTID_LOG_EVENT", "relay.000006") and t7[1] == ("QUERY_EVENT", "relay.000007")
    for requirement in ("SBM.VALUE", "SBM.NO_JUMP"):
        assert kit.verdict(requirement, tr).status == "pass"
    sleeping = next(o for o in tr.all("status", node="B") if o["t"] == 26_000_855)
    sleeping["Seconds_Behind_Master"] = 20
    assert_witness(kit.verdict("SBM.VALUE", tr), tr, sleeping, "Seconds_Behind_Master 20 but GTID_LOG_EVENT of t7")
    assert_witness(kit.verdict("SBM.NO_JUMP", tr), tr, sleeping, "Seconds_Behind_Master 10 at 25.078059 s, 20 at 26.000855 s")


def test_a_stop_that_waits_for_a_workers_ack_is_neither_long_nor_moving_by_itself(kit):
    header, obs = _server_trace("stop-waits-for-a-workers-ack")
    for requirement in ("WL344.STOP.IMMEDIATE", "WL344.STOP.NO_EXEC"):
        assert kit.verdict(requirement, Trace(header, obs)).status == "pass"
    tr = Trace(header, obs)
    for o in tr.all("parallel", node="C"):
        o["workers"] = 0  # a serial SQL thread: its stop kills the wait at once, and no sample showed it
    tr.header = {**tr.header, "topology": {**tr.header["topology"], "channels": [  # a sleep the stop could interrupt
        {**c, "delay": 1} for c in tr.header["topology"]["channels"]]}}
    stop = next(o for o in tr.all("stmt", node="C") if o["op"] == "stop_slave")
    assert_witness(kit.verdict("WL344.STOP.IMMEDIATE", tr), tr, stop, "STOP SLAVE on C took 0.512778 s")
    assert_witness(kit.verdict("WL344.STOP.NO_EXEC", tr), tr, None, "the stop at 0.824228 s moved C from Relay_Log_Pos 615 to 851")


def test_a_stop_that_waits_for_a_workers_ack_moves_the_place_past_that_group_only(kit):
    header, obs = _server_trace("stop-waits-for-a-workers-ack")
    tr = Trace(header, obs)
    after = [o for o in tr.all("status", node="C") if o["Slave_SQL_Running"] == "No"]
    for o in after:
        o["Exec_Master_Log_Pos"], o["Relay_Log_Pos"] = 800, 1093  # past t1's end (558): no group there
    assert_witness(kit.verdict("WL344.STOP.NO_EXEC", tr), tr, after[0], "moved C from Relay_Log_Pos 615 to 1093")


def test_an_ack_passed_on_as_its_replica_stops_may_not_count(kit):
    # A real server's Trace (corpus/server): B's ack of t3 reached A's socket 4 ms into B's STOP
    # SLAVE; A's dump thread ended before its ack receiver read it, t3 timed out, no_tx 3
    tr = Trace(*_server_trace("ack-passed-on-as-the-replica-stops"))
    ack = next(o for o in tr.all("ack", node="A") if o["pos"] == 845)
    stop = next(o for o in tr.all("stmt", node="B") if o["op"] == "stop_slave")
    assert stop["t"] - stop["duration_us"] < ack["t"] < stop["t"]
    for requirement in ("WL1720.COUNT.TX", "WL1720.LIVE.RELEASE", "WL7169.N_DISTINCT"):
        assert kit.verdict(requirement, tr).status == "pass", requirement
    # an ack passed on while only the SQL thread stopped was read: t3 then counts in yes_tx
    stop["thread"] = "sql"
    sample = next(o for o in tr.all("server_status", node="A") if o["variables"]["Rpl_semi_sync_master_no_tx"] == 3)
    assert_witness(kit.verdict("WL1720.COUNT.TX", tr), tr, sample, "yes_tx, no_tx = (2, 3)")


def test_semi_sync_enabled_by_set_global_is_on_before_a_sample_shows_it(kit):
    # A real server's Trace (corpus/server): SET GLOBAL rpl_semi_sync_master_enabled = ON on A, then
    # t4, binlogged before the first sample showing ON, waited out the timeout with t5 to t7
    tr = Trace(*_server_trace("semi-sync-enabled-by-set-global"))
    enable = tr.first("stmt", node="A", op="set_global")
    first_on = next(o for o in tr.all("server_status", node="A") if o["variables"]["Rpl_semi_sync_master_status"] == "ON")
    t4, t7 = tr.first("commit", node="A", trx="t4"), tr.first("commit", node="A", trx="t7")
    assert enable["t"] < t4["start"] and first_on["t"] > next(o["t"] for o in tr.all("binlog", node="A") if o.get("trx") == "t4")
    for requirement in ("WL1720.OFF.NO_WAIT", "WL344.MASTER.UNAFFECTED"):
        assert kit.verdict(requirement, tr).status == "pass", requirement
    # a SET GLOBAL that failed enabled nothing: the waits are caught
    enable["errno"] = 1231
    assert_witness(kit.verdict("WL1720.OFF.NO_WAIT", tr), tr, t4, "commit of t4 on A waited 9.95358 s while OFF")
    assert_witness(kit.verdict("WL344.MASTER.UNAFFECTED", tr), tr, t7, "commit of t7 returned at 13.424034 s")


def test_a_change_master_while_stopped_at_an_incident_throws_its_relay_log_away_at_once(kit):
    # A real server's Trace (corpus/server): C stopped at A's incident, then STOP SLAVE, CHANGE MASTER
    # TO MASTER_DELAY = 0 and START SLAVE; a sample between the last two shows relay.000001:4
    tr = Trace(*_server_trace("incident-under-binlog-do-db"))
    change = tr.first("stmt", node="C", op="change_master")
    sample = next(o for o in tr.all("status", node="C") if o["t"] > change["t"])
    assert sample["Relay_Log_Pos"] == 4 and sample["t"] < tr.first("stmt", node="C", op="start_slave")["t"]
    assert kit.verdict("WL3464.HOLD", tr).status == "pass"
    change["errno"] = 1198  # a CHANGE MASTER that failed threw nothing away
    assert_witness(kit.verdict("WL3464.HOLD", tr), tr, sample, "C stopped at an incident shows Relay_Log_Pos 4")
