"""Judging a Trace costs work linear in its lines: the properties answer from indexes built once,
not by rescanning the trace per observation. Work is counted (Python calls, reads of
observations), never timed (timing is bench/check_cost.py's): four times the trace must cost well
under sixteen times the work."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import REPO
from replcheck.properties.core import PROPERTIES, TraceView, run_properties
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


def _shapes():
    """The growing Histories of bench/check_cost.py, one per kind of event, and their systems."""
    spec = importlib.util.spec_from_file_location("check_cost", REPO / "bench" / "check_cost.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(REPO / "bench"))  # its neighbour bench/record.py, as when run as a script
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "bench"))
    return module


COST = _shapes()


class _Counted(dict):
    """An observation that counts every read of it: the work of judging, whatever the machine's load."""

    __slots__ = ()
    reads = 0

    def __getitem__(self, key):
        _Counted.reads += 1
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        _Counted.reads += 1
        return dict.get(self, key, default)

    def __contains__(self, key):
        _Counted.reads += 1
        return dict.__contains__(self, key)


def reads_per_property(shape: str, units: int) -> tuple[int, dict[str, int]]:
    """(the Trace's lines, per property the reads of observations it made judging them)."""
    system = COST.SYSTEMS.get(shape, "model:mariadb-10.11")
    view = TraceView(*get(system).run(COST.SHAPES[shape](units)))
    counted = {id(o): _Counted(o) for o in view.obs}
    view.obs = [counted[id(o)] for o in view.obs]
    view.by_kind = {k: [counted[id(o)] for o in obs] for k, obs in view.by_kind.items()}
    out = {}
    for p in PROPERTIES:
        _Counted.reads = 0
        p.run(view)
        out[f"{p.name} ({p.requirement})"] = _Counted.reads
    return len(view.obs), out


# Units of each shape of one kind of event: small enough for the fast tier, large enough that a
# property reading a node's events once per event shows its square (at 4x it read 12x to 60x more).
# Not the mix: its delays take a new value every 500 ops, so its small sizes are not alike.
UNITS = {"commits": 100, "incidents": 60, "samples": 2000, "replicas": 40, "crashes": 40, "groups": 100}


@pytest.mark.parametrize("shape", sorted(UNITS))
def test_every_property_reads_a_trace_four_times_longer_about_four_times(shape):
    """Counted, not timed: at four times the units the Trace has about four times the lines, and
    no property reads its observations more than six times as often (a scan per event: 16)."""
    (small_lines, small), (big_lines, big) = reads_per_property(shape, UNITS[shape]), reads_per_property(shape, 4 * UNITS[shape])
    assert 3.5 < big_lines / small_lines < 4.5
    grew = {name: (small[name], big[name]) for name in big if big[name] > 6 * max(small[name], 200)}
    assert not grew, grew
    assert sum(big.values()) < 6 * sum(small.values())
