"""Incident (spec/tla/Incident.tla) and the Python model's Traces: each mapped onto the other.

`abstract(trace)`: the spec's actions a Trace witnesses. The spec's master and replica are the
History's two nodes; its changes 1..NChanges are the master's transactions, numbered in the
order the master binlogged, lost or rolled them back. Observations map as follows: the last
binlog event of a transaction on the master is Binlog; a transaction visible on the master that
its binlog never holds (a cluster's gap, a non-transactional statement whose binlog cache
overflowed) is Lose; a master's `commit` that failed with ER_TRANS_CACHE_FULL (1197: the
transaction is rolled back) is RollBack; RECORD INCIDENT on the master (a test's or the
injector's incident, standing for a gap this server never saw) is Lose of a change the trace
does not show; an INCIDENT_EVENT in the master's binlog is WriteIncident. On the replica, the first `apply` line of a transaction is
Apply of that change, its SQL thread's stop with ER_SLAVE_INCIDENT (1590) is Halt (Apply at the
incident, stopping), a `skip` of an INCIDENT_EVENT is Skip (Apply consuming the skip counter),
and START SLAVE of the stopped SQL thread after SET GLOBAL sql_slave_skip_counter = 1 is
SkipAndStart.

What it ignores: every time (the spec has none), events other than a transaction's last and
the incident (FDE, Rotate, GTID), the IO thread (the spec's replica reads the binlog itself),
status samples and the replica's own binlog. Its scope is one master and one replica; it ends
at the first operation of the History outside the spec's vocabulary (a crash, CHANGE MASTER, a
transaction on the replica, a skip counter other than 1, a start of the IO thread alone: a
reconnect by GTID may fetch the incident again, as inc-skip-then-reconnect shows on MariaDB,
which the spec's replica, reading the binlog once, cannot), at a stop of the SQL thread for
another reason than an incident, and at a START SLAVE the spec has no action for (without the
skip counter set, or with the SQL thread running and the counter set).
"""
from __future__ import annotations

from replcheck.tla import Abstraction, OutOfScope, Step

SPEC = "Incident"
US = 1_000_000
VOCABULARY = {"trx", "cluster_gap", "record_incident", "set_global", "start_slave", "stop_slave",
              "show_slave_status", "show_master_status"}
ER_SLAVE_INCIDENT, ER_TRANS_CACHE_FULL = 1590, 1197


def _pair(topology: dict) -> tuple[str, str]:
    channels = topology.get("channels", [])
    if len(topology["nodes"]) != 2 or len(channels) != 1:
        raise OutOfScope("not one master and one replica (the spec's topology)")
    return channels[0]["source"], channels[0]["replica"]


def scope_end(history: dict | None, master: str) -> tuple[int | None, str]:
    for op in (history or {}).get("ops", []):
        if (op["op"] not in VOCABULARY or (op["op"] in ("trx", "cluster_gap", "record_incident") and op["node"] != master)
                or (op["op"] == "set_global" and (op["variable"] != "sql_slave_skip_counter" or op["value"] != 1))
                or (op["op"] == "start_slave" and op.get("thread") == "io")):
            return op["at"], f"up to {op['op']} on {op['node']} at {op['at']} µs, outside the spec's vocabulary"
    return None, "the whole trace"


def abstract(trace, history: dict | None = None) -> Abstraction:
    header, obs = trace
    master, replica = _pair(header["topology"])
    end, scope = scope_end(history, master)
    steps: list[Step] = []
    change: dict[str, int] = {}
    binlogged = {o["trx"] for o in obs if o["kind"] == "binlog" and o.get("node") == master and o["trx"]}
    stopped = skip_set = False
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
            step(line, "WriteIncident", f"incident {o.get('incident')} binlogged on {master}: {o.get('message')}")
        elif node == replica and kind == "apply" and o["trx"] in change and o["trx"] not in applied:
            applied.add(o["trx"])
            step(line, "Apply", f"{replica} applied {o['trx']}", c=change[o["trx"]])
        elif node == replica and kind == "sql_stop":
            if o.get("errno") != ER_SLAVE_INCIDENT:
                scope = f"up to trace line {line}: {replica}'s SQL thread stopped for another reason than an incident"
                break
            stopped = True
            step(line, "Halt", f"{replica}'s SQL thread stopped at the incident: {o.get('message')}")
        elif node == replica and kind == "skip" and o["type"] == "INCIDENT_EVENT":
            step(line, "Skip", f"{replica} skipped the incident (sql_slave_skip_counter)")
        elif node == replica and kind == "stmt" and o.get("errno") is None and o["op"] == "set_global":
            skip_set = True
        elif node == replica and kind == "stmt" and o.get("errno") is None and o["op"] == "start_slave" \
                and o.get("thread") in (None, "sql"):
            if stopped != skip_set:
                scope = f"up to trace line {line}: START SLAVE {'without the skip counter set' if stopped else 'of a running SQL thread with the skip counter set'}"
                break
            if stopped:
                step(line, "SkipAndStart", f"SET GLOBAL sql_slave_skip_counter = 1; START SLAVE on {replica}")
            stopped = skip_set = False
    return Abstraction(SPEC, {"NChanges": len(change), "MUTANTS": set()}, {}, steps, scope)


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
