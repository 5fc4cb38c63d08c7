"""The simulator's work grows with the History's ops, not with its time span or with the logs
it has written so far. Work is counted (queue length, log entries walked), never timed: timing
is bench/scale.py's."""
from __future__ import annotations

from replcheck.model.sim import Config, Simulator

US, MS = 1_000_000, 1_000


class WalkedList(list):
    """A log that counts the entries walked through it (iteration, either way)."""

    walked = 0

    def __iter__(self):
        for e in super().__iter__():
            WalkedList.walked += 1
            yield e

    def __reversed__(self):
        for e in super().__reversed__():
            WalkedList.walked += 1
            yield e


def semisync_pair(ops: list[dict], end_us: int, sample_every_us: int = US) -> dict:
    topo = {"nodes": [{"id": "A", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 1000}},
                      {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}}],
            "channels": [{"source": "A", "replica": "B", "latency_us": 100}]}
    return {"header": {"schema": "replcheck.history/1", "sample_every_us": sample_every_us, "end_us": end_us,
                       "topology": topo}, "ops": ops}


def test_samples_are_queued_one_at_a_time():
    # 10^4 samples: queued up front they would all sit in the queue at the first one
    sim = Simulator(semisync_pair([{"at": MS, "op": "trx", "node": "A"}], end_us=10 * US, sample_every_us=MS), Config())
    longest = []
    sample_all = sim._sample_all
    sim._sample_all = lambda: (longest.append(len(sim.queue)), sample_all())
    _, obs = sim.run()
    assert len(longest) == 10_001 and max(longest) <= 3
    assert sum(o["kind"] == "status" for o in obs) >= 10_000


def test_a_late_op_without_sampling_costs_one_op():
    history = semisync_pair([{"at": 10**12, "op": "trx", "node": "A"}], end_us=0, sample_every_us=0)
    del history["header"]["sample_every_us"]
    _, obs = Simulator(history, Config()).run()
    assert len(obs) < 40


def test_flush_and_reconnect_walk_no_old_log_entries():
    # FLUSH LOGS closes the binlog's index entry, a reconnect acknowledges what the relay log holds
    # and starts at the binlog's FDE: each looked back over the whole log before (quadratic)
    ops = []
    for i in range(300):
        at = (i + 1) * 10 * MS
        ops += [{"at": at, "op": "trx", "node": "A"}, {"at": at + 1, "op": "flush_logs", "node": "A"},
                {"at": at + 2 * MS, "op": "stop_slave", "node": "B", "thread": "io"},
                {"at": at + 3 * MS, "op": "start_slave", "node": "B", "thread": "io"}]
    sim = Simulator(semisync_pair(ops, end_us=4 * US), Config())
    sim.nodes["A"].binlog = WalkedList(sim.nodes["A"].binlog)
    sim.nodes["B"].channel.relay = WalkedList(sim.nodes["B"].channel.relay)
    WalkedList.walked = 0
    _, obs = sim.run()
    assert sum(o["kind"] == "connect" for o in obs) == 301
    assert WalkedList.walked < 10 * len(ops)
