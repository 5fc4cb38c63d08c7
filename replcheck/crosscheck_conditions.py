"""The conditions of spec/crosscheck.toml's rules: what must hold of a difference between two
Traces (their Facts) for a rule to explain it."""
from __future__ import annotations

from typing import Callable

from replcheck.crosscheck_facts import Facts, agree, at_the_edge, tolerance, visible_at
from replcheck.model import relayinfo
from replcheck.spec.formats import ER_ERROR_ON_WRITE, US

# -- conditions: what must hold for a rule to explain a difference --------------------------------
Ctx = tuple[Facts, Facts, str, str, str]  # left, right, aspect, node, subject


def _source(ctx: Ctx) -> str:
    """The server the node got the transaction from: the one it applied it from (its channel's
    source, or after a failover the new primary), or, for one it neither applied nor committed on
    a node rebuilt from a backup, the backup's donor."""
    left, right, _, node, trx = ctx
    applied = left.applied_from.get((node, trx)) or right.applied_from.get((node, trx))
    if applied:
        return applied
    donors = [donor for f in (left, right) for n, _, donor in sorted(f.restores) if n == node]
    if donors and not any((node, trx) in f.commits for f in (left, right)):
        return donors[-1]
    return {c["replica"]: c["source"] for c in left.header["topology"].get("channels", [])}.get(node, node)


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
        trxs, when, group = set(seen[0]) ^ set(seen[1]), t, None
    else:
        # a transaction of non-transactional statements is several groups, each made visible in
        # turn: the one judged is the first whose visibility differs (or, in another order, its last)
        shown = [_shown(f, node, subject) for f in (left, right)]
        if not any(shown):
            return False
        group = next((i for i, (x, y) in enumerate(zip(*shown)) if x != y), min(map(len, shown)))
        group = min(group, max(map(len, shown)) - 1)
        trxs, when = {subject}, min(s[group] for s in shown if group < len(s))
    # a commit returns after its engine commit; at the same µs the read still found it waiting
    return bool(trxs) and all((_client_commit(left, node, x) and any(f.commits.get((node, x), when) >= when for f in (left, right)))
                              or any(_applier_held(f, node, x, when, group) for f in (left, right)) for x in trxs)


def _shown(f: Facts, node: str, trx: str) -> list[int]:
    """When each group of the transaction became visible on the node, in order."""
    return [t for x, t in f.seqs.get(("visible", node), ()) if x == trx]


def _applier_held(f: Facts, node: str, trx: str, when: int, group: int | None) -> bool:
    """A replicated transaction (its group `group`, or its last) this trace binlogged on the node
    by `when` and made visible only later, or never: the SQL thread's commit waited for the node's
    own semi-sync ack after the binlog sync (AFTER_SYNC), where AFTER_COMMIT shows it at once
    (model/sim/semisync.py on_group_binlogged)."""
    events = f.binlog.get((node, trx), [])
    ends = [e["t"] for e in events if e.get("last")] or [e["t"] for e in events[-1:]]
    group = len(ends) - 1 if group is None else group
    if not events or _client_commit(f, node, trx) or group >= len(ends) or ends[group] > when:
        return False
    shown = _shown(f, node, trx)
    return group >= len(shown) or shown[group] > ends[group]


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
        return at_the_edge(left, right, node, int(subject), seen[0][int(subject)], seen[1][near[0]], slack)
    times = [dict(f.seqs.get((aspect, node), ())).get(subject) for f in (left, right)]
    if aspect == "apply":  # only the time may differ, not the connection
        if None in times or times[0][1] != times[1][1]:
            return False
        times = [t for t, _ in times]
    if aspect == "commit":  # only the time may differ: how the wait ended and the error must not
        if None in times:
            return False
        (t1, s1, e1), (t2, s2, e2) = times
        if not agree(left, right, "commit", node, (subject, (t1, s1, e1)), (subject, (t1, s2, e2)), tolerance(left, right)):
            return False
        times = [t1, t2]
    return None not in times and abs(times[0] - times[1]) <= slack


def stopped_in_flight(ctx: Ctx) -> bool:
    """A STOP SLAVE stopped the node's IO thread, in either Trace, while the transaction may have been
    on its way to it: binlogged on its source within the channel's latency and the resolution before
    the statement began, or while it ran. Where the stop falls among a server's own times (an op
    starts late, the statement takes its time, a commit waits) decides whether the IO thread
    fetched the group first: one Trace holds it and the other lacks it."""
    left, right, _, node, trx = ctx
    src = _source(ctx)
    latency = max((c.get("latency_us", 0) for c in left.header["topology"].get("channels", [])
                   if c["replica"] == node and c["source"] == src), default=0)
    slack = tolerance(left, right)
    for f in (left, right):
        written = [e["t"] for e in f.binlog.get((src, trx), ())[:1]]
        if any(n == node and began - latency - slack <= t <= returned + slack
               for n, began, returned in f.io_stops for t in written):
            return True
    return False


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


def binlog_write_failed(ctx: Ctx) -> bool:
    """The transaction's commit failed to write the binlog (1026) on the node, or on the server it
    got it from (a restore's donor), in either Trace; here or up the chain."""
    def here(c: Ctx, src: str) -> bool:
        left, right, _, node, trx = c
        return any(dict(f.seqs.get(("commit", n), ())).get(trx, (0, None, None))[2] == ER_ERROR_ON_WRITE
                   for f in (left, right) for n in {node, src})
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
    # either Trace: a server that knows no gtid_strict_mode does not list it, nor logs a domain
    if any(n.get("variables", {}).get("gtid_strict_mode") for f in ctx[:2] for n in f.header.get("topology", {}).get("nodes", [])):
        return True
    domains = {b.get("gtid", "").split("-")[0] for f in ctx[:2] for events in f.binlog.values() for b in events if b.get("gtid")}
    return len(domains) > 1 or domains - {"0"} != set()


def unsent_commit(ctx: Ctx) -> bool:
    """One Trace has a commit on the node that no semi-sync replica was sent (all filter it on the
    master), which the seeds' servers do not wait for and MariaDB waits out (MDEV-38486)."""
    left, right, _, node, _ = ctx
    return any(value[1] == "unsent" for f in (left, right) for _, value in f.seqs.get(("commit", node), ()))


def no_slave_switched_off(ctx: Ctx) -> bool:
    """One Trace's master switched OFF at a commit with no semi-sync slave connected (wait_no_slave
    OFF), where MariaDB returns that commit at once and stays ON (Mechanics.no_slave_commit)."""
    left, right, _, node, _ = ctx
    return (node in left.no_slave_off) != (node in right.no_slave_off)


def failed_statement_later(ctx: Ctx) -> bool:
    """One Trace answered a failed statement's binlogged group at once, its ack waited for later
    (MariaDB: at its session's end), where the other waited before the answer."""
    left, right, _, node, _ = ctx
    return any(value[1] == "later" for f in (left, right) for _, value in f.seqs.get(("commit", node), ()))


def statement_commit(ctx: Ctx) -> bool:
    """One Trace returned the commit at its statement's own group (AFTER_COMMIT waits at a transaction's end)."""
    left, right, _, node, trx = ctx
    return any(x == trx and value[1] == "statement" for f in (left, right) for x, value in f.seqs.get(("commit", node), ()))


def restored_during_wait(ctx: Ctx) -> bool:
    """The node was restored from a donor's backup while the transaction's commit waited there for its
    ack; or the difference is the donor's SHOW BINLOG INFO FOR such a restored node, which asks for the
    group its backup ended at (another group, perhaps purged: 1220); or a later failover elected another
    node in the two Traces, one of them such a restored node: the election weighs what each candidate
    holds, and the backup gave the restored node another position under each wait point."""
    left, right, aspect, node, subject = ctx

    def waiting(f, donor: str, trx: str, t: int) -> bool:
        written = [e["t"] for e in f.binlog.get((donor, trx), ())]
        return bool(written) and min(written) <= t < f.commits.get((donor, trx), -1)

    def restored_in_wait(f, t: int, donor: str) -> bool:
        return any(d == donor and waiting(f, donor, trx, t) for d, trx in f.binlog)

    elected = {p for a, b in zip(left.promotions, right.promotions) if a != b for p in (a, b)}
    for f in (left, right):
        for n, t, donor in f.restores:
            if aspect == "stmt" and node == donor and subject.startswith("show_binlog_info "):
                if restored_in_wait(f, t, donor):
                    return True
            elif n == node and waiting(f, donor, subject, t):
                return True
            elif any(p == n and te > t for te, p in elected) and restored_in_wait(f, t, donor):
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
    replicates, a client's transaction after its SET gtid_domain_id is refused there)."""
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
    replicates with a MASTER_DELAY. And a semi-sync source's commits: a delayed replica of it that
    connected again held other groups (applied at another time), so it acknowledged others."""
    if not _mechanics_differ(ctx, "commit_timestamp_rounding", "commit_timestamp_clock"):
        return False
    left, right, aspect, node, subject = ctx
    again = left.restarts | right.restarts
    replicas = [ch["replica"] for ch in left.header["topology"].get("channels", []) if ch["source"] == node]
    return _here_or_upstream(ctx, _delayed) or aspect in ("commit", "visible") and any(
        r in again and _delayed((left, right, aspect, r, subject), node) for r in replicas)


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
    """The node replicates with a MASTER_DELAY (from the topology, from the relay-log.info it starts
    with, which a start reads the delay from, or set by a CHANGE MASTER)."""
    node = c[3]
    topo = c[0].header["topology"]
    return any(ch["replica"] == node and ch.get("delay") for ch in topo.get("channels", [])) or any(
        n["id"] == node and _info_delay(n.get("relay_log_info")) for n in topo.get("nodes", [])) or any(
        x[0].startswith("change_master ") for f in c[:2] for x in f.seqs.get(("stmt", node), ()))


def _info_delay(content: str | None) -> int:
    """The delay a relay-log.info names (WL#344's new format, the line after the master position, as
    model/relayinfo.py reads it); 0 for none, an old format without the line, or one refused."""
    try:
        return relayinfo.parse(content).delay if content else 0
    except relayinfo.RelayLogInfoError:
        return 0


def restarted_as_replica(ctx: Ctx) -> bool:
    """The node (or a server up its chain) came back from a crash as a replica, whose recovery cuts
    what was left in doubt: an AFTER_SYNC commit waiting for its ack is prepared, so cut and rolled
    back, where AFTER_COMMIT had committed it in the engine and keeps it."""
    return _here_or_upstream(ctx, lambda c, src: c[3] in c[0].as_replica | c[1].as_replica)


def after_the_cut(ctx: Ctx) -> bool:
    """One Trace ended at a statement its server did not answer (header cut_short, sent at `at`):
    what the other shows from there on, the cut one could not show. The cut Trace lacks the entry
    (holds fewer copies, for the rows counted at its end) and the other's came no earlier than `at`
    less the tolerance (its copy became visible then, or never); a statement it lacks is one at or
    after the cut (statements run one after another)."""
    left, right, aspect, node, subject = ctx
    tol = tolerance(left, right)
    for cut, other in ((left, right), (right, left)):
        at = cut.header.get("cut_short", {}).get("t")
        if at is None:
            continue
        mine, theirs = dict(cut.seqs.get((aspect, node), ())), dict(other.seqs.get((aspect, node), ()))
        if aspect == "read":
            return int(subject) >= at - tol and int(subject) not in mine
        if aspect == "data":
            return mine.get(subject, 0) < theirs.get(subject, 0) and visible_at(other, node).get(subject, at) >= at - tol
        if subject in mine or subject not in theirs:
            return False
        return aspect == "stmt" or _when(aspect, theirs[subject]) >= at - tol
    return False


def _when(aspect: str, value) -> int:
    """The time of an apply (its begin), a commit (its return) or a visible entry."""
    return value if aspect == "visible" else value[0]


CONDITIONS: dict[str, Callable[[Ctx], bool]] = {f.__name__: f for f in (
    event_timestamp_not_commit_time, chain_hop, applied_differently, waiting_for_ack, within_a_second,
    incident_or_restart, binlog_write_failed, change_master_differs, cut_differs, gtid_domains_used, unsent_commit, failed_statement_later,
    no_slave_switched_off, statement_commit, restored_during_wait,
    restarted_as_replica, until_differs, halt_differs, applier_differs, variable_unknown_differs,
    connect_refused_differs, delay_stamp_differs, gtid_asked_past_the_source, all_slaves_noted, clock_estimate_differs,
    stopped_in_flight, after_the_cut)}
