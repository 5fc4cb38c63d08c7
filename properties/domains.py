"""Trace properties of MariaDB GTID domains (DOMAIN.*): what a GTID connect sends in each domain,
what it refuses, and gtid_strict_mode.

They read `binlog`, `relay`, `visible`, `skip`, `connect` and `recovery` observations, and the
header's server variables, so a real server's trace is judged the same way. A polled server's
trace has no `connect` observations: the harness connects every channel by GTID, so there every
arrival counts as a GTID connect's.
"""
from __future__ import annotations

from replcheck.spec import formats as F

from . import configuration
from .core import Check, TraceView, checks
from .filter import domain_dropped, kept_out, on_master_at
from .groupid import lost_lines, positions
from .groupid_shared import deleted_domains, starts_new_binlog

def _gtid(o: dict) -> tuple[int, int, int] | None:
    """The observation's MariaDB GTID parsed, or None (a MySQL one, none): parsed once, not tested first."""
    try:
        return F.parse_gtid(o.get("gtid"))
    except (ValueError, TypeError, AttributeError):
        return None


def _source_order(v: TraceView, source: str, unmarked: bool = False) -> dict[str, str | None]:
    """Per GTID the source logged, the GTID logged before it in its domain there (None for the
    domain's first, and for the first after a RESET MASTER), leaving out what crash recovery cut
    from the binlog, and with `unmarked` the groups @@skip_replication marked: the dump thread
    never sends those to a replica that filters them on the master (sql_repl.cc, send_event_to_slave)."""
    def build():
        lost = lost_lines(v)
        # a polled server's binlog rows do not show the flag: its client's commit does
        marked = {c.get("trx") for c in v.kind("commit") if c["node"] == source and c.get("skip_replication")}
        before, last = {}, {}
        for o in v.of_node(source, "restore", "stmt", "binlog"):  # what else the source did leaves its binlog as it is
            if o["kind"] != "binlog":
                if starts_new_binlog(o):  # a GTID logged after RESET MASTER follows none before it
                    last = {}
                continue
            g = _gtid(o) if o.get("last") and o["_line"] not in lost else None
            if unmarked and g is not None and (o.get("skip_replication") or o.get("trx") in marked):
                continue
            if g is not None and o["gtid"] not in before:
                before[o["gtid"]] = last.get(g[0])
                last[g[0]] = o["gtid"]
        return before
    return v.memo(f"domains.order.{source}.{unmarked}", build)


# what connect_no_loss follows of a node
_NO_LOSS_KINDS = frozenset({"connect", "restore", "relay", "visible", "binlog", "skip", "filtered"})


@checks("DOMAIN.CONNECT.NO_LOSS")
def connect_no_loss(v: TraceView, check: Check) -> None:
    """A replica connected by GTID gets every group its source logged in a domain after the
    replica's GTID there: a group arrives only once the one its source logged before it in its
    domain has reached the replica. An arrival is a group's first relayed event, or where the
    relay log is not observed (a polled server) its commit; reached means relayed, applied,
    binlogged or skipped, or where the relay log is not observed applied or skipped (what such a
    trace shows of the relay log is a part, read at the end)."""
    relay_seen = "relay" not in v.unobserved
    # "filtered": a group the IO thread dropped for its domain (DO/IGNORE_DOMAIN_IDS) never arrives
    held_kinds = ("relay", "visible", "binlog", "skip", "filtered") if relay_seen else ("visible", "skip", "filtered")
    any_connect = bool(v.kind("connect"))
    sources = {c["replica"]: c["source"] for c in v.header.get("topology", {}).get("channels", [])}
    for o in v.kind("promoted"):  # a failover repoints the old source's other replicas
        sources.update({r: o["node"] for r, s in sources.items() if s == o.get("old") and r != o["node"]})
    groups_of: dict[str, set[str]] = {}
    for c in v.kind("commit"):
        if c.get("gtid") and c.get("trx"):
            groups_of.setdefault(c["trx"], set()).add(c["gtid"])
    for node in v.nodes:
        if not v.of_node(node, "relay" if relay_seen else "visible") or (any_connect and not any(
                c.get("by") == "gtid" and c.get("errno") is None for c in v.of_node(node, "connect"))):
            continue  # nothing arrives at it, or never by a GTID connect: nothing to judge (most sources)
        held: set[str] = set()
        # A group the node got whose relay no read saw (a real server's SQL thread applied it and
        # relay_log_purge deleted its relay log between two reads): when it arrived is not known
        unseen = ({o.get("gtid") for k in ("visible", "binlog", "skip") for o in v.of_node(node, k)}
                  - {o.get("gtid") for o in v.of_node(node, "relay")}) if relay_seen else set()
        on_master = on_master_at(v, node, 0)
        by_gtid, source = not any_connect, sources.get(node)
        # what its DO/IGNORE_DOMAIN_IDS dropped never arrives (a trace that cannot see the drops)
        dropped = _gtids_of(v, domain_dropped(v, node))
        if not relay_seen and "filtered" in v.unobserved:  # nor does a group its filters keep from its engine become visible
            dropped |= _gtids_of(v, kept_out(v, node))
        for o in v.of_node(node):
            kind = o["kind"]
            if kind not in _NO_LOSS_KINDS:  # a sample, say (half of what a node has): it moves nothing here
                continue
            if kind == "connect":  # the IO thread asks its source to filter marked events as it connects
                by_gtid, source = o.get("by") == "gtid" and o.get("errno") is None, o["source"]
                on_master = on_master_at(v, node, o["_line"])
                if by_gtid:
                    held |= _asked_past(v, o)
            elif kind == "restore":
                held = set()
            elif kind == "relay":
                source = o.get("source", source)
            arrival = (kind == "relay" and o.get("idx") == 0) if relay_seen else kind == "visible"
            if arrival and by_gtid and source and o.get("gtid") not in held and _gtid(o) is not None:
                prev = _source_order(v, source, on_master).get(o["gtid"])
                if prev is not None and prev not in unseen and prev not in dropped:
                    check.judge(prev in held, lambda: f"{node}: {o['gtid']} arrived from {source} before {prev}, "
                                                      f"logged before it in its domain there", o)
            if kind in held_kinds and o.get("gtid"):
                held.add(o["gtid"])
                if not relay_seen and kind == "visible":  # a polled row is its transaction's: each statement's group of a MyISAM one
                    held |= groups_of.get(o.get("trx"), set())


def _gtids_of(v: TraceView, trxs: set[str]) -> set[str | None]:
    """The GTIDs the commits of these transactions name (None for one that names none)."""
    return {c.get("gtid") for c in v.kind("commit") if c.get("trx") in trxs} if trxs else set()


def _asked_past(v: TraceView, c: dict) -> set[str]:
    """The groups a GTID connect asks past: where it names a GTID its source never logged (a
    position in a hole, set by SET GLOBAL gtid_slave_pos), that server's groups below it in the
    domain, which the dump thread passes over while it searches for the position (sql_repl.cc,
    send_event_to_slave; rpl_gtid_strict.result: row 10 never arrives) by the DBA's choice; and
    where it names the source's own gtid_slave_pos, which its binlog lacks, what _own_pos_past says."""
    def build() -> tuple[list, set[str]]:
        logged = [(o["gtid"], g, o["_line"]) for o in v.of_node(c["source"], "binlog")
                  if o.get("last") and (g := _gtid(o)) is not None]
        return logged, {name for name, _, _ in logged}
    logged, names = v.memo(("domains.logged", c["source"]), build)
    # only a position the source never logged: one it did is a group the replica had (a RESET
    # MASTER that reissues it is judged as the DBA's choice elsewhere)
    asked = {g[0]: g for name, g in ((n, F.parse_gtid(n)) for n in (positions(c.get("gtid_pos") or "") or {}).values())
             if name not in names}
    if not asked:
        return set()
    return ({name for name, g, _ in logged if g[0] in asked and g[1] == asked[g[0]][1] and g[2] < asked[g[0]][2]}
            | _own_pos_past(v, c, asked, logged))


def _own_pos_past(v: TraceView, c: dict, asked: dict[int, tuple[int, int, int]], logged: list) -> set[str]:
    """A GTID the source's binlog state lacks but that is its own gtid_slave_pos (it applied or
    skipped it without logging it) is taken as the source's binlog end in that domain
    (sql_repl.cc, check_slave_start_position, START_OWN_SLAVE_POS): the dump starts at the
    source's own first GTID logged after it (a GTID of its server_id with a higher sequence
    number), else after the domain's last GTID, so the groups the source logged in the domain
    before that, a write of its own before it replicated the position among them, never come."""
    state, slave_pos = _held_before(v, c["source"], c["_line"])
    sid = v.nodes.get(c["source"], {}).get("server_id")
    lost, line = lost_lines(v), c["_line"]
    mine = {d: g for d, g in asked.items() if state.get(g[:2], -1) < g[2] and slave_pos.get(d) == F.gtid(*g)}
    past: set[str] = set()
    for name, g, at in logged:
        if at > line:
            break
        if g[0] in mine and at not in lost:
            if g[1] == sid and g[2] > mine[g[0]][2]:
                del mine[g[0]]
            else:
                past.add(name)
    return past


def _held_before(v: TraceView, source: str, line: int) -> tuple[dict[tuple[int, int], int], dict[int, str]]:
    """What the source held before a line: per (domain, server_id) the highest sequence number in
    its binlog (without what crash recovery cut), and per domain its gtid_slave_pos. One sweep of
    the source per trace, the state kept at each of its connects."""
    def build() -> dict[int, tuple[dict, dict]]:
        lost, sid = lost_lines(v), v.nodes.get(source, {}).get("server_id")
        state: dict[tuple[int, int], int] = {}
        slave_pos: dict[int, str] = {}
        at: dict[int, tuple[dict, dict]] = {}
        asks = iter(sorted(c["_line"] for c in v.kind("connect") if c["source"] == source) + [2**62])
        ask = next(asks)
        for o in v.of_node(source, "binlog", "visible", "stmt", "skip", "filtered"):
            while ask < o["_line"]:
                at[ask], ask = (dict(state), dict(slave_pos)), next(asks)
            if dropped := deleted_domains(o):  # gone from the binlog state: a new domain to a slave asking
                state = {k: n for k, n in state.items() if k[0] not in dropped}
            g = _gtid(o)
            if g is None:
                continue
            if o["kind"] == "binlog" and o.get("last") and o["_line"] not in lost:
                state[g[:2]] = max(state.get(g[:2], 0), g[2])
            elif g[1] != sid and (o["kind"] in ("visible", "filtered") or o.get("reason") == "sql_slave_skip_counter"):
                # a group skipped or filtered records its GTID too (rpl_gtid.cc, record_and_update_gtid)
                slave_pos[g[0]] = o["gtid"]
        while ask < 2**62:
            at[ask], ask = (dict(state), dict(slave_pos)), next(asks)
        return at
    return v.memo(("domains.held_before", source), build)[line]


@checks("DOMAIN.CONNECT.REFUSED")
def connect_refused(v: TraceView, check: Check) -> None:
    """A GTID connect asking, in a domain the source has GTIDs of, for a GTID its binlog does not hold
    (no GTID of that server_id with that sequence number or a later one) is refused with 1236 naming
    that GTID, unless it is the source's own gtid_slave_pos there, or the START SLAVE UNTIL
    master_gtid_pos it connects for stops before it in that domain (the UNTIL leaves the domain out or
    names a GTID the binlog holds: check_slave_start_position takes the domain as reached), or the
    replica runs with gtid_ignore_duplicates and asks for more than the domain's last GTID there (it
    may have had it by another path)."""
    for c in v.kind("connect"):
        asked = positions(c.get("gtid_pos")) if c.get("by") == "gtid" else None
        if not asked:
            continue
        state, slave_pos = _held_before(v, c["source"], c["_line"])
        def holds(g: str) -> bool:
            return state.get(F.parse_gtid(g)[:2], -1) >= F.parse_gtid(g)[2]
        until = _until_of(v, c)
        ahead_ok = bool(configuration.configured(v, c["node"], c["_line"]).get("gtid_ignore_duplicates"))
        last: dict[int, int] = {}  # per domain its highest sequence number: the last one, numbered in order
        for k, n in state.items():
            last[k[0]] = max(last.get(k[0], 0), n)
        missing = [g for d, g in sorted(asked.items())
                   if any(k[0] == d for k in state) and not holds(g) and slave_pos.get(d) != g
                   and not (until is not None and (d not in until or holds(until[d])))
                   and not (ahead_ok and last[d] < F.parse_gtid(g)[2])]
        if missing:
            check.judge(c.get("errno") == F.ER_MASTER_FATAL_ERROR_READING_BINLOG and f"start from GTID {missing[0]}," in c.get("message", ""),
                        f"{c['node']} asked {c['source']} for {missing[0]}, not in its binlog, and was "
                        f"{'accepted' if c.get('errno') is None else 'refused otherwise: ' + c.get('message', '')}", c)


def _until_of(v: TraceView, c: dict) -> dict[int, str] | None:
    """The master_gtid_pos (GTID per domain) of the START SLAVE UNTIL the replica last ran before this
    connect, or None when that START SLAVE had no such UNTIL."""
    started = v.of_node(c["node"], "stmt")
    last = next((o for o in reversed(started.before(c["_line"])) if o.get("op") == "start_slave" and o.get("errno") is None),
                None)
    text = ((last or {}).get("until") or {}).get("master_gtid_pos")
    return None if text is None else positions(text)


@checks("DOMAIN.STRICT")
def strict_mode(v: TraceView, check: Check) -> None:
    """With gtid_strict_mode, a server binlogs a GTID only above its domain's last sequence number
    in its binlog (else the commit, or the SQL thread, fails with 1950). The mode is the server's
    configuration (a restart's options may change it), changed by a SET GLOBAL it took until its next restart."""
    lost = lost_lines(v)
    def setting(o: dict) -> bool:
        return o["kind"] == "stmt" and o.get("op") == "set_global" and o.get("variable") == "gtid_strict_mode" \
            and o.get("errno") is None
    initially = {n: bool(spec.get("variables", {}).get("gtid_strict_mode")) for n, spec in v.nodes.items()}
    for node in sorted(n for n in v.nodes if initially[n] or configuration.reconfigured(v, n)
                       or any(setting(o) for o in v.of_node(n, "stmt"))):
        strict, since = initially[node], None  # since: when the mode last turned on
        last: dict[int, tuple[int, str]] = {}
        for o in v.of_node(node):
            was = strict
            if o["kind"] == "restart":
                strict = bool(configuration.configured(v, node, o["_line"]).get("gtid_strict_mode"))
            elif setting(o):
                strict = str(o.get("value")).upper() in ("1", "ON", "TRUE")
            if strict and not was:
                since = o["t"]
            if o["kind"] == "restore":
                last = {}
            elif o["kind"] == "recovery" and o.get("truncated"):
                last = {}
                for b in v.of_node(node):
                    if b["_line"] >= o["_line"]:
                        break
                    if b["kind"] == "binlog" and b.get("last") and b["_line"] not in lost and _gtid(b):
                        last[_gtid(b)[0]] = (_gtid(b)[2], b["gtid"])
            g = _gtid(o) if o["kind"] == "binlog" and o.get("last") and o["_line"] not in lost else None
            if g is None:
                continue
            before = last.get(g[0])
            if strict and before is not None and before[0] >= g[2] and v.resolution_us and since is not None \
                    and o["t"] - v.resolution_us <= since:
                # a polled binlog event is stamped at the poll that read it: written within the
                # resolution before, it may precede the mode's turning on
                check.undecidable(f"{node} binlogged {o['gtid']} after {before[1]} in domain {g[0]} within "
                                  f"{v.resolution_us / 1e6:g} s of gtid_strict_mode turning on", o)
            elif strict:
                check.judge(before is None or before[0] < g[2],
                            lambda: f"{node} (gtid_strict_mode) binlogged {o['gtid']} after {before[1]} in domain {g[0]}", o)
            last[g[0]] = (g[2], o["gtid"])
