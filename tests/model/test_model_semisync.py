"""The semi-sync model against the peer suites' scenarios (peer-rules.md §4: rpl_semi_sync S1,
rpl_semi_sync_after_sync S3, rpl_semi_sync_wait_slave_count S5) and known-bugs.md §1.4 / §5,
plus determinism and schema validity of every model trace.

The spec scenarios (spec/histories/ss-*.jsonl) are used where they exist; the rest are small
histories written here so each test shows its input.
"""
from __future__ import annotations


import pytest

from replcheck import io
from replcheck.model.semisync import ER_SERVER_SHUTDOWN, SemiSyncMaster
from replcheck.spec import ROOT
from replcheck.systems import get, systems

US, MS = 1_000_000, 1_000
AS, AC = "model:after-sync", "model:after-commit"
MODELS = [s.name for s in systems().values() if s.kind == "model"]
SS_HISTORIES = sorted(p.name.removesuffix(".jsonl") for p in ROOT.joinpath("histories").iterdir()
                      if p.name.startswith("ss-") and p.name.endswith(".jsonl"))
STATUS, CLIENTS, YES, NO, WAITING = ("Rpl_semi_sync_master_status", "Rpl_semi_sync_master_clients",
                                     "Rpl_semi_sync_master_yes_tx", "Rpl_semi_sync_master_no_tx",
                                     "Rpl_semi_sync_master_wait_sessions")
N_VAR = "rpl_semi_sync_master_wait_for_slave_count"

# -- helpers --------------------------------------------------------------------------------------
def samples(tr, node: str = "A") -> list[dict]:
    """The periodic SHOW STATUS samples (whole seconds) of node, one per instant."""
    out = {}
    for o in tr.all("server_status", node=node):
        if o["t"] % US == 0 and "slave_hosts" in o:
            out[o["t"]] = o  # the last one at an instant: after the ops of that instant
    return [out[t] for t in sorted(out)]


def sample(tr, t: int, node: str = "A") -> dict:
    return tr.all("server_status", node=node, t=t)[-1]


def counters(o: dict) -> tuple:
    v = o["variables"]
    return v[STATUS], v[CLIENTS], v[YES], v[NO]


def commit(tr, trx: str, node: str = "A") -> dict:
    return tr.first("commit", node=node, trx=trx)


def end_of(tr, trx: str, node: str = "A") -> int:
    return tr.first("binlog", node=node, trx=trx, last=True)["end"]


def ack_time(tr, replica: str, trx: str, node: str = "A") -> int:
    return tr.first("ack", node=node, replica=replica, pos=end_of(tr, trx, node))["t"]


def master(**variables) -> dict:
    return {"id": "A", "variables": {"rpl_semi_sync_master_enabled": True, **variables}}


def semisync_replica(name: str) -> dict:
    return {"id": name, "variables": {"rpl_semi_sync_slave_enabled": True}}


def trx(at_us: int, name: str, node: str = "A", **kw) -> dict:
    return {"at": at_us, "op": "trx", "node": node, "trx": name, **kw}


def op(at_us: int, kind: str, node: str, **kw) -> dict:
    return {"at": at_us, "op": kind, "node": node, **kw}


def history(kit, nodes, channels, ops, end_s: int = 20) -> dict:
    return kit.make_history(nodes, channels, ops, sample_every_us=US, end_us=end_s * US)


# -- S1: rpl_semi_sync counters and state (ss-counters) -------------------------------------------
@pytest.mark.parametrize("system", [AS, AC])
def test_s1_counter_and_state_sequence(kit, system):
    tr = kit.run(system, "ss-counters")
    seq = []
    for s in samples(tr):
        if not seq or counters(s) != seq[-1]:
            seq.append(counters(s))
    # (status, clients, yes_tx, no_tx) as the peer result walks through them: the DDL counts; 3
    # acked inserts; the IO thread stops (clients 0, still ON); INSERT 500 waits the 5 s timeout
    # (OFF, no_tx 1); 2 more commits while OFF (no_tx 3); the replica reconnects (clients 1) and
    # catches up (ON); DROP TABLE is acked again (yes_tx 5). The peer waits for clients 1 before it
    # reads the status OFF; the sample right after START SLAVE precedes the dump request's arrival
    # (clients 0), and the replica has caught up 2 ms later, long before the next sample.
    assert seq == [("ON", 1, 0, 0), ("ON", 1, 1, 0), ("ON", 1, 4, 0), ("ON", 0, 4, 0), ("OFF", 0, 4, 1),
                   ("OFF", 0, 4, 2), ("OFF", 0, 4, 3), ("ON", 1, 4, 3), ("ON", 1, 5, 3)]
    # the client counts from the dump thread's start (Repl_semi_sync_master::dump_start), one
    # latency after START SLAVE, where the master logs it
    started = [o["t"] for o in tr.all("log", node="A") if o["message"].startswith("Start semi-sync binlog_dump")]
    assert started[-1] == 14 * US + MS
    assert [commit(tr, t)["semisync"] for t in ("create_t1", "ins0", "ins1", "ins2", "ins500", "del1", "ins100",
                                                "drop_t1")] == ["yes"] * 4 + ["no"] * 3 + ["yes"]
    # INSERT 500 waited exactly the timeout, as one waiting session; the others did not wait.
    ins500 = commit(tr, "ins500")
    assert ins500["t"] - ins500["start"] == 5 * US
    assert sample(tr, 7 * US)["variables"][WAITING] == 1
    assert all(commit(tr, t)["t"] == commit(tr, t)["start"] for t in ("del1", "ins100"))


def test_s1_timeout_log_names_file_and_position(kit):
    tr = kit.run(AS, "ss-counters")
    [log] = [o for o in tr.all("log", node="A") if o["message"].startswith("Timeout")]
    # The unacknowledged position is the end of ins500 in the master's binlog, logged at the timeout.
    assert log["t"] == 10 * US and log["level"] == "Warning"
    assert f"Timeout waiting for reply of binlog (file: bin.000001, pos: {end_of(tr, 'ins500')})" in log["message"]


def test_s1_switches_back_on_when_the_replica_catches_up(kit):
    tr = kit.run(AS, "ss-counters")
    caught_up = tr.first("ack", node="A", replica="B", pos=end_of(tr, "ins100"))  # the binlog end while OFF
    earlier = [a for a in tr.all("ack", node="A", replica="B") if 14 * US <= a["t"] and tr.index(a) < tr.index(caught_up)]
    assert earlier, "the reconnect should acknowledge older positions first"
    # Acks below the binlog end do not switch it back; the one at the end does, at once.
    for a in earlier:
        before = [o for o in tr.all("server_status", node="A") if tr.index(o) < tr.index(a)][-1]
        assert before["variables"][STATUS] == "OFF"
    after = next(o for o in tr.all("server_status", node="A") if tr.index(o) > tr.index(caught_up))
    assert (after["t"], after["variables"][STATUS]) == (caught_up["t"], "ON")
    assert any(o["message"] == f"Semi-sync replication switched ON: semi-sync slave caught up at (bin.000001, {caught_up['pos']})"
               for o in tr.all("log", node="A", t=caught_up["t"]))


def test_s1_a_restarted_master_switches_back_on_only_at_its_binlogs_end(kit):
    # corpus/finding-switch-on-after-restart-before-catch-up: t1, t2 are binlogged while B's IO
    # thread is stopped; A restarts, goes OFF when C, its only semi-sync client (once its dump request
    # arrived, 1 ms after the restart), stops its IO thread (wait_no_slave OFF), then B connects and
    # acks t1 and t2. The binlog survived the restart: only the ack of t2 catches up.
    ops = [{"at": 0, "op": "stop_slave", "node": "B", "thread": "io"},
           {"at": 0, "op": "trx", "node": "A", "trx": "t1"}, {"at": 0, "op": "trx", "node": "A", "trx": "t2"},
           {"at": 1, "op": "shutdown", "node": "A"}, {"at": 1, "op": "restart", "node": "A"},
           {"at": 2 * MS, "op": "stop_slave", "node": "C", "thread": "io"},
           {"at": 1, "op": "start_slave", "node": "B", "thread": "io"}]
    h = history(kit, [master(rpl_semi_sync_master_wait_no_slave=False), semisync_replica("B"), semisync_replica("C")],
                [{"source": "A", "replica": "B", "latency_us": 400 * MS}, {"source": "A", "replica": "C", "latency_us": MS}],
                ops, end_s=2)
    tr = kit.run(AS, h)
    t1_ack, t2_ack = (tr.first("ack", node="A", replica="B", pos=end_of(tr, t)) for t in ("t1", "t2"))
    switches = [o for o in tr.all("server_status", node="A") if tr.index(o) > tr.index(tr.first("restart", node="A"))
                and o["t"] == t1_ack["t"]]
    assert [tr.index(o) > tr.index(t2_ack) for o in switches if o["variables"][STATUS] == "ON"] == [True]
    assert all(o["variables"][STATUS] == "OFF" for o in switches if tr.index(o) < tr.index(t2_ack))
    assert any(o["message"].endswith(f"caught up at (bin.000001, {t2_ack['pos']})") for o in tr.all("log", node="A"))

def test_s1_enabling_gives_on_at_once_even_without_replica_ack(kit):
    tr = kit.run(AS, "ss-dba-on-off")
    s = tr.first("stmt", node="A", op="set_global", variable="rpl_semi_sync_master_enabled", value=True)
    assert sample(tr, 1 * US)["variables"][STATUS] == "OFF"  # a semi-sync replica on a non-semi-sync master
    assert sample(tr, 1 * US)["variables"][CLIENTS] == 1
    assert all(o["variables"][STATUS] == "ON" for o in tr.all("server_status", node="A", t=s["t"]))
    assert commit(tr, "before")["semisync"] is None and commit(tr, "semi")["semisync"] == "yes"
    # Disabled: OFF at once, and the next commit does not wait.
    off = tr.first("stmt", node="A", op="set_global", variable="rpl_semi_sync_master_enabled", value=False)
    assert all(o["variables"][STATUS] == "OFF" for o in tr.all("server_status", node="A", t=off["t"]))
    assert commit(tr, "async")["t"] == commit(tr, "async")["start"]
    # A misspelt variable is rejected and changes nothing.
    bad = tr.first("stmt", node="A", op="set_global", variable="rpl_semi_sync_master_enabld")
    assert bad["errno"] == 1193 and sample(tr, 9 * US)["variables"][STATUS] == "ON"


# -- S3: wait point and visibility (ss-after-sync-visibility) -------------------------------------
@pytest.mark.parametrize("system,visible_while_waiting", [(AS, False), (AC, True)])
def test_s3_visibility_follows_the_wait_point(kit, system, visible_while_waiting):
    tr = kit.run(system, "ss-after-sync-visibility")
    reads = {o["t"]: o["seen"] for o in tr.all("read", node="A")}
    # ins1 is acked at 1.6 s (latency 0.3 s each way); multi at 2.6 s.
    assert ack_time(tr, "B", "ins1") == 1_600_000 and ack_time(tr, "B", "multi") == 2_600_000
    assert ("ins1" in reads[1_100_000]) is visible_while_waiting
    assert ("multi" in reads[2_100_000]) is visible_while_waiting
    assert "ins1" in reads[1_700_000] and {"ins1", "multi"} <= set(reads[3_000_000])
    assert commit(tr, "ins1")["t"] == 1_600_000 and commit(tr, "multi")["t"] == 2_600_000


@pytest.mark.parametrize("system", [AS, AC])
def test_s3_yes_tx_counts_transactions_not_statements(kit, system):
    tr = kit.run(system, "ss-after-sync-visibility")
    # BEGIN; INSERT; INSERT; COMMIT is one binlog group, acked once, counted once.
    assert [b["type"] for b in tr.all("binlog", node="A", trx="multi")] == \
        ["GTID_LOG_EVENT", "QUERY_EVENT", "QUERY_EVENT", "XID_EVENT"]
    assert len([a for a in tr.all("ack", node="A") if a["pos"] == end_of(tr, "multi")]) == 1
    assert [sample(tr, t * US)["variables"][YES] for t in (1, 2, 3)] == [0, 1, 2]


def test_s3_after_commit_waiting_is_visible_but_not_counted(kit):
    # AFTER_COMMIT with the replica's IO thread stopped: the row is visible while the commit
    # waits, and neither yes_tx nor no_tx moves until the wait ends (the timeout at 12 s).
    h = history(kit, [master(rpl_semi_sync_master_timeout=10000), semisync_replica("B")],
                [{"source": "A", "replica": "B", "latency_us": MS}],
                [op(1 * US, "stop_slave", "B", thread="io"), trx(2 * US, "t1"), op(2_500_000, "read", "A")], end_s=14)
    for system, seen in ((AC, ["t1"]), (AS, [])):
        tr = kit.run(system, h)
        assert tr.first("read", node="A")["seen"] == seen
        waiting = [counters(s)[2:] + (s["variables"][WAITING],) for s in samples(tr) if 3 * US <= s["t"] <= 11 * US]
        assert set(waiting) == {(0, 0, 1)}
        assert commit(tr, "t1")["t"] == 12 * US and sample(tr, 13 * US)["variables"][NO] == 1


# -- S5: wait_for_slave_count (ss-wait-for-slave-count and small histories) -----------------------
def test_s5_commit_needs_n_distinct_replicas(kit):
    tr = kit.run(AS, "ss-wait-for-slave-count")
    # N = 2: i1 and i2 return at C's ack (the second replica), not at B's (the first).
    for t in ("i1", "i2"):
        assert ack_time(tr, "B", t) < commit(tr, t)["t"] == ack_time(tr, "C", t)
    # N = 3: i104 waits for slow D (0.4 s each way) as well.
    assert commit(tr, "i104")["t"] == ack_time(tr, "D", "i104") == 2_900_000


def test_s5_slow_replica_holds_back_only_what_it_has_not_acknowledged(kit):
    tr = kit.run(AS, "ss-wait-for-slave-count")
    # D's ack of i104 releases i104 only; i105 (acked by B and C, not by D) keeps waiting.
    d_ack = tr.first("ack", node="A", replica="D", pos=end_of(tr, "i104"))
    assert commit(tr, "i104")["t"] == d_ack["t"]
    assert commit(tr, "i105")["t"] > d_ack["t"]
    assert not [a for a in tr.all("ack", node="A", replica="D") if a["pos"] == end_of(tr, "i105") and a["t"] < commit(tr, "i105")["t"]]


def test_s5_too_few_replicas_time_out(kit):
    tr = kit.run(AS, "ss-wait-for-slave-count")
    # N = 4 with D stopped: only B and C can ack; i105 waits out its 3 s timeout (2.2 s -> 5.2 s),
    # the status goes OFF and i201 is released with it, unacknowledged.
    assert (commit(tr, "i105")["t"], commit(tr, "i105")["semisync"]) == (5_200_000, "no")
    assert (commit(tr, "i201")["t"], commit(tr, "i201")["semisync"]) == (5_200_000, "no")
    assert sample(tr, 6 * US)["variables"][STATUS] == "OFF"
    assert counters(sample(tr, 6 * US))[2:] == (3, 2)


def test_s5_one_replica_is_never_counted_twice(kit):
    # N = 2; B (1 ms) acks t1 and t2 long before C (0.5 s): B's two acks do not make two replicas.
    h = history(kit, [master(**{N_VAR: 2}), semisync_replica("B"), semisync_replica("C")],
                [{"source": "A", "replica": "B", "latency_us": MS}, {"source": "A", "replica": "C", "latency_us": 500 * MS}],
                [trx(1 * US, "t1"), trx(1_010_000, "t2")], end_s=4)
    tr = kit.run(AS, h)
    assert ack_time(tr, "B", "t2") < ack_time(tr, "C", "t1")
    assert commit(tr, "t1")["t"] == ack_time(tr, "C", "t1") == 2 * US
    assert commit(tr, "t2")["t"] == ack_time(tr, "C", "t2")


def n_change_history(kit, new_n: int) -> dict:
    # N = 3 with two semi-sync replicas: t1 waits; B and C have both acked it by 1.004 s.
    return history(kit, [master(rpl_semi_sync_master_timeout=10000, **{N_VAR: 3}), semisync_replica("B"),
                         semisync_replica("C")],
                   [{"source": "A", "replica": "B", "latency_us": MS}, {"source": "A", "replica": "C", "latency_us": 2 * MS}],
                   [trx(1 * US, "t1"), op(3 * US, "set_global", "A", variable=N_VAR, value=new_n)], end_s=14)


def test_s5_raising_n_does_not_release(kit):
    tr = kit.run(AS, n_change_history(kit, 4))
    assert (commit(tr, "t1")["t"], commit(tr, "t1")["semisync"]) == (11 * US, "no")  # the timeout


def test_s5_lowering_n_releases_the_waiter(kit):
    tr = kit.run(AS, n_change_history(kit, 2))
    # B and C already acknowledged t1: lowering N to 2 releases it at once, counted in yes_tx.
    assert (commit(tr, "t1")["t"], commit(tr, "t1")["semisync"]) == (3 * US, "yes")
    assert counters(sample(tr, 4 * US))[2:] == (1, 0)


def test_s5_setting_the_same_n_again_is_harmless(kit):
    # N = 2; B acked t1 at 1.002 s; SET N = 2 again at 1.1 s; C's ack at 2 s must release t1.
    h = history(kit, [master(rpl_semi_sync_master_timeout=10000, **{N_VAR: 2}), semisync_replica("B"), semisync_replica("C")],
                [{"source": "A", "replica": "B", "latency_us": MS}, {"source": "A", "replica": "C", "latency_us": 500 * MS}],
                [trx(1 * US, "t1"), op(1_100_000, "set_global", "A", variable=N_VAR, value=2)], end_s=14)
    tr = kit.run(AS, h)
    assert (commit(tr, "t1")["t"], commit(tr, "t1")["semisync"]) == (ack_time(tr, "C", "t1"), "yes")


# -- wait_no_slave (ss-wait-no-slave and a disconnect) --------------------------------------------
def test_wait_no_slave_on_waits_the_timeout(kit):
    tr = kit.run(AS, "ss-wait-no-slave")  # B is not a semi-sync replica: no client at all
    assert sample(tr, 1 * US)["variables"][CLIENTS] == 0 and sample(tr, 1 * US)["variables"][STATUS] == "ON"
    waits = commit(tr, "waits")
    assert (waits["t"] - waits["start"], waits["semisync"]) == (2 * US, "no")
    assert sample(tr, 3 * US)["variables"][STATUS] == "OFF"


def test_wait_no_slave_off_goes_async_at_once(kit):
    tr = kit.run(AS, "ss-wait-no-slave")
    c = commit(tr, "async_at_once")
    assert (c["t"], c["semisync"]) == (c["start"], "no")
    assert any(o["message"].endswith("no semi-sync slave connected and rpl_semi_sync_master_wait_no_slave is OFF")
               for o in tr.all("log", node="A", t=c["t"]))
    assert sample(tr, 7 * US)["variables"][STATUS] == "OFF"


def test_wait_no_slave_off_last_replica_leaving_switches_off_at_once(kit):
    h = history(kit, [master(rpl_semi_sync_master_wait_no_slave=False), semisync_replica("B")],
                [{"source": "A", "replica": "B", "latency_us": MS}],
                [trx(1 * US, "t1"), op(2 * US, "stop_slave", "B", thread="io"), trx(3 * US, "t2")], end_s=4)
    tr = kit.run(AS, h)
    stop = tr.first("stmt", node="B", op="stop_slave")
    first_after = next(o for o in tr.all("server_status", node="A") if tr.index(o) > tr.index(stop))
    assert (first_after["t"], first_after["variables"][STATUS]) == (2 * US, "OFF")
    assert commit(tr, "t1")["semisync"] == "yes"
    assert (commit(tr, "t2")["t"], commit(tr, "t2")["semisync"]) == (3 * US, "no")


# -- SHOW SLAVE HOSTS ------------------------------------------------------------------------------
def hosts_at(tr, t: int) -> dict:
    return {h["replica"]: (h["mode"], h["reason"]) for h in sample(tr, t)["slave_hosts"]}


def test_slave_hosts_modes_and_reasons(kit):
    counters_tr = kit.run(AS, "ss-counters")
    assert hosts_at(counters_tr, 2 * US) == {"B": ("semi-sync", "acknowledges every transaction")}
    assert hosts_at(counters_tr, 5 * US) == {}  # B's IO thread is stopped: not connected
    # right after START SLAVE the replica's registration and dump request are still on their way
    assert hosts_at(counters_tr, 14 * US) == {}
    assert hosts_at(counters_tr, 15 * US) == {"B": ("semi-sync", "acknowledges every transaction")}
    dba = kit.run(AS, "ss-dba-on-off")
    assert hosts_at(dba, 7 * US) == {"B": ("async", "semi-sync disabled on the master by the DBA")}
    no_slave = kit.run(AS, "ss-wait-no-slave")
    assert hosts_at(no_slave, 2 * US) == {"B": ("async", "the replica did not request semi-sync")}


@pytest.mark.parametrize("system", ["model:mariadb-10.11", "model:wl7318", "model:groupid"])
def test_a_semi_sync_client_counts_from_its_dump_request_s_arrival(kit, system):
    # START SLAVE at 2 s over a 1.5 s link: the master counts and lists B only once the dump request
    # arrives, at 3.5 s (Repl_semi_sync_master::dump_start runs in the dump thread, from mysql_binlog_send)
    h = kit.make_history(["A", {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}}],
                         [{"source": "A", "replica": "B", "latency_us": 3 * US // 2}],
                         [{"at": 1 * US, "op": "stop_slave", "node": "B"},
                          {"at": 2 * US, "op": "start_slave", "node": "B"}],
                         sample_every_us=US, end_us=5 * US)
    tr = kit.run(system, h)
    clients = {s["t"]: (s["variables"][CLIENTS], [x["replica"] for x in s["slave_hosts"]]) for s in samples(tr)}
    assert [clients[t] for t in (2 * US, 3 * US, 4 * US)] == [(0, []), (0, []), (1, ["B"])]
    assert tr.all("log", node="A", message="Start semi-sync binlog_dump to slave (server_id: 2)")[-1]["t"] == 7 * US // 2


def test_slave_status_follows_the_io_thread(kit):
    tr = kit.run(AS, "ss-counters")
    slave = {s["t"] // US: s["variables"]["Rpl_semi_sync_slave_status"] for s in samples(tr, "B")}
    assert [slave[t] for t in (3, 4, 13, 14, 15)] == ["ON", "OFF", "OFF", "ON", "ON"]


# -- shutdown (MDEV-11853) -------------------------------------------------------------------------
def test_shutdown_gives_the_waiter_an_error_and_no_yes_tx(kit):
    tr = kit.run(AS, "ss-shutdown")
    t1 = commit(tr, "t1")
    assert (t1["t"], t1["errno"], t1["semisync"]) == (4 * US, ER_SERVER_SHUTDOWN, "shutdown")
    assert counters(sample(tr, 3 * US))[2:] == (1, 0)  # t0 acknowledged; t1 waiting
    # AFTER_SYNC: t1 is in the binlog, so the restart's crash recovery commits it.
    assert [o["t"] for o in tr.all("visible", node="A", trx="t1")] == [5 * US]
    assert "t1" in tr.first("read", node="A")["seen"]
    # The mutant re-creates the bug: the waiter returns OK, counted as acknowledged.
    bug = commit(kit.run("mutant:shutdown-acks-waiters", "ss-shutdown"), "t1")
    assert (bug.get("errno"), bug["semisync"]) == (None, "yes")


def test_mariadb_closes_the_waiting_clients_connection_at_shutdown(kit):
    # close_connections (sql/mysqld.cc) ends the session waiting in commit_trx: the client sees 2013,
    # as measured on 10.11; the transaction is the same as elsewhere (in the binlog, committed at start)
    t1 = commit(kit.run("model:mariadb-10.11", "ss-shutdown"), "t1")
    assert (t1["errno"], t1["message"], t1["semisync"]) == (2013, "Lost connection to server during query", "shutdown")


def test_shutdown_does_not_count_the_waiter():
    # The master side alone: one session waits, the server shuts down.
    pending, released = [], []
    m = SemiSyncMaster("A", {"rpl_semi_sync_master_enabled": True}, frozenset(), lambda: 0,
                       lambda *a, **k: None, lambda *a: pending.append(a))
    assert m.binlogged(("bin.000001", 277))
    m.wait("t1", "0-1-1", ("bin.000001", 277), released.append)
    assert m.variables()[WAITING] == 1
    m.shutdown()
    assert released == ["shutdown"] and (m.yes_tx, m.no_tx) == (0, 0) and m.variables()[WAITING] == 0


@pytest.mark.parametrize("how,status", [("switches", "OFF"), ("keeps", "ON")])
def test_no_semi_sync_slave_and_wait_no_slave_off(how, status):
    # The seed switches to asynchronous replication at once; MariaDB's commit_trx returns at once,
    # counted in no_tx, and leaves the status as it was (Mechanics.no_slave_commit).
    m = SemiSyncMaster("A", {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_wait_no_slave": False},
                       frozenset(), lambda: 0, lambda *a, **k: None, lambda *a: None, no_slave_commit=how)
    assert not m.binlogged(("bin.000001", 277))  # no wait either way
    assert (m.no_tx, m.variables()["Rpl_semi_sync_master_status"]) == (1, status)


# -- failover (WL#6355) ----------------------------------------------------------------------------
def failover_history(kit) -> dict:
    # A -> B, A -> C. C's IO thread is stopped while t2 commits (acked by B only), A crashes,
    # C's IO thread is restarted (nothing to connect to), B, the most advanced, is promoted.
    nodes = [master(rpl_semi_sync_master_timeout=10000), semisync_replica("B"), semisync_replica("C")]
    # B is ready to be a semi-sync primary; with no replica of its own it does not wait for one (its SQL
    # thread's commits would wait for an ack as a client's do)
    nodes[1]["variables"].update(rpl_semi_sync_master_enabled=True, rpl_semi_sync_master_wait_no_slave=False)
    channels = [{"source": "A", "replica": r, "latency_us": MS} for r in "BC"]
    ops = [trx(1 * US, "t1"), op(2 * US, "stop_slave", "C", thread="io"), trx(3 * US, "t2"), op(4 * US, "crash", "A"),
           op(5 * US, "start_slave", "C", thread="io"), op(6 * US, "failover", "B"), trx(7 * US, "t3", node="B"),
           op(8 * US, "read", "C")]
    return history(kit, nodes, channels, ops, end_s=10)


def test_failover_promotes_the_most_advanced_replica_and_repoints_the_other(kit):
    tr = kit.run(AS, failover_history(kit))
    promoted = tr.first("promoted", node="B")
    before = [o for o in tr.obs if o["t"] < promoted["t"]]
    held = {r: {o["trx"] for o in before if o["kind"] == "visible" and o["node"] == r} for r in "BC"}
    assert held == {"B": {"t1", "t2"}, "C": {"t1"}}  # B is the most advanced
    assert promoted["old"] == "A" and commit(tr, "t2")["semisync"] == "yes"
    # C now replicates from B: it gets t2 (which it missed) and t3 (written on B), and acks B.
    from_b = [r["trx"] for r in tr.all("relay", node="C", source="B") if r.get("last")]
    assert from_b == ["t2", "t3"]
    assert tr.first("ack", node="B", replica="C", pos=end_of(tr, "t3", node="B"))
    assert commit(tr, "t3", node="B")["semisync"] == "yes"
    assert tr.first("read", node="C")["seen"] == ["t1", "t2", "t3"]
    assert not [o for o in tr.all("relay", node="C", source="A") if o["t"] > promoted["t"]]


def test_failover_disconnects_the_repointed_replicas_from_the_old_primary(kit):
    # A stays up: once B is promoted, neither B nor C is A's semi-sync client any more
    # (finding-reconnect-cut-before-dump: C's dump thread on A used to be left counted).
    nodes = [master(), semisync_replica("B"), semisync_replica("C")]
    channels = [{"source": "A", "replica": r, "latency_us": MS} for r in "BC"]
    tr = kit.run(AS, history(kit, nodes, channels, [op(1 * US, "failover", "B")], end_s=3))
    promoted = tr.first("promoted", node="B")
    after = [o for o in tr.all("server_status", node="A") if o["t"] > promoted["t"]]
    assert after and {o["variables"]["Rpl_semi_sync_master_clients"] for o in after} == {0}


def test_after_sync_failover_loses_nothing_that_was_read(kit):
    # ss-phantom-failover: under AFTER_COMMIT another session read t1, which B never got.
    reads = {s: kit.run(s, "ss-phantom-failover").all("read", node="A")[0]["seen"] for s in (AS, AC)}
    assert reads == {AS: ["t0"], AC: ["t0", "t1"]}
    for s in (AS, AC):
        assert kit.run(s, "ss-phantom-failover").first("read", node="B")["seen"] == ["t0"]


# -- semi-sync and MASTER_DELAY (ss-with-delay) ---------------------------------------------------
def test_sql_delay_does_not_delay_acks(kit):
    tr = kit.run(AS, "ss-with-delay")
    for t in ("t1", "t2", "t3"):
        binlogged = tr.first("binlog", node="A", trx=t, last=True)["t"]
        applied = tr.first("apply", node="B", trx=t, last=True)["t"]
        acked = ack_time(tr, "B", t)
        # The ack takes one round trip (2 ms each way); B applies 10 s later.
        assert acked - binlogged == 4 * MS and commit(tr, t)["t"] == acked
        assert applied - binlogged >= 10 * US - 1 * US
    # The SQL thread stopped at 5 s and restarted at 6 s: t3 (7 s) is acked as fast as t1.
    assert ack_time(tr, "B", "t3") - tr.first("binlog", node="A", trx="t3", last=True)["t"] == 4 * MS


# -- determinism and schema -----------------------------------------------------------------------
@pytest.mark.parametrize("history_name", SS_HISTORIES)
def test_same_history_twice_gives_identical_bytes(kit, history_name):
    h = kit.history(history_name)
    for system in MODELS:
        first, second = get(system).run(h), get(system).run(kit.history(history_name))
        assert io.dumps_lines(*first) == io.dumps_lines(*second)


def test_every_model_trace_validates(kit, tmp_path):
    histories = {name: kit.history(name) for name in SS_HISTORIES}
    histories.update(failover=failover_history(kit), lower_n=n_change_history(kit, 2))
    for name in ("failover", "lower_n"):  # the histories written here are valid Histories too
        io.write_atomic(tmp_path / f"{name}.history.jsonl", io.dumps_history(histories[name]))
        assert io.load_history(tmp_path / f"{name}.history.jsonl") == histories[name]
    for system in MODELS:
        for name, h in histories.items():
            header, obs = get(system).run(h)
            path = tmp_path / system.replace(":", "-") / f"{name}.jsonl"
            io.write_atomic(path, io.dumps_lines(header, obs))
            loaded_header, loaded = io.load_trace(path)  # raises InputError naming the bad line
            assert loaded_header["system"] == system and len(loaded) == len(obs)


# -- mutants run as the model they change ---------------------------------------------------------
@pytest.mark.parametrize("mutant", [s.name for s in systems().values() if s.kind == "mutant"])
def test_mutant_runs_with_its_base_models_rule_and_defaults(kit, mutant):
    # Without model:wl7318's AFTER_SYNC default a wl7318 mutant waited AFTER_COMMIT and violated
    # WL6355.AFTER_SYNC.INVISIBLE on every scenario, whatever its own bug.
    m = get(mutant)
    base = get(m.declares.base)
    same = ("rule", "variables", "defaults")
    assert base.kind == "model" and [getattr(m.config, k) for k in same] == [getattr(base.config, k) for k in same]
    assert m.config.mutants - base.config.mutants and m.declares.expected_violations == base.declares.expected_violations
    tr = kit.run(mutant, "ss-after-sync-visibility")
    shown = {n["id"]: n["variables"]["rpl_semi_sync_master_wait_point"] for n in tr.header["topology"]["nodes"]}
    assert shown["A"] == base.config.defaults["rpl_semi_sync_master_wait_point"]
    if shown["A"] == "AFTER_SYNC":  # the wait point decides visibility while the commit waits
        ins1 = tr.first("visible", node="A", trx="ins1")
        assert ins1["t"] >= ack_time(tr, "B", "ins1")
