"""Incident (spec/tla/Incident.tla) and the Python model's Traces: each mapped onto the other.

`abstract(trace)`: the spec's actions a Trace witnesses. The spec's master and replica are the
History's two nodes (`each(trace)` takes every replica of the master one by one, or the master
alone: `pairs`); its changes 1..NChanges are the master's transactions, numbered in the
order the master binlogged, lost or rolled them back. Observations map as follows: the last
binlog event of a transaction on the master is Binlog; a transaction visible on the master that
its binlog never holds (a cluster's gap, a non-transactional statement whose binlog cache
overflowed) is Lose; a master's `commit` that failed with ER_TRANS_CACHE_FULL (1197: the
transaction is rolled back) is RollBack; RECORD INCIDENT on the master (a test's or the
injector's incident, standing for a gap this server never saw) is Lose of a change the trace
does not show; an INCIDENT_EVENT in the master's binlog is WriteIncident. On the replica, the first `apply` line of a transaction is
Apply of that change, its SQL thread's stop with ER_SLAVE_INCIDENT (1590) is Halt (Apply at the
incident, stopping), its stop by STOP SLAVE, at START SLAVE UNTIL's place or by another error
(it stays before the group that failed) is Stop, a `skip` of an INCIDENT_EVENT is Skip (Apply
consuming the skip counter), START SLAVE of the stopped SQL thread after SET GLOBAL
sql_slave_skip_counter = N is SkipAndStart, without it Start.

What it ignores: every time (the spec has none: MASTER_DELAY too), events other than a
transaction's last and the incident (FDE, Rotate, GTID), the IO thread (the spec's replica reads
the binlog itself: a dropped connection, PURGE, FLUSH LOGS change nothing of its state), status
samples, semi-sync's settings and acks, and the replica's own binlog. Its scope is one master
and one replica; it ends at the first operation of the History outside the spec's subject (a
crash, shutdown, restart, failover, CHANGE MASTER to another source or place: recovery and
repositioning are GroupIds') or vocabulary (a transaction on the replica, a skip counter other
than 1, a start of the IO thread alone: a reconnect by GTID may fetch the incident again, as
inc-skip-then-reconnect shows on MariaDB, which the spec's replica, reading the binlog once,
cannot; on MariaDB any connect after an incident, by GTID), and at a stop of the SQL thread
for another reason than an incident, an error, STOP SLAVE or UNTIL.
"""
from __future__ import annotations

from replcheck.tla import VOCABULARY, Abstraction, OutOfScope, Step, outside_pair, scope_end

SPEC = "Incident"
BOUNDS = {"NChanges", "Skips", "IdleSkips"}  # constants that only bound the behaviours: a batch takes the greatest (or the union)
US = 1_000_000
ER_SLAVE_INCIDENT, ER_TRANS_CACHE_FULL = 1590, 1197


def pairs(topology: dict) -> list[tuple[str, str | None]]:
    """The spec's pairs in the topology: the one master no other feeds, with each of its replicas
    (what lies below them does not act on them), or alone when it has none."""
    channels = topology.get("channels", [])
    fed = {c["replica"] for c in channels}
    heads = [n["id"] for n in topology["nodes"] if n["id"] not in fed]
    if len(heads) != 1 or len(fed) != len(channels):
        raise OutOfScope("not one master feeding every other server, directly or down a chain")
    return [(heads[0], c["replica"]) for c in channels if c["source"] == heads[0]] or [(heads[0], None)]


def each(trace, history: dict | None = None) -> list[Abstraction]:
    """One abstraction per pair of the topology (pairs)."""
    return [abstract(trace, history, pair) for pair in pairs(trace[0]["topology"])]


def abstract(trace, history: dict | None = None, pair: tuple[str, str | None] | None = None) -> Abstraction:
    """The Trace on `pair`, by default the topology as one master and one replica."""
    header, obs = trace
    if pair is None:
        found = pairs(header["topology"])
        if len(found) != 1 or len(header["topology"]["nodes"]) != 2:
            raise OutOfScope("not one master and one replica (the spec's topology)")
        pair = found[0]
    master, replica = pair
    end, scope, beyond = scope_end(history, lambda op: outside_pair(op, master, pair, timed=False))
    steps: list[Step] = []
    change: dict[str, int] = {}
    binlogged = {o["trx"] for o in obs if o["kind"] == "binlog" and o.get("node") == master and o["trx"]}
    # MariaDB asks by GTID on every connect (Mechanics.gtid_connect): an incident, which has no
    # GTID, may come again or be passed (inc-skip-then-reconnect, inc-skip-after-rotation)
    by_gtid, incident = header["config"].get("mechanics", {}).get("gtid_connect") == "every", False
    sql, skip_set = "running", 0  # as the spec's: "stopped" at an incident, "idle" by STOP SLAVE; the counter set
    idle_skips = False  # the counter set with the SQL thread stopped elsewhere than at an incident
    applied = set()

    def step(line: int, action: str, what: str, **args) -> None:
        steps.append(Step(action, args, line, what))

    def made(trx: str) -> int:
        change[trx] = len(change) + 1
        return change[trx]

    for line, o in enumerate(obs, 2):
        kind, node = o["kind"], o.get("node")
        if end is not None and o["t"] >= end:
            break
        if node == master and kind == "binlog" and o["trx"] and o["last"]:
            step(line, "Binlog", f"{o['trx']} binlogged on {master}", c=made(o["trx"]))
        elif node == master and kind == "visible" and o["trx"] not in binlogged and o["trx"] not in change:
            step(line, "Lose", f"{o['trx']} committed on {master}, never binlogged", c=made(o["trx"]))
        elif node == master and kind == "commit" and o.get("errno") == ER_TRANS_CACHE_FULL:
            step(line, "RollBack", f"{o['trx']} rolled back (error {o['errno']})", c=made(o["trx"]))
        elif node == master and kind == "stmt" and o["op"] == "record_incident" and o.get("errno") is None:
            step(line, "Lose", "RECORD INCIDENT: the gap it stands for, which the trace does not show", c=made(f"gap@{line}"))
        elif node == master and kind == "binlog" and o["type"] == "INCIDENT_EVENT":
            incident = True
            step(line, "WriteIncident", f"incident {o.get('incident')} binlogged on {master}: {o.get('message')}")
        elif node == replica and kind == "apply" and o["trx"] in change and o["trx"] not in applied:
            applied.add(o["trx"])
            step(line, "Apply", f"{replica} applied {o['trx']}", c=change[o["trx"]])
        elif node == replica and kind == "sql_stop" and o.get("errno") == ER_SLAVE_INCIDENT:
            sql = "stopped"
            step(line, "Halt", f"{replica}'s SQL thread stopped at the incident: {o.get('message')}")
        elif node == replica and kind == "sql_stop" and (o.get("reason") in ("stop", "until") or o.get("errno") is not None):
            # an apply error's stop leaves the SQL thread before the group that failed (rolled back),
            # as STOP SLAVE leaves it where it is, and START SLAVE UNTIL's between groups
            # (model/sim/applier.py stop_sql: sql_pos = group_start)
            if sql == "running":
                sql = "idle"
                step(line, "Stop", f"{replica}'s SQL thread stopped ({o.get('message') or 'STOP SLAVE'})")
        elif node == replica and kind == "sql_stop":
            scope, beyond = f"up to trace line {line}: {replica}'s SQL thread stopped for another reason than an incident", VOCABULARY
            break
        elif node == replica and kind == "skip" and o.get("type") == "INCIDENT_EVENT":
            step(line, "Skip", f"{replica} skipped the incident (sql_slave_skip_counter)")
        elif node == replica and kind == "skip" and o.get("reason") == "sql_slave_skip_counter" and o.get("trx") in change \
                and o["trx"] not in applied:
            applied.add(o["trx"])
            step(line, "SkipGroup", f"{replica} skipped {o['trx']} (sql_slave_skip_counter)", c=change[o["trx"]])
        elif node == replica and kind == "stmt" and o.get("errno") is None and o["op"] == "set_global" \
                and o.get("variable") == "sql_slave_skip_counter":
            skip_set = o["value"]
        elif node == replica and by_gtid and incident and (kind == "io_cut" or (
                kind == "stmt" and o["op"] == "start_slave" and o.get("thread") in (None, "io") and o.get("errno") is None)):
            scope, beyond = (f"up to trace line {line}: {replica} connects again by GTID after an incident, which it may "
                             "fetch again or pass (the spec's replica reads the binlog once)"), VOCABULARY
            break
        elif node == replica and kind == "stmt" and o.get("errno") is None and o["op"] == "start_slave" \
                and o.get("thread") in (None, "sql"):
            if sql != "running" and skip_set:
                idle_skips |= sql == "idle"
                step(line, "SkipAndStart", f"SET GLOBAL sql_slave_skip_counter = {skip_set}; START SLAVE on {replica}", n=skip_set)
            elif sql != "running":
                step(line, "Start", f"START SLAVE on {replica}")
            sql, skip_set = "running", 0
    return Abstraction(SPEC, {"NChanges": len(change), "Skips": {s.args["n"] for s in steps if s.action == "SkipAndStart"} or {1},
                              "IdleSkips": idle_skips, "MUTANTS": set()}, {}, steps, scope, beyond)


def history(constants: dict, trace: list[tuple[str, dict]], name: str) -> dict:
    """A TLC counterexample of Incident as a History on A -> B, steps 100 ms apart from 1 s: Binlog
    is a transaction on A, Lose a cluster's gap losing one transaction (the model writes the
    incident), RollBack a transaction whose binlog cache overflows (InnoDB: rolled back),
    SkipAndStart SET GLOBAL sql_slave_skip_counter = 1 and START SLAVE SQL_THREAD. WriteIncident
    and the replica's Apply are the model's own to take."""
    ops = []
    for i, (action, st) in enumerate(trace):
        at, trx = US + 100_000 * i, f"t{st['made']}"
        if action == "Binlog":
            ops.append({"at": at, "op": "trx", "node": "A", "trx": trx})
        elif action == "Lose":
            ops.append({"at": at, "op": "cluster_gap", "node": "A", "cause": "cluster_node_crash", "trxs": [trx]})
        elif action == "RollBack":
            ops.append({"at": at, "op": "trx", "node": "A", "trx": trx, "engine": "innodb", "binlog_failure": "cache_overflow"})
        elif action == "SkipAndStart":
            ops += [{"at": at, "op": "set_global", "node": "B", "variable": "sql_slave_skip_counter", "value": 1},
                    {"at": at + 1, "op": "start_slave", "node": "B", "thread": "sql"}]
    return {"header": {"schema": "replcheck.history/1", "name": name,
                       "description": "TLC counterexample of Incident as a History",
                       "topology": {"nodes": [{"id": "A"}, {"id": "B"}],
                                    "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]},
                       "sample_every_us": US, "end_us": (ops[-1]["at"] if ops else 0) + 5 * US},
            "ops": ops}


def system(constants: dict) -> str:
    return "model:wl7318"
