"""What a cross-check compares of a Trace (crosscheck's Facts: per node, the apply, commit, visible,
read, stmt and data aspects), and when two entries of an aspect agree."""
from __future__ import annotations

from dataclasses import dataclass

from replcheck.spec.vocabulary import MARIADB_VARIABLES, MYSQL_VARIABLES

ASPECTS = ("apply", "commit", "visible", "read", "stmt", "data")
APPLIER_VARIABLES = MARIADB_VARIABLES + MYSQL_VARIABLES
# what two systems may differ in; `implementation`: a model, or the real server's version
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
SETTINGS = ("delay_rule", "commit_timestamps", "wait_point", "mutants", "implementation", "flavour")


@dataclass(frozen=True)
class Facts:
    """One Trace reduced to comparable sequences, plus what the conditions need."""

    header: dict
    seqs: dict[tuple[str, str], tuple]  # (aspect, node) -> sequence of (subject, value)
    binlog: dict[tuple[str, str], list[dict]]  # (node, trx) -> its binlog events there
    applied_from: dict[tuple[str, str], str]  # (node, trx) -> the source it was applied from (failover moves it)
    commits: dict[tuple[str, str], int]  # (node, trx) -> when the commit returned
    settings: dict[str, tuple]  # attribute -> per-node values, to tell what two systems differ in
    observed: frozenset[str]  # the aspects this Trace can show
    restarts: frozenset[str] = frozenset()  # nodes whose replication started again (START SLAVE, restart, a reconnect after a cut)
    incidents: frozenset[str] = frozenset()  # nodes that binlogged an incident
    cuts: frozenset[tuple[str, tuple]] = frozenset()  # (node, (when, where in the source's binlog)) of each cut that stopped its IO thread
    as_replica: frozenset[str] = frozenset()  # nodes restarted with --init-rpl-role=SLAVE (MDEV-21117's recovery)
    # (node, when) of each stop START SLAVE UNTIL's condition made, in order: two at the same µs are two
    untils: tuple[tuple[str, int], ...] = ()
    appliers: frozenset[tuple[str, tuple]] = frozenset()  # (node, the applier settings of each start of its SQL thread)
    applier_stmts: frozenset[tuple[str, str]] = frozenset()  # (node, stmt subject) of each SET GLOBAL of an applier setting
    refused: frozenset[tuple[str, tuple]] = frozenset()  # (node, the errnos of its connects its source refused)
    gtid_asks: frozenset[tuple[str, str, int, str]] = frozenset()  # (node, source, when, gtid_pos) of each connect by a GTID position
    clock_steps: frozenset[str] = frozenset()  # nodes whose clock stepped
    # (node, subject) of each SET GLOBAL (other than an applier setting's) or client's commit the server answered
    # "unknown system variable" (1193)
    unknown_stmts: frozenset[tuple[str, str]] = frozenset()
    halts: tuple[tuple[str, int], ...] = ()  # (node, when) of each stop of its SQL thread at an error, in order
    restores: frozenset[tuple[str, int, str]] = frozenset()  # (node, when, donor) of each restore from a backup
    io_stops: frozenset[tuple[str, int, int]] = frozenset()  # (node, began, returned) of each STOP SLAVE that stopped its IO thread
    no_slave_off: frozenset[str] = frozenset()  # nodes whose semi-sync master switched OFF for want of a semi-sync slave
    promotions: tuple[tuple[int, str], ...] = ()  # (when, node) of each promotion by a failover, in order


def facts(header: dict, obs: list[dict]) -> Facts:
    seqs: dict[tuple[str, str], list] = {}
    binlog: dict[tuple[str, str], list[dict]] = {}
    commits: dict[tuple[str, str], int] = {}
    applied_from: dict[tuple[str, str], str] = {}
    stmts: dict[tuple[str, str], int] = {}
    data: dict[str, dict] = {}
    untimed_applies = False
    restarts, incidents, as_replica = set(), set(), set()
    untils: list[tuple[str, int]] = []
    halts: list[tuple[str, int]] = []
    restores, io_stops = set(), set()
    promotions: list[tuple[int, str]] = []
    cuts: dict[str, list[tuple]] = {}
    appliers: dict[str, list[tuple]] = {}
    applier_stmts, unknown_stmts = set(), set()
    refused: dict[str, list] = {}
    gtid_asks = set()
    clock_steps, no_slave_off = set(), set()
    # One branch per kind, the commonest first: every Trace of a campaign is reduced once.
    for o in obs:
        k, node = o["kind"], o.get("node", "")
        if k == "apply":
            if o.get("begin") is None:
                untimed_applies = True
            elif o.get("trx") is not None and o["idx"] == 0:
                # and by which named connection: in a diamond with gtid_ignore_duplicates the first one
                # due wins, and a STOP of it rolls back its group where the other's would have stayed
                seqs.setdefault(("apply", node), []).append((o["trx"], (o["begin"], o.get("connection"))))
                applied_from[(node, o["trx"])] = o.get("source", "")
        elif k == "binlog":
            if o.get("type") == "INCIDENT_EVENT":
                incidents.add(node)
            if o.get("trx") is not None:
                binlog.setdefault((node, o["trx"]), []).append(o)
        elif k == "commit":
            seqs.setdefault(("commit", node), []).append((o["trx"], (o["t"], o.get("semisync"), o.get("errno"))))
            commits[(node, o["trx"])] = o["t"]
            if o.get("errno") == ER_UNKNOWN_SYSTEM_VARIABLE:  # the client's SET gtid_domain_id first: unknown to MySQL
                unknown_stmts.add((node, f"commit {o['trx']}"))
        elif k == "visible":
            seqs.setdefault(("visible", node), []).append((o["trx"], o["t"]))
        elif k == "read":
            seqs.setdefault(("read", node), []).append((o["t"], tuple(o["seen"])))
        elif k == "stmt":
            if o.get("returned") is False:
                continue  # not answered: nothing to compare (the run ended there, rule server.statement-did-not-return)
            if o["op"] == "stop_slave" and o.get("thread") in (None, "io") and o.get("errno") is None \
                    and o.get("warning") is None:  # 1255: already stopped, by nothing of this statement's
                io_stops.add((node, o["t"] - o.get("duration_us", 0), o["t"]))
            if o["op"] == "start_slave" and o.get("errno") is None:
                restarts.add(node)
            # the i-th statement of its kind on the node: a real server's are stamped later
            i = stmts[(node, o["op"])] = stmts.get((node, o["op"]), 0) + 1
            if o["op"] == "set_global" and o.get("variable") in APPLIER_VARIABLES:
                applier_stmts.add((node, f"set_global #{i}"))
            elif o["op"] == "set_global" and o.get("errno") == ER_UNKNOWN_SYSTEM_VARIABLE:  # the applier's: flavour.parallel-applier
                unknown_stmts.add((node, f"set_global #{i}"))
            seqs.setdefault(("stmt", node), []).append((f"{o['op']} #{i}", (o.get("errno"), o.get("warning"))))
        elif k == "data":
            data[node] = o["counts"]
        elif k == "clock_step":
            clock_steps.add(node)
        elif k == "log":
            if "switched OFF: no semi-sync slave connected" in o.get("message", ""):
                no_slave_off.add(node)
        elif k == "connect":
            if o.get("errno"):
                refused.setdefault(node, []).append(o["errno"])
            if o.get("gtid_pos"):
                gtid_asks.add((node, o.get("source", ""), o["t"], o["gtid_pos"]))
        elif k == "parallel":
            appliers.setdefault(node, []).append((o["workers"], o.get("mode"), o.get("preserve_commit_order")))
        elif k == "sql_stop":
            if o.get("reason") == "until":
                untils.append((node, o["t"]))
            if o.get("reason") == "error":
                halts.append((node, o["t"]))
        elif k == "restore":
            restores.add((node, o["t"], o.get("donor", "")))
        elif k == "promoted":
            promotions.append((o["t"], node))
        elif k == "io_cut":
            if o.get("then") == "stop":
                cuts.setdefault(node, []).append((o["t"], o.get("master_log_file"), o.get("master_log_pos")))
            if o.get("then") == "reconnect":
                restarts.add(node)
        elif k == "restart":
            restarts.add(node)
            if o.get("init_rpl_role") == "SLAVE":
                as_replica.add(node)
    for node, counts in data.items():  # the last count per node; a change absent is a count of 0
        seqs[("data", node)] = [(trx, n) for trx, n in sorted(counts.items()) if n]
    nodes = header.get("topology", {}).get("nodes", [])
    settings = {
        "delay_rule": tuple(n.get("delay_rule") for n in nodes),
        "commit_timestamps": tuple(n.get("commit_timestamps") for n in nodes),
        "wait_point": tuple(n.get("variables", {}).get("rpl_semi_sync_master_wait_point") for n in nodes),
        "mutants": tuple(header.get("config", {}).get("mutants", ())),  # the header says what the system carries
        "implementation": (header.get("server_version", "model"),),
        "flavour": tuple(sorted(header.get("config", {}).get("mechanics", {}).items())),  # model/mechanics.py
    }
    # A real server's trace cannot say when its SQL thread began a transaction (begin is None).
    unobserved = set(header.get("unobserved", ())) | ({"apply"} if untimed_applies else set())
    observed = frozenset(a for a in ASPECTS if a not in unobserved)
    return Facts(header, {k: tuple(v) for k, v in seqs.items() if k[0] in observed}, binlog, applied_from,
                 commits, settings, observed, frozenset(restarts), frozenset(incidents),
                 frozenset((n, tuple(ts)) for n, ts in cuts.items()), frozenset(as_replica),
                 tuple(untils), frozenset((n, tuple(a)) for n, a in appliers.items()), frozenset(applier_stmts),
                 frozenset((n, tuple(e)) for n, e in refused.items()), frozenset(gtid_asks), frozenset(clock_steps),
                 frozenset(unknown_stmts), tuple(halts), frozenset(restores), frozenset(io_stops), frozenset(no_slave_off),
                 tuple(promotions))


@dataclass(frozen=True)
class Difference:
    aspect: str
    node: str
    subject: str  # the transaction, or the read's time
    left: str
    right: str
    knock_on: int  # later divergences on the same (aspect, node), consequences of this one
    expected: bool
    rule: str  # the rule that explains it, or "" for a finding
    reason: str


def tolerance(left: Facts, right: Facts) -> int:
    """How far apart two times may be and still agree: the coarser Trace's sampling resolution."""
    return max(left.header.get("resolution_us", 0), right.header.get("resolution_us", 0))


def visible_at(f: Facts, node: str) -> dict[str, int]:
    return dict(f.seqs.get(("visible", node), ()))


def at_the_edge(left: Facts, right: Facts, node: str, t: int, seen: tuple, other: tuple, slack: int) -> bool:
    """Two reads at t differ only by changes that became visible, in either Trace, within
    `slack` of t: the edge of a sample, not a different outcome."""
    return all(any(v is not None and abs(v - t) <= slack for v in (visible_at(f, node).get(trx) for f in (left, right)))
               for trx in set(seen) ^ set(other))


def agree(left: Facts, right: Facts, aspect: str, node: str, x, y, tol: int) -> bool:
    """Two entries of one aspect agree: equal, or times within `tol`; a real server's semi-sync
    outcome it could not tell (None, only where `tol` > 0) agrees with any; reads agree at the
    edge of a sample."""
    if x == y:
        return True
    if x[0] != y[0] and aspect != "read":
        return False
    if aspect == "apply":
        return abs(x[1][0] - y[1][0]) <= tol and x[1][1] == y[1][1]
    if aspect == "visible":
        return abs(x[1] - y[1]) <= tol
    if aspect == "commit":
        (t1, s1, e1), (t2, s2, e2) = x[1], y[1]
        return abs(t1 - t2) <= tol and e1 == e2 and (s1 == s2 or (tol > 0 and None in (s1, s2)))
    if aspect == "read":
        return abs(x[0] - y[0]) <= tol and at_the_edge(left, right, node, x[0], x[1], y[1], tol)
    return False
