"""Judging a Trace costs work linear in its lines: the properties answer from indexes built once,
not by rescanning the trace per observation. Work is counted as Python calls, never timed
(timing is bench/scale.py's): four times the trace must cost well under sixteen times the calls."""
from __future__ import annotations

import sys

from replcheck.properties.core import TraceView, run_properties
from replcheck.systems import get

US = 1_000_000


def busy_pair(seconds: int) -> dict:
    """A semi-sync master and a delayed replica sampled every second: two commits a second, a
    FLUSH LOGS, a lost ack, a STOP/START SLAVE and a new MASTER_DELAY now and then."""
    ops = []
    for k in range(seconds):
        at = k * US
        ops += [{"at": at + 100_000, "op": "trx", "node": "A"}, {"at": at + 600_000, "op": "trx", "node": "A"}]
        if k % 5 == 4:
            ops += [{"at": at + 700_000, "op": "flush_logs", "node": "A"}, {"at": at + 800_000, "op": "lose_acks", "node": "B", "count": 1}]
        if k % 10 == 9:
            ops += [{"at": at + 900_000, "op": "stop_slave", "node": "B"},
                    {"at": at + 900_001, "op": "change_master", "node": "B", "delay": k % 3},
                    {"at": at + 950_000, "op": "start_slave", "node": "B"}]
    topo = {"nodes": [{"id": "A", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 300}},
                      {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}}],
            "channels": [{"source": "A", "replica": "B", "latency_us": 1000, "delay": 1}]}
    return {"header": {"schema": "replcheck.history/1", "sample_every_us": US, "end_us": (seconds + 5) * US,
                       "topology": topo}, "ops": ops}


def calls_to_judge(seconds: int) -> tuple[int, int]:
    header, obs = get("model:after-sync").run(busy_pair(seconds))
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        run_properties(TraceView(header, obs))
    finally:
        sys.setprofile(None)
    return len(obs), calls


def test_judging_four_times_the_trace_is_about_four_times_the_work():
    (small_lines, small), (big_lines, big) = calls_to_judge(25), calls_to_judge(100)
    assert 3.5 < big_lines / small_lines < 4.5
    assert big / small < 6, (small, big)
