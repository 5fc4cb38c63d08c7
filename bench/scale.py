"""Cost against input size: simulating a History of n ops, and judging a Trace of n lines.

A History of n ops is a realistic mix on a semi-sync master A with a semi-sync replica B whose
MASTER_DELAY changes (transactions, FLUSH LOGS, a read every 50 s, lost acks, STOP/START SLAVE, incidents
skipped with sql_slave_skip_counter, CHANGE MASTER TO MASTER_DELAY, SHOW SLAVE STATUS), one op
per ms, sampled every second. A Trace of n lines is what a monitor sees of a quiet pair of
servers: one transaction and one SHOW SLAVE STATUS / SHOW STATUS sample per second (8 hours is
about 460,000 lines), cut at n lines, judged as `check-trace` does (load, every property).
Each measurement runs in its own process, so peak memory (ru_maxrss) is that size's alone.
Linear cost shows as a constant µs per op (per line) down the table.
Usage: .venv/bin/python bench/scale.py [--max N] [--system NAME]
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from replcheck import io, systems
from replcheck.features import load_features
from replcheck.properties.core import PROPERTIES
from replcheck.properties.judge import Trace, judge_trace

MS, S = 1000, 1_000_000
SIZES = (10**3, 10**4, 10**5, 10**6)


def _topology() -> dict:
    return {"nodes": [{"id": "A", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 1000}},
                      {"id": "B", "log_slave_updates": False, "variables": {"rpl_semi_sync_slave_enabled": True}}],
            "channels": [{"source": "A", "replica": "B", "latency_us": 300}]}


def _mix(i: int) -> list[tuple[int, dict]]:
    """The ops of step i (at least one), each with its distance from the step's ms: mostly
    commits, the rest at fixed periods."""
    if i % 500 == 499:
        return [(0, {"op": "stop_slave", "node": "B", "thread": "sql"}),
                (0, {"op": "change_master", "node": "B", "delay": i // 500 % 3}),
                (0, {"op": "start_slave", "node": "B", "thread": "sql"})]
    if i % 200 == 199:  # the replica stops at it (once its delay is over); skipping it lets it go on
        return [(0, {"op": "record_incident", "node": "A", "code": 1, "message": "bench gap"}),
                (3 * S, {"op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 1}),
                (3 * S, {"op": "start_slave", "node": "B", "thread": "sql"})]
    if i % 100 == 99:
        return [(0, {"op": "stop_slave", "node": "B"}), (0, {"op": "start_slave", "node": "B"})]
    if i % 50 == 49:
        return [(0, {"op": "lose_acks", "node": "B", "count": 1})]
    if i % 30 == 29:
        return [(0, {"op": "show_slave_status", "node": "B"})]
    if i % 50_000 == 49_999:  # a read returns every transaction so far (SELECT *): rare, as a History's limit wants
        return [(0, {"op": "read", "node": "B"})]
    if i % 10 == 9:
        return [(0, {"op": "flush_logs", "node": "A"})]
    stmts = [{"duration_us": 200}, {"replica_cost_us": 300}] if i % 3 == 0 else [{}]
    return [(0, {"op": "trx", "node": "A", "trx": f"t{i}", "statements": stmts})]


def ops_history(n: int) -> dict:
    """n ops of the mix, a step per ms, in time order."""
    ops: list[dict] = []
    i = 0
    while len(ops) < n:
        ops += [{"at": (i + 1) * MS + after, **op} for after, op in _mix(i)]
        i += 1
    ops = sorted(ops[:n], key=lambda op: op["at"])
    header = {"schema": "replcheck.history/1", "name": f"bench-ops-{n}", "sample_every_us": S,
              "end_us": ops[-1]["at"] + 10 * S, "topology": _topology()}
    return {"header": header, "ops": ops}


def monitor_history(seconds: int) -> dict:
    """A quiet pair sampled every second: one commit a second, for `seconds` seconds."""
    header = {"schema": "replcheck.history/1", "name": f"bench-monitor-{seconds}", "sample_every_us": S,
              "end_us": seconds * S, "topology": _topology()}
    return {"header": header, "ops": [{"at": k * S + S // 2, "op": "trx", "node": "A", "trx": f"t{k}"} for k in range(seconds)]}


LINES_PER_SECOND = 16  # of monitor_history's trace; checked where it is cut


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_simulate(n: int, system: str, path: str) -> dict:
    """Load the History as `simulate` does (every limit checked) and run it."""
    Path(path).write_text(io.dumps_history(ops_history(n)))
    start = time.perf_counter()
    h = io.load_history(path)
    loaded = time.perf_counter()
    _, obs = systems.get(system).run(h)
    return {"seconds": time.perf_counter() - loaded, "load_s": loaded - start, "peak_mb": _peak_mb(), "observations": len(obs)}


def child_write_trace(n: int, system: str, path: str) -> dict:
    header, obs = systems.get(system).run(monitor_history(n // LINES_PER_SECOND + 2))
    if len(obs) < n:
        raise SystemExit(f"monitor trace has {len(obs)} lines, fewer than {n}: lower LINES_PER_SECOND")
    Path(path).write_text(io.dumps_lines(header, obs[:n]))
    return {}


def child_check(path: str) -> dict:
    start = time.perf_counter()
    header, obs = io.load_trace(path)
    loaded = time.perf_counter()
    judge_trace(Trace(header, obs), requirements=[p.requirement for p in PROPERTIES])
    end = time.perf_counter()
    return {"seconds": end - start, "load_s": loaded - start, "judge_s": end - loaded, "peak_mb": _peak_mb()}


def _in_child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--max", type=int, default=SIZES[-1])
    p.add_argument("--system", default="model:after-sync")
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args()
    load_features()
    if args.child:
        what, n, *rest = args.child
        fn = {"simulate": lambda: child_simulate(int(n), args.system, rest[0]),
              "trace": lambda: child_write_trace(int(n), args.system, rest[0]),
              "check": lambda: child_check(rest[0])}[what]
        print(json.dumps(fn()))
        return
    print(f"system {args.system}; one process per measurement; peak = ru_maxrss")
    print(f"{'n':>9} | {'load s':>7} {'simulate s':>10} {'µs/op':>7} {'peak MB':>8} {'obs':>9} | "
          f"{'check s':>8} {'load s':>7} {'judge s':>8} {'µs/line':>8} {'peak MB':>8}")
    with tempfile.TemporaryDirectory(prefix="replcheck-scale-") as tmp:
        for n in (s for s in SIZES if s <= args.max):
            sim = _in_child("simulate", str(n), str(Path(tmp) / f"history-{n}.jsonl"))
            path = str(Path(tmp) / f"trace-{n}.jsonl")
            _in_child("trace", str(n), path)
            chk = _in_child("check", "0", path)
            print(f"{n:>9} | {sim['load_s']:>7.2f} {sim['seconds']:>10.2f} {sim['seconds'] / n * 1e6:>7.1f} {sim['peak_mb']:>8.0f} "
                  f"{sim['observations']:>9} | {chk['seconds']:>8.2f} {chk['load_s']:>7.2f} {chk['judge_s']:>8.2f} "
                  f"{chk['seconds'] / n * 1e6:>8.1f} {chk['peak_mb']:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
