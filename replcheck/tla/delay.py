"""Delay (spec/tla/Delay.tla) and the Python model's Traces: each mapped onto the other.

`abstract(trace)`: the spec's actions a Trace witnesses. The spec's chain master_1 -> master_2
-> master_3 is the History's chain (master_3 idle when it has two nodes); `each(trace)` takes
every chain of a tree (a master with several replicas, a chain of four: `chains`) one by one; its transactions are
master_1's, in binlog order, and master_2's own (LocalCommit: the last binlog event of a
transaction master_1 never binlogged, numbered -1, -2, ...); its clock is master_1's in whole seconds (a Tick for each second
that passes before a step). Observations map as follows: the last binlog event of a transaction
on master_1 is Commit; on a replica, the first `apply` line of a transaction gives ReadEvent at
its `read` time and Apply at its `begin` time (when the wait ended and execution began); an
`sql_stop` is Stop, and START SLAVE (all threads or the SQL thread) of a stopped SQL thread is
Start. Every step carries the transaction number it acts on, so an event applied twice or out
of order is rejected.

What it ignores: sub-second times (a step at 3.7 s is at second 3: the spec's Due compares
whole seconds, as WL#344's timestamps are), a transaction's events after its first and its
execution time (the spec executes it at once), the IO thread (the spec's relay log holds all
that master_(n-1) executed), a read the SQL thread made before a STOP interrupted its wait (the
trace shows only the read that led to the execution), SHOW SLAVE STATUS and lag, and what
changes none of the spec's state: a dropped connection or PURGE (the IO thread), semi-sync's
settings and lost acks, FLUSH LOGS, what servers off the chain do. A gap's incident on master_1
(a cluster's gap, RECORD INCIDENT) is no step: the replica's SQL thread stops at it (Stop), and
SET GLOBAL sql_slave_skip_counter and START SLAVE start it again past it (Start); a transaction
the skip counter passes (its first event's `skip` line) is SkipTx. CHANGE MASTER TO MASTER_DELAY
(accepted: the SQL thread stopped) is ChangeDelay. Its scope is a chain of two
or three nodes whose master_1 clock is the true time and whose offsets are whole seconds; it
ends at the first operation outside the spec's subject (a crash, shutdown, restart, failover,
CHANGE MASTER to another source or place, RESET SLAVE: recovery and repositioning are
GroupIds') or vocabulary (a clock step, ...), and at the first transaction whose events carry its start time rather than its commit
time (outside the subject: the spec stamps a transaction at its commit; WL#7318's drawback 2 is
its F2's and mutant start-timestamp's).
"""
from __future__ import annotations

from replcheck.properties.core import seconds
from replcheck.tla import SUBJECT, VOCABULARY, Abstraction, OutOfScope, Step, outside_pair, scope_end

SPEC = "Delay"
BOUNDS = {"NTx", "NLocal", "MaxTime", "NewDelays", "NSkips"}  # constants that only bound the behaviours: a batch takes the greatest (or the union)
US = 1_000_000


Hop = tuple[str, int, int]  # (node, its MASTER_DELAY, its clock offset in s)


def chains(topology: dict) -> list[list[Hop]]:
    """The spec's chains in the topology: every path from the one master no other feeds down to a
    replica feeding none, cut at three nodes (what lies below a chain, or beside it, does not act
    on it); a path whose clocks the spec cannot express (master_1's not the true time, offsets
    not whole seconds) left out. OutOfScope if none is left."""
    nodes = {n["id"]: n for n in topology["nodes"]}
    below: dict[str, list[dict]] = {}
    fed: set[str] = set()
    for c in topology.get("channels", []):
        if c["replica"] in fed:
            raise OutOfScope(f"{c['replica']} has two sources (the spec's replicas have one)")
        fed.add(c["replica"])
        below.setdefault(c["source"], []).append(c)
    heads = [n for n in nodes if n not in fed]
    if len(heads) != 1 or len(nodes) < 2:
        raise OutOfScope("not one master feeding every other server, directly or down a chain")
    out, todo = [], [[(heads[0], 0)]]
    while todo:
        path = todo.pop(0)
        if len(path) == 3 or path[-1][0] not in below:
            offsets = [nodes[n].get("clock_offset_us", 0) for n, _ in path]
            if not offsets[0] and not any(o % US for o in offsets) and path not in [[(n, d) for n, d, _ in p] for p in out]:
                out.append([(n, d, o // US) for (n, d), o in zip(path, offsets)])
            continue
        todo += [path + [(c["replica"], c.get("delay") or 0)] for c in below[path[-1][0]]]
    if not out:
        raise OutOfScope("no chain from a master whose clock is the true time, offsets in whole seconds")
    return out


def chain(topology: dict) -> list[Hop]:
    """The topology as one chain of two or three nodes; OutOfScope if it is not one."""
    found = chains(topology)
    if len(found) != 1 or len(found[0]) != len(topology["nodes"]):
        raise OutOfScope("not a chain of two or three nodes whose clocks the spec can express")
    return found[0]


def stamped_at_start(obs: list[dict], head: str, epoch_us: int, rule: str) -> tuple[int, str] | None:
    """The first transaction of master_1 whose first event's timestamp is not its commit's second
    (statements that last, stamped at their start), unless WL#7318 waits on its immediate commit
    timestamp: the spec stamps a transaction at its commit."""
    first = {}
    for o in obs:
        if o["kind"] == "binlog" and o["node"] == head and o["trx"] and not (rule == "WL7318" and o["ict"] is not None):
            first.setdefault(o["trx"], o["when"])
            if o["last"] and first[o["trx"]] * US != epoch_us + o["t"] // US * US:
                return o["t"], f"up to {o['trx']} at {seconds(o['t'])}: its events carry its start time, the spec stamps a transaction at its commit"
    return None


def each(trace, history: dict | None = None) -> list[Abstraction]:
    """One abstraction per chain of the topology (chains)."""
    return [abstract(trace, history, hops) for hops in chains(trace[0]["topology"])]


def abstract(trace, history: dict | None = None, hops: list[Hop] | None = None) -> Abstraction:
    """The Trace on `hops`, by default the topology as one chain."""
    header, obs = trace
    hops = hops or chain(header["topology"])
    number = {n: i for i, (n, _, _) in enumerate(hops, 1)}
    head = hops[0][0]
    end, scope, beyond = scope_end(history, lambda op: outside_pair(op, head, number))
    rule = header["config"]["rule"].upper()
    middle = hops[1][0] if len(hops) == 3 else None
    replicated = {o["trx"] for o in obs if o["kind"] == "binlog" and o["node"] == head and o["trx"]}
    # master_2's own transactions: stamped at their commit as master_1's are (the same rule)
    own = [o for o in obs if o["kind"] == "binlog" and o["node"] == middle and o["trx"] not in replicated]
    stamped = min((x for x in (stamped_at_start(obs, head, header.get("epoch_us", 0), rule),
                               stamped_at_start(own, middle, header.get("epoch_us", 0), rule)) if x), default=None)
    if stamped and (end is None or stamped[0] < end):
        (end, scope), beyond = stamped, SUBJECT
    seen = [(line, o) for line, o in enumerate(obs, 2) if end is None or o["t"] < end]
    # master_1's transactions 1, 2, ... in binlog order, master_2's own -1, -2, ... (the spec's numbering)
    trx_no = {o["trx"]: k for k, o in enumerate((o for _, o in seen if o["kind"] == "binlog" and o["node"] == head
                                                  and o["trx"] and o["last"]), 1)}
    n_local = 0
    timed: list[tuple[int, int, Step]] = []  # (time in µs, line, step): sorted, then Ticks between

    def at(t_us: int, line: int, action: str, what: str, **args) -> None:
        timed.append((t_us, line, Step(action, args, line, what)))

    applied, skipped = set(), set()
    for line, o in seen:
        kind, node = o["kind"], o["node"]
        if kind == "binlog" and node == head and o["trx"] and o["last"]:
            at(o["t"], line, "Commit", f"{o['trx']} committed on {head}", t=trx_no[o["trx"]])
        elif kind == "binlog" and node == middle and o["trx"] and o["last"] and o["trx"] not in replicated:
            n_local += 1
            trx_no[o["trx"]] = k = -n_local
            at(o["t"], line, "LocalCommit", f"{o['trx']} committed on {middle} by a client of its own", t=k)
        elif kind == "apply" and node in number and o["trx"] in trx_no and (node, o["trx"]) not in applied:
            applied.add((node, o["trx"]))
            k, n = trx_no[o["trx"]], number[node]
            at(o["read"], line, "ReadEvent", f"{node}'s SQL thread read {o['trx']} at {seconds(o['read'])}", n=n, t=k)
            at(o["begin"], line, "Apply", f"{node} began executing {o['trx']} at {seconds(o['begin'])}", n=n, t=k)
        elif kind == "skip" and node in number and o["reason"] == "sql_slave_skip_counter" and o["trx"] in trx_no \
                and (node, o["trx"]) not in applied | skipped:  # a group's first event: the counter passes it whole
            skipped.add((node, o["trx"]))  # an `apply` of it after this is a step of its own, which the spec refuses
            at(o["t"], line, "SkipTx", f"{node}'s SQL thread skipped {o['trx']} (sql_slave_skip_counter)", n=number[node],
               t=trx_no[o["trx"]])
        elif kind == "sql_stop" and node in number:
            at(o["t"], line, "Stop", f"{node}'s SQL thread stopped ({o.get('reason')})", n=number[node])
        elif kind == "stmt" and o["op"] == "start_slave" and node in number and o.get("thread") in (None, "sql") \
                and o.get("errno") is None:
            at(o["t"], line, "Start", f"START SLAVE on {node}", n=number[node])
        elif kind == "stmt" and o["op"] == "change_master" and node in number and o.get("errno") is None:
            at(o["t"], line, "ChangeDelay", f"CHANGE MASTER TO MASTER_DELAY = {o['delay']} on {node}", n=number[node], d=o["delay"])
    steps, now, stopped = [], 0, set()
    for t_us, line, step in sorted(timed, key=lambda x: (x[0], x[1])):
        if step.action == "Start" and step.args["n"] not in stopped:
            continue  # START SLAVE with the SQL thread running: no step
        if step.action == "Stop" and step.args["n"] in stopped:
            continue
        (stopped.add if step.action == "Stop" else stopped.discard if step.action == "Start" else id)(step.args.get("n"))
        while now < t_us // US:
            now += 1
            steps.append(Step("Tick", {}, line, f"the clock reaches {now} s"))
        steps.append(step)
    (_, d2, s2), (_, d3, s3) = hops[1], hops[2] if len(hops) == 3 else (None, 0, 0)
    # MySQL 8.0 compares the immediate commit timestamp with the replica's own clock, uncompensated
    # (Mechanics.commit_timestamp_clock; model/delay.py, replica_clock)
    compensated = rule == "WL344" or header["config"].get("mechanics", {}).get("commit_timestamp_clock") != "replica"
    return Abstraction(SPEC, {"NTx": len(trx_no) - n_local, "NLocal": n_local, "MaxTime": now, "Compensated": compensated, "Delay2": d2, "Delay3": d3, "Skew2": s2, "Skew3": s3,
                              "Rule": rule, "NewDelays": {s.args["d"] for s in steps if s.action == "ChangeDelay"},
                              "NSkips": sum(s.action == "SkipTx" for s in steps),
                              "MUTANTS": set()}, {}, steps, scope, beyond)


def history(constants: dict, trace: list[tuple[str, dict]], name: str) -> dict:
    """A TLC counterexample of Delay as a History on the chain A -> B -> C: the spec's second s is
    the History's s + 1 (the replicas connect first), its steps 10 ms apart within a second.
    Commit is a transaction on A, Stop and Start STOP and START SLAVE SQL_THREAD; ReadEvent and
    Apply are the model's own to take (it reads and applies as soon as it may: the spec's lag,
    which no History can force, is not reproduced)."""
    nodes = ("A", "B", "C")
    ops, before = [], None
    for i, (action, st) in enumerate(trace):
        at = US * (1 + st["now"]) + 10_000 * i
        if action == "Commit":
            ops.append({"at": at, "op": "trx", "node": "A", "trx": f"t{st['done'][0]}"})
        elif action in ("Stop", "Start"):
            n = next(n for n in (2, 3) if st["sql"][n] != before["sql"][n])
            ops.append({"at": at, "op": "stop_slave" if action == "Stop" else "start_slave", "node": nodes[n - 1], "thread": "sql"})
        before = st
    c = constants
    end = US * (2 + trace[-1][1]["now"] + c["Delay2"] + c["Delay3"] + abs(c["Skew2"]) + abs(c["Skew3"]) + 5)
    return {"header": {"schema": "replcheck.history/1", "name": name,
                       "description": f"TLC counterexample of Delay ({c['Rule']}) as a History",
                       "topology": {"nodes": [{"id": "A"}, {"id": "B", "clock_offset_us": c["Skew2"] * US},
                                              {"id": "C", "clock_offset_us": c["Skew3"] * US}],
                                    "channels": [{"source": "A", "replica": "B", "delay": c["Delay2"], "latency_us": 1000},
                                                 {"source": "B", "replica": "C", "delay": c["Delay3"], "latency_us": 1000}]},
                       "sample_every_us": US, "end_us": end},
            "ops": ops}


def system(constants: dict) -> str:
    return "model:wl344" if constants["Rule"] == "WL344" else "model:wl7318"
