"""GroupIds (spec/tla/GroupIds.tla) and the Python model's Traces: each mapped onto the other.

`abstract(trace)`: the spec's actions a Trace witnesses. The spec's servers are the History's
nodes, all --rpl-hierarchical, the root master feeding every other (Root); its transactions
1..NGroups are the masters' client transactions, numbered in the order they were binlogged.
Observations map as follows: the last binlog event of a group on the master is ClientCommit (with
the group ID and transaction it carries), or ClientCommitCrash when a crash point armed after the
binlog write fires there; on a slave it is Play, or PlayCrash when a crash point after the binlog
write (prepared) or after the engine commit (committed, relay-log.info not flushed) fires there;
on a slave with rpl_transaction_enabled, whose engine commit carries the SQL thread's position
(model/recovery.py), a crash after the engine commit is Play, then Crash. A crash is Crash, a
clean shutdown Shutdown, FLUSH LOGS (its Rotate event) Rotate, a start Restart (with the binlog index it read, one ID per file; a start
that crashes after creating its new binlog is Restart leaving the server down; one that crashes
before is no step: the spec's state is as before); the SQL thread's stop with error 1643 is Halt;
the promotion of the failover's elected slave is Failover, and each CHANGE MASTER the promotion
makes on another slave is Repoint (placed, or refused: the new master lacks its last group); a
slave that is down then is repointed when it starts (a refused one left at the Failover already).
The DBA's CHANGE MASTER to a place in the master's binlog (the repair after a halt) is Place,
with the master's groups before that place. SET BINLOG_GROUP_ID raising the master's ID is
SetGroupId (its FLUSH LOGS, a Rotate event, is part of it; one that keeps the ID is FLUSH LOGS).
The next connect of a slave the DBA set to CONNECT_USING_GROUP_ID (from the same master) is
ConnectById, placed or refused.

What it ignores: every time, events other than a group's last, the IO thread and the relay log
(the spec's slaves read the master's binlog, also once it is down: their relay logs may hold all
of it), STOP and START SLAVE (UNTIL too) and a dropped connection (the spec's slaves play when they may: a
stopped one does not yet), semi-sync's settings, status samples and SHOW statements. Its scope
ends at the first operation of the History outside the spec's vocabulary (PURGE BINARY LOGS,
SET BINLOG_GROUP_ID WITH RESET or on a slave, CHANGE
MASTER to another source, a restore, a crash point the spec
has none for) and at a group binlogged by a slave that its master never did (a local write).

`history(constants, trace)`: a TLC counterexample as a History to replay on the Python model.
"""
from __future__ import annotations

from replcheck.tla import CLOCK, SETTINGS, VOCABULARY, Abstraction, OutOfScope, Step, scope_end

SPEC = "GroupIds"
BOUNDS = {"NGroups", "NCrashes", "NPurges", "NRejoins", "NRotations", "SetIds", "ById"}  # constants that only bound the behaviours: a batch takes the greatest (or the union)
US = 1_000_000
STEP_US = 100_000  # the History's steps; the model's replicas apply within 1 ms (the latency)
# History operations whose effect the spec's vocabulary covers (or that change none of its state:
# the spec's slaves play when they may, so a stopped one, or one whose connection dropped, is one
# that does not yet; the MariaDB GTID .state file holds no group ID, the binlog index does)
OPS = {"trx", "crash", "shutdown", "restart", "failover", "flush_logs", "stop_slave", "start_slave", "cut_io", "lose_acks", CLOCK,
       "set_binlog_group_id", "remove_state_file"}
# model/recovery.py's crash points: where each fires, and what the spec makes of it
AFTER_BINLOG_WRITE, AFTER_ENGINE_COMMIT = "after_binlog_write", "after_engine_commit"
BEFORE_BINLOG_WRITE = "before_binlog_write"
AFTER_NEW_BINLOG, BEFORE_NEW_BINLOG = "recovery_after_new_binlog", "recovery_before_new_binlog"
# A process crash inside the binlog write (a torn group: recovery truncates it and rolls the
# prepared transaction back, as a crash before the write) or before its sync (the page cache keeps
# the written group: as after the write); a machine crash there loses what was not synced, binlog
# durability's subject (DURABLE.*), not in the spec's vocabulary
INSIDE_BINLOG_WRITE, BEFORE_BINLOG_SYNC = "inside_binlog_write", "before_binlog_sync"
WRITTEN = (AFTER_BINLOG_WRITE, BEFORE_BINLOG_SYNC)  # the group is in the binlog when the crash comes
POINTS = {None, BEFORE_BINLOG_WRITE, AFTER_BINLOG_WRITE, AFTER_ENGINE_COMMIT, AFTER_NEW_BINLOG, BEFORE_NEW_BINLOG,
          INSIDE_BINLOG_WRITE, BEFORE_BINLOG_SYNC}
ER_HALT = 1643  # ER_SLAVE_GROUP_ID_NOT_HIGHER: the SQL thread met an ID not above its binlog's last
TLC_INT = 2 ** 31 - 1  # TLC's integers are 32-bit: a greater group ID has no TLA+ value it can compute with


def _star(topology: dict) -> tuple[str, dict]:
    nodes = {n["id"]: n for n in topology["nodes"]}
    if not all(n.get("rpl_hierarchical") for n in nodes.values()):
        raise OutOfScope("not every node runs --rpl-hierarchical")
    sources = {c["source"] for c in topology["channels"]}
    replicas = [c["replica"] for c in topology["channels"]]
    if len(sources) != 1 or sorted(replicas + list(sources)) != sorted(nodes):
        raise OutOfScope("not one root master feeding every other server (the spec's topology)")
    return sources.pop(), nodes


def outside(op: dict) -> str | None:
    """Whether an op is outside the spec's vocabulary (None: in it)."""
    if op["op"] == "set_global" and op["variable"].startswith("rpl_semi_sync_"):
        return None
    if op["op"] == "change_master" and not {"master_host", "connect_using_group_id", "master_use_gtid"} & set(op):
        return None  # the DBA's CHANGE MASTER to a place in the same master's binlog: Place
    if op["op"] == "change_master" and set(op) - SETTINGS == {"connect_using_group_id"}:
        return None  # by group ID from the same master: refused, it changes nothing; accepted, abstract ends there
    if op["op"] not in OPS or (op["op"] == "crash" and op.get("point") not in POINTS) or \
            (op["op"] == "crash" and op.get("point") in (INSIDE_BINLOG_WRITE, BEFORE_BINLOG_SYNC)
             and op.get("kind", "process") != "process") or \
            op.get("with_reset"):  # a lowered ID: only a restore's, which the spec does not model
        return VOCABULARY
    return None


def _index(content: str) -> tuple[int, ...]:
    """The binlog index (`full_path|group_id|` per line) as the spec's index: one ID per file."""
    return tuple(int(line.split("|")[1]) for line in content.splitlines() if line.strip())


def abstract(trace, history: dict | None = None) -> Abstraction:
    header, obs = trace
    root, nodes = _star(header["topology"])
    end, scope, beyond = scope_end(history, outside)
    seen = [(line, o) for line, o in enumerate(obs, 2) if end is None or o["t"] < end]
    steps: list[Step] = []
    number: dict[str, int] = {}  # transaction -> its number: the order the masters binlogged them
    ends: dict[str, list[tuple[str, int]]] = {n: [] for n in nodes}  # each server's groups' binlog ends, in order
    master, up = root, {n: True for n in nodes}
    armed: dict[str, str | None] = {}  # a crash point armed and not yet fired
    swallow: set[str] = set()  # a crash (or start) already taken as part of the step before it
    halted: set[str] = set()
    deferred: dict[str, Step] = {}  # a down slave's Repoint, taken when it starts
    failover = None  # the elected slave, until its promotion is a Failover step
    crashes = rotations = 0
    last_id = dict.fromkeys(nodes, 0)  # each server's last consumed ID, as the spec's gid
    set_ids: set[int] = set()
    set_rotate: set[str] = set()  # a SET BINLOG_GROUP_ID's own FLUSH LOGS, part of its step
    by_id: set[str] = set()  # slaves the DBA set to CONNECT_USING_GROUP_ID, until they connect

    def step(line: int, action: str, what: str, **args) -> None:
        nonlocal crashes
        steps.append(Step(action, args, line, what))
        crashes += action in ("ClientCommitCrash", "PlayCrash", "Crash", "Shutdown") or (action == "Restart" and not args["up"])

    def promote(line: int, node: str) -> None:
        nonlocal master, failover
        if failover is not None:
            step(line, "Failover", f"{node} promoted in place of {master}", s=node)
            master, failover = node, None
            halted.discard(node)

    def after(i: int, node: str, kinds: tuple[str, ...]) -> dict | None:
        """The next observation of one of `kinds` on `node` after position i of `seen`."""
        return next((o for _, o in seen[i + 1:] if o.get("node") == node and o["kind"] in kinds), None)

    for i, (line, o) in enumerate(seen):
        kind, node = o["kind"], o.get("node")
        if kind == "stmt" and o["op"] == "crash" and o.get("errno") is None:
            armed[node] = o.get("point")
        elif kind == "stmt" and o["op"] == "set_binlog_group_id" and o.get("errno") is None:
            new = o["group_id"]
            if node != master:
                scope, beyond = f"up to trace line {line}: SET BINLOG_GROUP_ID = {new} on a slave", VOCABULARY
                break
            if new > last_id[node]:  # equal: FLUSH LOGS alone (Rotate)
                set_ids.add(new)
                set_rotate.add(node)
                last_id[node] = new
                step(line, "SetGroupId", f"SET BINLOG_GROUP_ID = {new} on {node}", s=node, id=new)
        elif kind == "binlog" and o["last"] and o["trx"] and o.get("group_id") is not None:
            point, trx, gid = armed.get(node), o["trx"], o["group_id"]
            ends[node].append((o["file"], o["end"]))
            last_id[node] = gid
            if node == master and trx not in number:
                number[trx] = len(number) + 1
                crash = point in WRITTEN
                step(line, "ClientCommitCrash" if crash else "ClientCommit",
                     f"{trx} binlogged on {master} with group ID {gid}" + (", then a crash" if crash else ""),
                     s=node, id=gid, trx=number[trx])
            elif node != master and trx in number:
                what = f"{node} played {trx}: binlogged with group ID {gid}"
                if point in WRITTEN or (point == AFTER_ENGINE_COMMIT and not nodes[node].get("rpl_transaction_enabled")):
                    step(line, "PlayCrash", f"{what}, then a crash ({point})", s=node, id=gid, trx=number[trx],
                         prepared=point in WRITTEN)
                else:  # an engine-commit crash here (rpl_transaction_enabled) is a Crash step after it
                    step(line, "Play", what, s=node, id=gid, trx=number[trx])
            else:
                scope, beyond = f"up to trace line {line}: {node} binlogged {trx}, which is no group of its master's", VOCABULARY
                break
            if steps[-1].action in ("ClientCommitCrash", "PlayCrash"):
                swallow.add(node)  # its crash is part of the step
        elif kind == "binlog" and o["type"] == "ROTATE_EVENT" and node in set_rotate:
            set_rotate.discard(node)
        elif kind == "binlog" and o["type"] == "ROTATE_EVENT":
            rotations += 1
            step(line, "Rotate", f"{node} rotated its binlog (FLUSH LOGS)", s=node)
        elif kind == "crash":
            up[node] = False
            if armed.get(node) in (BEFORE_BINLOG_WRITE, AFTER_BINLOG_WRITE, AFTER_ENGINE_COMMIT, INSIDE_BINLOG_WRITE,
                                   BEFORE_BINLOG_SYNC):
                armed[node] = None
            if node in swallow:
                swallow.discard(node)
            else:
                step(line, "Crash", f"{node} crashed", s=node)
        elif kind == "shutdown":
            up[node] = False
            step(line, "Shutdown", f"{node} shut down", s=node)
        elif kind == "restart":
            point = armed.get(node)
            if point in (AFTER_NEW_BINLOG, BEFORE_NEW_BINLOG):
                armed[node] = None
                swallow.add(node)  # the crash this start ends in
            if point == BEFORE_NEW_BINLOG:
                continue
            index = after(i, node, ("binlog_index",))
            stays_up = point != AFTER_NEW_BINLOG
            up[node] = stays_up
            step(line, "Restart", f"{node} started" + ("" if stays_up else ", then crashed after creating its new binlog"),
                 s=node, up=stays_up, index=_index(index["content"]) if index else ())
            if stays_up and node in deferred:
                steps.append(deferred.pop(node))
        elif kind == "sql_stop" and o.get("errno") == ER_HALT and node not in halted:
            halted.add(node)
            step(line, "Halt", f"{node}'s SQL thread halted: {o.get('message')}", s=node)
        elif kind == "failover":
            failover = node
        elif kind == "promoted":
            promote(line, node)
        elif kind == "stmt" and o["op"] == "change_master" and "master_host" in o and o.get("errno") is None:
            promote(line, o["master_host"])
            placed = "master_log_file" in o
            what = f"{node} repointed to {o['master_host']}" + ("" if placed else ": refused, the new master lacks its last group")
            if placed:
                halted.discard(node)
            if up[node]:
                step(line, "Repoint", what, s=node, placed=placed)
            elif placed:
                deferred[node] = Step("Repoint", {"s": node, "placed": True}, line, what)
        elif kind == "stmt" and o["op"] == "change_master" and o.get("connect_using_group_id") and o.get("errno") is None:
            by_id.add(node)  # its next connect asks by group ID: ConnectById
        elif kind == "connect" and node in by_id and o["by"] == "group_id":
            by_id.discard(node)
            placed = o.get("errno") is None
            step(line, "ConnectById", f"{node} connected by group ID {o.get('group_id')}: " +
                 ("placed after that group" if placed else f"refused ({o.get('message')})"), s=node, placed=placed)
        elif kind == "stmt" and o["op"] == "change_master" and "master_log_file" in o and o.get("errno") is None:
            rli = sum(e <= (o["master_log_file"], o["master_log_pos"]) for e in ends[master])
            halted.discard(node)
            step(line, "Place", f"{node} placed after {master}'s group {rli} (CHANGE MASTER to "
                 f"{o['master_log_file']}:{o['master_log_pos']})", s=node, rli=rli)
    if max(set_ids | {s.args.get("id", 0) for s in steps}, default=0) > TLC_INT:
        steps, set_ids = _compressed(steps)
    constants = {"Server": set(nodes), "Root": root, "NGroups": len(number), "NCrashes": crashes, "NPurges": 0, "NRejoins": 0,
                 "NRotations": rotations, "SetIds": set_ids, "ById": any(s.action == "ConnectById" for s in steps),
                 "MUTANTS": set()}
    return Abstraction(SPEC, constants, {}, steps, scope, beyond)


def _compressed(steps: list[Step]) -> tuple[list[Step], set[int]]:
    """The steps with group IDs beyond TLC's 32-bit integers (a SET BINLOG_GROUP_ID near 2^64, as
    rpl_hier_persistence's) renumbered: the spec only compares IDs and adds 1, so an order-keeping
    map that keeps consecutive IDs consecutive and shortens every longer gap to 2 changes no
    verdict. The steps' descriptions keep the real IDs."""
    ids = sorted({s.args["id"] for s in steps if "id" in s.args} | {i for s in steps for i in s.args.get("index", ())})
    small: dict[int, int] = {}
    for i in ids:
        small[i] = i if not small else small[prev] + min(i - prev, 2)
        prev = i
    out = [Step(s.action, {**s.args, **({"id": small[s.args["id"]]} if "id" in s.args else {}),
                           **({"index": tuple(small[i] for i in s.args["index"])} if "index" in s.args else {})}, s.line, s.what)
           for s in steps]
    return out, {s.args["id"] for s in out if s.action == "SetGroupId"}


def history(constants: dict, trace: list[tuple[str, dict]], name: str) -> dict:
    """A TLC counterexample of GroupIds as a History: the spec's servers (sorted, Root first) are A,
    B, C, ..., all --rpl-hierarchical, the others slaves of A; steps 100 ms apart from 1 s.
    ClientCommit is a transaction on the master (after a ClientCommitOvertaking, one that began
    before the overtaking one and lasts until this step); a crash point (ClientCommitCrash, PlayCrash) is
    the model's crash point armed just before the commit it hits, a slave's before the master's
    commit of the group it plays (the model's slaves apply at once); Crash, Shutdown, Restart and
    Failover (the model elects the most advanced slave) are those operations. A start that
    crashes after its new binlog is armed (a History arms a running server, one point at a time)
    just before the Crash or Shutdown that took the server down; after a crash at a commit point
    it cannot be, and the History's start does not crash. SetGroupId is SET BINLOG_GROUP_ID on the
    master. Play, Halt and Repoint are the model's own."""
    servers = sorted(constants["Server"], key=lambda s: (s != constants["Root"], s))
    node = {s: chr(ord("A") + i) for i, s in enumerate(servers)}
    ops, committed_at, overtaken = [], {}, 0  # committed_at: the master's binlog position -> when its commit op runs
    downed = {}  # server -> when a plain Crash or Shutdown took it down (None: a crash point did)
    before = trace[0][1]
    for i, (action, st) in enumerate(trace[1:], 1):
        at, m = US + STEP_US * i, before["master"]
        if action in ("ClientCommit", "ClientCommitCrash", "ClientCommitOvertaking"):
            if action == "ClientCommitCrash":
                ops.append({"at": at - 1, "op": "crash", "node": node[m], "point": "after_binlog_write"})
                downed[m] = None
            trx = {"at": at, "op": "trx", "node": node[m], "trx": f"t{st['made']}"}
            if action == "ClientCommitOvertaking":
                overtaken = at - STEP_US // 2  # the session that took the lower ID began before this one
            elif before["pending"][m]:  # that session: begun then, committing now
                trx.update(at=overtaken, statements=[{"duration_us": at - overtaken}])
            ops.append(trx)
            committed_at[(m, len(st["binlog"][m]))] = at
        elif action == "PlayCrash":
            s = next(s for s in servers if st["up"][s] != before["up"][s])
            point = "after_binlog_write" if st["prepared"][s] != before["prepared"][s] else "after_engine_commit"
            when = committed_at.get((m, before["rli"][s] + 1), at) - STEP_US // 10
            ops.append({"at": when, "op": "crash", "node": node[s], "point": point})
            downed[s] = None
        elif action == "Restart":
            s = next(s for s in servers if st["index"][s] != before["index"][s])
            if not st["up"][s] and downed.get(s) is not None:  # the start crashed right after creating its new binlog
                ops.append({"at": downed[s] - 1, "op": "crash", "node": node[s], "point": "recovery_after_new_binlog"})
            ops.append({"at": at, "op": "restart", "node": node[s]})
            downed[s] = None if not st["up"][s] else downed.get(s)
        elif action in ("Crash", "Shutdown"):
            s = next(s for s in servers if st["up"][s] != before["up"][s])
            ops.append({"at": at, "op": action.lower(), "node": node[s]})
            downed[s] = at
        elif action == "SetGroupId":
            ops.append({"at": at, "op": "set_binlog_group_id", "node": node[m], "group_id": st["gid"][m]})
        elif action == "Failover":
            slave = next(s for s in servers if s != m and before["inSystem"][s])
            ops.append({"at": at, "op": "failover", "node": node[slave], "elect": True})
        before = st
    ops.sort(key=lambda o: o["at"])
    return {"header": {"schema": "replcheck.history/1", "name": name, "description": "TLC counterexample of GroupIds as a History",
                       "topology": {"nodes": [{"id": node[s], "rpl_hierarchical": True} for s in servers],
                                    "channels": [{"source": "A", "replica": node[s], "latency_us": 1000} for s in servers[1:]]},
                       "sample_every_us": US, "end_us": (ops[-1]["at"] if ops else 0) + 5 * US},
            "ops": ops}


def system(constants: dict) -> str:
    return "model:groupid"
