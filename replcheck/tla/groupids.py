"""GroupIds (spec/tla/GroupIds.tla): a TLC counterexample as a History to replay on the Python
model. (No trace validation yet: the model's Traces are not mapped onto the spec's actions.)"""
from __future__ import annotations

SPEC = "GroupIds"
US = 1_000_000
STEP_US = 100_000  # the History's steps; the model's replicas apply within 1 ms (the latency)


def history(constants: dict, trace: list[tuple[str, dict]], name: str) -> dict:
    """A TLC counterexample of GroupIds as a History: the spec's servers (sorted, Root first) are A,
    B, C, ..., all --rpl-hierarchical, the others slaves of A; steps 100 ms apart from 1 s.
    ClientCommit is a transaction on the master; a crash point (ClientCommitCrash, PlayCrash) is
    the model's crash point armed just before the commit it hits, a slave's before the master's
    commit of the group it plays (the model's slaves apply at once); Crash, Shutdown, Restart and
    Failover (the model elects the most advanced slave) are those operations. A start that
    crashes after its new binlog is armed (a History arms a running server, one point at a time)
    just before the Crash or Shutdown that took the server down; after a crash at a commit point
    it cannot be, and the History's start does not crash. Play, Halt and Repoint are the model's own."""
    servers = sorted(constants["Server"], key=lambda s: (s != constants["Root"], s))
    node = {s: chr(ord("A") + i) for i, s in enumerate(servers)}
    ops, committed_at = [], {}  # the master's binlog position -> when its commit op runs
    downed = {}  # server -> when a plain Crash or Shutdown took it down (None: a crash point did)
    before = trace[0][1]
    for i, (action, st) in enumerate(trace[1:], 1):
        at, m = US + STEP_US * i, before["master"]
        if action in ("ClientCommit", "ClientCommitCrash"):
            if action == "ClientCommitCrash":
                ops.append({"at": at - 1, "op": "crash", "node": node[m], "point": "after_binlog_write"})
                downed[m] = None
            ops.append({"at": at, "op": "trx", "node": node[m], "trx": f"t{st['made']}"})
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
