"""A History whose Trace would not fit in memory is refused up front (exit 2), naming the op at
which its binlog event copies pass the limit (replcheck/budget.py), before anything runs."""
from __future__ import annotations

import json

import pytest

from replcheck import budget, io
from replcheck.cli import main


def fan_out(path, replicas: int, trxs: int, statements: int = 1) -> str:
    nodes = [{"id": "A"}] + [{"id": f"R{i}"} for i in range(replicas)]
    header = {"schema": "replcheck.history/1", "name": "fan-out", "topology": {
        "nodes": nodes, "channels": [{"source": "A", "replica": f"R{i}"} for i in range(replicas)]}}
    ops = [{"at": k * 1000, "op": "trx", "node": "A", "trx": f"t{k}", "statements": [{}] * statements} for k in range(trxs)]
    path.write_text("\n".join(json.dumps(x) for x in [header, *ops]) + "\n")
    return str(path)


def test_the_servers_a_binlog_reaches_are_its_node_and_every_replica_downstream():
    topology = {"nodes": [{"id": n} for n in "ABCD"],
                "channels": [{"source": "A", "replica": "B"}, {"source": "B", "replica": "C"}, {"source": "C", "replica": "A"}]}
    assert budget.reach(topology) == {"A": 3, "B": 3, "C": 3, "D": 1}


def test_a_history_past_the_event_copies_a_trace_may_hold_is_refused_at_the_op_that_passes_them(tmp_path, capsys):
    # 64 servers: each one-statement transaction writes 3 events on all of them, 192 copies
    path = fan_out(tmp_path / "h.jsonl", replicas=63, trxs=budget.MAX_EVENT_COPIES // 192 + 2)
    first_over = budget.MAX_EVENT_COPIES // 192 + 1  # its line: one after the header
    assert main(["simulate", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"replcheck: error: {path}:{first_over + 1}: op: the ops up to here write {first_over * 192} binlog "
                   f"event copies on the servers they reach, more than the {budget.MAX_EVENT_COPIES} a History may "
                   "(its Trace is held in memory, about 3 KB a copy: split it)"]


def test_statements_and_rotations_count_and_a_history_within_the_limit_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(budget, "MAX_EVENT_COPIES", 40)
    path = fan_out(tmp_path / "h.jsonl", replicas=1, trxs=2, statements=8)  # (8 + 2) x 2 servers each: 40
    assert len(io.load_history(path)["ops"]) == 2
    with open(path, "a") as f:
        f.write(json.dumps({"at": 9000, "op": "flush_logs", "node": "R0"}) + "\n")  # a rotation on R0 alone: 42
    with pytest.raises(io.InputError) as refused:
        io.load_history(path)
    assert (refused.value.line, refused.value.field) == (4, "op") and "write 42 binlog event copies" in refused.value.problem
