"""Cost of judging against input size, one shape per kind of event: is every check linear?

Each shape is a History that grows in one kind of event (commits, incidents, status samples,
replicas, crashes and restarts, and `mix`: the realistic mix of a semi-sync pair with a changing
MASTER_DELAY). For Trace sizes of 10^3 .. 10^6 lines it measures, each in a process of its own
(so that ru_maxrss is that size's peak alone):
  judge  what `verify --histories` does to a History: simulate it, judge the Trace (every
         property, the History's expectations);
  check  what `check-trace` does to a Trace file: load it, judge it.
It fits the growth exponent of CPU-s against lines (the least-squares slope of log-log, and the
slope between the two largest sizes): 1 is linear, 2 quadratic. A shape fails when the slope
between its two largest sizes is above 1.1: that is the growth; the fit over all sizes also holds
the step from 10^4 to 10^5 lines, where the Trace and its indexes outgrow the CPU's caches and
every line costs about twice as much (a bare pass over the observations, 1.3 times), then no more.
Memory per op and per line is the peak less an empty run's (the interpreter and replcheck).
The sizes are reached by scaling the shape's unit count from a calibration run, so they are
approximate. A History here is built in memory and run as is: a shape's largest sizes ask for
more samples than a History file may (replcheck/io.py MAX_SAMPLES), which a Trace file may hold.
Writes bench/results/check_cost-<date>.json (with the machine and load average) and a table.
Usage: .venv/bin/python bench/check_cost.py [--max LINES] [--shapes a,b] [--system NAME]
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import record
from replcheck import io, systems
from replcheck.features import load_features
from replcheck.properties.expect import judge_expectations
from replcheck.properties.judge import judge_trace
from replcheck.spec.contract import Trace

MS, S = 1000, 1_000_000
SIZES = (10**3, 10**4, 10**5, 10**6)
LIMIT = 1.1  # the largest growth exponent that passes


def _history(name: str, nodes: list[dict], channels: list[dict], ops: list[dict], every_us: int = S, end_us: int = 0) -> dict:
    ops.sort(key=lambda op: op["at"])
    header = {"schema": "replcheck.history/1", "name": name, "sample_every_us": every_us,
              "end_us": max(end_us, ops[-1]["at"] + 5 * every_us), "topology": {"nodes": nodes, "channels": channels}}
    return {"header": header, "ops": ops}


def _pair(**a) -> tuple[list[dict], list[dict]]:
    return [{"id": "A", **a}, {"id": "B"}], [{"source": "A", "replica": "B", "latency_us": 300}]


def commits(k: int) -> dict:
    """k transactions on the source, one a ms (a few with two statements)."""
    return _history(f"commits-{k}", *_pair(), [{"at": (i + 1) * MS, "op": "trx", "node": "A", "trx": f"t{i}",
                                                "statements": [{}, {}] if i % 10 == 0 else [{}]} for i in range(k)])


def incidents(k: int) -> dict:
    """k incidents, each stopping the replica and skipped with sql_slave_skip_counter, a commit between."""
    ops = []
    for i in range(k):
        at = (i + 1) * 10 * MS
        ops += [{"at": at, "op": "trx", "node": "A", "trx": f"t{i}"},
                {"at": at + MS, "op": "record_incident", "node": "A", "code": 1, "message": "bench gap"},
                {"at": at + 4 * MS, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 1},
                {"at": at + 5 * MS, "op": "start_slave", "node": "B", "thread": "sql"}]
    return _history(f"incidents-{k}", *_pair(), ops)


def samples(k: int) -> dict:
    """A quiet pair sampled every ms for k ms, a commit every second."""
    return _history(f"samples-{k}", *_pair(), [{"at": i * S + MS, "op": "trx", "node": "A", "trx": f"t{i}"}
                                                for i in range(k // 1000 + 1)], every_us=MS, end_us=k * MS)


def replicas(k: int) -> dict:
    """k replicas of one source, ten commits."""
    nodes = [{"id": "A"}] + [{"id": f"R{i}"} for i in range(k)]
    channels = [{"source": "A", "replica": f"R{i}", "latency_us": 300} for i in range(k)]
    return _history(f"replicas-{k}", nodes, channels, [{"at": (i + 1) * S, "op": "trx", "node": "A", "trx": f"t{i}"}
                                                       for i in range(10)], every_us=5 * S)


def crashes(k: int) -> dict:
    """k rounds of: a commit, a crash and restart of the replica, a commit, a crash and restart of
    the source (durable settings: nothing may be lost)."""
    ops = []
    for i in range(k):
        at = (i + 1) * 50 * MS
        ops += [{"at": at, "op": "trx", "node": "A", "trx": f"a{i}"},
                {"at": at + 5 * MS, "op": "crash", "node": "B"}, {"at": at + 10 * MS, "op": "restart", "node": "B"},
                {"at": at + 20 * MS, "op": "trx", "node": "A", "trx": f"b{i}"},
                {"at": at + 25 * MS, "op": "crash", "node": "A"}, {"at": at + 30 * MS, "op": "restart", "node": "A"}]
    return _history(f"crashes-{k}", *_pair(variables={"sync_binlog": 1, "innodb_flush_log_at_trx_commit": 1}), ops, every_us=10 * S)


def groups(k: int) -> dict:
    """k rounds on --rpl-hierarchical servers (a source, two slaves): a commit, SHOW BINLOG INFO
    FOR its group, SHOW MASTER STATUS, SHOW SLAVE STATUS; every 10th a FLUSH LOGS, every 50th a
    PURGE BINARY LOGS of what is older than 0.5 s, every 25th a crash and restart of a slave."""
    ops = []
    for i in range(k):
        at = (i + 1) * 20 * MS
        ops += [{"at": at, "op": "trx", "node": "A", "trx": f"t{i}"},
                {"at": at + 5 * MS, "op": "show_binlog_info", "node": "A", "group_id": i + 1},
                {"at": at + 6 * MS, "op": "show_master_status", "node": "A"},
                {"at": at + 7 * MS, "op": "show_slave_status", "node": "B"}]
        if i % 10 == 9:
            ops.append({"at": at + 8 * MS, "op": "flush_logs", "node": "A"})
        if i % 50 == 49:
            ops.append({"at": at + 9 * MS, "op": "purge_binary_logs", "node": "A", "before_us": max(0, at - S // 2)})
        if i % 25 == 12:
            ops += [{"at": at + 10 * MS, "op": "crash", "node": "C"}, {"at": at + 15 * MS, "op": "restart", "node": "C"}]
    nodes = [{"id": n, "rpl_hierarchical": True} for n in "ABC"]
    return _history(f"groups-{k}", nodes, [{"source": "A", "replica": r, "latency_us": 300} for r in "BC"], ops, every_us=10 * S)


def _mix(i: int) -> list[tuple[int, dict]]:
    """The ops of step i: mostly commits, the rest at fixed periods."""
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


def mix(k: int) -> dict:
    """k ops of the mix on a semi-sync pair, a step per ms."""
    ops: list[dict] = []
    i = 0
    while len(ops) < k:
        ops += [{"at": (i + 1) * MS + after, **op} for after, op in _mix(i)]
        i += 1
    nodes = [{"id": "A", "variables": {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 1000}},
             {"id": "B", "log_slave_updates": False, "variables": {"rpl_semi_sync_slave_enabled": True}}]
    return _history(f"mix-{k}", nodes, [{"source": "A", "replica": "B", "latency_us": 300}], ops[:k])


# Each shape with the system that runs it: MariaDB's model, but group IDs need the hierarchical
# design's and the mix's semi-sync MySQL's AFTER_SYNC.
SHAPES = {"commits": commits, "incidents": incidents, "samples": samples, "replicas": replicas, "crashes": crashes,
          "groups": groups, "mix": mix}
SYSTEMS = {"groups": "model:groupid", "mix": "model:after-sync"}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_judge(shape: str, k: int, system: str, path: str) -> dict:
    """Simulate and judge as verify does (properties/judge.py judge, timed apart); write the Trace for child_check."""
    history = SHAPES[shape](k)
    start = time.process_time()
    trace = Trace(*systems.get(system).run(history))
    simulated = time.process_time()
    judge_trace(trace)
    judge_expectations(history, trace.observations)
    judged = time.process_time()
    out = {"ops": len(history["ops"]), "lines": len(trace.observations) + 1, "simulate_s": simulated - start,
           "judge_s": judged - simulated, "peak_mb": _peak_mb()}
    Path(path).write_text(io.dumps_lines(*trace))
    return out


def child_check(path: str) -> dict:
    start = time.process_time()
    header, obs = io.load_trace(path)
    loaded = time.process_time()
    judge_trace(Trace(header, obs))
    return {"load_s": loaded - start, "check_s": time.process_time() - start, "peak_mb": _peak_mb()}


def _in_child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log y against log x: the growth exponent."""
    lx, ly = [math.log(x) for x in xs], [math.log(max(y, 1e-6)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def exponents(rows: list[dict], key: str) -> dict:
    xs, ys = [r["lines"] for r in rows], [r[key] for r in rows]
    if len(rows) < 2:
        return {"fit": None, "last": None}
    return {"fit": round(slope(xs, ys), 3), "last": round(slope(xs[-2:], ys[-2:]), 3)}


def measure(shape: str, system: str, sizes: list[int], tmp: str, base_mb: float) -> dict:
    calib = _in_child("judge", shape, "50", system, str(Path(tmp) / "calib.jsonl"))
    per_unit = calib["lines"] / 50
    rows = []
    for n in sizes:
        k = max(1, round(n / per_unit))
        path = str(Path(tmp) / f"{shape}-{n}.jsonl")
        j = _in_child("judge", shape, str(k), system, path)
        c = _in_child("check", path)
        row = {"target": n, "units": k, **j, "check_load_s": c["load_s"], "check_s": c["check_s"], "check_peak_mb": c["peak_mb"],
               "judge_mb_per_kop": (j["peak_mb"] - base_mb) / j["ops"] * 1000,
               "check_kb_per_line": (c["peak_mb"] - base_mb) / j["lines"] * 1024}
        rows.append(row)
        print(f"{shape:>9} {row['lines']:>9} {row['ops']:>8} | {row['simulate_s']:>8.2f} {row['judge_s']:>8.2f} "
              f"{row['peak_mb']:>8.0f} {row['judge_mb_per_kop']:>8.2f} | {row['check_s']:>8.2f} {row['check_peak_mb']:>8.0f} "
              f"{row['check_kb_per_line']:>7.2f}", flush=True)
    found = {"judge": exponents(rows, "judge_s"), "check": exponents(rows, "check_s"), "simulate": exponents(rows, "simulate_s")}
    worst = max((found[f]["last"] for f in ("judge", "check") if found[f]["last"] is not None), default=0)
    return {"shape": shape, "system": system, "rows": rows, "exponents": found, "linear": worst <= LIMIT}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--max", type=int, default=10**5, help="largest Trace size in lines (10^6 takes minutes per shape)")
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--system", help="run every shape on this system (default: model:mariadb-10.11, SYSTEMS for some)")
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args()
    load_features()
    if args.child:
        what, *rest = args.child
        if what == "base":
            print(json.dumps({"peak_mb": _peak_mb()}))
        elif what == "judge":
            print(json.dumps(child_judge(rest[0], int(rest[1]), rest[2], rest[3])))
        else:
            print(json.dumps(child_check(rest[0])))
        return
    base_mb = _in_child("base")["peak_mb"]
    sizes = [s for s in SIZES if s <= args.max]
    print(f"system {args.system or 'per shape'}; CPU-s; one process per measurement; peak = ru_maxrss; empty run {base_mb:.0f} MB")
    print(f"{'shape':>9} {'lines':>9} {'ops':>8} | {'sim s':>8} {'judge s':>8} {'peak MB':>8} {'MB/kop':>8} | "
          f"{'check s':>8} {'peak MB':>8} {'KB/line':>7}")
    shapes = []
    with tempfile.TemporaryDirectory(prefix="replcheck-cost-") as tmp:
        for shape in args.shapes.split(","):
            shapes.append(measure(shape, args.system or SYSTEMS.get(shape, "model:mariadb-10.11"), sizes, tmp, base_mb))
    print(f"\n{'shape':>9} | growth exponent of CPU-s in lines (fit / last two sizes); pass: last two <= {LIMIT}")
    for s in shapes:
        e = s["exponents"]
        print(f"{s['shape']:>9} | judge {e['judge']['fit']} / {e['judge']['last']}  check {e['check']['fit']} / "
              f"{e['check']['last']}  simulate {e['simulate']['fit']} / {e['simulate']['last']}  {'ok' if s['linear'] else 'SUPERLINEAR'}")
    out = record.write("check_cost", {"system": args.system, "empty_run_mb": base_mb, "limit": LIMIT, "shapes": shapes})
    print(f"wrote {out}")
    if not all(s["linear"] for s in shapes):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
