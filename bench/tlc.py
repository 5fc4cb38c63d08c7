"""TLC's throughput on the TLA+ modules of spec/tla/: per manifest check, the wall time, distinct
states per minute, and whether the result is still as pinned; per module, the largest
configuration checked. Timing lives here, not in the manifest or the tests: a check's verdict
depends on TLC's state graph alone, never on how busy the machine is.
With --validate, instead: trace validation of every embedded History on each model that runs it
(replcheck tlc --validate): its traces, how many were accepted (whole, up to an operation outside
a spec's subject, up to the end of its vocabulary), and traces per minute.
With --jvm-flags, the JVM runs with those instead of replcheck.tlc's (to compare their CPU time);
with --no-class-archive, without the class-data archive of TLC's classes (replcheck.tlc.class_archive).
Usage: .venv/bin/python bench/tlc.py [--size small|medium|large] (default: every check) [--jvm-flags "..."]
       [--no-class-archive] | --validate
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import time

import record
from replcheck import tlc


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--size", choices=tlc.SIZES)
    p.add_argument("--validate", action="store_true")
    p.add_argument("--jvm-flags", help="the JVM's flags instead of replcheck.tlc.JVM_FLAGS")
    p.add_argument("--no-class-archive", action="store_true", help="TLC's classes loaded from the jar on every run")
    args = p.parse_args()
    tlc.CLASS_ARCHIVE = not args.no_class_archive
    tlc.KEEP_RESULTS = False  # every check run, not read from an earlier run's output
    if args.validate:
        return validation()
    if args.jvm_flags is not None:
        tlc.JVM_FLAGS = tuple(args.jvm_flags.split())
    rows = []
    for c in tlc.select(size=args.size):
        start, cpu = time.perf_counter(), _children_cpu()
        r = tlc.run(c.path, c.config_text())
        seconds = time.perf_counter() - start
        rows.append({"check": c.name, "module": c.module, "config": c.config, "mutants": list(c.mutants), "size": c.size,
                     "result": r.status, "distinct_states": r.distinct, "depth": r.depth, "seconds": round(seconds, 1),
                     "cpu_s": round(_children_cpu() - cpu, 2),
                     "distinct_states_per_minute": round((r.distinct or 0) * 60 / seconds),
                     "as_pinned": r.status != "error" and not tlc.differences(c, r)})
    largest = {}
    for row in rows:  # a complete search only: a violation stops TLC early
        if row["result"] == "holds" and row["distinct_states"] > largest.get(row["module"], {}).get("distinct_states", -1):
            largest[row["module"]] = {k: row[k] for k in ("check", "config", "distinct_states", "depth", "seconds")}
    figures = {"workers": 1, "jvm_flags": list(tlc.JVM_FLAGS), "class_archive": tlc.CLASS_ARCHIVE, "size": args.size,
               "cpu_s": round(sum(row["cpu_s"] for row in rows), 1), "checks": rows, "largest_complete": largest}
    print(json.dumps(figures, indent=1))
    print(f"wrote {record.write('tlc', figures)}")


def validation() -> None:
    from replcheck import io, suites, systems
    from replcheck.tla import SUBJECT, VOCABULARY, sweep
    from replcheck.verify import embedded_histories

    models = [n for n, s in systems.systems().items() if s.kind == "model"]
    items = [(p.stem, h, suites.systems_for(h, p, models)) for p in embedded_histories() + suites.histories()
             for h in [io.load_history(p)]]
    start = time.perf_counter()
    done = sweep(items)
    seconds = time.perf_counter() - start
    found = [v for _, _, v in done.validations]
    print(json.dumps({"load_average": os.getloadavg()[0], "histories": len(items), "traces": len(found),
                      "accepted": sum(v.ok for v in found), "whole": sum(v.whole for v in found),
                      "up_to_outside_the_subject": sum(v.ok and v.beyond == SUBJECT for v in found),
                      "up_to_the_end_of_the_vocabulary": sum(v.ok and v.beyond == VOCABULARY for v in found),
                      "seconds": round(seconds, 1), "traces_per_minute": round(len(found) * 60 / seconds)}, indent=1))


if __name__ == "__main__":
    main()
