"""Replication filters: one check per requirement of spec/requirements/filter.toml.

The rules are stated here again, from the requirements' text, not taken from the model: a
transaction's table (its commit says which, and whether its session set @@skip_replication) and
each node's filter settings in the trace header say what must happen; the binlog, relay, visible,
filtered, skip and server_status observations say what did.
"""
from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import cache

from replcheck.spec import formats as F

from replcheck.spec.vocabulary import FILTER_VARIABLES

from .configuration import configured, reconfigured
from .core import Check, TraceView, checks, seconds

MARKED = "replicate_events_marked_for_skip"
ON_MASTER, PASS_MARKED = "FILTER_ON_MASTER", "REPLICATE"


def _settings(v: TraceView, node: str) -> dict:
    return v.nodes.get(node, {}).get("variables", {})


def _settings_at(v: TraceView, node: str, line: int) -> dict:
    """The node's settings at a trace line: its configuration (with the options its restarts before
    the line started it with), with the filter variables as the last SET GLOBAL it took since it
    (re)started said (MariaDB takes them with the slave stopped)."""
    settings = _settings(v, node)
    for o in _changes(v, node):
        if o["_line"] >= line:
            break
        settings = configured(v, node, o["_line"]) if o["kind"] == "restart" else {**settings, o["variable"]: _taken(o)}
    return settings


def _changes(v: TraceView, node: str) -> list[dict]:
    """The SET GLOBALs of filter variables the node took and its restarts, in order; none when it took
    none and no restart changed its configuration (its configuration holds throughout)."""
    def build() -> list[dict]:
        sets = [o for o in v.of_node(node, "stmt") if o.get("op") == "set_global" and o.get("variable") in FILTER_VARIABLES
                and o.get("errno") is None]
        return sorted(sets + list(v.of_node(node, "restart")), key=lambda o: o["_line"]) if sets or reconfigured(v, node) else []
    return v.memo(f"filter.changes.{node}", build)


def _taken(o: dict) -> object:
    return _enum_name(o.get("value")) if o["variable"] == MARKED else o.get("value")


def _enum_name(value: object) -> str:
    """An enum variable's value as SET GLOBAL names it: the name, or its number in the enum's order."""
    names = (PASS_MARKED, "FILTER_ON_SLAVE", ON_MASTER)
    return names[value] if isinstance(value, int) and 0 <= value < len(names) else str(value).upper()


def _list(settings: dict, name: str) -> set[str]:
    return {x.strip() for x in str(settings.get(name) or "").split(",") if x.strip()}


def _admitted(db: str, settings: dict, prefix: str) -> bool:
    """<prefix>do_db admits only what it names; failing that <prefix>ignore_db keeps out what it names."""
    do, ignore = _list(settings, prefix + "do_db"), _list(settings, prefix + "ignore_db")
    return db in do if do else db not in ignore


def _like(name: str, pattern: str) -> bool:
    return fnmatchcase(name, re.sub(r"[*?\[]", lambda m: f"[{m.group()}]", pattern).replace("%", "*").replace("_", "?"))


def excluded(settings: dict, table: str, marked: bool) -> bool:
    """Whether a replica with these settings must keep this transaction out of its engine."""
    if marked and str(settings.get(MARKED) or PASS_MARKED).upper() != PASS_MARKED:
        return True
    if not _admitted(table.split(".")[0], settings, "replicate_"):
        return True
    verdicts = [(table in _list(settings, "replicate_do_table"), False), (table in _list(settings, "replicate_ignore_table"), True),
                (any(_like(table, p) for p in _list(settings, "replicate_wild_do_table")), False),
                (any(_like(table, p) for p in _list(settings, "replicate_wild_ignore_table")), True)]
    first = next((out for matched, out in verdicts if matched), None)  # the first rule that names the table decides
    if first is not None:
        return first
    return bool(_list(settings, "replicate_do_table") or _list(settings, "replicate_wild_do_table"))


def _commits(v: TraceView) -> dict[str, dict]:
    """trx -> its successful commit on the server that ran it, where the commit names its table."""
    return v.memo("filter.commits", lambda: {c["trx"]: c for c in v.kind("commit")
                                             if c.get("errno") is None and c.get("table") and c.get("trx")})


def unlogged(v: TraceView) -> set[str]:
    """The transactions their source's binlog-do/ignore-db rules keep out of its binlog."""
    return v.memo("filter.unlogged", lambda: {
        trx for trx, c in _commits(v).items() if not _admitted(c["table"].split(".")[0], _settings(v, c["node"]), "binlog_")})


def kept_out(v: TraceView, node: str) -> frozenset[str]:
    """The transactions a replica's filters keep from its engine: under any settings it had (its
    configuration, a restart's, what it took by SET GLOBAL; when a group was sent or read is not
    asked here). Found once per node: several properties ask it per sample or per node (shared:
    not to be changed)."""
    def build() -> frozenset[str]:
        seen = [_settings(v, node)] + [_settings_at(v, node, o["_line"] + 1) for o in _changes(v, node)]
        # every commit that names its table: one that returned an error may still have been binlogged
        # (a shutdown while it waited for its semi-sync ack: 1053) and replicated
        tables = v.memo("filter.tables", lambda: {c["trx"]: c for c in v.kind("commit") if c.get("table") and c.get("trx")})

        @cache  # a History's commits name a few tables: each judged once
        def kept(table: str, marked: bool) -> bool:
            return any(excluded(s, table, marked) for s in seen)
        return frozenset({trx for trx, c in tables.items() if kept(c["table"], bool(c.get("skip_replication")))} | domain_dropped(v, node))
    return v.memo(("filter.kept_out", node), build)


def domain_dropped(v: TraceView, node: str) -> set[str]:
    """The transactions of a GTID domain the node's CHANGE MASTER TO DO_DOMAIN_IDS / IGNORE_DOMAIN_IDS
    kept out under any lists it had (its IO thread drops them: MariaDB slave.cc queue_event,
    Domain_id_filter in rpl_mi.cc)."""
    def build() -> set[str]:
        do, ignore, out = (), (), set()
        for o in v.of_node(node, "stmt"):
            if o.get("op") != "change_master" or o.get("errno") is not None:
                continue
            do, ignore = o.get("do_domain_ids", do), o.get("ignore_domain_ids", ignore)
            out |= {("ignore", d) for d in ignore} | ({("do", tuple(do))} if do else set())
        if not out:
            return set()

        def dropped(domain: int) -> bool:
            return any((kind == "ignore" and x == domain) or (kind == "do" and domain not in x) for kind, x in out)
        return {c["trx"] for c in v.kind("commit") if c.get("trx") and c.get("gtid") and c.get("errno") is None
                and dropped(int(c["gtid"].split("-")[0]))}
    return v.memo(("filter.domain_dropped", node), build)


def ignores_marked_at(v: TraceView, node: str, line: int) -> bool:
    """Whether the node filtered marked events (on the slave or the master) at this trace line."""
    return str(_settings_at(v, node, line).get(MARKED) or PASS_MARKED).upper() != PASS_MARKED


def on_master_at(v: TraceView, node: str, line: int) -> bool:
    """Whether the node filtered marked events on the master at this trace line."""
    return str(_settings_at(v, node, line).get(MARKED) or "").upper() == ON_MASTER


def unsent(v: TraceView, commit: dict, binlog: dict) -> bool:
    """A marked transaction whose master's semi-sync replicas all filter marked events on the master."""
    if not commit.get("skip_replication"):
        return False
    # a semi-sync replica as its configuration stood at the binlog write, where the wait begins: a
    # restart may have turned it off, or on while the commit waited for want of any semi-sync replica
    # (a wait the filter does not cause: seed 658843's History 3, B semi-sync only from 1.9 s)
    line = min(commit["_line"], binlog["_line"])
    semi = [r for r, c in v.channels.items() if c.get("source") == commit["node"]
            and _settings_at(v, r, line).get("rpl_semi_sync_slave_enabled")]
    return bool(semi) and all(str(_settings_at(v, r, line).get(MARKED) or "").upper() == ON_MASTER for r in semi)


@checks("FILTER.BINLOG.DB", needs=("binlog",))
def binlog_db_rules(v: TraceView, check: Check) -> None:
    """A source with binlog-do/ignore-db binlogs exactly the transactions on the databases they admit."""
    ruled = {n for n in v.nodes if _list(_settings(v, n), "binlog_do_db") or _list(_settings(v, n), "binlog_ignore_db")}
    if not ruled:  # most Traces: no source has such rules, no binlog to gather
        return
    logged = {(b["node"], b.get("trx")) for b in v.kind("binlog") if b.get("trx")}
    for c in _commits(v).values():
        if c["node"] not in ruled:
            continue
        want = _admitted(c["table"].split(".")[0], _settings(v, c["node"]), "binlog_")
        got = (c["node"], c["trx"]) in logged
        check.judge(want == got, f"{c['node']} {'did not binlog' if want else 'binlogged'} {c['trx']} on {c['table']}", c)


@checks("FILTER.MASTER.NOT_SENT", needs=("relay",))
def marked_not_sent(v: TraceView, check: Check) -> None:
    """No event a @@skip_replication session wrote reaches a FILTER_ON_MASTER replica's relay log."""
    marked = [b for b in v.kind("binlog") if b.get("skip_replication") and b.get("trx")]
    if not marked:  # most Traces: no marked event, no relay log to gather
        return
    relayed: dict[tuple, list[dict]] = {}
    for r in v.kind("relay"):
        if r.get("trx"):
            relayed.setdefault((r["node"], r["trx"], r.get("idx")), []).append(r)
    def on_master(replica: str, o: dict) -> bool:
        # the setting the replica's IO thread connected with: what it had when the event arrived
        return str(_settings_at(v, replica, o["_line"]).get(MARKED) or "").upper() == ON_MASTER
    for b in marked:
        for replica, ch in v.channels.items():
            if ch.get("source") != b["node"]:
                continue
            copies = relayed.get((replica, b["trx"], b.get("idx")), [])
            if on_master(replica, b) or any(on_master(replica, r) for r in copies):
                got = [r for r in copies if on_master(replica, r)]
                check.judge(not got, f"{b['node']} sent event {b.get('idx')} of marked {b['trx']} to {replica}, "
                            f"which filters marked events on the master", b, *got[:1])


@checks("FILTER.REPLICA.NOT_APPLIED", needs=("visible",))
def filtered_not_applied(v: TraceView, check: Check) -> None:
    """A replica never commits a transaction its filters exclude."""
    commits = _commits(v)
    for o in v.kind("visible"):
        c = commits.get(o.get("trx"))
        if c is None or o["node"] == c["node"] or o["node"] not in v.channels:
            continue
        out = excluded(_settings_at(v, o["node"], o["_line"]), c["table"], bool(c.get("skip_replication")))
        check.judge(not out, f"{o['node']} committed {c['trx']} on {c['table']}"
                    f"{' (marked)' if c.get('skip_replication') else ''}, which its filters exclude", o, c)


@checks("FILTER.GTID.ADVANCES", needs=("server_status",), kinds=("filtered",))
def gtid_past_filtered(v: TraceView, check: Check) -> None:
    """After the SQL thread passed a filtered group, gtid_slave_pos shows it or a later GTID in its domain."""
    for f in v.kind("filtered"):
        if not f.get("gtid"):
            continue
        domain, _, seq = F.parse_gtid(f["gtid"])
        after = next((s for s in v.of_node(f["node"], "server_status").after(f["_line"]) if "gtid_slave_pos" in s.get("variables", {})), None)
        if after is None:
            continue
        pos = F.parse_pos(after["variables"]["gtid_slave_pos"] or "")
        shown = F.parse_gtid(pos[domain])[2] if domain in pos else None
        check.judge(shown is not None and shown >= seq, f"{f['node']} filtered {f['trx']} ({f['gtid']}), "
                    f"then showed gtid_slave_pos {after['variables']['gtid_slave_pos']!r}", f, after)


@checks("FILTER.SEMISYNC.UNSENT", needs=("binlog",))
def unsent_not_waited(v: TraceView, check: Check) -> None:
    """A commit sent to no semi-sync replica returns at its binlog write, without a timeout."""
    if not any(c.get("skip_replication") for c in _commits(v).values()):
        return  # only a marked transaction goes unsent (unsent): most Traces have none
    ends = {(b["node"], b.get("trx")): b for b in v.kind("binlog") if b.get("last") and b.get("trx")}
    timeouts = {(o["node"], m.group(1), int(m.group(2))): o for o in v.kind("log") if (m := F.SEMISYNC_TIMEOUT_LOG.search(o["message"]))}
    for c in _commits(v).values():
        b = ends.get((c["node"], c["trx"]))
        if b is None or not unsent(v, c, b) or not _settings(v, c["node"]).get("rpl_semi_sync_master_enabled"):
            continue
        timeout = timeouts.get((c["node"], b["file"], b["end"]))
        waited = c["t"] - b["t"]
        check.judge(timeout is None and waited <= v.resolution_us,
                    f"{c['node']} held the commit of {c['trx']}, sent to no semi-sync replica, {seconds(waited)}"
                    f"{' until the semi-sync timeout' if timeout else ''}", c, b, *([timeout] if timeout else []))


@checks("FILTER.SKIP_COUNTER", needs=("skip",), kinds=("skip",))
def skip_counter_not_marked(v: TraceView, check: Check) -> None:
    """The skip counter counts no event of a marked group the replica ignores."""
    commits = _commits(v)
    runs: dict[tuple[str, int], list[tuple[dict, bool]]] = {}  # a counter's run: its skips, stamped alike
    for o in v.kind("skip"):
        c = commits.get(o.get("trx"))
        if o.get("reason") != "sql_slave_skip_counter" or c is None:
            continue
        ignored = c.get("skip_replication") and str(_settings_at(v, o["node"], o["_line"]).get(MARKED) or PASS_MARKED).upper() != PASS_MARKED
        runs.setdefault((o["node"], o["t"]), []).append((o, bool(ignored)))
    for run in runs.values():
        # A Trace that does not observe filtering gives every event a counter's run passed over to
        # the counter: an ignored marked group inside it was maybe not counted. The run proves it was
        # only where nothing else in it could have been (a real server's B: a counter of 2 passed
        # marked t6 and MyISAM t7, as it would have without counting t6).
        unsure = "filtered" in v.unobserved and not all(ignored for _, ignored in run)
        for o, ignored in run:
            if not (ignored and unsure):
                check.judge(not ignored, f"{o['node']}'s sql_slave_skip_counter counted event {o.get('idx')} of marked "
                            f"{o['trx']}, which it ignores anyway", o, commits[o["trx"]])
