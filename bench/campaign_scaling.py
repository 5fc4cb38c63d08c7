"""Campaign throughput: histories per second in one process (no Spark) and on Spark local[1] and
local[2], for the same N, and the scaling efficiency (local[2] over the single process); and, with
--per-model, one process on each system alone (the issue's goal is stated per model too).

All three run the same work per History (replcheck.campaign.run_history: generate, run every
system, every property, cross-check every pair, build the rows); Spark adds the Parquet table,
its commit and the summary. The Spark figures exclude the JVM's start (timed apart) but include
the first job's warm-up (Python workers importing replcheck).
The machine's load average is printed with the figures: on a shared machine they move with it.
With a real server among the systems (server:mariadb-10.11), each task runs --groups of its
Histories at once and the rate is also given per hour; its rows differ run to run (real timing).
With --record the figures go to bench/results/campaign_scaling-<stamp>.json: `rates`, each
system's Histories per hour alone (--per-model), a real server's beside the models' on the same
Histories (drawn for the server when one is among the systems), and `modes`, the whole campaign's.
Usage: .venv/bin/python bench/campaign_scaling.py [--histories N] [--systems A,B] [--masters local[1],local[2]] [--per-model] [--record]
       .venv/bin/python bench/campaign_scaling.py --systems server:mariadb-10.11,model:mariadb-10.11,model:wl344 \
           --histories 8 --chunk 4 --per-model --masters '' --record
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import record

from replcheck import campaign, systems

GROUPS = campaign.DEFAULT_GROUPS  # --groups


def single_process(plan: campaign.Plan) -> dict:
    start, cpu = time.perf_counter(), time.process_time()
    rows = sum(1 for chunk in plan.chunks() for _ in campaign.run_chunk(plan, chunk, GROUPS))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    # CPU seconds too: on a shared machine the wall clock counts the other jobs' share of the core
    return {"mode": "single process" + ("" if len(plan.systems) > 1 else f" {plan.systems[0]}"), "histories": plan.histories,
            "rows": rows, "seconds": round(seconds, 1), "histories_per_s": round(plan.histories / seconds, 1),
            "histories_per_h": round(plan.histories * 3600 / seconds), "histories_per_cpu_s": round(plan.histories / cpu, 1),
            "load": os.getloadavg()[0]}


def tree_cpu_s() -> dict[str, float]:
    """CPU seconds used so far by this process (the driver's Python), the JVM and Spark's Python
    workers (its other descendants), the reaped ones included: what the run cost on a machine it
    shares, and which side of Spark spent it."""
    stats = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        comm, fields = text[text.index("(") + 1:text.rindex(")")], text.rsplit(")", 1)[1].split()
        # after the command: state, ppid, ..., utime stime cutime cstime (fields 14-17 of proc(5))
        stats[int(stat.parent.name)] = (int(fields[1]), sum(map(int, fields[11:15])), comm)
    mine, grew = {os.getpid()}, True
    while grew:
        more = {pid for pid, (ppid, _, _) in stats.items() if ppid in mine} - mine
        grew = bool(more)
        mine |= more
    out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
    for pid in mine & stats.keys():
        _, ticks, comm = stats[pid]
        out["driver" if pid == os.getpid() else "jvm" if comm == "java" else "workers"] += ticks / os.sysconf("SC_CLK_TCK")
    return out


def _spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(after[k] - before[k], 1) for k in before}


def on_spark(plan: campaign.Plan, master: str) -> dict:
    out = Path(tempfile.mkdtemp(prefix="replcheck-bench-"))
    summarise, marks = campaign.summarise, {}

    def timed_summarise(*args, **kwargs):  # the table's summary: once per campaign, whatever its size
        marks["summary"] = tree_cpu_s()
        return summarise(*args, **kwargs)

    campaign.summarise = timed_summarise
    try:
        start = time.perf_counter()
        with campaign.spark_session(master) as spark:
            jvm = time.perf_counter() - start
            start, cpu = time.perf_counter(), tree_cpu_s()
            summary = campaign.run(plan, out / "c", spark=spark, emit=lambda _: None, groups=GROUPS)
            seconds, end = time.perf_counter() - start, tree_cpu_s()
    finally:
        campaign.summarise = summarise
        shutil.rmtree(out, ignore_errors=True)
    total = sum(end.values()) - sum(cpu.values())
    return {"mode": f"Spark {master}", "histories": plan.histories, "rows": summary["campaign"]["rows"],
            "seconds": round(seconds, 1), "jvm_start_s": round(jvm, 1), "histories_per_s": round(plan.histories / seconds, 1),
            "histories_per_h": round(plan.histories * 3600 / seconds),
            "histories_per_cpu_s": round(plan.histories / total, 1),
            # where the CPU went: the tasks' waves, then the summary of the table
            "cpu_s_tasks": _spent(cpu, marks["summary"]), "cpu_s_summary": _spent(marks["summary"], end),
            "load": os.getloadavg()[0]}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--histories", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--systems", default="model:wl344,model:wl7318,model:groupid")  # the three seed models of the throughput goal
    p.add_argument("--chunk", type=int, default=campaign.DEFAULT_CHUNK)
    p.add_argument("--masters", default="local[1],local[2]", help="Spark masters to run on ('': none)")
    p.add_argument("--per-model", action="store_true", help="first, one process on each system alone")
    p.add_argument("--groups", type=int, default=campaign.DEFAULT_GROUPS, help="a real server's Histories a task runs at once")
    p.add_argument("--record", action="store_true", help="write the figures to bench/results/")
    args = p.parse_args()
    global GROUPS
    GROUPS = args.groups
    plan = campaign.validate(args.histories, args.seed, args.systems.split(","), None, args.chunk)
    rates = []
    if args.per_model:
        for name in plan.systems:
            rates.append({"system": name, **single_process(campaign.Plan(plan.histories, plan.seed, (name,), plan.chunk,
                                                                         target=plan.target))})
            print(json.dumps(rates[-1]), flush=True)
        print("alone, Histories per hour: " + ", ".join(f"{r['system']} {r['histories_per_h']}" for r in rates), flush=True)
    results = [single_process(plan)]
    print(json.dumps(results[-1]), flush=True)
    for master in filter(None, args.masters.split(",")):
        results.append(on_spark(plan, master))
        print(json.dumps(results[-1]), flush=True)
    if args.record:
        where = record.write("campaign_scaling", {
            "what": f"bench/campaign_scaling.py --systems {','.join(plan.systems)} --histories {plan.histories} --seed {plan.seed} "
                    f"--chunk {plan.chunk} --groups {GROUPS}" + (" --per-model" if args.per_model else ""),
            "target": plan.target or "", "rates": rates, "modes": results})
        print(f"wrote {where}", flush=True)
    base = results[0]["histories_per_s"]
    for r in results[1:]:
        print(f"{r['mode']}: {r['histories_per_s'] / base:.2f}x the single process "
              f"({r['histories_per_s']} vs {base} histories/s, load average {r['load']:.1f})")
    if not any(map(systems.is_server, plan.systems)):  # a real server's rows follow its real timing
        assert all(r["rows"] == results[0]["rows"] for r in results), "every mode must produce the same rows"


if __name__ == "__main__":
    main()
