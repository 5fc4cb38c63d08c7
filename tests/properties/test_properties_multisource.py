"""Multi-source replication: each MULTISOURCE.* property passes on the MariaDB model's trace of a
replica with two named connections and catches a fault: MDEV-8354's race (a GTID two connections
bring applied by both), a connection stopped by another's statement, a group held by the wrong
connection's delay, a group relayed before STOP SLAVE 'a' lost across START SLAVE 'a'."""
from __future__ import annotations

from conftest import REPO, US, assert_witness
from test_properties_domains import MDB, model
from test_properties_incident import Case, pick

from replcheck.io import load_history
from replcheck.properties.core import NOT_EXERCISED, PASS, PROPERTIES

TWO = "ms-two-sources"
DIAMOND = "ms-diamond-ignore-duplicates"

def stopped_by_another(k):
    """The SQL thread stop of STOP SLAVE 'a' edited onto connection 'b'."""
    tr = k.run(MDB, TWO)
    stop = tr.first("sql_stop", node="R", connection="a", reason="stop")
    stop["connection"] = "b"
    return tr, stop


def wrong_delay(k):
    """Connection b configured with a 5 s MASTER_DELAY, while its groups were applied without one."""
    tr = k.run(MDB, TWO)
    next(c for c in tr.header["topology"]["channels"] if c.get("connection") == "b")["delay"] = 5
    return tr, tr.first("apply", node="R", connection="b", trx="t2", idx=0)


def lost_across_restart(k):
    """t1, relayed by 'a' before STOP SLAVE 'a' and not yet applied, never applied after START SLAVE 'a'."""
    tr = k.run(MDB, TWO)
    for a in tr.all("apply", node="R", connection="a", trx="t1"):
        tr.drop(a)
    return tr, tr.first("relay", node="R", connection="a", trx="t1", idx=0)


CASES: dict[str, Case] = {
    "MULTISOURCE.INDEPENDENT": Case(model(TWO), stopped_by_another,
                                    "R connection 'b': SQL thread stopped at 1 s by no statement of its own"),
    "MULTISOURCE.DELAY": Case(model(TWO), wrong_delay, "R connection 'b' began 2-2-1 at"),
    "MULTISOURCE.IGNORE_DUPLICATES.ONCE": Case(
        model(DIAMOND), lambda k: pick(k.run("mutant:ignore-duplicates-race", DIAMOND), "apply", node="D", connection="c",
                                       trx="t1", last=True),
        "D applied 1-1-1 twice: by connection 'b' at 0.202 s and by 'c' at"),
    "MULTISOURCE.RESTART.NO_LOSS": Case(model(TWO), lost_across_restart,
                                        "R connection 'a': 1-1-1, relayed before STOP SLAVE at 1 s, was applied 0 times"),
}


def test_every_multisource_property_has_a_case():
    assert set(CASES) == {p.requirement for p in PROPERTIES if p.feature == "multisource"}


def test_each_connection_keeps_its_own_threads_and_delay(kit):
    tr = kit.run(MDB, TWO)
    # while 'a' is stopped (1 s to 3.5 s), 'b' applies t3; 'a' applies t1 after START SLAVE 'a' only
    assert [a["t"] for a in tr.all("apply", node="R", connection="b", trx="t3", idx=0)] == [1201000]
    assert all(a["t"] >= 3500000 for a in tr.all("apply", node="R", connection="a", trx="t1"))
    # every sample row names its connection (SHOW ALL SLAVES STATUS); SQL_Delay is each one's own
    rows = {(s["connection"], s["SQL_Delay"]) for s in tr.all("status", node="R")}
    assert rows == {("a", 2), ("b", 0)}
    # gtid_slave_pos is shared: both domains
    assert tr.all("server_status", node="R")[-1]["variables"]["gtid_slave_pos"] == "1-1-2,2-2-3"
    # each connection has its own relay log (sql/rpl_mi.cc: the relay log name gets -<connection>)
    assert {r["file"].split(".")[0] for r in tr.all("relay", node="R")} == {"relay-a", "relay-b"}


def test_stop_all_slaves_stops_both_and_start_all_slaves_starts_both(kit):
    tr = kit.run(MDB, TWO)
    stops = tr.all("sql_stop", node="R", t=4100000)
    assert sorted(s["connection"] for s in stops) == ["a", "b"]
    assert tr.first("stmt", node="R", op="start_all_slaves")["errno"] is None


def test_ignore_duplicates_skips_what_another_connection_applied(kit):
    tr = kit.run(MDB, DIAMOND)
    assert [s["gtid"] for s in tr.all("skip", node="D", connection="c")] == ["1-1-1", "1-1-2"]
    assert [o["count"] if "count" in o else 1 for o in tr.all("data", node="D")] and \
        tr.all("data", node="D")[-1]["counts"] == {"t1": 1, "t2": 1, "t3": 1}
    assert kit.verdict("MULTISOURCE.IGNORE_DUPLICATES.ONCE", tr).status == PASS


def test_a_group_rolled_back_by_a_crash_is_applied_again_by_its_connection(kit):
    """t4 is applied by one connection's parallel worker and rolled back when D crashes before its
    commit; after the restart it is applied again, once: not a duplicate. Without the rollback the
    same two applies are."""
    h = kit.history(DIAMOND)
    h["header"]["topology"]["nodes"][3]["variables"]["slave_parallel_threads"] = 4
    h["ops"] += [{"at": 4000000, "node": "A", "op": "trx", "trx": "t4", "statements": [{"replica_cost_us": 400000}]},
                 {"at": 4600000, "node": "D", "op": "crash"}, {"at": 5000000, "node": "D", "op": "restart"}]
    tr = kit.run(MDB, h)
    rollback = tr.first("rollback", node="D", trx="t4", reason="crash")
    assert len(tr.all("apply", node="D", trx="t4", last=True)) == 2 and tr.all("data", node="D")[-1]["counts"]["t4"] == 1
    assert kit.verdict("MULTISOURCE.IGNORE_DUPLICATES.ONCE", tr).status == PASS
    tr.drop(rollback)
    assert "D applied 1-1-4 twice" in kit.verdict("MULTISOURCE.IGNORE_DUPLICATES.ONCE", tr).witnesses[0].message


def test_without_ignore_duplicates_mariadb_applies_both_copies(kit):
    h = kit.history(DIAMOND)
    del h["header"]["topology"]["nodes"][3]["variables"]["gtid_ignore_duplicates"]
    tr = kit.run(MDB, h)
    assert tr.all("data", node="D")[-1]["counts"]["t1"] == 2


def test_the_default_connection_of_a_replica_with_named_ones_is_unconfigured(kit):
    # as measured on 10.11: the server's default Master_info exists but has no MASTER_HOST
    h = kit.history(TWO)
    h["ops"] += [{"at": 6000000, "op": "stop_slave", "node": "R"}, {"at": 6000001, "op": "start_slave", "node": "R"},
                 {"at": 6000002, "op": "change_master", "node": "R", "delay": 1}]
    tr = kit.run(MDB, h)
    stop, start, change = (tr.first("stmt", node="R", t=t) for t in (6000000, 6000001, 6000002))
    assert (stop["errno"], stop["warning"], start["errno"], change["errno"]) == (None, 1255, 1200, None)
    assert start["message"] == "Misconfigured slave: MASTER_HOST was not set; Fix in config file or with CHANGE MASTER TO"
    assert {s["SQL_Delay"] for s in tr.all("status", node="R", connection="b")} == {0}  # the change reached no connection


def test_a_parallel_setting_is_refused_while_any_connection_runs(kit):
    # 'a' is stopped from 1 s to 3.5 s; 'b' runs: MariaDB names the running connection (measured with
    # SET GLOBAL gtid_ignore_duplicates: "... running slave 'b'; run STOP SLAVE 'b' first")
    h = kit.history(TWO)
    h["ops"].append({"at": 2000000, "op": "set_global", "node": "R", "variable": "slave_parallel_threads", "value": 2})
    s = kit.run(MDB, h).first("stmt", node="R", op="set_global")
    assert (s["errno"], s["message"]) == (1198, "This operation cannot be performed as you have a running slave 'b'; "
                                                "run STOP SLAVE 'b' first")


def test_set_global_gtid_ignore_duplicates_needs_every_connection_stopped(kit):
    h = kit.history(TWO)
    h["ops"] += [{"at": 2000000, "op": "set_global", "node": "R", "variable": "gtid_ignore_duplicates", "value": "ON"},
                 {"at": 4200000, "op": "set_global", "node": "R", "variable": "gtid_ignore_duplicates", "value": "ON"}]
    refused, accepted = kit.run(MDB, h).all("stmt", node="R", op="set_global")
    assert (refused["errno"], accepted["errno"]) == (1198, None)  # 'b' runs at 2 s; STOP ALL SLAVES at 4.1 s stopped both
    assert "running slave 'b'" in refused["message"]
    # MySQL has no such variable: the seed models answer as for any unknown one
    assert kit.run("model:wl344", h).all("stmt", node="R", op="set_global")[0]["errno"] == 1193


def test_a_real_server_s_apply_is_judged_by_when_its_row_showed(kit):
    """A real server's trace knows no `begin` (None: the runner sees a row, not the SQL thread's
    start): MULTISOURCE.DELAY judges the sample that showed it, within the resolution."""
    tr = kit.run(MDB, TWO)
    applies = tr.all("apply", node="R", connection="a", trx="t4")
    for a in applies:
        a["begin"] = None
    assert kit.verdict("MULTISOURCE.DELAY", tr).status == PASS
    first = applies[0]
    tr.retime(first, first["when"] * 1_000_000 - tr.header["epoch_us"] + 1_000_000)  # a's 2 s delay cut to 1 s
    v = kit.verdict("MULTISOURCE.DELAY", tr)
    assert v.status == "violated" and "R connection 'a' began 1-1-2" in v.witnesses[0].message


def _stamped_ahead(delay_c: int) -> dict:
    """A diamond into D ('b' stopped, 'c' delayed or not) and one commit under SET TIMESTAMP 50 s
    ahead of the clocks: its event timestamp is in the future, its commit timestamps are not."""
    nodes = [{"id": "A", "variables": {"gtid_domain_id": 1}}, {"id": "B"}, {"id": "C"},
             {"id": "D", "variables": {"gtid_ignore_duplicates": True}}]
    channels = [{"source": "A", "replica": m, "latency_us": 1000} for m in ("B", "C")] + [
        {"source": "B", "replica": "D", "connection": "b", "latency_us": 1000},
        {"source": "C", "replica": "D", "connection": "c", "latency_us": 1000, "delay": delay_c}]
    ops = [{"at": 0, "op": "stop_slave", "node": "D", "connection": "b"},
           {"at": 0, "op": "trx", "node": "A", "trx": "t1", "timestamp": 1_700_000_050}]
    return {"header": {"schema": "replcheck.history/1", "name": "stamped-ahead", "sample_every_us": 500_000,
                       "end_us": 60_000_000, "topology": {"nodes": nodes, "channels": channels}}, "ops": ops}


def test_a_connections_delay_counts_as_its_servers_rule_does(kit):
    # No delay: nothing waits, not even for a timestamp ahead (sql_delay_event waits only `if (sql_delay)`).
    # MASTER_DELAY 2: WL#344 waits for the event's timestamp plus 2 s, WL#7318 for its commit's.
    for system, delay, begins_after_s in (("model:wl344", 0, 0), ("model:wl7318", 0, 0), ("model:wl344", 2, 52), ("model:wl7318", 2, 2)):
        tr = kit.run(system, _stamped_ahead(delay))
        apply = next(o for o in tr.obs if o["kind"] == "apply" and o.get("connection") == "c" and o.get("trx") == "t1")
        assert begins_after_s * US <= apply["begin"] < (begins_after_s + 1) * US, (system, delay, apply["begin"])
        assert kit.verdict("MULTISOURCE.DELAY", tr).status == (PASS if delay else NOT_EXERCISED), (system, delay)
    apply["begin"] = apply["t"] = US  # 1 s: before the commit's second plus 2
    assert kit.verdict("MULTISOURCE.DELAY", tr).status == "violated"


def test_a_semi_sync_ack_through_a_named_connection_releases_the_commit(kit):
    # Multisource-family finding (seed 17006, History 874): R relays t3 from A through connection
    # 'a' and acknowledges it; A's commit returns at the ack. Without R's relay of it, no replica
    # held t3 when the commit returned.
    tr = kit.run("model:wl7318", load_history(REPO / "corpus" / "finding-semisync-ack-through-a-named-connection.jsonl"))
    ack = tr.first("ack", node="A", replica="R")
    assert ack["connection"] == "a" and kit.verdict("WL1720.ACK.WAIT", tr).status == PASS
    for o in [o for o in tr.all("relay", node="R", trx="t3")]:
        tr.drop(o)
    assert_witness(kit.verdict("WL1720.ACK.WAIT", tr), tr, tr.first("commit", node="A", trx="t3"),
                   "commit of t3 on A returned at 0.4 s while ON, held by [] (need 1)")


def test_a_connection_still_waiting_out_its_delay_at_the_end_owes_what_it_relayed_after(kit):
    """A real server's Trace ends when its History does, not when the model's would: 'c' (MASTER_DELAY 2)
    relayed t1, stamped 50 s ahead, and still waits for it at 30 s (seed 10's History 185 ran so).
    Its last sample says so; one saying the thread idles with t1 unapplied is a violation."""
    tr = kit.run(MDB, _stamped_ahead(2))
    for o in [o for o in tr.obs if o["t"] >= 30 * US]:
        tr.drop(o)
    last = tr.all("status", node="D", connection="c")[-1]
    assert last["Slave_SQL_Running_State"] == "Waiting until MASTER_DELAY seconds after master executed event"
    assert not tr.all("apply", node="D", connection="c", trx="t1")
    assert kit.verdict("MULTISOURCE.INDEPENDENT", tr).status != "violated"
    last["Slave_SQL_Running_State"] = "Slave has read all relay log; waiting for more updates"
    assert_witness(kit.verdict("MULTISOURCE.INDEPENDENT", tr), tr, tr.first("relay", node="D", connection="c", trx="t1", idx=0),
                   "D connection 'c': 1-1-1 relayed at")


def test_a_group_relayed_before_a_stop_may_still_wait_out_its_delay_at_the_end(kit):
    tr, relay = lost_across_restart(kit)
    last = tr.all("status", node="R", connection="a")[-1]
    last["Slave_SQL_Running_State"] = "Waiting until MASTER_DELAY seconds after master executed event"
    assert kit.verdict("MULTISOURCE.RESTART.NO_LOSS", tr).status != "violated"
    # waiting or not, a group applied twice across the restart is not
    tr, _ = lost_across_restart(kit)
    twice = kit.run(MDB, TWO).all("apply", node="R", connection="a", trx="t1")
    tr.obs += [dict(a) for a in twice + twice]
    tr.obs.sort(key=lambda o: o["t"])
    tr.all("status", node="R", connection="a")[-1]["Slave_SQL_Running_State"] = last["Slave_SQL_Running_State"]
    assert "was applied 2 times" in kit.verdict("MULTISOURCE.RESTART.NO_LOSS", tr).witnesses[0].message
