"""Every registered semi-sync property passes on an honest trace and catches a realistic fault.

Passing traces come from the reference models on the ss-* scenarios (or on a small history
written here); violating traces from a semi-sync mutant, from model:after-commit (WL#6355), or
from a model trace edited to re-create one fault (a commit that returns before the ack, an ack
before the relay, a stale status...). Each violation must be reported with a witness naming the
faulty observation.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from conftest import assert_witness
from test_model_semisync import N_VAR, master, semisync_replica

from replcheck import io
from replcheck.generate import families_for, generate
from replcheck.model.semisync import AckTable
from replcheck.properties.core import PASS, PROPERTIES, VIOLATED, TraceView
from replcheck.properties.judge import judge
from replcheck.results import caught
from replcheck.spec import ROOT
from replcheck.systems import get, systems

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
    # At 14 s B is connected again but the master is still OFF (timeout): listed as semi-sync.
    tr = k.run(AS, "ss-counters")
    s = sample(tr, "A", 14 * US)
    [host] = s["slave_hosts"]
    host.update(mode="semi-sync", reason="acknowledges every transaction")
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
    # generator 12, seed 0, the semisync family: a crash with a commit in flight, the failover, then
    # restart_as_replica; caught by its kill where its base model holds (bench/mutant_search.py: its
    # first catch, History 4 up to generator 11, History 14 since generator 12 changed the family's draws).
    system = get("mutant:recovery-keeps-in-doubt")
    history = generate(0, 14, families_for("semisync"))
    j = judge(system, history, system.declares.kills)
    assert caught(j, judge(get(system.declares.base), history, system.declares.kills)), j.violations


def test_a_commit_sent_to_no_replica_that_may_have_waited_may_be_counted_as_no():
    # MariaDB 10.11, flt-semisync-unsent at load 25 (resolution 1.21 s): t2, sent to no semi-sync
    # replica, waited out the timeout (MDEV-38486) and no_tx counted it, but its binlog write was
    # stamped by the first poll that saw it, 0.77 s before it returned: within the resolution, as a
    # commit that never waited. Its statement lasted 1.57 s, so it may have waited: no_tx may count
    # it. A commit whose statement was no longer than the resolution may not.
    header, obs = io.load_trace(Path(__file__).parent / "traces" / "mariadb-flt-semisync-unsent-waited-unseen.jsonl")
    prop = next(p for p in PROPERTIES if p.requirement == "WL1720.COUNT.TX")
    assert prop.run(TraceView(header, obs)).status == PASS
    t2 = next(o for o in obs if o["kind"] == "commit" and o["trx"] == "t2")
    assert t2["t"] - t2["start"] > header["resolution_us"]
    t2["start"] = t2["t"] - header["resolution_us"] // 2
    v = prop.run(TraceView(header, obs))
    assert v.status == VIOLATED and "A at 4.303007 s: yes_tx, no_tx = (1, 2), the trace shows (1, 0) to (1, 1)" == v.witnesses[0].message
