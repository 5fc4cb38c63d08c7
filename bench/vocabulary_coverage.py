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
together (leaving out those that cannot be: `impossible`), each with the reason it is not drawn (REASONS). Results: bench/results/vocabulary_coverage-<date>.json (docs/gen.py shows them).
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


# Why a pair of values no History drew together is not drawn, by what holds one of them: (dimension, values,
# the other dimension, the other values it is never with (None: any), the sentence). The first that
# matches gives the reason; a pair none matches is a gap of the generator (its reason says so).
HIERARCHICAL_ONLY = ("set_binlog_group_id", "restore", "show_binlog_info")
ALL_SLAVES = ("start_all_slaves", "stop_all_slaves")
ONE_CHANNEL = ("cut_io", "lose_acks", "reset_slave", "failover", "disk_full", "cluster_gap")
REASONS = (
    ("operation", HIERARCHICAL_ONLY, "mechanism", None,
     "a statement of the hierarchical design (Google's MySQL 5.0 patch), run only between --rpl-hierarchical servers: "
     "the groupid family's three, 5.0-era servers without MASTER_DELAY (5.6), workers, multi-source or run-time filters, "
     "configured without semi-sync and always with group IDs"),
    ("operation", ALL_SLAVES, "mechanism", None,
     "STOP/START ALL SLAVES is MariaDB's statement for a replica of several named connections (the multisource family), "
     "whose topology configures no filter, workers nor semi-sync, connects by GTID always, and has no 5.0 server"),
    ("mechanism", ("multi-source",), "operation", ONE_CHANNEL,
     "the operation addresses a replica's one channel by no name; a multi-source replica's channels are named connections"),
    ("kind", ("other domain", "skip_replication"), "mechanism", ("hierarchical",),
     "@@gtid_domain_id and @@skip_replication are MariaDB's session variables: a 5.0 server of the hierarchical design has neither"),
    ("operation", ("disk_full",), "mechanism", None,
     "a full disk costs a real server a minute (the retry of a binlog write): drawn in a quarter of the incident family's "
     "Histories only, a primary and one replica without other mechanisms"),
    ("operation", ("cluster_gap",), "mechanism", None,
     "a gap of a MySQL Cluster (NDB) node, recorded by the binlog injector: drawn on the incident family's primary alone, "
     "the only server drawn as a cluster's SQL node"),
    ("operation", ("failover",), "mechanism", ("no GTIDs", "multi-source", "filtered", "parallel"),
     "a failover reconnects the other replicas by GTID or group ID (never without GTIDs); it is drawn in the semisync, "
     "domains and groupid families, whose topologies configure no filters, workers nor named connections"),
    ("operation", ("reset_slave",), "mechanism", None,
     "RESET SLAVE forgets the channel (WL#344: its MASTER_DELAY too): the delay family draws it; elsewhere a replica "
     "would stay without a source for the rest of the History"),
    ("operation", ("lose_acks", "cut_io"), "mechanism", ("no GTIDs",),
     "servers without GTIDs are drawn in the delay and parallel families; a lost ack or a cut connection meets them "
     "only where a family draws both"),
    ("threads", ("no replica",), None, None,
     "a server that neither replicates nor has a replica is a master the hierarchical design's failover took out of the "
     "system (groupid family only, rare): the operations on it are its restart and restore"),
    ("operation", ("restore", "set_binlog_group_id", "remove_state_file"), "threads", None,
     "the groupid family's own statement, drawn on its servers in the thread states its steps leave"),
    ("operation", ("disk_full",), "threads", None,
     "drawn at most once per History, in a quarter of the incident family's: it meets few thread states"),
    ("operation", ("reset_slave",), "threads", ("starting",),
     "a server is starting only at the instant of its restart; RESET SLAVE is a step of its own, drawn at another"),
)


def reason(d1: str, v1: str, d2: str, v2: str) -> str:
    """The sentence why this pair was never drawn (REASONS), or that no rule explains it."""
    for dim, values, other, others, sentence in REASONS:
        for (a, x), (b, y) in (((d1, v1), (d2, v2)), ((d2, v2), (d1, v1))):
            if a == dim and x in values and (other is None or b == other) and (others is None or y in others):
                return sentence
    return "no rule: a gap of the generator, or a thread state left to the draw"


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
    missing = [{"pair": f"{d1}={v1} x {d2}={v2}", "reason": reason(d1, v1, d2, v2)} for d1, d2 in itertools.combinations(DIMENSIONS, 2)
               for v1 in values[d1] for v2 in values[d2] if (d1, v1, d2, v2) not in total and not impossible(d1, v1, d2, v2)]
    print(f"{len(rows)} pairs drawn, {len(missing)} pairs of drawn values never together; load average after: {os.getloadavg()[0]:.2f}")
    out = record.write("vocabulary_coverage", {"seed": a.seed, "histories_per_family": a.histories, "families": ",".join(names),
                                               "pairs_drawn": len(rows), "pairs_never_drawn": len(missing),
                                               "never_drawn_without_reason": sum(m["reason"].startswith("no rule") for m in missing),
                                               "pairs": rows, "never_drawn": missing})
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
