"""Coverage of the vocabulary's combinations: which pairs of (operation, statement kind, mechanism,
state of the threads) the generator draws, and how often, in N Histories of each family.

Each operation of a History is described on four dimensions: the operation itself; the kind of
statement it commits (a `trx`'s: transactional, non-transactional, DDL, several statements, a binlog
write that fails, SET TIMESTAMP, @@skip_replication, another GTID domain; "-" for any other
operation); each mechanism of the History's servers (delayed, filtered, parallel, semi-sync, no
GTIDs, hierarchical, multi-source, chained, source only); and the state of the replication threads
it meets, from the reference model's Trace (both running, SQL only, IO only, both stopped, server
down, starting: the server's own, or its replicas' for a server that replicates from none). A pair is two of those values on one operation; the bench counts the Histories that
hold each pair, per family and over all, and lists the pairs of drawn values no History drew
together (leaving out those that cannot be: `impossible`). Results: bench/results/vocabulary_coverage-<date>.json (docs/gen.py shows them).
Usage: .venv/bin/python bench/vocabulary_coverage.py [--seed 0] [--histories 1000] [--families a,b]
"""
from __future__ import annotations

import argparse
import itertools
import os
from collections import Counter

import record
from replcheck.generate import COMPOSED, FAMILIES, generate
from replcheck.model.sim import Config, simulate

DIMENSIONS = ("operation", "kind", "mechanism", "threads")
REPLICA_VARIABLES = ("replicate_", "binlog_do_db", "binlog_ignore_db")


def statement_kind(op: dict) -> str:
    if op["op"] != "trx":
        return "-"
    if op.get("binlog_failure"):
        return "binlog failure"
    if op.get("ddl"):
        return "ddl"
    if op.get("engine") == "myisam":
        return "non-transactional"
    if op.get("skip_replication"):
        return "skip_replication"
    if op.get("timestamp") is not None:
        return "set timestamp"
    if op.get("domain"):
        return "other domain"
    return "several statements" if len(op.get("statements") or [{}]) > 1 else "transactional"


def mechanisms(header: dict, node: str) -> list[str]:
    """What the node's configuration and place in the topology give it."""
    topo = header["topology"]
    spec = next((n for n in topo["nodes"] if n["id"] == node), {})
    var = spec.get("variables", {})
    into = [c for c in topo["channels"] if c["replica"] == node]
    out = [c for c in topo["channels"] if c["source"] == node]
    tags = []
    if any(c.get("delay") for c in into):
        tags.append("delayed")
    if any(k.startswith(REPLICA_VARIABLES) for k in var):
        tags.append("filtered")
    if var.get("slave_parallel_threads") or var.get("replica_parallel_workers"):
        tags.append("parallel")
    if var.get("rpl_semi_sync_master_enabled") or var.get("rpl_semi_sync_slave_enabled"):
        tags.append("semi-sync")
    if spec.get("gtid_mode") is False:
        tags.append("no GTIDs")
    if var.get("rpl_hierarchical") or spec.get("rpl_hierarchical"):
        tags.append("hierarchical")
    if len(into) > 1:
        tags.append("multi-source")
    if into and out:
        tags.append("chained")
    if not into:
        tags.append("source only")
    return tags or ["plain replica"]


def thread_states(obs: list[dict]) -> dict[str, list[tuple[int, str]]]:
    """Per node, (time, state) as its status samples, crashes and restarts show it."""
    out: dict[str, list[tuple[int, str]]] = {}
    for o in obs:
        if o["kind"] == "status" and "Slave_SQL_Running" in o:
            sql, io = o["Slave_SQL_Running"] == "Yes", o.get("Slave_IO_Running") in ("Yes", "Connecting")
            state = {(True, True): "both running", (True, False): "SQL only", (False, True): "IO only", (False, False): "both stopped"}[(sql, io)]
            out.setdefault(o["node"], []).append((o["t"], state))
        elif o["kind"] in ("crash", "shutdown", "restart"):
            out.setdefault(o["node"], []).append((o["t"], "server down" if o["kind"] != "restart" else "starting"))
    return out


def state_at(states: dict[str, list[tuple[int, str]]], node: str, t: int) -> str:
    seen = [s for at, s in states.get(node, []) if at <= t]
    return seen[-1] if seen else ("no replica" if node not in states else "starting")


def facts(history: dict) -> list[dict[str, list[str]]]:
    """Each operation's values on the four dimensions (a list each). The mechanisms are every
    server's of the topology (a commit on the source meets its replicas' delay and filters); the
    threads, the server's own, or for a server that replicates from none its replicas' (a commit's
    events meet them running or stopped)."""
    _, obs = simulate(history, Config("wl344"), "coverage")
    states, header = thread_states(obs), history["header"]
    mechs = sorted({m for n in header["topology"]["nodes"] for m in mechanisms(header, n["id"])})
    below = {n["id"]: [c["replica"] for c in header["topology"]["channels"] if c["source"] == n["id"]] for n in header["topology"]["nodes"]}
    return [{"operation": [op["op"]], "kind": [statement_kind(op)], "mechanism": mechs,
             "threads": sorted({state_at(states, r, op["at"]) for r in ([op["node"]] if op["node"] in states else below.get(op["node"]) or [op["node"]])})}
            for op in history["ops"]]


def impossible(d1: str, v1: str, d2: str, v2: str) -> str:
    """Why a pair cannot be drawn, or "": a statement kind belongs to a commit, and only to one."""
    if (d1, d2) == ("operation", "kind") and (v1 == "trx") == (v2 == "-"):
        return "a statement kind is a commit's, and every commit has one"
    return ""


def pairs(history: dict) -> set[tuple[str, str, str, str]]:
    """(dimension, value, dimension, value) of every pair some operation of the History holds."""
    out = set()
    for f in facts(history):
        for d1, d2 in itertools.combinations(DIMENSIONS, 2):
            out.update((d1, v1, d2, v2) for v1 in f[d1] for v2 in f[d2])
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--histories", type=int, default=1000)
    p.add_argument("--families", help="these families (comma-separated), by default every family and every composed one")
    a = p.parse_args()
    names = a.families.split(",") if a.families else [*FAMILIES, *COMPOSED]
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    per_family: dict[str, Counter] = {}
    for name in names:
        per_family[name] = Counter(pair for i in range(a.histories) for pair in pairs(generate(a.seed, i, (name,))))
        print(f"{name}: {len(per_family[name])} pairs", flush=True)
    total = sum(per_family.values(), Counter())
    values = {d: sorted({x for pair in total for x in ((pair[1],) if pair[0] == d else ()) + ((pair[3],) if pair[2] == d else ())})
              for d in DIMENSIONS}
    rows = [{"pair": f"{d1}={v1} x {d2}={v2}", "histories": n, **{f: per_family[f][(d1, v1, d2, v2)] for f in names}}
            for (d1, v1, d2, v2), n in sorted(total.items())]
    missing = [{"pair": f"{d1}={v1} x {d2}={v2}"} for d1, d2 in itertools.combinations(DIMENSIONS, 2)
               for v1 in values[d1] for v2 in values[d2] if (d1, v1, d2, v2) not in total and not impossible(d1, v1, d2, v2)]
    print(f"{len(rows)} pairs drawn, {len(missing)} pairs of drawn values never together; load average after: {os.getloadavg()[0]:.2f}")
    out = record.write("vocabulary_coverage", {"seed": a.seed, "histories_per_family": a.histories, "families": ",".join(names),
                                               "pairs_drawn": len(rows), "pairs_never_drawn": len(missing),
                                               "pairs": rows, "never_drawn": missing})
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
