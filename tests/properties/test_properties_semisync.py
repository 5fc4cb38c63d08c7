"""Every registered semi-sync property passes on an honest trace and catches a realistic fault.

Passing traces come from the reference models on the ss-* scenarios (or on a small history
written here); violating traces from a semi-sync mutant, from model:after-commit (WL#6355), or
from a model trace edited to re-create one fault (a commit that returns before the ack, an ack
before the relay, a stale status...). Each violation must be reported with a witness naming the
faulty observation.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest
from conftest import assert_witness

from replcheck import io
from replcheck.model.semisync import AckTable
from replcheck.properties.core import PASS, PROPERTIES, VIOLATED
from replcheck.spec import ROOT
from replcheck.systems import systems

US, MS = 1_000_000, 1_000
SEMISYNC_PROPERTIES = [p for p in PROPERTIES if p.feature == "semisync"]
SS_HISTORIES = sorted(p.name.removesuffix(".jsonl") for p in ROOT.joinpath("histories").iterdir()
                      if p.name.startswith("ss-") and p.name.endswith(".jsonl"))
MODELS = [s.name for s in systems().values() if s.kind == "model"]
SEMISYNC_REQUIREMENTS = {p.requirement for p in SEMISYNC_PROPERTIES}
SS_MUTANTS = [s.name for s in systems().values() if s.kind == "mutant" and SEMISYNC_REQUIREMENTS & set(s.declares.kills)]
AS, AC = "model:after-sync", "model:after-commit"
MIN_ACK = "mutant:min-ack-last-slot"


# -- small histories ------------------------------------------------------------------------------
def min_ack_history(k) -> dict:
    """Bug #109829: a primary with 4 semi-sync replicas and wait_for_slave_count = 4. Latencies and
    lost acks make the acks arrive as in the bug report, B:t1 C:t1 B:t2 B:t3 D:t2 E:t3 (its
    1:120, 2:120, 1:150, 1:170, 3:150, 4:170), then C acks t4 at 1.035 s: from then on all four
    replicas hold t2, but the buggy table evicted D's slot instead of C's and misses it."""
    nodes = [{"id": "A", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 10000,
                                       "rpl_semi_sync_master_wait_for_slave_count": 4}}]
    nodes += [{"id": r, "variables": {"rpl_semi_sync_slave_enabled": True}} for r in "BCDE"]
    channels = [{"source": "A", "replica": r, "latency_us": lat * MS} for r, lat in zip("BCDE", (1, 2, 10, 6))]
    ops = [
        {"at": 500 * MS, "op": "lose_acks", "node": "D", "count": 1},  # D's ack of t1
        {"at": 500 * MS, "op": "lose_acks", "node": "E", "count": 2},  # E's acks of t1, t2
        {"at": 1000 * MS, "op": "trx", "node": "A", "trx": "t1"},
        {"at": 1005 * MS, "op": "lose_acks", "node": "C", "count": 2},  # C's acks of t2, t3
        {"at": 1010 * MS, "op": "trx", "node": "A", "trx": "t2"},
        {"at": 1020 * MS, "op": "trx", "node": "A", "trx": "t3"},
        {"at": 1031 * MS, "op": "trx", "node": "A", "trx": "t4"},
    ]
    return k.make_history(nodes, channels, ops, name="min-ack-last-slot", sample_every_us=US, end_us=3 * US)


# -- fault builders -------------------------------------------------------------------------------
def add(tr, o: dict) -> dict:
    """Insert a new observation at its time (after everything already there at that time)."""
    tr.obs.append(o)
    return tr.retime(o, o["t"])


def pick(tr, kind: str, **match):
    """The trace as it is, with the observation its witness must name."""
    return tr, tr.first(kind, **match)


def sample(tr, node: str, t: int) -> dict:
    """The periodic SHOW STATUS sample of `node` at t (the last server_status at that instant)."""
    return tr.all("server_status", node=node, t=t)[-1]


def commit_before_ack(k):
    # ins0's COMMIT returns as soon as it is binlogged, before B has even relayed it.
    tr = k.run(AS, "ss-counters")
    return tr, tr.retime(tr.first("commit", node="A", trx="ins0"), 2 * US)


def ack_before_relay(k):
    # B's ack of ins0 reaches the master before B wrote ins0 to its relay log.
    tr = k.run(AS, "ss-counters")
    return tr, tr.retime(tr.first("ack", node="A", replica="B", pos=399), 2_000_500)


def ack_after_apply(k):
    # B (MASTER_DELAY 10) acknowledges t1 from its SQL thread, once applied, not when queued.
    tr = k.run(AS, "ss-with-delay")
    applied = tr.first("apply", node="B", trx="t1", last=True)
    return tr, tr.retime(tr.first("ack", node="A", replica="B", pos=277), applied["t"] + 2 * MS)


def ack_mid_transaction(k):
    # B acknowledges the end of ins0's QUERY_EVENT (368), not of its XID_EVENT (399).
    tr = k.run(AS, "ss-counters")
    a = tr.first("ack", node="A", replica="B", pos=399)
    a["pos"] = 368
    return tr, a


def relay_keeps_header(k):
    # B writes ins0's GTID event with the 2 reserved header bytes: later events move by 2.
    tr = k.run(AS, "ss-counters")
    gtid = tr.first("relay", node="B", trx="ins0", idx=0)
    for r in tr.all("relay", node="B", file=gtid["file"]):
        if tr.index(r) > tr.index(gtid):
            r["pos"] += 2
    return tr, gtid


def slave_status_on_while_io_stopped(k):
    tr = k.run(AS, "ss-counters")  # B's IO thread is stopped from 4 s to 14 s
    s = sample(tr, "B", 5 * US)
    s["variables"]["Rpl_semi_sync_slave_status"] = "ON"
    return tr, s


def ack_without_asking(k):
    # B connected without the BINLOG_SEMI_SYNC flag (it is not a semi-sync replica) but acks.
    tr = k.run(AS, "ss-wait-no-slave")
    r = tr.first("relay", node="B", trx="waits", last=True)
    return tr, add(tr, {"t": r["t"] + MS, "kind": "ack", "node": "A", "replica": "B",
                        "file": r["master_file"], "pos": r["master_end"]})


def waits_past_timeout(k):
    # ins500 (timeout 5 s) is held 7.5 s.
    tr = k.run(AS, "ss-counters")
    return tr, tr.retime(tr.first("commit", node="A", trx="ins500"), 12_500_000)


def timeout_log_without_position(k):
    tr = k.run(AS, "ss-counters")
    log = next(o for o in tr.all("log", node="A") if o["message"].startswith("Timeout waiting"))
    log["message"] = "Timeout waiting for reply of binlog, semi-sync up to file bin.000001, position 705."
    return tr, tr.first("commit", node="A", trx="ins500")


def waits_while_off(k):
    # del1 is committed while the status is OFF, but its commit is held half a second.
    tr = k.run(AS, "ss-counters")
    return tr, tr.retime(tr.first("commit", node="A", trx="del1"), 11_500_000)


def stays_off_after_catch_up(k):
    # B reconnects and acknowledges up to the binlog end (1164), the status stays OFF.
    tr = k.run(AS, "ss-counters")
    caught_up = tr.first("ack", node="A", replica="B", pos=1164)
    nxt = next(o for o in tr.all("server_status", node="A") if tr.index(o) > tr.index(caught_up))
    nxt["variables"]["Rpl_semi_sync_master_status"] = "OFF"
    return tr, caught_up


def disable_leaves_status_on(k):
    tr = k.run(AS, "ss-dba-on-off")
    s = tr.first("stmt", node="A", op="set_global", variable="rpl_semi_sync_master_enabled", value=False)
    for o in tr.all("server_status", node="A", t=s["t"]):
        o["variables"]["Rpl_semi_sync_master_status"] = "ON"
    return tr, s


def hosts_semi_sync_while_off(k):
    # At 14 s B has just started its IO thread (its request still on the way) and the master is
    # still OFF (timeout): listed there as semi-sync.
    tr = k.run(AS, "ss-counters")
    s = sample(tr, "A", 14 * US)
    assert s["slave_hosts"] == []
    s["slave_hosts"] = [{"Server_id": 2, "replica": "B", "mode": "semi-sync", "reason": "acknowledges every transaction"}]
    return tr, s


def yes_tx_off_by_one(k):
    tr = k.run(AS, "ss-counters")
    s = sample(tr, "A", 3 * US)
    s["variables"]["Rpl_semi_sync_master_yes_tx"] += 1
    return tr, s


def clients_off_by_one(k):
    tr = k.run(AS, "ss-counters")  # B's IO thread stopped at 4 s
    s = sample(tr, "A", 4 * US)
    s["variables"]["Rpl_semi_sync_master_clients"] += 1
    return tr, s


def waiter_never_returns(k):
    tr = k.run(AS, "ss-counters")
    tr.drop(tr.first("commit", node="A", trx="ins0"))
    return tr, tr.first("binlog", node="A", trx="ins0", last=True)


def unacknowledged_rolled_back(k):
    # ins500 timed out unacknowledged; the master then drops it instead of keeping it committed.
    tr = k.run(AS, "ss-counters")
    tr.drop(tr.first("visible", node="A", trx="ins500"))
    return tr, tr.first("commit", node="A", trx="ins500")


def no_slave_returns_at_once(k):
    # No semi-sync replica, wait_no_slave ON: the commit returns at once instead of waiting 2 s.
    tr = k.run(AS, "ss-wait-no-slave")
    return tr, tr.retime(tr.first("commit", node="A", trx="waits"), 1 * US)


def shutdown_returns_ok(k):
    tr = k.run(AS, "ss-shutdown")
    c = tr.first("commit", node="A", trx="t1")
    c.update(errno=None, message="", semisync="yes")
    return tr, c


def keeps_in_doubt(k):
    # MDEV-21117's bug: the old primary recovered as a primary and kept t2, which B never had.
    tr = k.run("mutant:recovery-keeps-in-doubt", "ss-recover-as-replica")
    return tr, tr.first("commit", node="A", trx="t2")


def truncates_committed(k):
    # The recovery cut t1 too, committed in A's engine before the crash and returned to its client.
    tr = k.run(AS, "ss-recover-as-replica")
    tr.first("data", node="A")["counts"].pop("t1")
    return tr, tr.first("crash", node="A")


@dataclass(frozen=True)
class Case:
    passing: Callable  # kit -> Trace
    violating: Callable  # kit -> (Trace, the observation the witness must name, or None: no line)
    expect: str  # substring of that witness's message


def model(system: str, history) -> Callable:
    return lambda k: k.run(system, history if isinstance(history, str) else history(k))


CASES: dict[str, Case] = {
    "WL1720.ACK.WAIT": Case(
        model(AS, "ss-counters"), commit_before_ack,
        "commit of ins0 on A returned at 2 s while ON, held by [] (need 1)"),
    "WL1720.ACK.RELAY": Case(
        model(AS, "ss-counters"), ack_before_relay,
        "B acknowledged (bin.000001, 399) before relaying it"),
    "WL1720.ACK.IO_THREAD": Case(
        model(AS, "ss-with-delay"), ack_after_apply,
        "B acknowledged (bin.000001, 277) 10 s after queueing it"),
    "WL1720.ACK.LAST_EVENT": Case(
        model(AS, "ss-counters"), ack_mid_transaction,
        "B acknowledged (bin.000001, 368), which ends no transaction on A"),
    "WL1720.HEADER": Case(
        model(AS, "ss-counters"), relay_keeps_header,
        "B relay log holds GTID_LOG_EVENT in 44 bytes, the binlog in 42"),
    "WL1720.SLAVE.STATUS": Case(
        model(AS, "ss-counters"), slave_status_on_while_io_stopped,
        "B: Rpl_semi_sync_slave_status ON with the IO thread No"),
    "WL1720.DUMP.FLAG": Case(
        model(AS, "ss-wait-for-slave-count"), ack_without_asking,
        "B acknowledged without having asked A for semi-sync"),
    "WL1720.TIMEOUT.ASYNC": Case(
        model(AS, "ss-counters"), waits_past_timeout,
        "commit of ins500 waited 7.5 s, timeout 5 s"),
    "WL1720.TIMEOUT.LOG": Case(
        model(AS, "ss-counters"), timeout_log_without_position,
        "commit of ins500 on A timed out with no log naming a binlog position"),
    "WL1720.OFF.NO_WAIT": Case(
        model(AS, "ss-counters"), waits_while_off,
        "commit of del1 on A waited 0.5 s while OFF"),
    "WL1720.SWITCH_BACK": Case(
        model(AS, "ss-counters"), stays_off_after_catch_up,
        "A: replicas caught up with ('bin.000001', 1164) at 14.002 s but the status stayed OFF"),
    "WL7169.N_DISTINCT": Case(
        model(AS, min_ack_history),
        lambda k: pick(k.run(MIN_ACK, min_ack_history(k)), "commit", node="A", trx="t2"),
        "commit of t2 on A had its distinct acks at 1.035 s but returned at 1.04 s"),
    "WL7169.SWITCH_BACK_N": Case(
        model(AS, "ss-switch-back-n"),
        # The witness names no observation (see test_switch_back_n_witness_names_the_switch).
        lambda k: (k.run("mutant:switch-back-first-ack", "ss-switch-back-n"), None),
        "A switched ON at 6.002 s with acks of ('bin.000001', 430) from ['B'] (need 2)"),
    "WL1720.ONOFF.DBA": Case(
        model(AS, "ss-dba-on-off"), disable_leaves_status_on,
        "A: enabled := False but the status is ON"),
    "WL1720.HOSTS": Case(
        model(AS, "ss-counters"), hosts_semi_sync_while_off,
        "A lists B as semi-sync (status OFF, requested True)"),
    "WL1720.COUNT.TX": Case(
        model(AS, "ss-counters"), yes_tx_off_by_one,
        "A at 3 s: yes_tx, no_tx = (5, 0), the trace shows (4, 0)"),
    "WL1720.CLIENTS": Case(
        model(AS, "ss-counters"), clients_off_by_one,
        "A: clients 1, semi-sync replicas connected 0"),
    "WL1720.LIVE.RELEASE": Case(
        model(AS, "ss-lost-ack-reconnect"), waiter_never_returns,
        "the commit of ins0 on A never returned"),
    "WL1720.NO_ROLLBACK": Case(
        model(AS, "ss-counters"), unacknowledged_rolled_back,
        "ins500 was rolled back on A"),
    "WL1720.WAIT_NO_SLAVE": Case(
        model(AS, "ss-wait-no-slave"), no_slave_returns_at_once,
        "waits returned after 0 s with no semi-sync replica, timeout 2 s"),
    "WL6355.AFTER_SYNC.INVISIBLE": Case(
        model(AS, "ss-after-sync-visibility"),
        lambda k: pick(k.run(AC, "ss-after-sync-visibility"), "visible", node="A", trx="ins1"),
        "ins1 became visible on A at 1 s while ON, held by []"),
    "WL6355.FAILOVER.NO_LOSS": Case(
        model(AS, "ss-phantom-failover"),
        # AFTER_COMMIT: another session read t1 while it waited; the master crashed; B lacks it.
        lambda k: pick(k.run(AC, "ss-phantom-failover"), "read", node="A", t=3_100_000),
        "0-1-2 (read on A while ON) is missing on the new primary B"),
    "MARIADB.SEMISYNC.SHUTDOWN": Case(
        model(AS, "ss-shutdown"), shutdown_returns_ok,
        "shutdown of A returned t1 as committed without acks"),
    "MARIADB.SEMISYNC.RECOVERY.NO_ERRANT": Case(
        model(AS, "ss-recover-as-replica"), keeps_in_doubt,
        "A holds t2, left in doubt by its crash, which its new primary B never had"),
    "MARIADB.SEMISYNC.RECOVERY.KEEPS_COMMITTED": Case(
        model(AS, "ss-recover-as-replica"), truncates_committed,
        "A lost t1, committed in its engine before its crash, when it recovered as a replica"),
}

# -- one passing and one violating trace per property ---------------------------------------------
def test_cases_name_registered_requirements():
    assert set(CASES) == SEMISYNC_REQUIREMENTS
    assert len(SEMISYNC_PROPERTIES) == 25  # the catalogue's semi-sync requirements, one check each


def test_switch_back_n_witness_names_the_switch(kit):
    tr = kit.run("mutant:switch-back-first-ack", "ss-switch-back-n")
    switch_on = next(o for o in tr.all("server_status", node="A", t=6_002_000)
                     if o["variables"]["Rpl_semi_sync_master_status"] == "ON")
    assert_witness(kit.verdict("WL7169.SWITCH_BACK_N", tr), tr, switch_on, "A switched ON at 6.002 s")


def test_one_replica_counted_twice_violates_n_distinct(kit):
    # N = 2: i1 is released on two acks that both come from B (C's ack re-labelled).
    tr = kit.run(AS, "ss-wait-for-slave-count")
    tr.first("ack", node="A", replica="C", pos=277)["replica"] = "B"
    assert_witness(kit.verdict("WL7169.N_DISTINCT", tr), tr, tr.first("commit", node="A", trx="i1"),
                   "commit of i1 on A released while ON with acks from ['B'] (need 2 distinct)")


def test_timed_out_but_still_on_violates_timeout_async(kit):
    # ins500 waited out its timeout unacknowledged, yet the status it returns into is still ON.
    tr = kit.run(AS, "ss-counters")
    for o in tr.all("server_status", node="A", t=10 * US):
        o["variables"]["Rpl_semi_sync_master_status"] = "ON"
    assert_witness(kit.verdict("WL1720.TIMEOUT.ASYNC", tr), tr, tr.first("commit", node="A", trx="ins500"),
                   "commit of ins500 timed out but the status is still ON")


def test_a_relay_log_name_begun_again_is_another_log(kit):
    # A purge (relay_log_recovery, a GTID START SLAVE) starts the relay logs' names again: MariaDB's
    # next relay log may bear a name used before, from its start. Its first event is no successor
    # of the last one of the old log of that name (a real server's trace once read -796 bytes).
    tr = kit.run(AS, "ss-counters")
    relayed = tr.all("relay", node="B")
    first = tr.first("relay", node="B", trx="ins0", idx=0)  # a group's events: their lengths are checked
    again = [dict(r) for r in relayed[relayed.index(first):relayed.index(first) + 2]]
    assert again[0]["pos"] < relayed[-1]["pos"]
    for r in again:
        r["t"] = relayed[-1]["t"]
        tr.obs.insert(tr.index(relayed[-1]) + 1 + again.index(r), r)
    assert kit.verdict("WL1720.HEADER", tr).status == PASS
    again[1]["pos"] += 2  # within the log begun again, a length is still checked
    assert kit.verdict("WL1720.HEADER", tr).status == VIOLATED


@pytest.mark.parametrize("system", [s for s in MODELS if systems()[s].declares.expected_violations])
def test_declared_semisync_exceptions_happen(kit, system):
    # A declared semi-sync exception that no ss-* scenario shows any more is stale (a flavour model
    # answers for the declarations it adds, as in test_declared_expected_violations_happen).
    s = systems()[system]
    for requirement in SEMISYNC_REQUIREMENTS & set(s.own_declarations(systems().get(s.seed))):
        statuses = {h: kit.verdict(requirement, kit.run(system, h)).status for h in SS_HISTORIES}
        assert VIOLATED in statuses.values(), (requirement, statuses)


# -- each semi-sync mutant is killed --------------------------------------------------------------
KILLS = {  # mutant -> a history (name or builder) on which one of its `kills` is violated
    "mutant:switch-back-first-ack": "ss-switch-back-n",
    "mutant:min-ack-last-slot": min_ack_history,
    "mutant:shutdown-acks-waiters": "ss-shutdown",
    "mutant:no-reack-on-reconnect": "ss-lost-ack-reconnect",
    "mutant:recovery-keeps-in-doubt": "ss-recover-as-replica",
    "mutant:semisync-waits-while-disabled": "hist-semisync-waits-while-disabled",
}


@pytest.mark.parametrize("mutant", SS_MUTANTS)
def test_semisync_mutant_killed(kit, mutant):
    history = KILLS[mutant]  # a new semi-sync mutant without a killing history fails here
    history = history if isinstance(history, str) else history(kit)
    killed = [r for r in systems()[mutant].declares.kills if kit.verdict(r, kit.run(mutant, history)).status == VIOLATED]
    assert killed, f"{mutant} survives {systems()[mutant].declares.kills} on {history if isinstance(history, str) else 'its history'}"
    # The same history does not trip the killing property on the correct model: the mutation did it.
    assert all(kit.verdict(r, kit.run(AS, history)).status == PASS for r in killed)


def test_min_ack_history_reproduces_the_bug_report(kit, tmp_path):
    # A valid History (it could join spec/histories: no ss-* scenario kills this mutant).
    io.write_atomic(tmp_path / "h.jsonl", io.dumps_history(min_ack_history(kit)))
    assert io.load_history(tmp_path / "h.jsonl") == min_ack_history(kit)
    tr_model, tr_mutant = kit.run(AS, min_ack_history(kit)), kit.run(MIN_ACK, min_ack_history(kit))
    # The acks arrive as in Bug #109829 (1:120, 2:120, 1:150, 1:170, 3:150, 4:170), then C:t4.
    ends = {tr_model.first("binlog", node="A", trx=t, last=True)["end"]: t for t in ("t1", "t2", "t3", "t4")}
    acks = [(a["replica"], ends[a["pos"]]) for a in tr_model.all("ack", node="A")]
    assert acks[:7] == [("B", "t1"), ("C", "t1"), ("B", "t2"), ("B", "t3"), ("D", "t2"), ("E", "t3"), ("B", "t4")]
    assert acks[7] == ("C", "t4")
    assert [(a["replica"], a["pos"]) for a in tr_mutant.all("ack", node="A")] == \
        [(a["replica"], a["pos"]) for a in tr_model.all("ack", node="A")]  # same acks, different releases
    model_t2, mutant_t2 = (tr.first("commit", node="A", trx="t2")["t"] for tr in (tr_model, tr_mutant))
    assert (model_t2, mutant_t2) == (acks_time(tr_model, "C", ends, "t4"), 1_040_000)


def acks_time(tr, replica, ends, trx) -> int:
    return next(a["t"] for a in tr.all("ack", node="A", replica=replica) if ends[a["pos"]] == trx)


def test_ack_table_evicts_the_minimum_not_the_last_slot_below():
    # The bug report's sequence on the table itself: after 4:170 the correct table evicted 2:120,
    # the buggy one 3:150 and still shows slot 2 at 120.
    seq = [("1", 120), ("2", 120), ("1", 150), ("1", 170), ("3", 150), ("4", 170)]
    good, bad = AckTable(4), AckTable(4, buggy=True)
    for replica, pos in seq:
        good.ack(replica, ("log1", pos))
        bad.ack(replica, ("log1", pos))
    assert bad.slots == {"1": ("log1", 170), "2": ("log1", 120), "4": ("log1", 170)}
    assert good.released == bad.released == ("log1", 120)
    # Replica 2 then reaches 170: all four hold 150, which only the correct accounting releases.
    good.ack("2", ("log1", 170))
    bad.ack("2", ("log1", 170))
    assert (good.released, bad.released) == (("log1", 150), ("log1", 120))


def _timeouts_around_reset_master(k):
    """t1 times out, RESET MASTER turns the status ON again (after_reset_master), t2 times out in the
    new binlog, whose place bears an old name: the properties qualify it by the reset before it."""
    nodes = [{"id": "A", "server_id": 1, "variables": {"rpl_semi_sync_master_enabled": True,
                                                       "rpl_semi_sync_master_timeout": 1000}},
             {"id": "B", "server_id": 2, "variables": {"rpl_semi_sync_slave_enabled": True}}]
    ops = [{"at": 500 * MS, "op": "trx", "node": "A", "trx": "t0"},
           {"at": 1 * US, "op": "stop_slave", "node": "B"},
           {"at": 2 * US, "op": "trx", "node": "A", "trx": "t1"},
           {"at": 4 * US, "op": "reset_master", "node": "A"},
           {"at": 5 * US, "op": "trx", "node": "A", "trx": "t2", "statements": [{}, {}]}]  # ends where no old one did
    return k.run("model:mariadb-10.11", k.make_history(nodes, [("A", "B", 0)], ops, end_us=8 * US))


def test_a_timeout_after_reset_master_is_logged_and_its_switch_on_is_the_dbas(kit):
    tr = _timeouts_around_reset_master(kit)
    assert [c["semisync"] for c in tr.all("commit", node="A")] == ["yes", "no", "no"]
    assert kit.verdict("WL1720.TIMEOUT.LOG", tr).status == PASS
    assert kit.verdict("WL7169.SWITCH_BACK_N", tr).status != VIOLATED  # the reset's switch ON needs no acks
    last = [o for o in tr.all("log", node="A") if o["message"].startswith("Timeout waiting")][-1]
    last["message"] = "Timeout waiting for reply of binlog, semi-sync up to file bin.000001, position 4."
    assert_witness(kit.verdict("WL1720.TIMEOUT.LOG", tr), tr, tr.first("commit", node="A", trx="t2"),
                   "commit of t2 on A timed out with no log naming a binlog position")


def test_a_commit_after_the_dba_set_after_commit_is_no_after_sync_commit(kit):
    # AFTER_SYNC, then SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_COMMIT as t2 commits: t2 is
    # visible before its ack, as the DBA chose; the same Trace saying the SET kept AFTER_SYNC is a violation
    nodes = [{"id": "A", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 2000}},
             {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}}]
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t2", "statements": [{"duration_us": 1000}, {"duration_us": 1000}]},
           {"at": 0, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_wait_point", "value": "AFTER_COMMIT"}]
    h = kit.make_history(nodes, [{"source": "A", "replica": "B", "latency_us": 400_000}], ops, sample_every_us=US, end_us=3 * US)
    tr = kit.run("model:after-sync", h)
    assert kit.verdict("WL6355.AFTER_SYNC.INVISIBLE", tr).status != VIOLATED
    tr.first("stmt", node="A", op="set_global")["value"] = "AFTER_SYNC"
    assert_witness(kit.verdict("WL6355.AFTER_SYNC.INVISIBLE", tr), tr, tr.first("visible", node="A", trx="t2"),
                   "t2 became visible on A")
