"""Trace properties of crash recovery with global group IDs: every committed group applied exactly
once on every slave (or the slave stops with the documented error), the halt-on-lower-ID rule,
and the last issued group ID found again at start.

Exactly-once reads the `data` observations (how many copies of each client transaction a server
holds once replication is quiet) when the trace has them, as a real server's trace does, and
otherwise counts the groups the SQL thread committed from `apply`/`rollback` observations.
"""
from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from replcheck.spec import formats as F

from .core import Check, TraceView, checks
from .delay_timing import STATE_WAITING
from .filter import kept_out
from .groupid import sampled_positions, current_id, hierarchical, lost_lines, of_node, server_id
from .groupid_shared import by_line, deleted_domains, purged_before_first_dump, starts_new_binlog


def sources_at_end(v: TraceView) -> dict[str, str]:
    """Each slave's master once the history is over: the topology, then promotions, restores and
    CHANGE MASTER TO MASTER_HOST."""
    return _sources(v)[0]


def source_at(v: TraceView, node: str, line: int) -> str | None:
    """The slave's master at that line (None once it is a master itself)."""
    start = v.channels[node]["source"] if node in v.channels else None
    return next((s for at, s in reversed(_sources(v)[2].get(node, [])) if at < line), start)


def _sources(v: TraceView) -> tuple[dict[str, str], dict[str, int], dict[str, list[tuple[int, str | None]]]]:
    """Each slave's master at the end, the line from which it has replicated from it (none
    from the topology), and each change of its master (line, new master)."""
    def build():
        src = {r: c["source"] for r, c in v.channels.items()}
        moves: dict[str, list[tuple[int, str | None]]] = {}

        def move(r: str, to: str | None, line: int) -> None:
            if to is None:
                src.pop(r, None)
            else:
                src[r] = to
            moves.setdefault(r, []).append((line, to))
        # only these kinds move a slave: read in trace order
        for o in sorted([*v.kind("promoted"), *v.kind("restore"), *v.kind("stmt")], key=by_line):
            if o["kind"] == "promoted":
                if o["node"] in src:
                    move(o["node"], None, o["_line"])
                for r, s in list(src.items()):
                    if s == o["old"]:
                        move(r, o["node"], o["_line"])
            elif o["kind"] == "restore":
                move(o["node"], o["source"], o["_line"])
            elif o["kind"] == "stmt" and o.get("op") == "change_master" and o.get("master_host") and o.get("errno") is None:
                move(o["node"], o["master_host"], o["_line"])
        since = {r: m[-1][0] for r, m in moves.items() if r in src}
        return src, since, moves
    return v.memo("recovery.sources", build)


def applied_counts(v: TraceView, node: str) -> Counter:
    """Copies the node committed in its engine (`visible`): local commits, groups its SQL thread
    committed, and those crash recovery committed; less those superseded."""
    return Counter(o["trx"] for o in v.of_node(node, "visible")) - superseded(v, node)


def superseded(v: TraceView, node: str) -> Counter:
    """Copies a group applied again after the DBA set gtid_slave_pos (MariaDB, sys_vars.cc)
    replaces rather than adds to: the DBA asked for it again (rpl_gtid_startpos: the table
    dropped, the position emptied, the binlog fetched anew). So does a RESET SLAVE followed by a
    connect by position: it forgets the place in the source's binlog, and the next start fetches
    the binlog from its beginning (MariaDB RESET SLAVE, "meant to be used for a clean start";
    gtid_slave_pos, which a connect by GTID resumes from, it keeps)."""
    out: Counter = Counter()
    if not any(o.get("op") in ("set_global", "reset_slave") for o in v.of_node(node, "stmt")):
        return out  # no statement that may start a new era: nothing superseded
    era, seen = 0, Counter()
    last_era: dict[str, int] = {}
    connects = v.of_node(node, "connect")
    for o in v.of_node(node, "visible", "stmt"):
        if o["kind"] == "stmt":
            era += o.get("errno") is None and (
                (o.get("op") == "set_global" and o.get("variable") == "gtid_slave_pos")
                or (o.get("op") == "reset_slave" and next((c.get("by") for c in connects.after(o["_line"])), None) == "position"))
            continue
        if last_era.get(o["trx"], era) < era:
            out[o["trx"]] += seen.pop(o["trx"])
        seen[o["trx"]] += 1
        last_era[o["trx"]] = era
    return out


def copies(v: TraceView) -> tuple[dict[str, Counter], dict[str, dict]]:
    """Per node, the copies of each client transaction it holds once replication is quiet, and the
    `data` observation that says so (none when counted from `visible`); made once a trace, for
    every property that reads it (none changes it)."""
    return v.memo("recovery.copies", lambda: _copies(v))


def _copies(v: TraceView) -> tuple[dict[str, Counter], dict[str, dict]]:
    data = {o["node"]: (Counter(o["counts"]) - superseded(v, o["node"]), o) for o in v.kind("data")}
    if data:
        return {n: c for n, (c, _) in data.items()}, {n: o for n, (_, o) in data.items()}
    nodes = {o["node"] for o in v.kind("visible")} | {o["node"] for o in v.kind("apply")}
    return {n: applied_counts(v, n) for n in nodes}, {}


def behind_at_end(v: TraceView, node: str) -> bool:
    """The replica may lag at the end without having lost anything: down, a thread stopped,
    stopped with an error, or still waiting out its MASTER_DELAY (a History may end before an
    event's delay does: a campaign's server replica waited 8 s more for a transaction whose
    timestamp was set in the future)."""
    status = v.of_node(node, "status")
    # the node's last observation of these kinds: the last of each kind's last
    last = max((seq[-1] for k in ("status", "crash", "restart", "restore", "shutdown", "data") if (seq := v.of_node(node, k))),
               key=by_line, default=None)
    if not status or last["kind"] in ("crash", "shutdown"):
        return True
    s = status[-1]
    return (s.get("Slave_SQL_Running") != "Yes" or s.get("Slave_IO_Running") != "Yes"
            or s.get("Slave_SQL_Running_State") == STATE_WAITING)


def binlogged_since_restore(v: TraceView, node: str) -> frozenset[str]:
    """Transactions in the node's binlog (a restore or RESET MASTER replaces the binlog with a fresh
    one; crash recovery may cut its tail; a DELETE_DOMAIN_ID leaves its domains' groups owed to no
    replica). Made once a trace per node, for every property that reads it (none changes it)."""
    def build() -> frozenset[str]:
        out: dict[str, int | None] = {}  # trx -> its GTID domain
        lost = lost_lines(v)
        for o in v.of_node(node, "restore", "stmt", "binlog"):  # what else the node did leaves its binlog as it is
            if o["kind"] == "binlog":  # most of them: no statement test needed
                if o.get("trx") is not None and o.get("last") and o["_line"] not in lost:
                    out[o["trx"]] = (_mariadb_gtid(o.get("gtid")) or (None,))[0]
            elif starts_new_binlog(o):
                out = {}
            elif dropped := deleted_domains(o):
                out = {trx: d for trx, d in out.items() if d not in dropped}
        return frozenset(out)
    return v.memo(("recovery.binlogged_since_restore", node), build)


def _before_chosen_place(v: TraceView, node: str, source: str) -> set[str]:
    """The source's groups that end at or before the place the node's last CHANGE MASTER TO
    MASTER_LOG_FILE/MASTER_LOG_POS pointed it at: the DBA chose to start after them
    (rpl_gtid_deleted_binlog_fail_to_connect: past a purged group, only the later rows)."""
    places = [o for o in v.of_node(node, "stmt") if o.get("op") == "change_master"
              and o.get("master_log_file") and o.get("errno") is None]
    if not places:
        return set()
    place = (F.binlog_number(places[-1]["master_log_file"]), places[-1]["master_log_pos"])
    return {o["trx"] for o in of_node(v, source) if o["kind"] == "binlog" and o.get("trx") is not None and o.get("last")
            and (F.binlog_number(o["file"]), o["end"]) <= place}


def _before_chosen_gtid(v: TraceView, node: str, source: str) -> set[str]:
    """The source's groups the node's last SET GLOBAL gtid_slave_pos put it past (MariaDB): in each
    domain it names, those logged before the statement up to its sequence number (the dump skips
    them, sql_repl.cc send_event_to_slave; rpl_gtid_errorhandling sets 0-1-1 to skip the master's
    first insert)."""
    sets = [o for o in v.of_node(node, "stmt") if o.get("op") == "set_global"
            and o.get("variable") == "gtid_slave_pos" and o.get("errno") is None]
    pos = F.parse_pos(str(sets[-1]["value"]).replace(" ", "")) if sets else None
    if not pos:
        return set()
    seqs = {d: F.parse_gtid(g)[2] for d, g in pos.items()}
    return {o["trx"] for o in of_node(v, source) if o["kind"] == "binlog" and o.get("trx") is not None and o.get("last")
            and o["_line"] < sets[-1]["_line"] and (g := _mariadb_gtid(o.get("gtid"))) and g[2] <= seqs.get(g[0], -1)}


def _gtid_connects(v: TraceView, node: str, since: int) -> list[dict[int, str]]:
    """The GTID positions the node's IO thread connected with after a line: a model's `connect`, a
    server's error-log line saying where replication starts."""
    out = []
    for o in v.of_node(node, "connect", "log"):
        if o["_line"] <= since:
            continue
        if o["kind"] == "connect" and o.get("by") == "gtid" and o.get("errno") is None:
            out.append(F.parse_pos(str(o.get("gtid_pos") or "")))
        elif o["kind"] == "log" and (m := F.CONNECTED_AT_GTID_LOG.search(o["message"])):
            out.append(F.parse_pos(m.group(1)))
    return out


def _passed_over_at_connect(v: TraceView, node: str, source: str) -> set[str]:
    """The source's groups the dump never sends the node: in a domain the node's GTID position
    names, MariaDB's dump skips every group until it meets that position's own (sql/sql_repl.cc,
    send_event_to_slave: "Skip this event group if we have not yet reached slave start pos",
    `event_gtid.server_id != gtid->server_id || event_gtid.seq_no <= gtid->seq_no`), whatever
    server wrote it. So a group the new source wrote itself, lying in its binlog before the
    node's position after a failover, is never sent. Only a group binlogged before the node
    turned to this source, and passed over at every connect since, is not owed: one written
    while the node replicated from it was sent as it was written."""
    since = _sources(v)[1].get(node)
    connects = _gtid_connects(v, node, since) if since is not None else []
    if not connects:
        return set()
    groups: list[tuple[tuple[int, int], dict, tuple[int, int, int]]] = []
    for o in of_node(v, source):
        if starts_new_binlog(o):
            groups = []
        elif o["kind"] == "binlog" and o.get("idx", 0) == 0 and (g := _mariadb_gtid(o.get("gtid"))):
            groups.append(((int(F.binlog_number(o["file"])), o["pos"]), o, g))

    def start(gtid: str) -> tuple[int, int]:
        """Where the dump starts sending the GTID's domain (past the end when not yet written)."""
        d, s, n = F.parse_gtid(gtid)
        return next((at for at, _, g in groups if g[0] == d and g[1] == s and g[2] >= n), (2**62, 0))

    # each connect's start per domain it names, found once (not once per group)
    starts = [{domain: start(gtid) for domain, gtid in pos.items()} for pos in connects]
    out = set()
    for at, o, g in groups:
        if o["_line"] < since and o.get("trx") is not None and all(
                (first := s.get(g[0])) is not None and at < first for s in starts):
            out.add(o["trx"])
    return out


def _mariadb_gtid(text) -> tuple[int, int, int] | None:
    try:
        return F.parse_gtid(text)
    except (ValueError, TypeError, AttributeError):
        return None


@checks("GGID.RECOVERY.EXACTLY_ONCE")
def exactly_once(v: TraceView, check: Check) -> None:
    """Across crashes, restarts, failovers and restores, every group a slave's master binlogged is
    applied on the slave exactly once: never twice; and none missing while the slave replicates
    (a slave stopped, e.g. with error 1643, may lag, never diverge), but those before a place the
    DBA pointed it at, or purged before a first dump that asked for no place."""
    counts, witnesses = copies(v)
    sources = sources_at_end(v)
    binlogged = {n: binlogged_since_restore(v, n) for n in set(sources.values())}
    for node, have in counts.items():
        w = witnesses.get(node, {})
        for trx, n in sorted(have.items()):
            if n != 1 or trx in binlogged.get(sources.get(node), ()):
                check.judge(n <= 1, f"{node} holds {trx} {n} times", *(w and [w]))
        source = sources.get(node)
        if source is None or behind_at_end(v, node):
            continue
        skipped = ({o.get("trx") for o in v.of_node(node, "skip")} | _before_chosen_place(v, node, source)
                   | _before_chosen_gtid(v, node, source) | _passed_over_at_connect(v, node, source) | kept_out(v, node)
                   | purged_before_first_dump(v, node, source))
        for trx in sorted(binlogged.get(source, ()) - skipped):
            if have.get(trx, 0) == 0:
                check.judge(False, f"{node} replicates from {source} but lacks {trx}", *(w and [w]))


@checks("GGID.RECOVERY.HALT")
def halt_on_lower_id(v: TraceView, check: Check) -> None:
    """The SQL thread never plays a group whose ID is not above the last in the slave's binlog: it
    stops with error 1643 and says which IDs (a group replayed after a crash carries the same ID)."""
    hier = hierarchical(v)
    for o in v.kind("apply"):
        if o["node"] in hier and o.get("idx", 0) == 0 and o.get("group_id"):
            last = current_id(v, o["node"], o["_line"])
            check.judge(o["group_id"] > last, f"{o['node']} played group {o['group_id']} ({o.get('trx')}) after {last} was in its binlog", o)
    for o in v.kind("sql_stop"):
        if o.get("errno") == F.ER_SLAVE_GROUP_ID_LOWER:
            last = current_id(v, o["node"], o["_line"])
            said = F.parse_halt_message(o.get("message", ""))
            ok = said is not None and said[1] == last and said[0] <= last
            check.judge(ok, f"{o['node']} stopped with 1643 ({o.get('message')!r}) but its last group ID is {last}", o)


@checks("GGID.RECOVERY.LAST_ID", kinds=("master_status",))
def last_id_recovered(v: TraceView, check: Check) -> None:
    """After a restart (clean or after a crash, even one with only an FDE in the last binlog or a
    crash during recovery) the server's group ID is the last one it issued or played."""
    for r in v.kind("restart"):
        status = next(v.of_node(r["node"], "master_status").after(r["_line"]), None)
        if status is None or "Group_ID" not in status or _last_change(v, r["node"], status["_line"]) > r["_line"]:
            continue  # only a sample taken before the server wrote or lost anything shows what recovery found
        want = current_id(v, r["node"], status["_line"])  # after recovery, which may cut groups away
        check.judge(status["Group_ID"] == want, f"{r['node']} restarted with group ID {status['Group_ID']}, its binlog ends at {want}", r, status)


def _last_change(v: TraceView, node: str, line: int) -> int:
    """The line of the node's last observation before this one that wrote or lost a group."""
    def step(last: int, o: dict) -> int:
        return o["_line"] if o.get("group_id") or o["kind"] in ("crash", "shutdown", "restore") else last
    return v.fold("recovery.last_change", node, (), step, -1).before(line)


# -- binlog durability and crash kinds --------------------------------
# A crash says how it fell (`how`: process, the default, as kill -9; or machine) and the settings
# the server had; a real server's trace may say neither, and then its header's variables tell.
SYNC_BINLOG, FLUSH_LOG = "sync_binlog", "innodb_flush_log_at_trx_commit"


def _setting(v: TraceView, o: dict, name: str) -> int | None:
    return o.get(name, v.nodes.get(o["node"], {}).get("variables", {}).get(name))


def promised(v: TraceView, crash: dict) -> bool:
    """Whether the server promises that this crash loses no commit that returned: a process crash
    unless innodb_flush_log_at_trx_commit = 0 (its log buffer is in the process); a machine crash
    only with sync_binlog = 1 and innodb_flush_log_at_trx_commit = 1 (or MariaDB's 3)."""
    flush = _setting(v, crash, FLUSH_LOG)
    if crash.get("how", "process") == "process":
        return flush != 0
    return _setting(v, crash, SYNC_BINLOG) == 1 and flush in (1, 3)


def _kept(v: TraceView, check: Check, how: str) -> None:
    """Every commit that returned on a node survives the node's later crashes of kind `how`, when
    every crash after it was one the settings promise to survive: the node holds it at the end."""
    data = {o["node"]: o for o in v.kind("data")}
    for c in v.kind("commit"):
        node = c["node"]
        if c.get("errno") is not None or node not in data:
            continue
        hows, all_promised, restored = _downs_after(v, node, c["_line"])
        if how not in hows or not all_promised or restored:
            continue
        check.judge(data[node]["counts"].get(c["trx"], 0) >= 1,
                    f"{node} lost {c['trx']}, whose commit returned before a {how} crash its settings survive", c, data[node])


def _downs_after(v: TraceView, node: str, line: int) -> tuple[frozenset, bool, bool]:
    """Over the node's crashes and restores after a line: the kinds of crash, whether the settings
    promised to survive every crash, whether it was restored."""
    def step(state: tuple[frozenset, bool, bool], o: dict) -> tuple[frozenset, bool, bool]:
        hows, kept, restored = state
        if o["kind"] == "restore":
            return hows, kept, True
        return hows | {o.get("how", "process")}, kept and promised(v, o), restored
    return v.fold("recovery.downs_after", node, ("crash", "restore"), step, (frozenset(), True, False), backward=True).after(line)


@checks("DURABLE.PROCESS_CRASH.NO_LOSS", needs=("data",), kinds=("crash",))
def process_crash_keeps(v: TraceView, check: Check) -> None:
    """No commit that returned is lost by a process crash (unless innodb_flush_log_at_trx_commit = 0)."""
    _kept(v, check, "process")


@checks("DURABLE.MACHINE_CRASH.NO_LOSS", needs=("data",), kinds=("crash",))
def machine_crash_keeps(v: TraceView, check: Check) -> None:
    """With sync_binlog = 1 and innodb_flush_log_at_trx_commit = 1, no commit that returned is lost
    by a machine crash."""
    _kept(v, check, "machine")


class _SinceRestore:
    """What a node's binlog and engine hold since its last restore (a fresh binlog and data), kept
    up to date along its observations: a recovery is judged on it without a look back."""

    def __init__(self, lost: dict[int, int]):
        self.lost = lost
        self.engine_lost: set[str] = set()
        self.visible: set[str] = set()
        self.binlog: set[str] = set()  # whole, untorn, not cut away
        self.candidates: set[str] = set()  # binlogged at all, or committed with a GTID
        self.disagree: set[str] = set()  # candidates in the engine or the binlog, not both
        self.crash: dict | None = None
        self.last_kept: dict | None = None  # the last binlog event not cut away
        self.kept_torn = False
        self.tails: dict[str, dict] = {}  # binlog file -> its last kept event of a transaction

    def _touch(self, trx: str) -> None:
        engine = trx in self.visible and trx not in self.engine_lost
        if trx in self.candidates and engine != (trx in self.binlog):
            self.disagree.add(trx)
        else:
            self.disagree.discard(trx)

    def see(self, o: dict) -> None:
        kind, trx = o["kind"], o.get("trx")
        if kind == "crash":
            self.crash = o
        elif kind == "recovery":
            self.engine_lost |= set(o["engine_lost"])
            for t in o["engine_lost"]:
                self._touch(t)
        elif kind == "visible":
            self.visible.add(trx)
            self._touch(trx)
        elif kind == "commit" and o.get("gtid"):
            self.candidates.add(trx)
            self._touch(trx)
        elif kind == "binlog":
            kept = o["_line"] not in self.lost
            if kept:
                self.last_kept = o
                self.kept_torn = self.kept_torn or bool(o.get("torn"))
            if trx is not None:
                self.candidates.add(trx)
                if kept:
                    self.tails[o["file"]] = o
                    if o.get("last") and not o.get("torn"):
                        self.binlog.add(trx)
                self._touch(trx)


class Recovered(NamedTuple):
    recovery: dict
    crash: dict | None  # the node's last crash since its last restore
    disagree: list[tuple[str, bool]]  # (transaction, in the binlog) in one of engine and binlog only
    candidates: int
    last_kept: dict | None
    tail: dict | None  # the last kept event of a transaction in last_kept's file
    kept_torn: bool


def _recoveries(v: TraceView) -> list[Recovered]:
    """What each recovery's node held since its last restore (the recovery included), in trace order."""
    def build():
        lost, out = lost_lines(v), []
        for node in sorted({r["node"] for r in v.kind("recovery")}):
            held = _SinceRestore(lost)
            for o in v.of_node(node, "restore", "crash", "recovery", "visible", "commit", "binlog"):
                if o["kind"] == "restore":
                    held = _SinceRestore(lost)
                    continue
                held.see(o)
                if o["kind"] == "recovery":
                    last = held.last_kept
                    out.append(Recovered(o, held.crash, [(t, t in held.binlog) for t in sorted(held.disagree)], len(held.candidates),
                                         last, last and held.tails.get(last["file"]), held.kept_torn))
        return sorted(out, key=lambda r: r.recovery["_line"])
    return v.memo("recovery.recoveries", build)


@checks("DURABLE.RECOVERY.AGREE", needs=("recovery",), kinds=("recovery",))
def engine_and_binlog_agree(v: TraceView, check: Check) -> None:
    """After recovery from a crash its settings survive, every transaction the node binlogged or
    its clients committed with a GTID is in both its engine and its binlog, or in neither."""
    for held in _recoveries(v):
        r, node = held.recovery, held.recovery["node"]
        if held.crash is None or not promised(v, held.crash) or not v.nodes.get(node, {}).get("log_bin", True):
            continue
        for trx, in_binlog in held.disagree:
            where = "its binlog, not its engine" if in_binlog else "its engine, not its binlog"
            check.judge(False, f"{node} recovered with {trx} in {where}", r)
        check.passed(held.candidates - len(held.disagree))


@checks("DURABLE.RECOVERY.NO_TORN", needs=("recovery",))
def no_torn_event(v: TraceView, check: Check) -> None:
    """After recovery the binlog ends with a whole group (no torn event, no partial group), and no
    replica is ever sent a torn event."""
    for o in v.kind("relay"):
        if o.get("torn"):
            check.judge(False, f"{o['node']} was sent a torn event of {o.get('trx')}", o)
    for held in _recoveries(v):
        last, tail = held.last_kept, held.tail
        if last is None:
            continue
        whole = not held.kept_torn and (tail is None or bool(tail.get("last")))
        check.judge(whole, f"{held.recovery['node']} recovered with a torn event or a partial group at the end of {last['file']}",
                    held.recovery, *([tail] if tail else []))


@checks("DURABLE.GTID.NO_REUSE", needs=("binlog",))
def gtid_not_reused(v: TraceView, check: Check) -> None:
    """A server never starts a group of its own with a GTID its binlog still holds (one crash
    recovery cut away may be issued again)."""
    lost = lost_lines(v)
    for node in v.nodes:
        own = server_id(v, node)
        held: dict[str, dict] = {}
        cut: set[str] = set()  # the GTIDs held whose group a crash recovery cut away (then or later)
        for o in v.of_node(node, "restore", "recovery", "binlog", "stmt"):
            if o["kind"] != "binlog" and starts_new_binlog(o):
                held, cut = {}, set()
            elif o["kind"] == "stmt":
                if gone := deleted_domains(o):  # the binlogs that held them were purged first
                    held = {g: x for g, x in held.items() if F.parse_gtid(g)[0] not in gone}
            elif o["kind"] == "recovery":
                for g in cut:
                    del held[g]
                cut = set()
            elif o["kind"] == "binlog" and o.get("gtid") and o.get("idx", 0) == 0:
                if o.get("server_id") == own:
                    first = held.get(o["gtid"])
                    check.judge(first is None, f"{node} issued {o['gtid']} again for {o.get('trx')} (first for {first and first.get('trx')})",
                                *([first] if first else []), o)
                held[o["gtid"]] = o
                (cut.add if o["_line"] in lost else cut.discard)(o["gtid"])


@checks("DURABLE.SEND.SYNCED", needs=("relay", "binlog_sync"))
def sends_synced_only(v: TraceView, check: Check) -> None:
    """A source with sync_binlog = 1 sends only what it synced: every event a replica relays from it
    lies before the source's synced end, and no replica relayed a group a crash later cut from
    the source's binlog."""
    strict = {n for n, x in v.nodes.items() if x.get("variables", {}).get(SYNC_BINLOG) == 1}
    if not strict:
        return  # no source to judge
    synced: dict[str, tuple[str, int]] = {}
    for o in sorted([*v.kind("binlog_sync"), *v.kind("relay")], key=by_line):
        if o["kind"] == "binlog_sync":
            synced[o["node"]] = (o["file"], o["end"])
        elif o["kind"] == "relay" and o.get("source") in strict and o.get("master_end") and o.get("trx") is not None:
            at = synced.get(o["source"], ("", 0))
            check.judge((o["master_file"], o["master_end"]) <= at,
                        f"{o['node']} relayed {o['trx']} up to {o['master_file']}:{o['master_end']} while {o['source']} "
                        f"had synced only up to {at[0]}:{at[1]}", o)
    # A recovery as a replica truncates what was in doubt, sent or not (MDEV-21117): no crash loss.
    as_replica = {o["_line"] for o in v.kind("recovery") if o.get("init_rpl_role") == "SLAVE"}
    lost = {b: r for b, r in lost_lines(v).items() if r not in as_replica}
    cut = {(b["node"], b["trx"]): lost[b["_line"]] for b in v.kind("binlog") if b["_line"] in lost and b.get("trx")}
    for o in v.kind("relay"):
        when = cut.get((o.get("source"), o.get("trx")))
        if o.get("source") in strict and when is not None and o["_line"] < when:
            check.judge(False, f"{o['node']} holds {o['trx']}, which {o['source']} lost in its crash", o)


# -- GTID state durability ---------------------------------------------
def _binlog_pos_shown(o: dict) -> str | None:
    """The gtid_binlog_pos an observation shows: a status sample's, or an expectation's reading."""
    if o["kind"] == "server_status":
        return o.get("variables", {}).get("gtid_binlog_pos")
    if o["kind"] == "observed" and o.get("show") == "variables" and isinstance(o.get("value"), dict):
        return o["value"].get("gtid_binlog_pos")
    return None


def _how_started(v: TraceView, restart: dict) -> str | None:
    """How the node went down before this start, as the catalogue's conditions name it."""
    def step(state: tuple[tuple[str, ...], bool], o: dict) -> tuple[tuple[str, ...], bool]:
        downs, removed = state  # the last two ways down, and whether the state file went since the last
        if o["kind"] == "state_file":
            return downs, removed or bool(o.get("removed"))
        return downs[-1:] + (o["kind"],), False
    downs, removed = v.fold("recovery.how_started", restart["node"], ("crash", "shutdown", "state_file"), step, ((), False)).before(restart["_line"])
    if not downs:
        return None
    if downs[-1] == "shutdown":
        return "a clean start without its state file" if removed else "a clean start"
    return "a start after two crashes in a row" if downs == ("crash", "crash") else "a start after a crash"


@checks("DURABLE.GTID.STATE_AT_START", needs=("binlog",))
def gtid_state_at_start(v: TraceView, check: Check) -> None:
    """After each start, the first gtid_binlog_pos the node shows before it logs, loses or restores
    anything is, per domain, the last GTID its binlogs hold once recovery is done: after a clean
    shutdown with or without the .state file (MDEV-6391), after a crash, after two in a row."""
    for r in v.kind("restart"):
        node = r["node"]
        for o in v.of_node(node).after(r["_line"]):
            if o["kind"] in ("crash", "shutdown", "restore", "restart") or (o["kind"] == "binlog" and o.get("gtid")):
                break
            shown = _binlog_pos_shown(o)
            if shown is None:
                continue
            how = _how_started(v, r)
            if how:
                check.reached(how)
            want = sampled_positions(v, o, own_too=True)  # a polled server's: any within its resolution
            check.judge(shown in want, lambda: f"{node} started ({how}) with gtid_binlog_pos {shown!r}, its binlogs end with "
                        f"{' or '.join(map(repr, want))}", r, o)
            break
