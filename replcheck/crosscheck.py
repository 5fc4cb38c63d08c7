"""Cross-check: two systems' Traces of the same History, compared observation by observation.

Each Trace is reduced to what a client and an operator see, per node: when each transaction
began to be applied (and by which named connection), when each commit returned and how its semi-sync wait ended, when each
transaction became visible, what each read saw, what each administrative statement answered,
and how many copies of each change the node holds at the end. (Status samples are not
compared: they follow from these.) Times agree within the coarser of the two Traces'
`resolution_us` (0 for a model, the sampling gap of a real server); an aspect a Trace does not
observe is not compared. For each (aspect, node) only the first divergence is a difference;
what follows it on that node is its knock-on (a replica's SQL thread is serial) and is counted,
not classified. The same comparison serves model against model (campaigns) and a real server
against its reference model (conform).

Every difference is classified by the rules of spec/crosscheck.toml: *expected* when the two
systems differ in a setting the rule names (the delay rule, the semi-sync wait point, commit
timestamps) and the rule's condition holds for this transaction, with the seed's reason;
otherwise *unexpected*, a finding. Systems that differ in nothing must not differ at all.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

from replcheck.spec.vocabulary import MARIADB_VARIABLES, MYSQL_VARIABLES
from replcheck import io
from replcheck.spec import ROOT as SPEC
from replcheck.spec.formats import US

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
    # (node, stmt subject) of each SET GLOBAL the server answered "unknown system variable" (1193), other than an applier setting
    unknown_stmts: frozenset[tuple[str, str]] = frozenset()
    halts: tuple[tuple[str, int], ...] = ()  # (node, when) of each stop of its SQL thread at an error, in order
    restores: frozenset[tuple[str, int, str]] = frozenset()  # (node, when, donor) of each restore from a backup


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
    restores = set()
    cuts: dict[str, list[tuple]] = {}
    appliers: dict[str, list[tuple]] = {}
    applier_stmts, unknown_stmts = set(), set()
    refused: dict[str, list] = {}
    gtid_asks = set()
    clock_steps = set()
    for o in obs:
        k, node = o["kind"], o.get("node", "")
        if k == "clock_step":
            clock_steps.add(node)
        if k == "connect" and o.get("errno"):
            refused.setdefault(node, []).append(o["errno"])
        if k == "connect" and o.get("gtid_pos"):
            gtid_asks.add((node, o.get("source", ""), o["t"], o["gtid_pos"]))
        if k == "parallel":
            appliers.setdefault(node, []).append((o["workers"], o.get("mode"), o.get("preserve_commit_order")))
        if k == "sql_stop" and o.get("reason") == "until":
            untils.append((node, o["t"]))
        if k == "sql_stop" and o.get("reason") == "error":
            halts.append((node, o["t"]))
        if k == "restore":
            restores.add((node, o["t"], o.get("donor", "")))
        if k == "io_cut" and o.get("then") == "stop":
            cuts.setdefault(node, []).append((o["t"], o.get("master_log_file"), o.get("master_log_pos")))
        if k == "restart" or (k == "stmt" and o["op"] == "start_slave" and o.get("errno") is None) or (
                k == "io_cut" and o.get("then") == "reconnect"):
            restarts.add(node)
            if k == "restart" and o.get("init_rpl_role") == "SLAVE":
                as_replica.add(node)
        elif k == "binlog" and o.get("type") == "INCIDENT_EVENT":
            incidents.add(node)
        if k == "apply" and o.get("begin") is None:
            untimed_applies = True
        elif k == "apply" and o.get("trx") is not None and o["idx"] == 0:
            # and by which named connection: in a diamond with gtid_ignore_duplicates the first one
            # due wins, and a STOP of it rolls back its group where the other's would have stayed
            seqs.setdefault(("apply", node), []).append((o["trx"], (o["begin"], o.get("connection"))))
            applied_from[(node, o["trx"])] = o.get("source", "")
        elif k == "commit":
            seqs.setdefault(("commit", node), []).append((o["trx"], (o["t"], o.get("semisync"), o.get("errno"))))
            commits[(node, o["trx"])] = o["t"]
        elif k == "visible":
            seqs.setdefault(("visible", node), []).append((o["trx"], o["t"]))
        elif k == "read":
            seqs.setdefault(("read", node), []).append((o["t"], tuple(o["seen"])))
        elif k == "stmt":
            # the i-th statement of its kind on the node: a real server's are stamped later
            i = stmts[(node, o["op"])] = stmts.get((node, o["op"]), 0) + 1
            if o["op"] == "set_global" and o.get("variable") in APPLIER_VARIABLES:
                applier_stmts.add((node, f"set_global #{i}"))
            elif o["op"] == "set_global" and o.get("errno") == ER_UNKNOWN_SYSTEM_VARIABLE:  # the applier's: flavour.parallel-applier
                unknown_stmts.add((node, f"set_global #{i}"))
            seqs.setdefault(("stmt", node), []).append((f"{o['op']} #{i}", (o.get("errno"), o.get("warning"))))
        elif k == "data":
            data[node] = o["counts"]
        elif k == "binlog" and o.get("trx") is not None:
            binlog.setdefault((node, o["trx"]), []).append(o)
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
                 frozenset(unknown_stmts), tuple(halts), frozenset(restores))


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


# -- conditions: what must hold for a rule to explain a difference --------------------------------
Ctx = tuple[Facts, Facts, str, str, str]  # left, right, aspect, node, subject


def _source(ctx: Ctx) -> str:
    """The server the node applied the transaction from: its channel's source, or after a
    failover the new primary."""
    left, right, _, node, trx = ctx
    static = {c["replica"]: c["source"] for c in left.header["topology"].get("channels", [])}.get(node, node)
    return left.applied_from.get((node, trx)) or right.applied_from.get((node, trx)) or static


def _events(ctx: Ctx, trx: str) -> list[dict]:
    """The transaction's events in the binlog of the node's immediate source, in both traces
    (only one may carry commit timestamps)."""
    src = _source(ctx)
    return [e for f in ctx[:2] for e in f.binlog.get((src, trx), [])]


def event_timestamp_not_commit_time(ctx: Ctx) -> bool:
    """Some event of the transaction carries a timestamp (the statement's start, or SET
    TIMESTAMP) other than the second its commit was written to the immediate master's binlog."""
    events = _events(ctx, ctx[4])
    icts = [e["ict"] for e in events if e.get("ict") is not None]
    return bool(icts) and any(e["when"] != icts[0] // US for e in events)


def chain_hop(ctx: Ctx) -> bool:
    """The transaction reached this node through an intermediate master (it did not originate
    on the server the node applied it from): WL#344 measures from the originating master,
    WL#7318 from the immediate one."""
    src = _source(ctx)
    ids = {n["id"]: n.get("server_id") for n in ctx[0].header["topology"]["nodes"]}
    events = _events(ctx, ctx[4])
    return bool(events) and events[0].get("server_id") != ids.get(src)


def applied_differently(ctx: Ctx) -> bool:
    """The transaction began to be applied on this node at another time, by another named
    connection, or not at all: a replica makes it visible when it applies it."""
    left, right, _, node, trx = ctx
    return dict(left.seqs.get(("apply", node), ())).get(trx) != dict(right.seqs.get(("apply", node), ())).get(trx)


def waiting_for_ack(ctx: Ctx) -> bool:
    """Every transaction one trace showed and the other did not (at a read, or made visible)
    was still waiting for its semi-sync ack then: its commit had not yet returned to the client
    in one of the traces, or never did."""
    left, right, aspect, node, subject = ctx
    if aspect == "read":
        t = int(subject)
        seen = [dict(f.seqs.get(("read", node), ())).get(t, ()) for f in (left, right)]
        trxs, when = set(seen[0]) ^ set(seen[1]), t
    else:
        shown = [v for f in (left, right) if (v := dict(f.seqs.get(("visible", node), ())).get(subject)) is not None]
        trxs, when = {subject}, min(shown)
    # a commit returns after its engine commit; at the same µs the read still found it waiting
    return bool(trxs) and all(_client_commit(left, node, x) and any(f.commits.get((node, x), when) >= when for f in (left, right))
                              for x in trxs)


def _client_commit(f: Facts, node: str, trx: str) -> bool:
    """A client committed the transaction on this node (it did not arrive by replication)."""
    ids = {n["id"]: n.get("server_id") for n in f.header["topology"]["nodes"]}
    events = f.binlog.get((node, trx), [])
    return bool(events) and events[0].get("server_id") == ids.get(node)


def within_a_second(ctx: Ctx) -> bool:
    """Both Traces show it, at times no more than 1 s apart beyond the sampling resolution (for a
    read: what it saw differs only by changes that became visible that close to it)."""
    left, right, aspect, node, subject = ctx
    slack = US + tolerance(left, right)
    if aspect == "read":
        seen = [dict(f.seqs.get(("read", node), ())) for f in (left, right)]
        near = [t for t in seen[1] if abs(t - int(subject)) <= slack]
        if int(subject) not in seen[0] or not near:
            return False
        return _at_the_edge(left, right, node, int(subject), seen[0][int(subject)], seen[1][near[0]], slack)
    times = [dict(f.seqs.get((aspect, node), ())).get(subject) for f in (left, right)]
    if aspect == "apply":  # only the time may differ, not the connection
        if None in times or times[0][1] != times[1][1]:
            return False
        times = [t for t, _ in times]
    if aspect == "commit":  # only the time may differ: how the wait ended and the error must not
        if None in times:
            return False
        (t1, s1, e1), (t2, s2, e2) = times
        if not _agree(left, right, "commit", node, (subject, (t1, s1, e1)), (subject, (t1, s2, e2)), tolerance(left, right)):
            return False
        times = [t1, t2]
    return None not in times and abs(times[0] - times[1]) <= slack


def _here_or_upstream(ctx: Ctx, here: Callable[[Ctx, str], bool], seen: frozenset = frozenset()) -> bool:
    """`here(ctx, source)` holds for the node, or down a chain for its source: when the source is a
    replica that wrote the transaction to its binlog at another time (or not at all) for that
    reason, the node gets it at another time, though nothing differed on the node itself."""
    left, right, aspect, node, subject = ctx
    src = _source(ctx)
    if here(ctx, src):
        return True
    written = [tuple(e["t"] for e in f.binlog.get((src, subject), ())) for f in (left, right)]
    return (src != node and src not in seen and written[0] != written[1]
            and _here_or_upstream((left, right, aspect, src, subject), here, seen | {node}))


def incident_or_restart(ctx: Ctx) -> bool:
    """The node's source binlogged an incident, or the node's replication started again (START
    SLAVE, a restart): where the flavours' mechanics differ; here or up the chain. And a semi-sync
    source's commits: a replica of it that connected again by GTID acknowledged nothing it already
    held (MariaDB's dump_start takes the dump's start, a binlog's head, for its reply), where by
    position it acknowledged all it held. And a source's PURGE BINARY LOGS, which stops at the binlog
    a dump thread reads (1867): a replica that connected again reads another one by GTID."""
    def here(c: Ctx, src: str) -> bool:
        left, right, aspect, node, subject = c
        if any(src in f.incidents or node in f.restarts for f in (left, right)):
            return True
        replicas = {ch["replica"] for ch in left.header["topology"].get("channels", []) if ch["source"] == node}
        return (aspect == "commit" or (aspect == "stmt" and subject.startswith("purge_binary_logs "))) and \
            any(r in f.restarts for f in (left, right) for r in replicas)
    return _here_or_upstream(ctx, here)


def change_master_differs(ctx: Ctx) -> bool:
    """A CHANGE MASTER on the node ended otherwise in the two (refused in one, or with a note):
    from then on the node delays, and keeps or purges its relay log, differently; here or up
    the chain."""
    def ended(f: Facts, node: str) -> tuple:
        return tuple(x for x in f.seqs.get(("stmt", node), ()) if x[0].startswith("change_master "))
    return _here_or_upstream(ctx, lambda c, src: ended(c[0], c[3]) != ended(c[1], c[3]))


def cut_differs(ctx: Ctx) -> bool:
    """A cut stopped the node's IO thread at another time or place in the source's binlog (or not at
    all) in one Trace: a cut stops it only inside a group in flight, and the source sent its groups
    at other times; here or up the chain."""
    def cut(f: Facts, node: str) -> tuple:
        return dict(f.cuts).get(node, ())
    return _here_or_upstream(ctx, lambda c, src: cut(c[0], c[3]) != cut(c[1], c[3]))


def gtid_domains_used(ctx: Ctx) -> bool:
    """The History uses what only MariaDB's mechanics model: gtid_strict_mode on a server, or GTIDs
    of a domain set by gtid_domain_id (other than 0, or two of them: a GTID connect then starts per
    domain)."""
    left = ctx[0]
    if any(n.get("variables", {}).get("gtid_strict_mode") for n in left.header.get("topology", {}).get("nodes", [])):
        return True
    domains = {b.get("gtid", "").split("-")[0] for events in left.binlog.values() for b in events if b.get("gtid")}
    return len(domains) > 1 or domains - {"0"} != set()


def unsent_commit(ctx: Ctx) -> bool:
    """One Trace has a commit on the node that no semi-sync replica was sent (all filter it on the
    master), which the seeds' servers do not wait for and MariaDB waits out (MDEV-38486)."""
    left, right, _, node, _ = ctx
    return any(value[1] == "unsent" for f in (left, right) for _, value in f.seqs.get(("commit", node), ()))


def statement_commit(ctx: Ctx) -> bool:
    """One Trace returned the commit at its statement's own group (AFTER_COMMIT waits at a transaction's end)."""
    left, right, _, node, trx = ctx
    return any(x == trx and value[1] == "statement" for f in (left, right) for x, value in f.seqs.get(("commit", node), ()))


def restored_during_wait(ctx: Ctx) -> bool:
    """The node was restored from a donor's backup while the transaction's commit waited there for its ack."""
    left, right, _, node, trx = ctx
    for f in (left, right):
        for n, t, donor in f.restores:
            written = [e["t"] for e in f.binlog.get((donor, trx), ())]
            if n == node and written and min(written) <= t < f.commits.get((donor, trx), -1):
                return True
    return False


def until_differs(ctx: Ctx) -> bool:
    """START SLAVE UNTIL's condition stopped the node's SQL thread at other times, or another number
    of times (two UNTIL runs may both stop in the same µs in one Trace, one of them run on in the
    other): what it executed by then came at other times, so a later STOP SLAVE finds it running in
    one and already stopped in the other (1255), or a START SLAVE the reverse (1254)."""
    left, right, _, node, _ = ctx
    return [t for n, t in left.untils if n == node] != [t for n, t in right.untils if n == node]


def halt_differs(ctx: Ctx) -> bool:
    """The node's SQL thread stopped at an error (an incident) at other times or another number of times."""
    left, right, _, node, _ = ctx
    return [t for n, t in left.halts if n == node] != [t for n, t in right.halts if n == node]


def applier_differs(ctx: Ctx) -> bool:
    """The node's SQL thread ran with other applier settings in the two Traces (workers, mode,
    commit order: each server reads only its own variables), here or up the chain; or the
    difference is a SET GLOBAL of an applier setting, which one server does not know by that name
    and the other refuses while its slave runs."""
    left, right, aspect, node, subject = ctx
    if aspect == "stmt" and (node, subject) in left.applier_stmts | right.applier_stmts:
        return True
    return _here_or_upstream(ctx, lambda c, src: dict(c[0].appliers).get(c[3]) != dict(c[1].appliers).get(c[3]))


def variable_unknown_differs(ctx: Ctx) -> bool:
    """One server knows a variable the other does not (1193): the difference is a SET GLOBAL of it
    (MariaDB's replicate_* filters and gtid_strict_mode, which MySQL sets otherwise or not at all),
    or what it changed on the node or up its chain (a filter keeps out there what the other
    replicates)."""
    left, right, aspect, node, subject = ctx
    if aspect == "stmt":
        return ((node, subject) in left.unknown_stmts) != ((node, subject) in right.unknown_stmts)

    def here(c: Ctx, src: str) -> bool:
        return {s for n, s in c[0].unknown_stmts if n == c[3]} != {s for n, s in c[1].unknown_stmts if n == c[3]}
    return _here_or_upstream(ctx, here)


def connect_refused_differs(ctx: Ctx) -> bool:
    """The node's source refused its connect in one Trace and not in the other (or with another
    error), here or up the chain: MariaDB refuses a GTID position its binlog lacks where MySQL's
    auto-position sends whatever the slave's set lacks."""
    return _here_or_upstream(ctx, lambda c, src: dict(c[0].refused).get(c[3]) != dict(c[1].refused).get(c[3]))


def gtid_asked_past_the_source(ctx: Ctx) -> bool:
    """The node connected by a GTID position (MariaDB: one GTID per domain) naming a GTID its new
    source had not logged: MariaDB's dump thread skips the domain's groups until it meets that
    GTID's server_id at or past its seq_no (sql_repl.cc, send_event_to_slave), so after a failover to
    a server that never had it, the new primary's own groups of that domain never reach the node,
    where MySQL's auto-position sends every GTID the slave's set lacks; here or up the chain."""
    def here(c: Ctx, src: str) -> bool:
        node = c[3]
        for f in c[:2]:
            for n, source, t, pos in f.gtid_asks:
                logged = {e.get("gtid") for (b, _), events in f.binlog.items() if b == source for e in events if e["t"] <= t}
                if n == node and any(g and g not in logged for g in pos.split(",")):
                    return True
        return False
    return _here_or_upstream(ctx, here)


def all_slaves_noted(ctx: Ctx) -> bool:
    """START/STOP ALL SLAVES succeeded in both and differs only in its note: MariaDB notes each
    connection it started or stopped (1937 / 1938, Master_info_index::start_all_slaves, sql/rpl_mi.cc),
    a server without named connections nothing. What each connection then does is compared by the
    other aspects."""
    left, right, aspect, node, subject = ctx
    if aspect != "stmt" or not subject.startswith(("start_all_slaves ", "stop_all_slaves ")):
        return False
    outcomes = [dict(f.seqs.get(("stmt", node), ())).get(subject) for f in (left, right)]
    return outcomes[0] != outcomes[1] and all(o is not None and o[0] is None for o in outcomes)


def delay_stamp_differs(ctx: Ctx) -> bool:
    """The two servers take a delayed transaction's commit timestamp otherwise (MySQL 8.0 rounds
    immediate_commit_timestamp up to the second and compares it with the replica's own clock; the
    seeds' WL#7318 truncates it and compensates the clocks), and the node, or a server up its chain,
    replicates with a MASTER_DELAY."""
    if not _mechanics_differ(ctx, "commit_timestamp_rounding", "commit_timestamp_clock"):
        return False
    return _here_or_upstream(ctx, _delayed)


def clock_estimate_differs(ctx: Ctx) -> bool:
    """One system counts a delay with the clock difference its IO thread measured at the connect
    (whole seconds, kept until the next connect), the other with the exact one, and the node (or a
    server up its chain) is a delayed replica whose clock and its source's are not the same whole
    seconds apart all along: offset by a fraction, stepped, or answered late at the connect; or a
    server up the source's chain runs another clock than the source (events keep their originating
    master's timestamp, BUG#52308, while the estimate is with the immediate master)."""
    if not _mechanics_differ(ctx, "clock_difference"):
        return False

    def unequal(c: Ctx, src: str) -> bool:
        node, topo = c[3], c[0].header["topology"]
        offsets = {n["id"]: n.get("clock_offset_us", 0) for n in topo.get("nodes", [])}
        late = any(ch["replica"] == node and ch.get("clock_reply") for ch in topo.get("channels", []))
        stepped = any({node, src} & f.clock_steps for f in c[:2])
        upstream = {ch["source"] for ch in topo.get("channels", []) if ch["replica"] == src}
        origin_apart = any(offsets.get(u, 0) != offsets.get(src, 0) for u in upstream)
        return _delayed(c, src) and (late or stepped or origin_apart or (offsets.get(node, 0) - offsets.get(src, 0)) % US != 0)
    return _here_or_upstream(ctx, unequal)


def _mechanics_differ(ctx: Ctx, *keys: str) -> bool:
    mech = [f.header.get("config", {}).get("mechanics", {}) for f in ctx[:2]]
    return any(m.get(k) != mech[0].get(k) for m in mech for k in keys)


def _delayed(c: Ctx, src: str) -> bool:
    """The node replicates with a MASTER_DELAY (from the topology, or set by a CHANGE MASTER)."""
    node = c[3]
    return any(ch["replica"] == node and ch.get("delay") for ch in c[0].header["topology"].get("channels", [])) or any(
        x[0].startswith("change_master ") for f in c[:2] for x in f.seqs.get(("stmt", node), ()))


def restarted_as_replica(ctx: Ctx) -> bool:
    """The node (or a server up its chain) came back from a crash as a replica, whose recovery cuts
    what was left in doubt: an AFTER_SYNC commit waiting for its ack is prepared, so cut and rolled
    back, where AFTER_COMMIT had committed it in the engine and keeps it."""
    return _here_or_upstream(ctx, lambda c, src: c[3] in c[0].as_replica | c[1].as_replica)


CONDITIONS: dict[str, Callable[[Ctx], bool]] = {f.__name__: f for f in (
    event_timestamp_not_commit_time, chain_hop, applied_differently, waiting_for_ack, within_a_second,
    incident_or_restart, change_master_differs, cut_differs, gtid_domains_used, unsent_commit, statement_commit, restored_during_wait,
    restarted_as_replica, until_differs, halt_differs, applier_differs, variable_unknown_differs,
    connect_refused_differs, delay_stamp_differs, gtid_asked_past_the_source, all_slaves_noted, clock_estimate_differs)}


@dataclass(frozen=True)
class Rule:
    id: str
    aspects: tuple[str, ...]
    differs: str  # the setting the two systems must differ in
    when: str  # a condition of CONDITIONS
    source: str
    reason: str


@lru_cache(maxsize=None)
def rules(path: str | None = None) -> tuple[Rule, ...]:
    """The rules of `path`, by default replcheck's own, whose faults are replcheck's (SpecError)."""
    if path is None:  # read as package data: replcheck may run from a zip (a campaign's executors)
        try:
            return _rules(SPEC.joinpath("crosscheck.toml").read_text(encoding="utf-8"), "spec/crosscheck.toml")
        except io.InputError as e:
            raise io.SpecError(str(e)) from None
    return _rules(io.read_text(path), path)


def _rules(text: str, where: str) -> tuple[Rule, ...]:
    data = io.parse_toml(text, where)
    out = []
    for i, r in enumerate(data.get("rule", [])):
        for key in ("id", "aspects", "differs", "when", "source", "reason"):
            if key not in r:
                raise io.InputError(where, None, f"rule[{i}].{key}", "missing")
        if r["differs"] not in SETTINGS:
            raise io.InputError(where, None, f"rule[{i}].differs", f"unknown setting {r['differs']!r}; known: {', '.join(SETTINGS)}")
        if r["when"] not in CONDITIONS:
            raise io.InputError(where, None, f"rule[{i}].when", f"unknown condition {r['when']!r}; known: {', '.join(CONDITIONS)}")
        bad = set(r["aspects"]) - set(ASPECTS)
        if bad:
            raise io.InputError(where, None, f"rule[{i}].aspects", f"unknown aspects {sorted(bad)}; known: {', '.join(ASPECTS)}")
        out.append(Rule(r["id"], tuple(r["aspects"]), r["differs"], r["when"], r["source"], r["reason"]))
    return tuple(out)


def _show(aspect: str, value) -> str:
    if value is None:
        return "absent"
    if aspect == "read":
        return "saw [" + ", ".join(value) + "]"
    if aspect == "stmt":
        errno, warning = value
        return f"errno {errno}" + (f" warning {warning}" if warning else "") if errno or warning else "ok"
    if aspect == "data":
        return f"{value} cop{'y' if value == 1 else 'ies'}"
    if aspect == "commit":
        t, semisync, errno = value
        return f"returned at {t / US:.6f} s" + (f" semisync={semisync}" if semisync else "") + (f" errno={errno}" if errno else "")
    if aspect == "apply":
        begin, connection = value
        return f"at {begin / US:.6f} s" + (f" by connection '{connection}'" if connection else "")
    return f"at {value / US:.6f} s"


def tolerance(left: Facts, right: Facts) -> int:
    """How far apart two times may be and still agree: the coarser Trace's sampling resolution."""
    return max(left.header.get("resolution_us", 0), right.header.get("resolution_us", 0))


def _visible_at(f: Facts, node: str) -> dict[str, int]:
    return dict(f.seqs.get(("visible", node), ()))


def _at_the_edge(left: Facts, right: Facts, node: str, t: int, seen: tuple, other: tuple, slack: int) -> bool:
    """Two reads at t differ only by changes that became visible, in either Trace, within
    `slack` of t: the edge of a sample, not a different outcome."""
    return all(any(v is not None and abs(v - t) <= slack for v in (_visible_at(f, node).get(trx) for f in (left, right)))
               for trx in set(seen) ^ set(other))


def _agree(left: Facts, right: Facts, aspect: str, node: str, x, y, tol: int) -> bool:
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
        return abs(x[0] - y[0]) <= tol and _at_the_edge(left, right, node, x[0], x[1], y[1], tol)
    return False


def compare(left: Facts, right: Facts) -> list[Difference]:
    differs = {k for k in left.settings if left.settings[k] != right.settings[k]}
    tol = tolerance(left, right)
    out = []
    both = left.observed & right.observed
    apply_rules: dict[str, Rule | None] = {}  # per node, what explained its apply divergence
    for key in sorted(k for k in set(left.seqs) | set(right.seqs) if k[0] in both):
        aspect, node = key
        a, b = left.seqs.get(key, ()), right.seqs.get(key, ())
        if a == b:
            continue
        if aspect == "data":
            # copies listed by name, not in time: aligned by name, a transaction one side lacks
            # is that transaction absent there, not the next name "first"
            copies = dict(a), dict(b)
            names = [n for n in sorted(copies[0].keys() | copies[1].keys()) if copies[0].get(n) != copies[1].get(n)]
            x, y = ((names[0], c[names[0]]) if names[0] in c else None for c in copies)
            later = len(names) - 1
        else:
            same = [_agree(left, right, aspect, node, x, y, tol) for x, y in zip(a, b)]
            if all(same) and len(a) == len(b):
                continue
            first = next((i for i, ok in enumerate(same) if not ok), min(len(a), len(b)))
            later = sum(1 for ok in same[first + 1:] if not ok) + abs(len(a) - len(b))
            x = a[first] if first < len(a) else None
            y = b[first] if first < len(b) else None
        if x is not None and y is not None and x[0] != y[0] and aspect != "read":
            # another order: either transaction may be the one that came at another time
            subject, lv, rv = str(x[0]), f"{x[0]} first", f"{y[0]} first"
            subjects = (subject, str(y[0]))
        else:
            subject = str((x or y)[0])
            subjects = (subject,)
            lv, rv = _show(aspect, x and x[1]), _show(aspect, y and y[1])
        rule = next((r for r in rules() if aspect in r.aspects and r.differs in differs
                     and any(CONDITIONS[r.when]((left, right, aspect, node, s)) for s in subjects)), None)
        if aspect == "apply":
            apply_rules[node] = rule
        elif rule is not None and rule.when == "applied_differently" and apply_rules.get(node):
            # visible (or not there) because applied at another time (sorted keys put a node's apply
            # first): the cause is what explained its apply divergence (a flavour's applier, say),
            # not the first rule that fits
            rule = replace(apply_rules[node], reason=f"visible when applied ({rule.id}); applied at another time: {apply_rules[node].reason}")
        out.append(Difference(aspect, node, subject, lv, rv, later, rule is not None, rule.id if rule else "",
                              rule.reason if rule else f"no rule explains it (the systems differ in: {', '.join(sorted(differs)) or 'nothing'})"))
    return out
