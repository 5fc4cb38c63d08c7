"""What the runner gathers once a History has run: every binlog (each event placed in time by the
samples that bound it), the applies, the skips SQL_SLAVE_SKIP_COUNTER made, and the rows on each node."""
from __future__ import annotations

import math
import os
import re
from typing import TYPE_CHECKING

from replcheck.spec import vocabulary as V
from replcheck.harness import binlog_events as E, binlog_history as H, relaylog
from replcheck.harness.errors import HarnessError, SqlError
from replcheck.harness.sqlclient import sql_quote
from replcheck.harness.observe import NOT_IN_GROUP, Link, links_of
from replcheck.harness.ops import CR_SERVER_LOST, PURGES_RELAY_LOGS
from replcheck.harness.statements import LOG_FILE
from replcheck.spec import formats as F
from replcheck.spec.formats import ER_STMT_CACHE_FULL, US

if TYPE_CHECKING:
    from replcheck.harness.runner import Runner


# The SQL thread's note once SQL_SLAVE_SKIP_COUNTER ran out (handle_slave_sql, sql/slave.cc): where
# it was when the skipping began and where it is now. Every relayed event in between was passed
# over, and those the counter counts were skipped (see _emit_skips).
SKIP_LOG = re.compile(r"^'SQL_SLAVE_SKIP_COUNTER=\d+' executed at relay_log_file='([^']*)', relay_log_pos='(\d+)'"
                      r".* and new position at relay_log_file='([^']*)', relay_log_pos='(\d+)'")


# Passed over without counting (their do_shall_skip ignores them: log_event_server.cc), as the model's
# SKIP_EXEMPT; a Binlog_checkpoint changes nothing on a replica and the model has none.
NOT_SKIPPED = frozenset({"ROTATE_EVENT", "FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT", "BINLOG_CHECKPOINT_EVENT"})


# A Gtid event's GTID in its SHOW BINLOG EVENTS Info.
GTID_IN_INFO = re.compile(r"\b\d+-\d+-\d+\b")


# The text of a statement trx_statement built, in a binlog event: the transaction's number, and its
# statement's (part: a MyISAM transaction's statements are groups of their own).
OWN_TEXT = re.compile(r"INSERT INTO rc\.[rm] \(k, part, pad(?:, u)?\) VALUES \((\d+), (?:(\d+)|NULL), |CREATE TABLE rc\.d(\d+) ")


class Collector:
    """Reads what the run left on the servers once it is over."""

    def __init__(self, run: "Runner"):
        self.run = run
        self._binlogs_kept: dict[tuple[str, str], list[dict]] = {}  # (node, file) -> its events, read before a purge
        # node -> (when a start of it began, the binlog files it had written by then): every start opens a
        # new binlog file (MYSQL_BIN_LOG::open at server start, sql/log.cc), so what lies in a later file
        # was written by a later life of the server
        self._starts: dict[str, list[tuple[int, frozenset[str]]]] = {}

    def note_start(self, node: str, t: int) -> None:
        """The node (down) is about to start at t: the binlog files it has written so far, by name in
        its binlog history, those a purge removed included."""
        h = len(self.run.binlog_resets.get(node, []))
        files = {H.named(f, h) for f in self.binlog_files(node)} | {f for n, f in self._binlogs_kept if n == node}
        self._starts.setdefault(node, []).append((t, frozenset(files)))

    def _written_after(self, node: str, ev: dict) -> float:
        """The start of the server that wrote the event's file (-inf: its first). After a crash recovery
        truncated a group in doubt and the node fetched it back as a replica (MDEV-21117), the copy
        shares the GTID, the server id and the timestamp of the group the crash left: only its
        file tells the two writes apart."""
        name = H.named(ev["file"], ev.get("_h", len(self.run.binlog_resets.get(node, []))))
        return max((t for t, files in self._starts.get(node, ()) if name not in files), default=-math.inf)

    def collect_binlogs(self) -> None:
        """Every node's binlog (a node down at the end: its files as the crash or shutdown left them
        on disk). When each event was written is bounded by the samples:
        after the last poll whose gtid_binlog_pos lacked it, by the first that had it. Each group
        is placed at that first poll, earlier if a replica already had its copy or its client's
        COMMIT returned first, and never after a later event of the same binlog."""
        logs: dict[str, list[dict]] = {}
        for node in self.run.node_ids:
            logs[node] = self._read_binlog(node)
            for ev in logs[node]:
                ev["_after"] = self._written_after(node, ev)
        H.name_histories(self.run, logs)
        parts: dict[int, dict[int, str]] = {}  # k -> its statements' groups in its origin's binlog, by part
        for events in logs.values():
            for ev in events:
                k, part = ev.pop("_k", None), ev.pop("_part", 0)
                if k is not None and k < len(self.run.trx_names) and self.run.by_server_id.get(ev["server_id"]) == self.run.origin_of[k]:
                    parts.setdefault(k, {}).setdefault(part, ev["gtid"])
                if (k is not None and k < len(self.run.trx_names) and k not in self.run.gtid_of and ev["gtid"]
                        and self.run.returned.get(k, (0, CR_SERVER_LOST))[1] is not None
                        and self.run.by_server_id.get(ev["server_id"]) == self.run.origin_of[k]):
                    # Its COMMIT never returned (the server died under it), or its statement failed after
                    # changing a MyISAM table (binlogged all the same): its origin's binlog has its GTID.
                    self.run.gtid_of[k] = ev["gtid"]
                    if k in self.run.commits:
                        self.run.commits[k]["gtid"] = ev["gtid"]
        statements = self._statement_groups(parts)
        trx_of_gtid = {g: self.run.trx_names[k] for k, g in [*self.run.gtid_of.items(), *((k, g) for g, k in statements.items())] if g}
        k_of_gtid = {g: k for k, g in self.run.gtid_of.items() if g}
        for events in logs.values():
            for ev in events:
                ev["trx"] = trx_of_gtid.get(ev["gtid"]) if ev["gtid"] else None
        with self.run.lock:
            for _, _, o in self.run.obs:
                if o["kind"] == "relay" and o["gtid"]:
                    o["trx"] = trx_of_gtid.get(o["gtid"])
        at: dict[tuple[str, str], int] = {}
        for node in sorted(logs, key=self._depth, reverse=True):  # replicas first: a source wrote no later
            # each replica's links to the node, from when they were pointed at it: a copy it wrote
            # before came from another source (seed 11's History 23: R held t6 from M, then a
            # failover pointed R at B, whose SQL thread applied t6 two seconds later)
            replicas = [(r, self.run.source_since.get((r, conn), 0)) for (r, conn), src in self.run.sources.items()
                        if src == node and r in logs]
            for ev in logs[node]:
                if ev["type"] != "GTID_LOG_EVENT" or (node, ev["gtid"]) in at:
                    continue
                g, after = ev["gtid"], ev["_after"]
                # Visible on the node (a poll's or a read's row) means committed, so binlogged: the
                # binlog write comes before the engine commit (MariaDB's two-phase commit, log.cc).
                k = k_of_gtid.get(g)
                bounds = [self._logged_by(node, g, after), self.run.seen.get((node, k)), self.run.read_seen.get((node, k))]
                k = statements.get(g, k)  # a later statement's group: its row is not the one polled
                bounds += [x for r, since in replicas if (x := at.get((r, g))) is not None and x >= since]
                if self.run.by_server_id.get(ev["server_id"]) == node and k in self.run.returned:
                    bounds.append(self.run.returned[k][0])
                if self.run.by_server_id.get(ev["server_id"]) == node and k in self.run.commits:
                    # Still in its binlog after the node went down: written before it did.
                    began, seen = self.run.commits[k]["start"], bounds[0]
                    bounds.append(next((d for d in self.run.downs.get(node, []) if began < d and (seen is None or d < seen)), None))
                    # Its own transaction is written once its commit has begun: a bound before that proves an
                    # earlier holder of the GTID (seed 2's History 137: A's t3, begun at 13.76 s after a crash
                    # and a FLUSH LOGS, was placed at 13.0 s, and the events before it with it).
                    bounds = [x for x in bounds if x is None or x >= began]
                # a bound from before the start that wrote its file is of a group a crash recovery cut
                bounds = [x for x in bounds if x is None or x >= after]
                if any(x is not None for x in bounds):
                    at[(node, g)] = min(x for x in bounds if x is not None)
        for node, events in logs.items():
            # Where incidents come from, in order: failing transactions, placed when their statement
            # returned (after the change it lost, as the models have it), and record_incident's statements
            # (s), placed with the statement, when it was sent; written: the interval it was written in.
            failed = sorted([(t, self.run.commits[k]["start"], t, None) for k, (t, errno) in self.run.returned.items()
                             if errno == ER_STMT_CACHE_FULL and self.run.origin_of[k] == node]
                            + [(s["t"], s["t"], s["t"] + s["duration_us"], s) for s in self.run.incidents.get(node, [])],
                            key=lambda x: x[0])
            times: list[int | None] = []
            for ev in events:
                if ev["type"] == "INCIDENT_EVENT":  # written by the failing statement before it returned
                    t, lo, hi, stmt = failed.pop(0) if failed else (None, None, None, None)
                    if stmt is not None:
                        stmt["message"] = ev.get("message", "")
                    if t is not None:
                        ev["written"] = [lo, hi]
                    times.append(t)
                elif ev["idx"] == 0:
                    times.append(at.get((node, ev["gtid"])) if ev["gtid"] else None)
                else:
                    times.append(times[-1])
            later = None
            for i in range(len(times) - 1, -1, -1):  # no later than what followed it
                if times[i] is not None and (later is None or times[i] < later):
                    later = times[i]
                times[i] = later
            last = 0
            for t, ev in zip(times, events):
                after = ev.pop("_after")
                last = max(last, after) if t is None else max(last, t, after)
                # When the server wrote it, by its own record: the event's timestamp (whole seconds), for
                # an event it originated by its clock (a replica's copy keeps its origin's, SET TIMESTAMP
                # its own; so does its own group fetched back after a recovery cut it: stamped before its file)
                own = self.run.by_server_id.get(ev["server_id"]) == node and ev["trx"] not in self.run.set_timestamp
                if own and ev["when"] and "written" not in ev:
                    written = self.run.server_interval(node, ev["when"] * US, US)
                    if written[1] > after:
                        ev["written"] = written
                if ev.get("written"):  # no earlier than its own record (a rotation's events after an incident's statement began)
                    last = max(last, ev["written"][0])
                self.run.emit("binlog", node, last, **ev)
        self._emit_applies()
        self._emit_statement_applies(logs, parts, statements)
        self._emit_skips()
        with self.run.lock:
            H.restore([o for _, _, o in self.run.obs])
        self.run.gtid_of = {k: H.real(g) for k, g in self.run.gtid_of.items()}

    def _emit_statement_applies(self, logs: dict[str, list[dict]], parts: dict[int, dict[int, str]],
                                statements: dict[str, int]) -> None:
        """Each later statement group of a MyISAM transaction becomes visible, and is applied on a
        replica, when a poll first found its row (the polls' relay-log place then)."""
        for (node, k, part), (t, (relay_file, relay_pos)) in sorted(self.run.seen_parts.items(), key=lambda x: x[1][0]):
            if (g := parts.get(k, {}).get(part)) not in statements:
                continue
            origin = self.run.origin_of[k]
            if node == origin and self.run.returned.get(k, (t, CR_SERVER_LOST))[1] != CR_SERVER_LOST:
                t = min(t, self.run.returned[k][0])  # visible once its COMMIT returned
            self.run.emit("visible", node, t, trx=self.run.trx_names[k], gtid=g)
            if node == origin or (src := self.run.sources.get((node, None))) is None:
                continue
            with self.run.lock:
                relayed = [o for _, _, o in self.run.obs if o["kind"] == "relay" and o["node"] == node and o["gtid"] == g]
            for b in (ev for ev in logs.get(origin, []) if ev["gtid"] == g):
                # where it was read: its copy relayed by then (stamped up to a poll late: else the first)
                copies = [r for r in relayed if r["idx"] == b["idx"]]
                r = next((c for c in reversed(copies) if c["t"] <= t), copies[0] if copies else None)
                self.run.emit("apply", node, t, source=src, type=b["type"], trx=b["trx"], idx=b["idx"], last=b["last"],
                              gtid=g, server_id=b["server_id"], when=(r or b)["when"], ict=None, read=None, begin=None,
                              relay_file=r["file"] if r else relay_file, relay_pos=r["pos"] if r else relay_pos)

    def _statement_groups(self, parts: dict[int, dict[int, str]]) -> dict[str, int]:
        """A non-transactional transaction's statements are binlogged each at its end as a group of its
        own (the statement cache: binlog_commit_flush_stmt_cache, sql/log.cc), and @@last_gtid names
        the last. The transaction is its first statement's group, whose row the polls count; each
        other group gets the commit its statement returned (placed when the COMMIT did, no later).
        Returns those other groups' transaction numbers, by GTID."""
        later: dict[str, int] = {}
        for k, groups in parts.items():
            if len(set(groups.values())) < 2 or k not in self.run.commits:
                continue
            commit = self.run.commits[k]  # the COMMIT's answer: its last group's (@@last_gtid)
            self.run.gtid_of[k] = groups[min(groups)]
            variables = self.run.history["header"]["topology"]["nodes"][self.run.node_ids.index(commit["node"])].get("variables", {})
            # AFTER_COMMIT waits at the transaction's end only (is_real_trans, Repl_semi_sync_master::wait_after_commit)
            statement = "statement" if variables.get("rpl_semi_sync_master_enabled") and variables.get(
                "rpl_semi_sync_master_wait_point", "AFTER_COMMIT") == "AFTER_COMMIT" else None
            fields = {f: v for f, v in commit.items() if f not in ("t", "kind", "node", "gtid", "semisync", "errno", "message")}
            for g in dict.fromkeys(g for _, g in sorted(groups.items())):
                if g != self.run.gtid_of[k]:
                    later[g] = k
                if g != commit["gtid"]:
                    self.run.emit("commit", commit["node"], commit["t"], **fields, gtid=g, semisync=statement)
        return later

    def binlog_files(self, node: str) -> list[str]:
        c = self.run.cluster
        if c.is_running(node):
            return [r[0] for r in c.sql(node, "SHOW BINARY LOGS")]
        try:  # down: its index (--log-bin=<dir>/bin), which SHOW BINARY LOGS lists
            with open(os.path.join(c.binlog_dir(node), "bin.index")) as f:
                return [os.path.basename(line.strip()) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def keep_binlogs(self, node: str, every: bool = False) -> list[str]:
        """Before a purge: the events of every closed binlog file (the active one is never purged);
        before a RESET MASTER (`every`), of every file. So the trace still shows what was written.
        Each is kept under its name in the node's binlog history (file names begin again after a
        reset). Returns the files listed."""
        files = self.binlog_files(node)
        h = len(self.run.binlog_resets.get(node, []))
        for f in files if every else files[:-1]:
            if (node, H.named(f, h)) not in self._binlogs_kept and LOG_FILE.match(f):
                self._binlogs_kept[(node, H.named(f, h))] = [{**ev, "_h": h} for ev in self._read_binlog_file(node, f)]
        return files

    def _read_binlog(self, node: str) -> list[dict]:
        """Every binlog file the node wrote, in order: those a purge or a reset removed as read before
        it. Each event's `_h`: the node's binlog history it was written in."""
        files = self.binlog_files(node)
        h = len(self.run.binlog_resets.get(node, []))
        gone = [f for n, f in self._binlogs_kept if n == node and (H.history(f) < h or H.real(f) not in files)]
        events: list[dict] = [dict(ev) for f in gone for ev in self._binlogs_kept[(node, f)]]
        for f in (f for f in files if LOG_FILE.match(f)):
            kept = self._binlogs_kept.get((node, H.named(f, h)))
            events += [{**ev, "_h": h} for ev in self._read_binlog_file(node, f)] if kept is None else [dict(ev) for ev in kept]
        return events

    def _read_binlog_file(self, node: str, f: str) -> list[dict]:
        """SHOW BINLOG EVENTS of one binlog file, grouped into transactions. An event whose text
        (Annotate_rows, a statement) is one the runner built carries its transaction number as _k."""
        c = self.run.cluster
        events: list[dict] = []
        path = os.path.join(c.binlog_dir(node), f)
        rows = c.sql(node, f"SHOW BINLOG EVENTS IN {sql_quote(f)}") if c.is_running(node) else self._rows_on_disk(node, f, path)
        whens = E.header_timestamps(path, [int(r[1]) for r in rows])
        group: list[dict] = []
        for log, pos, etype, sid, end, info in rows:
            ev = {"type": F.SHOWN_EVENT_TYPES.get(etype, etype.upper() + "_EVENT"), "trx": None, "idx": 0, "last": False,
                  "gtid": None, "server_id": int(sid), "when": whens.get(int(pos), 0), "ict": None,
                  "file": log, "pos": int(pos), "end": int(end)}
            if etype == "Gtid":
                E.close_group(group)
                # 'BEGIN GTID 0-1-2' or 'GTID 0-1-2', with more after it in a group commit (not the last word)
                gtid = GTID_IN_INFO.search(info).group(0)
                group = [ev]
                ev.update(gtid=gtid)
            elif group and etype not in NOT_IN_GROUP:
                ev.update(gtid=group[0]["gtid"], idx=len(group))
                if etype in ("Annotate_rows", "Query") and (m := OWN_TEXT.search(info or "")):
                    ev["_k"], ev["_part"] = int(m.group(1) or m.group(3)), int(m.group(2) or 0)
                group.append(ev)
            else:
                E.close_group(group)
                group = []
                if etype == "Incident":
                    ev.update(E.incident_body(path, int(pos)))
            events.append(ev)
        E.close_group(group)
        return events

    def _rows_on_disk(self, node: str, f: str, path: str) -> list[tuple]:
        """A down node's binlog file as SHOW BINLOG EVENTS would list it (file, position, type,
        server id, end, info), read with mariadb-binlog: of the info, what the grouping reads (a Gtid's
        GTID; the statement text in an Annotate_rows or a Query, from the event's own bytes)."""
        events, complaint = relaylog.read_file(self.run.binlog_tool, path)
        if complaint:
            self.run.notes.append(f"binlog of {node} (down at the end) read up to {f}:{events[-1].end if events else 4}: {complaint}")
        return [(f, ev.pos, ev.name, ev.server_id, ev.end,
                 ev.post.decode("utf-8", "replace") if ev.name in ("Annotate_rows", "Query") else ev.text) for ev in events]

    def _depth(self, node: str) -> int:
        """Hops from the top of its chain (a source's binlog is read before its replicas')."""
        depth, seen = 0, {node}
        while (node := self._source_of(node)) is not None and node not in seen:
            depth, seen = depth + 1, seen | {node}
        return depth

    def _source_of(self, node: str) -> str | None:
        """The node's source; of a multi-source replica, the source of its deepest chain."""
        sources = [src for (r, _), src in self.run.sources.items() if r == node]
        return max(sources, key=self._depth) if len(sources) > 1 else (sources or [None])[0]

    def _logged_by(self, node: str, gtid: str, after: float = -math.inf) -> int | None:
        """The first poll from `after` on whose gtid_binlog_pos has the GTID. MariaDB puts a GTID there as it takes it,
        before its group reaches the file (seen while a write waited a minute for space): a poll in
        a window where the node's binlog disk was full, or its write's retry still due, proves nothing."""
        domain, server_id, seq = F.parse_gtid(H.real(gtid))
        h, origin = H.history(gtid), self.run.by_server_id.get(server_id)
        resets = self.run.binlog_resets.get(origin, []) if node == origin else []
        if h and node != origin:
            return None  # a replica's gtid_binlog_pos may still hold the earlier history's higher GTID
        # on its origin, only the polls of the GTID's own binlog history: the next one numbers from 1 again
        since, until = resets[h - 1] if h else -math.inf, resets[h] if h < len(resets) else math.inf

        def has(pos: dict[int, str]) -> bool:
            # the domain's last GTID, of the same server and no earlier: another server's in the
            # domain says nothing of this one (seed 1's History 27: C's own 0-3-2 is no 0-1-1)
            shown = F.parse_gtid(pos[domain]) if domain in pos else None
            return shown is not None and shown[1] == server_id and shown[2] >= seq
        t = next((t for t, pos in self.run.binlog_pos.get(node, []) if max(since, after) <= t < until and has(pos)), None)
        return None if t is not None and any(lo <= t <= hi for lo, hi in self.run.faults.unwritten.get(node, ())) else t

    def _emit_applies(self) -> None:
        """A replica's execution of each transaction, as seen: at the first poll that found its row,
        with the SQL thread's relay-log position at that poll. Events as its relay log holds them
        (else the origin's binlog's)."""
        events: dict[str, list[dict]] = {}
        # (replica, connection, gtid, idx) -> its relay observations; (replica, connection) -> when a
        # START SLAVE threw its relay logs away
        relayed: dict[tuple[str, str | None, str, int], list[dict]] = {}
        purged: dict[Link, list[int]] = {}
        samples: dict[Link, list[dict]] = {}  # a named connection's status samples
        stops: dict[Link, list[tuple[int, bool]]] = {}  # the SQL thread's stops (True) and starts (False), in order
        with self.run.lock:
            for _, _, o in sorted(self.run.obs, key=lambda x: x[:2]):
                if o["kind"] == "sql_stop":
                    stops.setdefault((o["node"], o.get("connection")), []).append((o["t"], True))
                elif o["kind"] == "restart" or (o["kind"] == "stmt" and o["op"] in ("start_slave", "start_all_slaves")):
                    for link in links_of(self.run.sources, o["node"]) or [(o["node"], None)]:  # any start ends the bound
                        stops.setdefault(link, []).append((o["t"], False))
                if o["kind"] == "binlog" and o.get("gtid") and self.run.by_server_id.get(o["server_id"]) == o["node"]:
                    events.setdefault(o["gtid"], []).append(o)
                elif o["kind"] == "relay" and o["gtid"]:
                    relayed.setdefault((o["node"], o.get("connection"), o["gtid"], o["idx"]), []).append(o)
                elif o["kind"] == "relay_log_recovery":
                    purged.setdefault((o["node"], o.get("connection")), []).append(o["t"])
                elif o["kind"] == "status" and "connection" in o:
                    samples.setdefault((o["node"], o["connection"]), []).append(o)
        parts = {node: self._rows_by_part(node) for node in {n for n, _ in self.run.seen}}
        # Rows one poll found together committed in their GTIDs' order (seq_no: a domain's commit
        # order on every server), not in the client transactions' (a campaign's C showed 0-1-5
        # before 0-1-4, as if its master had sent them out of order)
        def commit_order(item: tuple[tuple[str, int], int]) -> tuple[int, int]:
            gtid = self.run.gtid_of.get(item[0][1])
            return item[1], F.parse_gtid(H.real(gtid))[2] if gtid else 0
        own = {(node, k) for (node, k), t in self.run.seen.items() if self._own_commit(node, k, t)}
        for (node, k), t in sorted(self.run.seen.items(), key=commit_order):
            gtid = self.run.gtid_of.get(k)
            source = self.run.seen_src[(node, k)]
            if source is None or gtid is None or (node, k) in own:
                continue
            relay_file, relay_pos = self.run.seen_pos[(node, k)]
            self.run.emit("visible", node, t, trx=self.run.trx_names[k], gtid=gtid)
            appliers = self._appliers(node, k, t, gtid, relayed) if node in self.run.named else [((node, None), t)]
            if node in self.run.named:
                self._duplicate_skips(node, k, gtid, {link for link, _ in appliers}, relayed, samples)
            for link, at in appliers:
                at = applied_by(stops.get(link, []), at)
                src = self.run.sources[link] if node in self.run.named else source  # the unnamed one's then (failover changes it)
                for b in E.committed(E.as_relayed(events.get(gtid, []), relayed, node, link[1], gtid), parts[node].get(k, {})):
                    # The event's own place in the relay log, where it was read: its latest copy relayed
                    # by then (stamped up to a poll late, so the first one otherwise); else where the
                    # SQL thread was at the sample.
                    copies = relayed.get((node, link[1], gtid, b["idx"]), [])
                    # Not a copy thrown away before the commit: the one fetched again after the purge, read
                    # up to a poll late (inc-cache-overflow on 10.11 at load 8: the first copy was taken).
                    since = max((p for p in purged.get(link, ()) if p <= at), default=None)
                    copies = [c for c in copies if since is None or c["t"] >= since] or copies
                    r = next((c for c in reversed(copies) if c["t"] <= at), copies[0] if copies else None)
                    # The timestamp the SQL thread read and waited by (sql_delay_event) is its relay copy's, not
                    # the origin's: in A -> B -> C, B's binlog copy of a GTID event carries its row events'
                    # timestamp, A's its COMMIT's (seconds later after a long statement).
                    self.run.emit("apply", node, at, source=src, **V.tagged(link[1]), type=b["type"], trx=b["trx"], idx=b["idx"],
                              last=b["last"], gtid=gtid, server_id=b["server_id"], when=(r or b)["when"], ict=None, read=None,
                              begin=None, relay_file=r["file"] if r else relay_file, relay_pos=r["pos"] if r else relay_pos)
        for (node, k), t in self.run.seen.items():
            if self.run.seen_src[(node, k)] is None or (node, k) in own:  # a client's commit on the node, not an apply
                # Visible to others by the time its statement returned, if a poll did not see it earlier
                # (not if the server died under it: no answer, and what was recovered shows later).
                back, errno = self.run.returned.get(k, (t, None))
                t = t if errno == CR_SERVER_LOST else min(t, back)
                self.run.emit("visible", node, t, trx=self.run.trx_names[k], gtid=self.run.gtid_of.get(k))

    def _own_commit(self, node: str, k: int, t: int) -> bool:
        """The row the poll at t found on the node is its client's commit there, not its SQL
        thread's apply, also on a replica (seed 11's History 3: B's own t1, reported as applied
        from M and judged by B's MASTER_DELAY); unless the node went down between the commit's
        start and the poll, when the group may have come back by replication."""
        if self.run.origin_of.get(k) != node:
            return False
        began = self.run.commits.get(k, {}).get("start", 0)
        return not any(began < d <= t for d in self.run.downs.get(node, []))

    def _appliers(self, node: str, k: int, t: int, gtid: str, relayed: dict) -> list[tuple[Link, int]]:
        """Which connection of a multi-source replica applied a transaction, and when: (link, first
        poll that showed the row), and a further one for each further copy of its row (seen_again).
        Polling sees the row, not the connection that committed it; it is the connection that had the
        group due first (relayed, and past its MASTER_DELAY after the event's timestamp: a connection
        applies a group once it is due, rpl_slave_state::check_duplicate_gtid letting the first one
        own the domain, sql/rpl_gtid.cc), and a second copy the next such connection's."""
        due = []
        for link in links_of(self.run.sources, node):
            copies = relayed.get((node, link[1], gtid, 0), [])
            if copies:
                first = copies[0]
                delay_due = first["when"] * US - self.run.epoch_us + self.run.delays.get(link, 0) * US
                due.append((max(first["t"], delay_due), first["t"], link))
        order = [link for *_, link in sorted(due)] or links_of(self.run.sources, node)[:1]
        times = [t] + self.run.seen_again.get((node, k), [])
        return [(order[min(i, len(order) - 1)], at) for i, at in enumerate(times)]

    def _duplicate_skips(self, node: str, k: int, gtid: str, appliers: set[Link], relayed: dict, samples: dict) -> None:
        """With gtid_ignore_duplicates, a connection that relayed a group another one applied skipped
        it (rpl_slave_state::check_duplicate_gtid, sql/rpl_gtid.cc): a `skip` at its first sample whose
        SQL thread is past the group in the source's binlog (Relay_Master_Log_File,
        Exec_Master_Log_Pos: a purge renames relay logs, not binlogs), with its relay-log places, as
        the model's skip. Not seen past it (stopped, or the run ended): no skip."""
        if not (self.run.history["header"]["topology"]["nodes"][self.run.node_ids.index(node)].get("variables") or {}).get(
                V.IGNORE_DUPLICATES):
            return
        for link in links_of(self.run.sources, node):
            group = []
            while copies := relayed.get((node, link[1], gtid, len(group))):
                group.append(copies[-1])  # the copy it skipped: fetched again after a purge, the last
            if link in appliers or not group:
                continue
            end = (group[-1]["master_file"], group[-1]["master_end"])
            past = next((s for s in samples.get(link, []) if s["t"] >= group[-1]["t"]
                         and (s["Relay_Master_Log_File"], s["Exec_Master_Log_Pos"]) >= end), None)
            if past is not None:
                self.run.emit("skip", node, past["t"], trx=self.run.trx_names[k], gtid=gtid, reason=V.SKIP_REASON,
                          events=[[r["file"], r["pos"]] for r in group], **V.tagged(link[1]))

    def _rows_by_part(self, node: str) -> dict[int, dict[int, int]]:
        """k -> statement (the row's part) -> rows on the node at the end; {} when it cannot be read."""
        try:
            rows = self.run.cluster.sql(node, "SELECT k, part, COUNT(*) FROM rc.r GROUP BY k, part UNION ALL "
                                          "SELECT k, part, COUNT(*) FROM rc.m GROUP BY k, part")
        except (HarnessError, SqlError):
            return {}
        out: dict[int, dict[int, int]] = {}
        for k, part, n in rows:
            out.setdefault(int(k), {})[int(part)] = out.get(int(k), {}).get(int(part), 0) + int(n)
        return out

    def _emit_skips(self) -> None:
        """The events SQL_SLAVE_SKIP_COUNTER passed over, at the note that says so: the relay
        observations from where the skipping began up to the new position, in the relay log the
        note names. A counter still running when the run ended wrote no note (_unfinished_skips)."""
        with self.run.lock:
            obs = [o for _, _, o in sorted(self.run.obs, key=lambda x: x[:2])]
        # SQL_SLAVE_SKIP_COUNTER of a replica's one unnamed connection (a named one's is @@default_master_connection's)
        for note in [o for o in obs if o["kind"] == "log" and (o["node"], None) in self.run.relay_logs]:
            if m := SKIP_LOG.match(note["message"]):
                self._emit_passed(obs, note["node"], note["t"], (os.path.basename(m.group(1)), int(m.group(2))),
                                  (os.path.basename(m.group(3)), int(m.group(4))))
        self._unfinished_skips(obs)

    def _emit_passed(self, obs: list[dict], node: str, t: int, begin: tuple[str, int], end: tuple[str, int]) -> None:
        """The skips of the events relayed between two relay-log places, as of t. A purge starts the
        relay logs' names again: walking back from the new position, places only decrease within one
        relay log's life, so the walk ends where they do not."""
        # What was relayed before the relay logs were next purged: after that, names start again.
        # (Not "by the read after the note": the note's time is the error log's whole second, and
        # under load the events it passed over were read at later polls: none were found.)
        # A purge that began after the note was read; the START SLAVE before the skip may return later.
        # A restart with relay_log_recovery purges them too (observed as relay_log_recovery, not a statement).
        purges = [o["t"] - o.get("duration_us", 0) for o in obs if o["kind"] == "stmt" and o["node"] == node
                  and o.get("op") in PURGES_RELAY_LOGS and o.get("errno") is None]
        purges += [o["t"] for o in obs if o["kind"] == "relay_log_recovery" and o["node"] == node and "connection" not in o]
        purges += self.run.relay_purges.get((node, None), [])  # also a restart's GTID start that threw nothing unapplied away
        purge = min((p for p in purges if p > t), default=None)
        relays = [o for o in obs if o["kind"] == "relay" and o["node"] == node and "connection" not in o
                  and (purge is None or o["t"] < purge)]
        skipped: list[dict] = []
        for r in reversed(relays):
            place = (r["file"], r["pos"])
            if not skipped and place >= end:
                continue  # after the new position (relayed later, or a purged file of that name)
            if place < begin or (skipped and place >= (skipped[-1]["file"], skipped[-1]["pos"])):
                break
            skipped.append(r)
        # The SQL thread is serial: it passed these before it executed anything relayed after them, so
        # no later than just before the first poll that found such an apply (the note is read later:
        # a campaign's B showed t1's third statement applied 1 ms before the skip of its first).
        later = [a["t"] for a in obs if a["kind"] == "apply" and a["node"] == node and "connection" not in a
                 and a.get("relay_file") is not None and a.get("relay_pos") is not None
                 and (a["relay_file"], a["relay_pos"]) >= end and (purge is None or a["t"] < purge)
                 and skipped and a["t"] >= skipped[0].get("since", skipped[0]["t"])]  # relayed by then
        t = min([t] + [x - 1 for x in later])
        for r in reversed(skipped):
            if r["type"] not in NOT_SKIPPED:
                self.run.emit("skip", node, t, trx=r["trx"], gtid=r["gtid"], idx=r["idx"], type=r["type"],
                              reason="sql_slave_skip_counter", relay_file=r["file"], relay_pos=r["pos"])

    def _unfinished_skips(self, obs: list[dict]) -> None:
        """handle_slave_sql (sql/slave.cc) writes its note only once the counter runs out: a counter
        still above 0 at the run's end, or at a CHANGE MASTER (which sets it to 0: its purge of the
        relay logs, Relay_log_info::purge_relay_logs in sql/rpl_rli.cc, does slave_skip_counter= 0;
        measured on 10.11.19, Skip_Counter 1 before and 0 after), skipped what lies between the place
        before its START SLAVE and the place the last sample before that end shows, if that sample's
        Skip_Counter is below the value set and the node neither went down nor had its counter set
        again since (a campaign's B skipped t2 so), as of the first sample that showed that place."""
        for node in {o["node"] for o in obs if (o["node"], None) in self.run.relay_logs}:
            sets = [o for o in obs if o["kind"] == "stmt" and o["node"] == node and o["op"] == "set_global"
                    and o.get("variable") == "sql_slave_skip_counter" and o.get("errno") is None and "connection" not in o]
            if not sets:
                continue
            start = next((o for o in obs if o["kind"] == "stmt" and o["node"] == node and o["op"] == "start_slave"
                          and o.get("errno") is None and o["t"] >= sets[-1]["t"] and "connection" not in o), None)
            if start is None:
                continue
            # a campaign's C: a counter of 3 passed t3's two events, then CHANGE MASTER reset it
            reset = next((o["t"] - o.get("duration_us", 0) for o in obs if o["kind"] == "stmt" and o["node"] == node
                          and o["op"] == "change_master" and o.get("errno") is None
                          and "connection" not in o and o["t"] >= start["t"]), None)
            samples = [o for o in obs if o["kind"] == "status" and o["node"] == node and "connection" not in o
                       and (reset is None or o["t"] < reset)]
            before = [o for o in samples if o["t"] <= sets[-1]["t"]]
            if not before or samples[-1]["t"] <= start["t"]:
                continue
            last = samples[-1]
            ended = any(o["node"] == node and start["t"] <= o["t"] and (reset is None or o["t"] < reset) and (
                o["kind"] in ("crash", "shutdown", "restart") or (o["kind"] == "log" and SKIP_LOG.match(o.get("message", ""))))
                for o in obs)
            if ended or (last.get("Skip_Counter") or 0) >= int(sets[-1].get("value") or 0):
                continue
            # passed by the first sample that showed the last's place and counter (each event it
            # passes lowers the counter): seed 1's History 4 skipped at 0.4 s, sampled to 3.1 s
            end = (last["Relay_Log_File"], last["Relay_Log_Pos"], last.get("Skip_Counter"))
            done = next(o for o in samples if o["t"] > start["t"]
                        and (o["Relay_Log_File"], o["Relay_Log_Pos"], o.get("Skip_Counter")) == end)
            self._emit_passed(obs, node, done["t"], (before[-1]["Relay_Log_File"], before[-1]["Relay_Log_Pos"]), end[:2])

    def emit_data(self, t: int) -> None:
        c = self.run.cluster
        for node in self.run.node_ids:
            if not c.is_running(node):
                continue
            counts = self.run.observer.present(node)
            self.run.emit("data", node, t, counts={name: counts.get(k, 0) for k, name in enumerate(self.run.trx_names)})


def applied_by(stops: list[tuple[int, bool]], seen: int) -> int:
    """When a transaction first seen at `seen` was applied, at the latest: a stopped SQL thread applies
    nothing, so a row first seen after the channel's SQL thread stopped (and before it started again)
    was applied before the stop, by the time the STOP SLAVE returned or the sample that showed the
    thread stopped (1 µs earlier: strictly before). Else the poll that saw it."""
    last = None
    for t, stopped in stops:
        if t >= seen:
            break
        last = (t, stopped)
    return last[0] - 1 if last is not None and last[1] else seen
