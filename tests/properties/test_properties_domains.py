"""GTID domains: each DOMAIN.* property passes on the MariaDB model's trace and catches a fault: the
MDEV-4473 mutant (a GTID connect started one binlog too late), an accepted connect whose request
is not in the master's binlog, a strict-mode binlog with an out-of-order GTID."""
from __future__ import annotations

from conftest import REPO, Trace, assert_witness
from test_properties_incident import Case, pick

from replcheck import io
from replcheck.properties.core import PASS, PROPERTIES

MDB = "model:mariadb-10.11"
G8 = "dom-failover-start-binlog"
NOT_IN = "dom-connect-not-in-binlog"
STRICT = "dom-strict-two-domains"


def model(history: str):
    return lambda k: k.run(MDB, history)


def accepted_anyway(k):
    """B's refusal of R's request for 0-1-3 edited into an accepted connect."""
    tr = k.run(MDB, NOT_IN)
    c = tr.first("connect", node="R", source="B")
    c.update(errno=None, message="", master_log_file="bin.000001", master_log_pos=4)
    return tr, c


def out_of_order(k):
    """R's binlog edited to log M's 0-1-2 after its own 0-2-2, as if strict mode let it through."""
    tr = k.run(MDB, STRICT)
    own = tr.first("binlog", node="R", gtid="0-2-2", last=True)
    late = dict(own, gtid="0-1-2", trx="t4", server_id=1, t=own["t"] + 1)
    tr.retime(tr.insert_before(own, late), 6_000_000)
    return tr, late


CASES: dict[str, Case] = {
    "DOMAIN.CONNECT.NO_LOSS": Case(
        model(G8), lambda k: pick(k.run("mutant:start-binlog-any-entry", G8), "relay", node="R", gtid="0-2-6", idx=0),
        "R: 0-2-6 arrived from B before 0-2-5"),
    "DOMAIN.CONNECT.REFUSED": Case(model(NOT_IN), accepted_anyway, "R asked B for 0-1-3, not in its binlog, and was accepted"),
    "DOMAIN.STRICT": Case(model(STRICT), out_of_order, "R (gtid_strict_mode) binlogged 0-1-2 after 0-2-2 in domain 0"),
}


def test_every_domains_property_has_a_case():
    assert set(CASES) == {p.requirement for p in PROPERTIES if p.feature == "domains"}


def test_the_refusal_names_the_requested_gtid(kit):
    # sql_repl.cc, mysql_binlog_send: ER_GTID_POSITION_NOT_FOUND_IN_BINLOG becomes 1236 with this text.
    tr = kit.run(MDB, NOT_IN)
    c = tr.first("connect", node="R", source="B")
    assert (c["errno"], c["gtid_pos"]) == (1236, "0-1-3")
    assert c["message"] == "Error: connecting slave requested to start from GTID 0-1-3, which is not in the master's binlog"
    assert tr.first("error", node="R", thread="io")["errno"] == 1236
    assert kit.verdict("DOMAIN.CONNECT.REFUSED", tr).status == PASS


def test_strict_mode_stops_the_sql_thread_and_keeps_both_domains(kit):
    tr = kit.run(MDB, STRICT)
    stop = tr.first("sql_stop", node="R", reason="error")
    assert stop["errno"] == 1950 and "GTID 0-1-2 which would create an out-of-order sequence number with existing GTID 0-2-2" in stop["message"]
    last = tr.all("server_status", node="R")[-1]["variables"]
    assert (last["gtid_slave_pos"], last["gtid_binlog_pos"], last["gtid_current_pos"]) == ("0-1-1,1-1-1", "0-2-2,1-1-1", "0-2-2,1-1-1")
    # the master's later domain-1 group is relayed but not applied: the one SQL thread stopped
    assert tr.all("relay", node="R", gtid="1-1-2") and not tr.all("visible", node="R", gtid="1-1-2")


def test_a_seed_model_knows_no_strict_mode(kit):
    # MySQL has no gtid_strict_mode: the seed models ignore it, and their traces do not show it.
    tr = kit.run("model:wl344", STRICT)
    assert not tr.all("sql_stop", node="R", reason="error")
    assert "gtid_strict_mode" not in tr.header["topology"]["nodes"][1]["variables"]


def test_a_group_whose_relay_log_was_purged_unread_has_no_known_arrival(kit):
    # A real server's Trace (corpus/server): B holds t1 (0-1-1), but relay_log_purge deleted the relay
    # log holding it before any read; only t2's (0-1-2) arrival shows. Had t1 arrived after t2, it is lost order.
    header, obs = io.load_trace(REPO / "corpus" / "server" / "relay-log-purged-before-it-was-read.trace.jsonl")
    tr = Trace(header, [{k: x for k, x in o.items() if k != "_line"} for o in obs])
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr).status == PASS
    t2 = tr.first("relay", node="B", trx="t2", idx=0)
    late = tr.insert_before(tr.first("visible", node="B", trx="t1"), {**t2, "trx": "t1", "gtid": "0-1-1", "pos": 900})
    assert_witness(kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr), tr, t2, "B: 0-1-2 arrived from A before 0-1-1")
    assert late["gtid"] == "0-1-1"


def _strict_off_then_on(kit) -> Trace:
    """STRICT with R's strict mode set off at 6 s (its SQL thread started again) and on at 7 s."""
    h = kit.history(STRICT)
    h["ops"] += [{"at": 6_000_000, "op": "set_global", "node": "R", "variable": "gtid_strict_mode", "value": 0},
                 {"at": 6_100_000, "op": "start_slave", "node": "R"},
                 {"at": 7_000_000, "op": "set_global", "node": "R", "variable": "gtid_strict_mode", "value": "ON"}]
    h["ops"].sort(key=lambda o: o["at"])
    return kit.run(MDB, h)


def test_strict_mode_set_off_at_run_time_lets_the_slave_apply_the_group(kit):
    # rpl_gtid_strict.test: SET GLOBAL gtid_strict_mode=0 (a plain global, sys_vars.cc
    # Sys_gtid_strict_mode) and the restarted SQL thread applies the group it stopped at; the
    # out-of-order GTID in R's binlog is no strict-mode violation, being written with the mode off.
    tr = _strict_off_then_on(kit)
    assert [s["errno"] for s in tr.all("stmt", node="R", op="set_global")] == [None, None]
    assert tr.first("visible", node="R", gtid="0-1-2") and tr.first("visible", node="R", gtid="1-1-2")
    assert kit.verdict("DOMAIN.STRICT", tr).status == PASS
    # with the mode back on, the same group written again out of order is a violation
    own = tr.first("binlog", node="R", gtid="0-2-2", last=True)
    late = dict(own, gtid="0-1-2", trx="t4", server_id=1, t=own["t"] + 1)
    tr.retime(tr.insert_before(tr.all("binlog", node="R")[-1], late), 9_000_000)
    assert kit.verdict("DOMAIN.STRICT", tr).status != PASS


def test_strict_mode_takes_only_a_boolean(kit):
    h = kit.history(STRICT)
    h["ops"].insert(0, {"at": 0, "op": "set_global", "node": "R", "variable": "gtid_strict_mode", "value": "maybe"})
    stmt = kit.run(MDB, h).first("stmt", node="R", op="set_global")
    assert (stmt["errno"], stmt["message"]) == (1231, "Variable 'gtid_strict_mode' can't be set to the value of 'maybe'")


def test_a_position_set_in_a_hole_passes_the_group_below_it_by_choice(kit):
    # rpl_gtid_strict's hole: the slave asks from 0-1-50 between the master's 0-1-4 and 0-1-100;
    # with strict mode off the dump starts at 0-1-100 and row 10 (0-1-4) is passed over
    from replcheck.properties.core import VIOLATED
    from replcheck.spec import ROOT
    tr = kit.run(MDB, io.load_history(ROOT / "histories" / "suites" / "mdb-rpl_gtid_strict-hole.jsonl"))
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr).status == PASS
    # asked from the group before it instead, the same arrivals lose it
    for c in tr.all("connect", node="server_2"):
        if c.get("gtid_pos") == "0-1-50":
            c["gtid_pos"] = "0-1-3"
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr).status == VIOLATED


def test_an_until_stopping_before_the_requested_gtid_spares_the_refusal(kit):
    # check_slave_start_position: B, ahead of A, asks it for 1-1-3 under START SLAVE UNTIL 1-1-1,
    # which A's binlog holds: accepted. The same connect under an UNTIL naming 1-1-2 (A lacks it) is
    # owed the refusal; refused without an UNTIL, it passes.
    from test_model_until_gtid import _ahead_of_its_new_source
    tr = kit.run(MDB, _ahead_of_its_new_source(kit, "1-1-1"))
    c = tr.all("connect", node="B", source="A")[-1]
    assert c["errno"] is None and kit.verdict("DOMAIN.CONNECT.REFUSED", tr).status != "violated"
    [start] = [o for o in tr.all("stmt", node="B") if o.get("op") == "start_slave" and o["t"] > 5_000_000]
    start["until"] = {"master_gtid_pos": "1-1-2"}
    assert_witness(kit.verdict("DOMAIN.CONNECT.REFUSED", tr), tr, c, "B asked A for 1-1-3, not in its binlog, and was accepted")
    assert kit.verdict("DOMAIN.CONNECT.REFUSED", kit.run(MDB, _ahead_of_its_new_source(kit, None))).status == PASS


def test_a_replica_ignoring_duplicates_may_be_accepted_ahead_of_the_master(kit):
    from test_model_domains import ignoring_duplicates
    tr = kit.run(MDB, ignoring_duplicates(kit, NOT_IN))
    c = tr.first("connect", node="R", source="B")
    assert c["errno"] is None and kit.verdict("DOMAIN.CONNECT.REFUSED", tr).status != "violated"
    # the same accepted connect from a replica without it is owed the refusal
    [r] = [n for n in tr.header["topology"]["nodes"] if n["id"] == "R"]
    r["variables"]["gtid_ignore_duplicates"] = False
    assert_witness(kit.verdict("DOMAIN.CONNECT.REFUSED", tr), tr, c, "R asked B for 0-1-3, not in its binlog, and was accepted")


def test_a_polled_write_within_the_resolution_of_strict_mode_turning_on_is_undecided(kit):
    # mdb-rpl_gtid_strict-whole on a loaded machine: the out-of-order GTID, written with the mode
    # off, was read at a poll 0.13 s after SET GLOBAL gtid_strict_mode=1, within the Trace's
    # resolution; a write read a resolution after the SET was made with the mode on.
    from replcheck.properties.core import INCONCLUSIVE, VIOLATED
    tr = _strict_off_then_on(kit)
    tr.header["resolution_us"] = 500_000
    own = tr.first("binlog", node="R", gtid="0-2-2", last=True)
    late = tr.insert_before(tr.all("binlog", node="R")[-1], dict(own, gtid="0-1-2", trx="t4", server_id=1))
    tr.retime(late, 7_300_000)
    v = kit.verdict("DOMAIN.STRICT", tr)
    assert v.status == INCONCLUSIVE and "within 0.5 s of gtid_strict_mode turning on" in v.witnesses[0].message
    tr.retime(late, 7_600_000)
    assert kit.verdict("DOMAIN.STRICT", tr).status == VIOLATED


def _corpus(kit, name: str):
    return kit.run(MDB, io.load_history(REPO / "corpus" / f"{name}.jsonl"))


def test_a_connect_at_the_sources_own_slave_pos_is_not_owed_what_it_logged_before(kit):
    # check_slave_start_position (START_OWN_SLAVE_POS): B logged its own 1-2-1, then applied M's 1-1-1
    # without logging it; R asks B for 1-1-1 and B starts after its domain's last GTID, 1-2-1, by design.
    tr = _corpus(kit, "finding-connect-at-own-slave-pos-past-an-errant-write")
    c = tr.first("connect", node="R", source="B")
    assert (c["gtid_pos"], c["errno"]) == ("1-1-1", None) and not tr.all("relay", node="R", gtid="1-2-1")
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr).status == PASS
    # had B not applied 1-1-1, R's position would not be B's own: 1-2-1 is then owed before 1-2-2
    tr.drop(tr.first("visible", node="B", gtid="1-1-1"))
    assert_witness(kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr), tr, tr.first("relay", node="R", gtid="1-2-2", idx=0),
                   "R: 1-2-2 arrived from B before 1-2-1")


def test_a_connect_at_the_sources_own_slave_pos_is_owed_its_own_later_gtids(kit):
    # B skipped 0-1-1 (sql_slave_skip_counter), so 0-1-1 is its gtid_slave_pos and it numbered its own
    # 0-2-2 after it: R, asking for 0-1-1, starts at 0-2-2 and is owed every group from there.
    tr = _corpus(kit, "finding-skipped-gtid-numbers-the-new-masters-own")
    assert kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr).status == PASS
    for o in [o for o in tr.obs if o["node"] == "R" and o.get("gtid") == "0-2-2"]:  # as if never sent
        tr.drop(o)
    assert_witness(kit.verdict("DOMAIN.CONNECT.NO_LOSS", tr), tr, tr.first("relay", node="R", gtid="0-2-3", idx=0),
                   "R: 0-2-3 arrived from B before 0-2-2")


def test_a_group_the_source_skipped_is_its_gtid_slave_pos(kit):
    # rpl_gtid.cc, record_and_update_gtid: the GTID of a group sql_slave_skip_counter skipped is
    # recorded; a connect asking for it is accepted. Without the skip, the accept is owed a refusal.
    tr = _corpus(kit, "finding-skipped-gtid-numbers-the-new-masters-own")
    c = tr.first("connect", node="R", source="B")
    assert c["errno"] is None and kit.verdict("DOMAIN.CONNECT.REFUSED", tr).status != "violated"
    for o in tr.all("skip", node="B", gtid="0-1-1"):
        tr.drop(o)
    assert_witness(kit.verdict("DOMAIN.CONNECT.REFUSED", tr), tr, c, "R asked B for 0-1-1, not in its binlog, and was accepted")
