"""SemiSync (spec/tla/SemiSync.tla) and the Python model's Traces: each mapped onto the other.

`abstract(trace)`: the spec's actions a Trace witnesses. The master is the one node with
rpl_semi_sync_master_enabled; the spec's Replicas are its replicas that enable semi-sync; the
spec's transactions 1..NTx are the master's, in binlog order. Observations map as follows:
the last binlog event of a transaction on the master is Write; its `visible` is Commit; its
`commit` (how the client's wait ended) is Release with outcome ok or async, or Timeout when the
status was ON ("no" on a status ON master is the timeout that turns it OFF); under AFTER_SYNC the
wait ends before the engine commit, so a `visible` first takes the Release its `commit` line
reports. The last relay event of a transaction on a semi-sync replica is Receive; an ack that
acknowledges more than the replica's last is Ack (with the transactions it covers), one that
does not (the reconnect's re-ack) is no step; "switched ON: ... caught up" is SwitchBack; a read
by another session on the master is Read of every transaction it saw whose commit still waits
(with the status ON: the only reads the spec tracks); crash, shutdown (with the sessions that
got the shutdown error) and failover to a semi-sync replica are Crash, Shutdown and Failover.

What it ignores: every time (the spec has none: rpl_semi_sync_master_timeout is "some time"),
events' sizes and files (an ack's position counts the transactions it covers), async replicas,
SHOW STATUS samples and the counters, the replicas' SQL threads, what any node other than the
master does, rpl_semi_sync_master_timeout's value. Its scope ends at the first operation of the
History outside the spec's subject (a restart of the master: the spec's story ends with its
master down or replaced; a crash, shutdown or restart of a semi-sync replica: the spec's replicas
keep their relay logs, whose recovery is crash recovery's subject) or vocabulary (SET GLOBAL of
the wait point, or of rpl_semi_sync_slave_enabled on a server that is not one of the spec's
replicas, CHANGE MASTER, ...; on one of them it is no step: the spec's replicas may leave any ack
untaken), at a status
switch for another reason than a timeout, a catch-up, the DBA's or the last replica's dropped
connection (NoSlave; "no semi-sync slave connected" before any replica's dump began is outside its
subject, whose replicas start connected), and after a failover (the
spec's last action: outside its subject). SET GLOBAL rpl_semi_sync_master_enabled on the master
is Disable or Enable, wait_for_slave_count SetWaitCount (a count above the replicas: one more than
there are); a commit that did not wait (semi-sync disabled) is Release, async. The scope also ends
at a failed statement answered before its wait (`semisync` later: MariaDB waits at the session's
end, unseen).
"""
from __future__ import annotations

from replcheck.tla import CLOCK, SUBJECT, VOCABULARY, Abstraction, OutOfScope, Step, scope_end, seconds

SPEC = "SemiSync"
BOUNDS = {"NTx", "DBA", "Drops"}  # constants that only bound the behaviours: a batch takes the greatest (or the union)
# History operations whose effect the spec's vocabulary covers (or that change none of its state)
OPS = {"trx", "stop_slave", "start_slave", "lose_acks", "crash", "shutdown", "failover", "flush_logs", CLOCK, "cut_io"}
# SET GLOBAL of these changes none of the spec's state: the timeout is "some time", the skip counter
# is a replica's SQL thread's; of these, on the master, the DBA's steps (Disable, Enable, SetWaitCount)
INERT_VARIABLES = {"rpl_semi_sync_master_timeout", "sql_slave_skip_counter"}
ENABLED, COUNT = "rpl_semi_sync_master_enabled", "rpl_semi_sync_master_wait_for_slave_count"
MASTER_OPS = {"trx", "crash", "shutdown"}  # only on the master: on another node, outside the spec


def _master(topology: dict) -> tuple[str, list[str], dict]:
    nodes = {n["id"]: n for n in topology["nodes"]}
    masters = [n for n in nodes.values() if n.get("variables", {}).get("rpl_semi_sync_master_enabled")]
    if len(masters) != 1:
        raise OutOfScope(f"{len(masters)} nodes enable rpl_semi_sync_master_enabled; the spec has one master")
    m = masters[0]["id"]
    replicas = [c["replica"] for c in topology["channels"] if c["source"] == m
                and nodes[c["replica"]].get("variables", {}).get("rpl_semi_sync_slave_enabled")]
    if not replicas:
        raise OutOfScope(f"{m} has no semi-sync replica")
    return m, replicas, masters[0]["variables"]


def _upstream(topology: dict, node: str) -> set[str]:
    """The servers whose changes reach `node` by replication."""
    out, todo = set(), [node]
    while todo:
        n = todo.pop()
        for c in topology["channels"]:
            if c["replica"] == n and c["source"] not in out:
                out.add(c["source"])
                todo.append(c["source"])
    return out


def outside(master: str, replicas: list[str], upstream: set[str] = frozenset()):
    """Whether an op is outside the spec's subject or vocabulary (None: in it). A transaction on a
    server that does not feed the master (`upstream`), and a master setting on another server than
    the master, change none of the spec's state."""
    def why(op: dict) -> str | None:
        kind = op["op"]
        if op["node"] not in upstream | {master} and (
                kind == "trx" or (kind == "set_global" and op["variable"].startswith("rpl_semi_sync_master_"))):
            return None
        if kind == "restart" and op["node"] == master:
            return SUBJECT
        if kind in ("crash", "shutdown", "restart") and op["node"] in replicas:
            # The spec's replicas keep their relay logs: WL#1720 acknowledges an event once it is
            # written there (after_queue_event), not once it survives the replica's crash, which
            # relay_log_recovery may drop and fetch again (ss-replica-drops-relay-log): relay-log
            # recovery is crash recovery's subject (model/recovery.py), not semi-sync's
            return SUBJECT
        if kind == "set_global" and (op["variable"] in INERT_VARIABLES or (op["variable"] in (ENABLED, COUNT) and op["node"] == master)):
            return None
        if kind == "set_global" and op["variable"] == "rpl_semi_sync_slave_enabled" and op["node"] in replicas:
            return None  # from its next connect it acks or not: the spec's replicas may leave any ack untaken
        if kind not in OPS or (kind in MASTER_OPS and op["node"] != master) or \
                (kind == "failover" and op["node"] not in replicas):
            return VOCABULARY
        return None
    return why


def abstract(trace, history: dict | None = None) -> Abstraction:
    header, obs = trace
    m, replicas, var = _master(header["topology"])
    wait_point = var.get("rpl_semi_sync_master_wait_point", "AFTER_SYNC")
    count = int(var.get("rpl_semi_sync_master_wait_for_slave_count", 1))
    if not 1 <= count <= len(replicas):
        raise OutOfScope(f"wait_for_slave_count {count} with {len(replicas)} semi-sync replicas")
    end, scope, beyond = scope_end(history, outside(m, replicas, _upstream(header["topology"], m)))
    # a failed statement answered before its wait (MariaDB's wait at its session's end, which no
    # commit shows): a waiter with no Release, outside the spec's vocabulary
    later = next((o for o in obs if o["kind"] == "commit" and o["node"] == m and o.get("semisync") == "later"), None)
    if later is not None and (end is None or later["t"] < end):
        end, beyond = later["t"], VOCABULARY
        scope = f"up to the commit of {later['trx']} on {m} at {seconds(later['t'])}, answered before its wait, outside the spec's {VOCABULARY}"
    seen = [o for o in obs if end is None or o["t"] < end]

    ends: list[tuple[tuple[str, int], str]] = []  # the master's transactions: (binlog end, trx), in order
    for o in seen:
        if o["kind"] == "binlog" and o["node"] == m and o["trx"] and o["last"]:
            ends.append(((o["file"], o["end"]), o["trx"]))
    number = {trx: k for k, (_, trx) in enumerate(ends, 1)}
    outcome_of = {}  # trx -> its `commit` line's semisync value, the first one
    for o in seen:
        if o["kind"] == "commit" and o["node"] == m and o["trx"] in number and "semisync" in o:
            outcome_of.setdefault(o["trx"], o["semisync"])

    steps: list[Step] = []
    relay = {r: set() for r in replicas}
    acked = dict.fromkeys(replicas, 0)
    released, read, status, shutdown_errors, dumped = set(), set(), "ON", set(), set()
    enabled = bool(var.get(ENABLED))

    def add(action: str, line: int, what: str, **args) -> None:
        steps.append(Step(action, args, line, what))

    def release(trx: str, how: str | None, line: int, what: str) -> None:
        nonlocal status
        t = number[trx]
        released.add(trx)
        if how == "no" and status == "ON":
            status = "OFF"
            add("Timeout", line, what, t=t)
        elif how in ("yes", "no"):
            add("Release", line, what, t=t, outcome="ok" if how == "yes" else "async")
        else:  # null: the master did not wait (semi-sync disabled): released at once, as with the status OFF
            add("Release", line, what, t=t, outcome="async")

    for line, o in enumerate(seen, 2):
        kind, node, what = o["kind"], o["node"], f"{o['kind']} on {o['node']}" + (f" of {o['trx']}" if o.get("trx") else "")
        if kind == "binlog" and node == m and o["trx"] in number and o["last"]:
            add("Write", line, what, t=number[o["trx"]])
        elif kind == "visible" and node == m and o["trx"] in number:
            if wait_point == "AFTER_SYNC" and o["trx"] not in released and o["trx"] in outcome_of:
                release(o["trx"], outcome_of[o["trx"]], line, f"{what} (its wait ended: semisync {outcome_of[o['trx']]})")
            add("Commit", line, what, t=number[o["trx"]])
        elif kind == "commit" and node == m and o["trx"] in number and o["trx"] not in released:
            if o.get("semisync") == "shutdown":
                shutdown_errors.add(number[o["trx"]])
                released.add(o["trx"])
            elif "semisync" in o:  # one without is a session the crash cut off: no outcome
                release(o["trx"], o["semisync"], line, f"{what}: semisync {o['semisync']}")
        elif kind == "relay" and node in relay and o["source"] == m and o["trx"] in number and o["last"] \
                and o["trx"] not in relay[node]:
            relay[node].add(o["trx"])
            add("Receive", line, what, r=node, upto=len(relay[node]))
        elif kind == "ack" and node == m and o["replica"] in acked:
            upto = sum(e <= (o["file"], o["pos"]) for e, _ in ends)
            if upto > acked[o["replica"]]:
                acked[o["replica"]] = upto
                add("Ack", line, f"ack from {o['replica']} up to {o['file']}:{o['pos']}", r=o["replica"], upto=upto)
        elif kind == "stmt" and node == m and o["op"] == "set_global" and o.get("errno") is None and o["variable"] in (ENABLED, COUNT):
            if o["variable"] == COUNT:  # a count above the replicas: one more than there are (none enough)
                add("SetWaitCount", line, f"SET GLOBAL {COUNT} = {o['value']}", n=min(int(o["value"]), len(replicas) + 1))
            elif bool(o["value"]) != enabled:
                enabled = bool(o["value"])
                status = "ON" if enabled else "OFF"
                add("Enable" if enabled else "Disable", line, f"SET GLOBAL {ENABLED} = {o['value']}")
        elif kind == "log" and node == m and o["message"].startswith("Start semi-sync binlog_dump"):
            dumped.add(o.get("replica"))
        elif kind == "log" and node == m and not dumped and "switched OFF: no semi-sync slave connected" in o["message"]:
            # before any replica's dump request arrived (the master counts a client from it): the
            # spec's replicas start connected, and its NoSlave is a connection dropped
            scope, beyond = f"up to trace line {line}: no semi-sync replica connected to {m} yet, where the spec's start connected", SUBJECT
            break
        elif kind == "log" and node == m and o["message"].endswith("by the DBA"):
            pass  # the switch SET GLOBAL rpl_semi_sync_master_enabled makes: its Enable or Disable step
        elif kind == "log" and node == m and o["message"].startswith("Semi-sync replication switched"):
            if "switched ON" in o["message"] and "caught up" in o["message"]:
                status = "ON"
                add("SwitchBack", line, o["message"])
            elif "switched OFF: no semi-sync slave connected" in o["message"]:
                status = "OFF"
                add("NoSlave", line, o["message"])
            elif "switched OFF: timeout" not in o["message"]:
                scope, beyond = f"up to trace line {line}: {o['message']!r}, a switch the spec does not make", VOCABULARY
                break
        elif kind == "read" and node == m and status == "ON":
            for trx in sorted((x for x in o["seen"] if x in number and x not in released | read), key=number.get):
                add("Read", line, f"a session on {m} read {trx} while its commit waited", t=number[trx])
                read.add(trx)  # once is enough: the spec's `read` is a set
        elif kind == "crash" and node == m:
            add("Crash", line, what)
        elif kind == "shutdown" and node == m:
            add("Shutdown", line, f"{what}; sessions that got the shutdown error: {sorted(shutdown_errors)}",
                errors=set(shutdown_errors))
        elif kind == "failover" and node in replicas:
            add("Failover", line, what, r=node)
            if end is None:
                scope, beyond = f"up to the failover at trace line {line} (the spec's last action)", SUBJECT
            break
    dba = any(s.action in ("Enable", "Disable", "SetWaitCount") for s in steps)
    return Abstraction(SPEC, {"Replicas": set(replicas), "NTx": len(number), "WaitPoint": wait_point, "DBA": dba,
                              "Drops": any(s.action == "NoSlave" for s in steps), "MUTANTS": set()},
                       {"waitCount": count}, steps, scope, beyond)


US = 1_000_000
TIMEOUT_MS = 10_000  # rpl_semi_sync_master_timeout in the Histories made here


def history(constants: dict, trace: list[tuple[str, dict]], name: str) -> dict:
    """A TLC counterexample of SemiSync as a History: master A, replicas B, C, ... for the spec's
    (sorted) Replicas, steps 100 ms apart from 1 s. Write is a transaction on A; a replica that
    holds k transactions at the end has its IO thread stopped before A's transaction k + 1; Read
    is a read on A, Crash, Shutdown and Failover the same operations; a Timeout lets the
    rpl_semi_sync_master_timeout pass. Commit, Release, Receive, Ack and SwitchBack are the
    model's own to take: it acknowledges all it receives (no ack the spec leaves untaken is lost)."""
    replicas = sorted(constants["Replicas"])
    node = {r: chr(ord("B") + i) for i, r in enumerate(replicas)}
    final = trace[-1][1]["relay"]
    ops, stopped, shift = [], set(), 0
    for i, (action, st) in enumerate(trace):
        at = US + 100_000 * i + shift
        if action == "Write":
            for r in replicas:
                if final[r] < st["binlog"] and r not in stopped:
                    stopped.add(r)
                    ops.append({"at": at - 50_000, "op": "stop_slave", "node": node[r], "thread": "io"})
            ops.append({"at": at, "op": "trx", "node": "A", "trx": f"t{st['binlog']}"})
        elif action == "Read":
            ops.append({"at": at, "op": "read", "node": "A"})
        elif action in ("Crash", "Shutdown"):
            ops.append({"at": at, "op": action.lower(), "node": "A"})
        elif action == "Failover":
            # then the failed master starts again, out of the system: a real server's binlogs are
            # read from running nodes, and the commit the crash cut off is found there
            ops += [{"at": at, "op": "failover", "node": node[st["master"]]}, {"at": at + US, "op": "restart", "node": "A"}]
        elif action == "Timeout":
            shift += TIMEOUT_MS * 1000 + US
    first = trace[0][1]
    # wait_for_slave_count (MySQL's, WL#7169) only when not 1, its default: MariaDB has no such
    # variable and refuses to start with it, so a counterexample waiting for one ack runs there too
    master_vars = {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": TIMEOUT_MS,
                   "rpl_semi_sync_master_wait_point": constants["WaitPoint"],
                   **({"rpl_semi_sync_master_wait_for_slave_count": first["waitCount"]} if first["waitCount"] != 1 else {})}
    return {"header": {"schema": "replcheck.history/1", "name": name,
                       "description": f"TLC counterexample of SemiSync ({constants['WaitPoint']}) as a History",
                       "topology": {"nodes": [{"id": "A", "variables": master_vars}] +
                                    [{"id": node[r], "variables": {"rpl_semi_sync_slave_enabled": True}} for r in replicas],
                                    "channels": [{"source": "A", "replica": node[r], "latency_us": 1000} for r in replicas]},
                       "sample_every_us": US, "end_us": ops[-1]["at"] + 15 * US if ops else 15 * US},
            "ops": ops}


def system(constants: dict) -> str:
    return "model:wl344" if constants["WaitPoint"] == "AFTER_COMMIT" else "model:wl7318"
