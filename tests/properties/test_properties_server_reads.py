"""Properties judged on real servers' Traces (corpus/server) where the judgement turned on what the
Trace can and cannot show. skip-counter-run-past-a-marked-group: a counter's run that passed a
marked group and other groups does not show the marked one counted. incident-copy-thrown-away-unread:
what ran at a place before the relayed event there was written is not that event's.
acks-asked-for-while-off: a master asks for an ack of every event while its semi-sync is OFF.
stop-while-a-statement-runs-without-delay: without MASTER_DELAY a stop interrupts no sleep.
stop-while-a-statement-runs-with-a-delay: a stop that found the thread in a statement waits for it.
incident-place-taken-by-a-later-copy: another event relayed to a place ends the relay log of the one before.
clock-step-just-before-a-wait-ends: a wait that ends within the resolution after a sample still began before a step."""
from __future__ import annotations

from replcheck import io
from replcheck.properties.delay_timing import STATE_WAITING
from conftest import REPO, Trace, assert_witness


def _server_trace(name: str) -> Trace:
    """A corpus/server Trace, its observations unnumbered as a judge takes them."""
    header, obs = io.load_trace(REPO / "corpus" / "server" / f"{name}.trace.jsonl")
    return Trace(header, [{k: x for k, x in o.items() if k != "_line"} for o in obs])


def test_a_counter_run_past_a_marked_group_and_others_shows_no_count_of_it(kit):
    # B's counter of 2 passed marked t6 and MyISAM t7: it ends at t7's end whether or not t6 counted.
    tr = _server_trace("skip-counter-run-past-a-marked-group")
    assert "filtered" in tr.header["unobserved"]
    assert kit.verdict("FILTER.SKIP_COUNTER", tr).status == "pass"
    # A run that passed the marked group alone did count it.
    marked = tr.first("skip", node="B", trx="t6", idx=0)
    tr.obs = [o for o in tr.obs if not (o["kind"] == "skip" and o.get("trx") == "t7")]
    assert_witness(kit.verdict("FILTER.SKIP_COUNTER", tr), tr, marked, "counted event 0 of marked t6")


def test_a_trace_that_observes_filtering_gives_each_skip_its_own_reason(kit):
    tr = _server_trace("skip-counter-run-past-a-marked-group")
    tr.header = {**tr.header, "unobserved": [k for k in tr.header["unobserved"] if k != "filtered"]}
    marked = tr.first("skip", node="B", trx="t6", idx=0)
    assert_witness(kit.verdict("FILTER.SKIP_COUNTER", tr), tr, marked, "counted event 0 of marked t6")


def test_an_incident_copy_thrown_away_unread_was_not_reached(kit):
    # B's apply at relay.000003:256 at 2.13 s came before the restart at 3.09 s renumbered the relay
    # logs, long before the incident was relayed (since 3.77 s).
    tr = _server_trace("incident-copy-thrown-away-unread")
    assert kit.verdict("WL3464.R3.1", tr).status == "pass"
    # A copy whose read the Trace does not bound: that apply may have followed it.
    incident = next(o for o in tr.all("relay", node="B", type="INCIDENT_EVENT") if o["t"] > 4_000_000)
    for o in tr.all("relay", node="B"):
        o.pop("since", None)
    assert_witness(kit.verdict("WL3464.R3.1", tr), tr, incident, "B did not stop at incident 1")


def test_acks_asked_for_while_off_need_not_end_a_transaction(kit):
    # A was OFF from t3's timeout until B's ack of (bin.000001, 1266); B acked the header events of
    # the binlogs A rotated meanwhile, sent while OFF (update_sync_header).
    tr = _server_trace("acks-asked-for-while-off")
    assert kit.verdict("WL1720.ACK.LAST_EVENT", tr).status == "pass"
    for s in tr.all("server_status", node="A"):
        s["variables"]["Rpl_semi_sync_master_status"] = "ON"
    ack = tr.first("ack", node="A", file="bin.000002", pos=4)
    assert_witness(kit.verdict("WL1720.ACK.LAST_EVENT", tr), tr, ack, "B acknowledged (bin.000002, 4), which ends no transaction")


def test_a_stop_without_a_delay_is_not_judged_by_its_length(kit):
    # B, serial with MASTER_DELAY 0, was running a statement costing it 2 s when STOP SLAVE SQL_THREAD came.
    tr = _server_trace("stop-while-a-statement-runs-without-delay")
    assert kit.verdict("WL344.STOP.IMMEDIATE", tr).status == "pass"
    tr.header = {**tr.header, "topology": {**tr.header["topology"], "channels": [
        {**c, "delay": 2} for c in tr.header["topology"]["channels"]]}}
    # with a delay, and a sample during the stop showing the delay's sleep, not the statement
    tr.first("status", node="B", t=9_214_094)["Slave_SQL_Running_State"] = STATE_WAITING
    stop = next(o for o in tr.all("stmt", node="B", op="stop_slave") if o["duration_us"] > 2_000_000)
    assert_witness(kit.verdict("WL344.STOP.IMMEDIATE", tr), tr, stop, "STOP SLAVE on B took 2.007431 s")


def test_a_clock_step_counts_for_a_wait_that_ends_just_after_the_sample(kit):
    # C's clock stepped an hour ahead at 7.60 s, after its IO thread's connect: at 8.01 s it showed
    # Seconds_Behind_Master 3604 with 0 s left, and passed t3 at 8.27 s, within the resolution.
    tr = _server_trace("clock-step-just-before-a-wait-ends")
    sample = tr.first("status", node="C", t=8_005_782)
    assert tr.first("apply", node="C", trx="t3", idx=0)["t"] - sample["t"] < tr.header["resolution_us"]
    for requirement in ("SBM.RESTART", "SBM.DELAY"):
        assert kit.verdict(requirement, tr).status == "pass"
    # with no step, the lag 3600 s past the wait is a violation
    tr.obs = [o for o in tr.obs if o["kind"] != "clock_step"]
    assert_witness(kit.verdict("SBM.RESTART", tr), tr, sample, "Seconds_Behind_Master 3604 and 0 s left exceed MASTER_DELAY 4")


def test_a_stop_that_found_a_statement_running_is_not_judged_by_its_length(kit):
    # B (serial, MASTER_DELAY 1) showed 'User sleep' at relay.000007:666 before STOP SLAVE SQL_THREAD
    # began and in both samples while it ran; the stop returned 1.67 s later, t2 rolled back.
    tr = _server_trace("stop-while-a-statement-runs-with-a-delay")
    stop = next(o for o in tr.all("stmt", node="B", op="stop_slave") if o["duration_us"] > 1_000_000)
    during = [s for s in tr.all("status", node="B") if stop["t"] - stop["duration_us"] <= s["t"] < stop["t"]]
    assert [s["Slave_SQL_Running_State"] for s in during] == ["User sleep"] * 2
    assert kit.verdict("WL344.STOP.IMMEDIATE", tr).status == "pass"
    # a sample during the stop at another place: the thread may have gone on to the next event's sleep
    during[-1]["Relay_Log_Pos"] = 4
    assert_witness(kit.verdict("WL344.STOP.IMMEDIATE", tr), tr, stop, "STOP SLAVE on B took 1.671381 s")


def test_an_event_relayed_to_an_incident_s_place_later_is_not_the_incident(kit):
    # B stopped at the incident at relay.000002:615 (7.50 s) and skipped it by its counter; a restart
    # by GTID threw the relay logs away, leaving no record, and a Gtid_list went to that place.
    tr = _server_trace("incident-place-taken-by-a-later-copy")
    at = [(o["kind"], o["type"], o["t"]) for o in tr.obs if o["kind"] in ("relay", "apply") and o["node"] == "B"
          and (o.get("file", o.get("relay_file")), o.get("pos", o.get("relay_pos"))) == ("relay.000002", 615)]
    assert at == [("relay", "INCIDENT_EVENT", 7_490_650), ("relay", "GTID_LIST_EVENT", 17_945_785),
                  ("apply", "GTID_LIST_EVENT", 18_006_524)]
    assert kit.verdict("WL3464.R3.1", tr).status == "pass"
    # a Trace that does not show the later copy: the apply there is the incident's
    incident = tr.first("relay", node="B", type="INCIDENT_EVENT")
    tr.obs = [o for o in tr.obs if not (o["kind"] == "relay" and o["t"] == 17_945_785 and o["pos"] == 615)]
    assert_witness(kit.verdict("WL3464.R3.1", tr), tr, incident, "B did not stop at incident 1")
