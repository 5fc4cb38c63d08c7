"""What the runner sees of the servers while a History runs: a poll of each node (rows, SHOW SLAVE
STATUS with the SQL thread's processlist state, the semi-sync status and gtid positions), the relay
logs read as they grow, and the error log's new lines, each as observations of the run."""
from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING, Any

from replcheck.spec import vocabulary as V
from replcheck.harness import errlog
from replcheck.harness import stream as S
from replcheck.harness.errors import HarnessError
from replcheck.harness.relaylog import Event, RelayLogs
from replcheck.spec import formats as F
from replcheck.spec.formats import US

if TYPE_CHECKING:
    from replcheck.harness.runner import Runner

NOT_IN_GROUP = frozenset({"Format_desc", "Rotate", "Gtid_list", "Binlog_checkpoint", "Incident", "Stop"})


# A relay log's own framing, written by the replica under its own server id (MYSQL_BIN_LOG::open
# and new_file in sql/log.cc): the FDE that starts each relay log, the Rotate that ends it. Not
# relayed events: the model's relay log holds only what the master sent.
RELAY_FRAMING = frozenset({"Format_desc", "Rotate", "Stop"})


# What the SQL thread executes outside a group without a row to show it: its apply is seen by the
# relay-log place a sample shows past it (an incident stops it or is skipped: the skip is its own).
PASSED_OUTSIDE_GROUPS = frozenset({"Format_desc", "Rotate", "Gtid_list", "Binlog_checkpoint"})


GTID_TEXT = re.compile(r"^GTID (\d+-\d+-\d+)")  # mariadb-binlog's text of a Gtid event: 'GTID 0-1-2 trans'


ROTATE_TEXT = re.compile(r"^Rotate to (\S+)\s+pos: (\d+)")  # and of a Rotate: 'Rotate to bin.000001  pos: 4'


DUMP_LOG = re.compile(r"semi-sync binlog_dump to slave \(server_id: (\d+)\)")
# A binlog write that met a full disk (wait_for_free_space, mysys/errors.c); --log-bin=<dir>/bin
DISK_FULL_LOG = re.compile(r"Disk is full writing '([^']*/bin\.\d+)'")


STATUS_INTS = ("SQL_Delay", "Relay_Log_Pos", "Exec_Master_Log_Pos", "Read_Master_Log_Pos", "Last_SQL_Errno", "Last_IO_Errno",
               "Skip_Counter")


STATUS_NULLABLE_INTS = ("SQL_Remaining_Delay", "Seconds_Behind_Master")


STATUS_STRINGS = ("Slave_IO_Running", "Slave_SQL_Running", "Slave_SQL_Running_State", "Relay_Log_File",
                  "Relay_Master_Log_File", "Master_Log_File", "Last_SQL_Error", "Gtid_IO_Pos")


GTID_VARS = ("gtid_binlog_pos", "gtid_slave_pos", "gtid_current_pos")


# The server's clock, not SET TIMESTAMP's: when a statement ran, in the trace's time (see _instant).
CLOCK = "UNIX_TIMESTAMP(SYSDATE(6))"


# The rows alone: no replication lock, so a node stuck in a STOP SLAVE (harness/stuck.py) answers it.
ROWS = (f"SELECT {CLOCK}; SELECT k, COUNT(*) FROM rc.r WHERE part = 0 GROUP BY k; SELECT k, COUNT(*), part FROM rc.m GROUP BY k, part; "
        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'rc' AND TABLE_NAME LIKE 'd%'")
POLL = (f"{ROWS}; "
        # The SQL thread's state around SHOW SLAVE STATUS, and SHOW SLAVE STATUS again: if both processlist
        # reads agree and both SHOW SLAVE STATUS agree on state and relay-log position (no event read in
        # between: a state that changed and changed back did so by reading one), none changed meanwhile.
        "SELECT STATE FROM information_schema.PROCESSLIST WHERE COMMAND = 'Slave_SQL'; SHOW SLAVE STATUS; "
        "SELECT STATE FROM information_schema.PROCESSLIST WHERE COMMAND = 'Slave_SQL'; SHOW SLAVE STATUS; "
        "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%'; "
        # gtid_current_pos between two reads of the positions it is made of: a commit between them tears
        # the read (MARIADB.GTID.CURRENT_POS flipped in 1 run of 50 of clock-reply-late)
        f"SELECT @@gtid_binlog_pos, @@gtid_slave_pos, @@gtid_current_pos, @@gtid_binlog_pos, @@gtid_slave_pos, {CLOCK}")


# A replica with named connections (multi-source): a row per connection, named by Connection_name
# (show_all_master_info, sql/slave.cc: the default connection shows only once configured). Which
# Slave_SQL thread in the processlist is whose is not shown, so its samples carry no processlist state.
POLL_ALL = POLL.replace("SHOW SLAVE STATUS", "SHOW ALL SLAVES STATUS")


Link = tuple[str, "str | None"]  # (replica, connection_name): a channel; None for a replica's one unnamed connection


def links_of(sources: dict, node: str) -> list[Link]:
    """The node's channels as a replica, in the topology's order (SHOW ALL SLAVES STATUS's rows)."""
    return [link for link in sources if link[0] == node]


def _int(v: Any) -> int | None:
    return int(v) if v is not None and str(v).lstrip("-").isdigit() else None


def gtid_start_purges(before: dict) -> bool:
    """Whether START SLAVE purges the relay logs, from SHOW SLAVE STATUS just before it: MariaDB's
    start_slave_threads (sql/slave.cc, called by start_slave in sql/sql_repl.cc with the threads to
    start, whichever they are) runs purge_relay_logs "if we are using GTID and both SQL and IO threads
    are stopped" (using_gtid != USE_GTID_NO, neither slave_running), and the IO thread then fetches
    again from the GTID position (rpl_load_gtid_state). "Connecting" is a running IO thread."""
    return (before.get("Using_Gtid") or "No") != "No" and before.get("Slave_IO_Running") == "No" \
        and before.get("Slave_SQL_Running") == "No"


def executed_all_read(st: dict) -> bool:
    """SHOW SLAVE STATUS: the SQL thread has executed everything the IO thread read."""
    return ((st.get("Relay_Master_Log_File"), st.get("Exec_Master_Log_Pos"))
            == (st.get("Master_Log_File"), st.get("Read_Master_Log_Pos")))


def _parse_pos(s: str) -> dict[int, int]:
    """A gtid position ('0-1-5,1-2-3', spaces allowed) as domain -> sequence number."""
    return {d: F.parse_gtid(g)[2] for d, g in F.parse_pos("".join(s.split())).items()}


def _covers(have: str, want: str) -> bool:
    """gtid position `have` includes every domain's sequence of `want`."""
    h = _parse_pos(have)
    return all(h.get(d, -1) >= seq for d, seq in _parse_pos(want).items())


class Observer:
    """Polls the nodes and reads their relay and error logs while the History runs."""

    def __init__(self, run: "Runner"):
        self.run = run
        self._last_status: dict[Link, dict] = {}
        self._last_server_status: dict[str, dict] = {}
        self._relay_group: dict[Link, tuple[list[dict], bool]] = {}  # its open group's relay observations, standalone
        self._relayed: dict[Link, list[dict]] = {}  # its relay observations, in relay order
        self._relay_read_began: dict[Link, int] = {}  # when the last read of its relay logs began
        self._unapplied: dict[Link, list[int]] = {}  # indexes into _relayed of events in no group not yet passed
        self._master_file: dict[Link, str] = {}  # the master's binlog its IO thread reads (its last Rotate)

    def poll_loop(self) -> None:
        while not self.run.stop.is_set():
            began = time.monotonic()
            for n in self.run.node_ids:
                if n not in self.run.busy:
                    self.poll(n, wait=False)
            rest = self.run.poll_us / US - (time.monotonic() - began)
            if rest > 0:
                self.run.stop.wait(rest)

    def poll_all(self) -> None:
        for n in self.run.node_ids:
            if self.run.cluster.is_running(n):
                self.poll(n, force=True)

    def present(self, node: str) -> dict[int, int]:
        c = self.run.cluster
        return self._counts(c.results(node, ROWS))

    def _counts(self, results: list) -> dict[int, int]:
        """How many times each transaction's row (or table, for DDL) is present, from a POLL: its
        first statement's (rc.m's rows of later statements: _later_rows)."""
        counts: dict[int, int] = {}
        for _, rows in results[1:3]:
            for k, n, *part in rows:
                if not part or int(part[0]) == 0:
                    counts[int(k)] = counts.get(int(k), 0) + int(n)
        for (name,) in results[3][1]:
            if re.fullmatch(r"d\d+", name):
                counts[int(name[1:])] = counts.get(int(name[1:]), 0) + 1
        return counts

    def poll(self, node: str, force: bool = False, wait: bool = True) -> None:
        """One sample of the node, stamped with the server's own clock: the rows and SHOW SLAVE
        STATUS at the instant its first statement began, the status variables and gtid positions
        at the instant its last one did. So everything before a sample in the trace had happened
        when it looked, and the gap between two samples bounds when what changed did. `wait`
        False: none while a statement holds the node, whose samples wait for its end, not the
        other nodes' (the poller's)."""
        c = self.run.cluster
        lock = self.run.node_locks[node]
        try:
            if not c.is_running(node) or not lock.acquire(blocking=wait):
                return
            try:
                self.read_relay(node)  # before the sample: what it finds applied was relayed by then
                asked = self.run.now()
                results = c.results(node, POLL_ALL if node in self.run.named else POLL, timeout=10)
                # read as trace time once the lock is let go: a step back made meanwhile fits them twice
                window = (asked, self.run.now())
            finally:
                lock.release()
        except HarnessError:
            return  # down or going down: nothing to see
        if len(results) != 10:
            return
        t, t_vars = self.run.instant(results[0][1][0][0], node, window), self.run.instant(results[9][1][0][5], node, window)
        prev = self.run.last_poll.get(node)
        if prev is not None:
            self.run.max_gap = max(self.run.max_gap, t_vars - prev)
        self.run.last_poll[node] = t
        counts = self._counts(results)
        if node in self.run.named:
            self._poll_connections(node, t, t_vars, results, counts, force)
        else:
            status_cols, status_rows = results[5]
            status = dict(zip(status_cols, status_rows[0])) if status_rows else None
            before, after = results[4][1], results[6][1]
            again = dict(zip(results[7][0], results[7][1][0])) if results[7][1] else None
            steady = status is None or (again is not None and all(
                status.get(k) == again.get(k) for k in ("Slave_SQL_Running_State", "Relay_Log_File", "Relay_Log_Pos")))
            proc = before if before == after and steady else None  # changed while sampled: no state to compare
            pos = (status or {}).get("Relay_Log_File") or "", _int((status or {}).get("Relay_Log_Pos")) or 0
            for k in sorted(counts):
                if counts[k] > 0 and (node, k) not in self.run.seen:
                    self.run.seen[(node, k)] = t
                    self.run.seen_pos[(node, k)] = pos
                    self.run.seen_src[(node, k)] = self.run.sources.get((node, None))
            for k, _, part in results[2][1]:  # a MyISAM transaction's later statements, each a group of its own
                if int(part) > 0:
                    self.run.seen_parts.setdefault((node, int(k), int(part)), (t, pos))
            if status is not None:
                self.record_status((node, None), t, status, proc, force, until=t_vars)
        variables: dict[str, Any] = {}
        for name, value in results[8][1]:
            variables[name] = _int(value) if _int(value) is not None else value
        gtid = results[9][1][0]
        variables.update(zip(GTID_VARS, gtid[:3]))
        if tuple(gtid[:2]) != tuple(gtid[3:5]):  # a commit during the read: gtid_current_pos is of neither state
            del variables["gtid_current_pos"]
        self.run.binlog_pos.setdefault(node, []).append((t_vars, F.parse_pos("".join((variables.get("gtid_binlog_pos") or "").split()))))
        if force or variables != self._last_server_status.get(node):
            self._last_server_status[node] = variables
            self.run.emit("server_status", node, t_vars, variables=variables)
        self.tail_log(node, t_vars)

    def _poll_connections(self, node: str, t: int, t_vars: int, results: list, counts: dict[int, int], force: bool) -> None:
        """A multi-source replica's part of a poll: SHOW ALL SLAVES STATUS, a `status` sample per
        connection (its row, by Connection_name), and when each row first showed, and each further
        copy of it (a GTID two connections applied: seen_again)."""
        rows = [dict(zip(results[5][0], r)) for r in results[5][1]]
        for k in sorted(counts):
            if counts[k] > 0 and (node, k) not in self.run.seen:
                self.run.seen[(node, k)] = t
                self.run.seen_pos[(node, k)] = ("", 0)
                self.run.seen_src[(node, k)] = ""  # by a connection: placed by _emit_connection_applies
            if counts[k] > 1 + len(self.run.seen_again.get((node, k), [])):
                self.run.seen_again.setdefault((node, k), []).extend([t] * (counts[k] - 1 - len(self.run.seen_again.get((node, k), []))))
        for row in rows:
            link = (node, row.get("Connection_name") or None)
            if link not in self.run.sources:
                continue  # the default connection, configured by no History op
            self.record_status(link, t, row, None, force, until=t_vars)  # no processlist state to compare (POLL_ALL)

    def slave_status(self, link: Link) -> dict:
        try:
            return self.run.cluster.show_slave_status(*link)
        except HarnessError:
            return {}

    def last_status(self, link: Link) -> dict:
        """The channel's last SHOW SLAVE STATUS sample ({} before any)."""
        return dict(self._last_status.get(link) or {})

    def relay_purged(self, link: Link, t: int, before: dict, reason: str = "gtid") -> None:
        """A START SLAVE threw the relay logs away (gtid_start_purges), or a start with
        relay_log_recovery did (reason relay_log_recovery): the model's observation of it, with what
        the SQL thread had not passed (the events relayed at or after its place then, the latest
        relay log's: names start again at each purge). What lay there outside groups was discarded,
        not executed: no later sample passes it."""
        place = (os.path.basename(before.get("Relay_Log_File") or ""), _int(before.get("Relay_Log_Pos")) or 0)
        relayed = self._relayed.get(link, [])
        dropped = 0
        while dropped < len(relayed) and (relayed[-1 - dropped]["file"], relayed[-1 - dropped]["pos"]) >= place:
            dropped += 1
        self._unapplied.pop(link, None)
        self.run.relay_purges.setdefault(link, []).append(t)  # relay-log names begin again (collect.py's skips)
        if dropped or reason != "gtid":  # as the models emit it: a GTID start's only where it threw something away
            self.run.emit("relay_log_recovery", link[0], t, dropped=dropped, reason=reason, **V.tagged(link[1]))

    def relay_links(self, node: str) -> list[Link]:
        """The node's channels whose relay logs are read: its channels now, and one it had before a
        failover promoted it (what its SQL thread applied last was relayed there)."""
        return list(dict.fromkeys([k for k in self.run.relay_logs if k[0] == node] + links_of(self.run.sources, node)))

    def read_relay(self, node: str, settled: bool = False, final: bool = False) -> None:
        for link in self.relay_links(node):
            self.read_link(link, settled, final)

    def read_link(self, link: Link, settled: bool = False, final: bool = False) -> None:
        """The events written to the channel's relay logs since the last read, as `relay`
        observations stamped when the read ended: each was relayed no later. Grouped and named as
        _read_binlog_file does the binlog's; the transaction names are set with the binlogs'. A
        named connection's relay logs are relay-<name>.NNNNNN with their own index
        (create_logfile_name_with_suffix, sql/rpl_mi.cc), read on their own."""
        node, conn = link
        if link not in self.run.relay_logs:
            self.run.relay_logs[link] = RelayLogs(self.run.binlog_tool, self.run.cluster.node_dir(node), basename=V.relay_base(conn),
                                              label=node if conn is None else f"{node} connection {conn!r}")
        began = self.run.now()
        events = self.run.relay_logs[link].read(settled=settled, final=final)
        t = self.run.now()
        # Not whole when the read before began (it reads every whole event up to the end): written since.
        since, self._relay_read_began[link] = self._relay_read_began.get(link, 0), began
        for name, ev in events:
            self._relay_event(link, t, name, ev, since)

    def _relay_event(self, link: Link, t: int, name: str, ev: Event, since: int | None = None) -> None:
        """`since`: when the read before began (None: only the stamp is known)."""
        node = link[0]
        etype = ev.name
        if ev.server_id == self.run.server_ids[node] and etype in RELAY_FRAMING:
            return
        # The open group's relay observations: a group is closed by its own last event (an XID, a
        # Query COMMIT, a standalone GTID's one event: stream.ends_group), never by what follows, so
        # a copy a cut left partial stays partial. The Rotate, format description and Gtid_list
        # events the IO thread writes at a reconnect fall inside it, and the rest of the group the
        # source sent again after the skip (queue_event, gtid_reconnect_event_skip_count) goes on
        # from there; a new GTID leaves an open copy partial for good.
        group, alone = self._relay_group.get(link, ([], False))
        fields = {"type": F.SHOWN_EVENT_TYPES.get(etype, etype.upper() + "_EVENT"), "trx": None, "idx": 0, "last": False,
                  "gtid": None, "server_id": ev.server_id, "when": ev.when, "ict": None}
        master_file, master_end = self._master_file.get(link, ""), ev.end
        if etype == "Gtid" and (m := GTID_TEXT.match(ev.text)):
            fields["gtid"] = m.group(1)
            group, alone = [], S.standalone(ev.post)
        elif group and etype not in NOT_IN_GROUP:
            fields.update(gtid=group[0]["gtid"], idx=len(group), last=S.ends_group(ev.code, ev.post, alone))
        else:
            if etype == "Incident":
                fields.update(ev.incident())
            elif etype == "Rotate" and (m := ROTATE_TEXT.match(ev.text)):
                # The dump thread's fake Rotate (end_log_pos 0, sql_repl.cc fake_rotate_event) names
                # where the master starts sending; a real one ends the master's file it is in.
                if not ev.end:
                    master_file, master_end = m.group(1), int(m.group(2))
                self._master_file[link] = m.group(1)
        if ev.exec_time():
            fields["exec_time"] = ev.exec_time()
        obs = self.run.emit("relay", node, t, source=self.run.sources.get(link), **V.tagged(link[1]), **fields, file=name, pos=ev.pos,
                        master_file=master_file, master_end=master_end, since=t if since is None else min(since, t))
        relayed = self._relayed.setdefault(link, [])
        if etype in PASSED_OUTSIDE_GROUPS and not obs["gtid"]:
            self._unapplied.setdefault(link, []).append(len(relayed))
        relayed.append(obs)
        if obs["gtid"]:
            group.append(obs)
        self._relay_group[link] = ([], False) if obs["last"] else (group, alone)

    def record_status(self, link: Link, t: int, raw: dict, proc: list | None, force: bool, until: int | None = None) -> None:
        """A SHOW SLAVE STATUS sample of a channel (a row of SHOW ALL SLAVES STATUS for a named
        connection, its observations tagged with it), taken between trace times t and `until` (the
        poll's clock readings around it): SQL_Remaining_Delay counts from a whole second of the
        server's clock in that window."""
        node, tag = link[0], V.tagged(link[1])
        if any(raw.get(k) == "No" for k in self.run.stopping.get(link, ())):
            return  # stopped by the STOP SLAVE still running (Ops._sampled_meanwhile): observed at its return
        s: dict[str, Any] = {k: raw.get(k) or "" for k in STATUS_STRINGS}
        for k in STATUS_INTS:
            s[k] = _int(raw.get(k)) or 0
        for k in STATUS_NULLABLE_INTS:
            s[k] = _int(raw.get(k))
        if proc is not None:
            s["processlist_state"] = proc[0][0] if proc and s["Slave_SQL_Running"] == "Yes" else None
        io_error = (_int(raw.get("Last_IO_Errno")) or 0, raw.get("Last_IO_Error") or "")
        if s["Slave_IO_Running"] != "No":
            self.run.io_error.pop(link, None)  # running (or connecting): a later stop is a new error
        elif io_error[0] and self.run.io_error.get(link) != io_error:
            # Stopped by an error (not retrying a connection: that is "Connecting"), once per stop.
            self.run.io_error[link] = io_error
            self.run.emit("error", node, t, thread="io", errno=io_error[0], message=io_error[1])
        last = self._last_status.get(link)
        # The SQL thread ran since the last sample: it showed running then, or a START SLAVE started
        # it (and it may have stopped again before any sample saw it run, as at an incident).
        ran = last is None or last["Slave_SQL_Running"] == "Yes" or link in self.run.sql_started
        self.run.sql_started.discard(link)
        if s["Slave_SQL_Running"] == "Yes" or ran:
            # Before a stop it shows: what the thread passed, it passed before stopping (so before the
            # stop recorded since the last sample, 1 µs earlier). A stopped thread passes nothing (a
            # relay log of the same name refetched meanwhile is not behind it).
            stopped = self.run.sql_stopped.get(link)
            before = (stopped is not None and s["Slave_SQL_Running"] == "No" and last is not None
                      and last["_t"] < stopped <= t)
            self._passed(link, stopped - 1 if before else t, s["Relay_Log_File"], s["Relay_Log_Pos"])
        if ran and s["Slave_SQL_Running"] == "No" and s["Last_SQL_Errno"]:
            self.run.until.discard(link)
            # seen by the poll that began at t and ended at `until`: the stop came before the end, maybe after t
            seen = {} if until is None else {"seen_until": until}
            self.run.emit("sql_stop", node, t, reason="error", **tag, errno=s["Last_SQL_Errno"], message=s["Last_SQL_Error"], **seen)
            self.run.emit("error", node, t, errno=s["Last_SQL_Errno"], message=s["Last_SQL_Error"])
        elif ran and s["Slave_SQL_Running"] == "No" and link in self.run.until:
            # Stopped with no error and no STOP SLAVE: the UNTIL condition stopped it.
            self.run.until.discard(link)
            self.run.emit("sql_stop", node, t, reason="until", **tag)
        every = self.run.history["header"].get("sample_every_us", US)
        if force or last is None or any(last.get(k) != s[k] for k in s) or t - last["_t"] >= every:
            self._last_status[link] = {**s, "_t": t}
            self.run.emit("status", node, t, **tag, **s, **({} if until is None else {"sampled_until": until}))

    def _passed(self, link: Link, t: int, relay_file: str, relay_pos: int) -> None:
        """The events in no group (the master's fake Rotate, FDE, Gtid_list) that the SQL thread has
        passed by this sample: those relayed before the relay log's place it shows (the latest
        relay log of that name: a purge starts the names again). Executed as the model executes them;
        an apply observation each, as a group's gets at the poll that finds its row."""
        relayed, pending = self._relayed.get(link, []), self._unapplied.get(link, [])
        if not pending:
            return  # nothing to place: no walk of the relay log at every sample
        here = next((i for i in range(len(relayed) - 1, -1, -1)
                     if relayed[i]["file"] == relay_file and relayed[i]["pos"] < relay_pos), None)
        while pending and here is not None and pending[0] <= here:
            r = relayed[pending.pop(0)]
            self.run.emit("apply", link[0], t, source=r["source"], **V.tagged(link[1]),
                          **{k: r[k] for k in ("type", "trx", "idx", "last", "gtid", "server_id", "when", "ict")},
                          read=None, begin=None, relay_file=r["file"], relay_pos=r["pos"])

    def tail_log(self, node: str, t: int) -> None:
        path = self.run.cluster.error_log(node)
        try:
            with open(path, "rb") as f:
                f.seek(self.run.log_offsets.get(node, 0))
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        self.run.log_offsets[node] = self.run.log_offsets.get(node, 0) + end
        for line in data[:end].decode("utf-8", "replace").splitlines():
            m = errlog.LOG_LINE.match(line)
            if not m:
                continue
            extra = {}
            if (d := DUMP_LOG.search(m["message"])) and int(d.group(1)) in self.run.by_server_id:
                extra["replica"] = self.run.by_server_id[int(d.group(1))]
            if (stamp := errlog.stamp_us(m["stamp"])) is not None:  # when the server wrote it, by its own clock
                extra["logged"] = self.run.server_interval(node, *stamp)
            self.run.emit("log", node, t, level=m["level"], message=m["message"], **extra)
            if full := DISK_FULL_LOG.search(m["message"]):
                self.run.emit("binlog_wait", node, t, file=os.path.basename(full.group(1)),
                              **({"logged": extra["logged"]} if "logged" in extra else {}))

    def wait_quiet(self) -> None:
        """Until every running replica has executed what its running source has, or quiet_s."""
        deadline = time.monotonic() + self.run.quiet_s
        c = self.run.cluster
        while time.monotonic() < deadline:
            behind = False
            for (replica, conn), source in self.run.sources.items():
                if not (c.is_running(replica) and c.is_running(source)):
                    continue
                try:
                    [[have]] = c.sql(replica, "SELECT @@gtid_slave_pos")
                    [[want]] = c.sql(source, "SELECT @@gtid_binlog_pos")
                    st = c.show_slave_status(replica, conn)
                except HarnessError:
                    continue
                if st.get("Slave_SQL_Running") != "Yes":
                    continue  # stopped (an error, STOP SLAVE): it will not catch up by itself
                if st.get("Slave_IO_Running") == "No" and executed_all_read(st):
                    continue  # reads nothing more (an IO error, STOP SLAVE IO_THREAD) and applied what it read
                if not _covers(have or "", want or ""):
                    behind = True
            if not behind:
                return
            time.sleep(0.1)
