"""Administration: the statements a DBA sends a replica (CHANGE MASTER, START/STOP/RESET SLAVE,
START/STOP ALL SLAVES, SET GLOBAL, FLUSH STATUS, BINLOG) and what each answers.
"""
from __future__ import annotations

from typing import Any, Callable

from replcheck.spec.formats import (BINLOG_START, ER_BAD_SLAVE)

from .. import delay as D
from .. import domains as DOM
from .. import mechanics as X
from .. import multisource as MS
from .. import mutants as M
from .. import parallel as PA
from .. import semisync as SS

from . import domainfilter as DF
from .component import Component
from .state import (MAX_RELAY_LOG_SIZE, ER_SLAVE_MUST_STOP, ER_SLAVE_WAS_RUNNING, ER_SLAVE_WAS_NOT_RUNNING, ER_WARN_SQL_AFTER_MTS_GAPS_GAP_NOT_CALCULATED, ER_RELAY_LOG_INIT, ER_WARN_USING_GTID_CHANGED, ER_NO_FORMAT_DESCRIPTION_EVENT_BEFORE_BINLOG_STATEMENT, ER_ONLY_FD_AND_RBR_EVENTS_ALLOWED_IN_BINLOG_STATEMENT, BINLOG_STATEMENT_EVENTS, ER_UNKNOWN_SYSTEM_VARIABLE, ER_FLUSH_MASTER_BINLOG_CLOSED, Channel, Node, binlog_index)


# MariaDB's refusal of sql_slave_skip_counter to a parallel GTID replica of several domains (measured on 10.11.19)
ER_SLAVE_SKIP_NOT_IN_GTID = 1966
SKIP_NOT_IN_GTID = ("When using parallel replication and GTID with multiple replication domains, @@sql_slave_skip_counter "
                    "can not be used. Instead, setting @@gtid_slave_pos explicitly can be used to skip to after a given "
                    "GTID position")


def on_off(value: Any) -> bool | None:
    """A boolean variable's value as SET GLOBAL takes it (Sys_var_mybool: the names OFF/ON of
    bool_values, or 0/1, which TRUE/FALSE are); None when it is none of them."""
    return {True: True, False: False, 1: True, 0: False, "ON": True, "OFF": False}.get(
        value.upper() if isinstance(value, str) else value)


class Admin(Component):
    """CHANGE MASTER, START/STOP/RESET SLAVE, SET GLOBAL: their checks, answers and effects on a channel."""

    def op_read(self, node: Node, op: dict) -> None:
        """A client session reads: which transactions it sees."""
        self.emit("read", node.id, seen=list(node.visible))

    def op_set_global(self, node: Node, op: dict) -> None:
        name, value = op["variable"], op["value"]
        if name in ("sql_slave_skip_counter", MAX_RELAY_LOG_SIZE) and (isinstance(value, bool) or not isinstance(value, int)):
            # A number variable: ON/OFF or a string is refused (sys_var::check_type, ER_WRONG_TYPE_FOR_VAR).
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=SS.ER_WRONG_TYPE_FOR_VAR,
                      message=f"Incorrect argument type to variable '{name}'")
            return
        if name == "sql_slave_skip_counter":
            # unsigned: a negative value is truncated to 0 with ER_TRUNCATED_WRONG_VALUE (1292) as a warning
            truncated, value = value < 0, max(0, value)
            ch = node.channel
            if ch is not None and ch.sql_running:  # MariaDB, and MySQL before 5.7, refuse it then
                self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=ER_SLAVE_MUST_STOP,
                          message="This operation cannot be performed as you have a running slave; run STOP SLAVE first")
                return
            if ch is not None and self._skip_not_in_gtid(ch):
                self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=ER_SLAVE_SKIP_NOT_IN_GTID,
                          message=SKIP_NOT_IN_GTID)
                return
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=None, warning=1292 if truncated else None,
                      message=f"Truncated incorrect {name} value: '{op['value']}'" if truncated else "")
            if ch is not None:
                ch.skip_counter = value
            return
        if name == MAX_RELAY_LOG_SIZE:
            self._set_max_relay_log_size(node, value)
            return
        if name in PA.known(self.mech.texts == X.MARIADB):
            self._set_parallel(node, name, value)
            return
        if not any(hook(node, name, value, op) for hook in self.hooks.on_set_global):
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=ER_UNKNOWN_SYSTEM_VARIABLE,
                      message=f"Unknown system variable '{name}'")

    def _skip_not_in_gtid(self, ch: Channel) -> bool:
        """MariaDB refuses the counter to a parallel GTID replica whose gtid_slave_pos has several
        domains: each stands at its own place, and the relay log's place need not be any of theirs
        (sql/sys_vars.cc, the counter's check, ER_SLAVE_SKIP_NOT_IN_GTID). Measured on 10.11.19 after
        mdb-parallel-stop-two-domains' rewinding stop: errno 1966, nothing skipped
        (corpus/server, skip-counter-refused-with-two-domains)."""
        node = ch.node
        return self.mech.texts == X.MARIADB and self.receiver.gtid_replica(ch) and len(node.slave_gtids) > 1 and \
            PA.settings({**node.variables, **node.runtime}, True) is not None

    def _set_max_relay_log_size(self, node: Node, value: int) -> None:
        """SET GLOBAL max_relay_log_size: a whole number of 4096-byte blocks up to 1 GiB, taken by the
        relay log at once (fix_max_relay_log_size). Measured on 10.11: 5000 becomes 4096 with warning
        1292, and so do 0 and -1 (its minimum is 4096); 2000000000 becomes 1073741824. MySQL's
        minimum is 0, which means max_binlog_size."""
        least = 4096 if self.mech.texts == X.MARIADB else 0
        taken = min(max(value, least), 1 << 30) // 4096 * 4096
        self.emit("stmt", node.id, op="set_global", variable=MAX_RELAY_LOG_SIZE, value=value, errno=None,
                  warning=1292 if taken != value else None,
                  message=f"Truncated incorrect {MAX_RELAY_LOG_SIZE} value: '{value}'" if taken != value else "")
        node.runtime[MAX_RELAY_LOG_SIZE] = taken

    def _set_parallel(self, node: Node, name: str, value: Any) -> None:
        """SET GLOBAL of a parallel applier setting: MariaDB's refused while the slave runs
        (ER_SLAVE_MUST_STOP); every one takes effect at the SQL thread's next start."""
        if name in PA.STOPPED_ONLY and self.refused_while_running(node, name, value):
            return
        refused = PA.check(name, value)
        self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=SS.ER_WRONG_VALUE_FOR_VAR if refused else None,
                  message=refused or "")
        if not refused:
            node.runtime[name] = PA.value_of(name, value)

    def refused_while_running(self, node: Node, name: str, value: Any) -> bool:
        """ER_SLAVE_MUST_STOP while any connection runs, naming it (measured on 10.11 with
        gtid_ignore_duplicates: "... running slave 'b'; run STOP SLAVE 'b' first")."""
        ch = next((c for c in MS.channels(node) if c.sql_running or c.io_running), None)
        if ch is not None:
            conn = ch.connection or MS.DEFAULT
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=ER_SLAVE_MUST_STOP,
                      message=f"This operation cannot be performed as you have a running slave '{conn}'; run STOP SLAVE '{conn}' first")
        return ch is not None

    def take_global(self, node: Node, name: str, value: Any, taken: Any, stopped_only: bool = False) -> None:
        """SET GLOBAL of a feature's variable: `taken` is what the value means, None when the variable
        can hold no such value (ER_WRONG_VALUE_FOR_VAR, sys_var::check); a variable whose check
        calls give_error_if_slave_running (`stopped_only`) is refused while a connection runs.
        What is taken is the server's until its restart (node.runtime)."""
        if taken is None:
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=SS.ER_WRONG_VALUE_FOR_VAR,
                      message=f"Variable '{name}' can't be set to the value of '{value}'")
            return
        if stopped_only and self.refused_while_running(node, name, value):
            return
        self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=None, message="")
        node.runtime[name] = taken

    def op_change_master(self, node: Node, op: dict) -> None:
        ch = self._channel_or_error(node, op)
        if ch is None:
            return
        if "delay_sql" in op:
            value, errno, message = D.parse_master_delay(str(op["delay_sql"]), self.mech.master_delay_literal == "ulong_num",
                                                         "MariaDB" if self.mech.texts == X.MARIADB else "MySQL")
        else:
            value, errno, message = op.get("delay", ch.delay), None, ""
        by_id = op.get("connect_using_group_id", False)
        if errno is None and by_id and (refused := self.hierarchy.connect_option_error(node, op)):
            errno, message = refused
        use_gtid = op.get("master_use_gtid")
        by_gtid = use_gtid in ("slave_pos", "current_pos")
        moves = "master_log_file" in op or by_id or "master_use_gtid" in op
        # Refused while either thread runs (MariaDB sql_repl.cc, change_master: thread_mask; measured on
        # 10.11, d1-back-to-zero), or while the thread its options are for runs (MySQL 5.7.4+, WL#6120;
        # rpl_replica.cc, change_master: MASTER_DELAY is the applier's, a new place the receiver's).
        either = self.mech.change_master_refused_while == "either"
        running = (ch.sql_running or ch.io_running) if either else (ch.sql_running or (moves and ch.io_running))
        if errno is None and running:
            errno, message = ER_SLAVE_MUST_STOP, "This operation cannot be performed with a running slave; run STOP SLAVE first"
        if errno is None and (DF.DO in op or DF.IGNORE in op) and not self.mech.gtid_domains:
            errno, message = D.ER_PARSE_ERROR, DOM.syntax_error("MySQL", DF.DO.upper() if DF.DO in op else DF.IGNORE.upper())
        if errno is None and self.mech.gtid_domains:
            # Using_Gtid as the statement leaves it (change_master sets mi->using_gtid before update_ids)
            gtid_after = use_gtid != "no" and (use_gtid is not None or not (
                "master_log_file" in op or "relay_log_file" in op or ch.by_position))
            errno, message = self.domainfilter.refusal(ch, op, gtid_after) or (errno, message)
        resume = self.receiver.relay_index(ch, op["relay_log_file"], op["relay_log_pos"]) if "relay_log_file" in op else None
        if errno is None and resume == -1:
            errno, message = ER_RELAY_LOG_INIT, ("Failed initializing relay log position: Could not find target log "
                                                 "during relay log initialization")
        # RELAY_LOG_FILE/RELAY_LOG_POS keep the relay logs (need_relay_log_purge= 0, change_master)
        # MASTER_USE_GTID=no alone keeps the SQL thread's coordinates (below) and purges as a MASTER_DELAY does
        placed = "master_log_file" in op or by_id or by_gtid
        purge = errno is None and resume is None and not (placed or ch.sql_running or ch.io_running or "master_host" in op)
        if errno is None:
            ch.delay = value
            source = self.nodes[op.get("master_host", ch.source.id)]
            # A binlog place, as a relay log place, turns GTID off with note 4190 (MariaDB sql_repl.cc,
            # change_master: log_file_name or pos with MASTER_USE_GTID unchanged sets USE_GTID_NO;
            # measured on 10.11.19, tests/harness/test_change_master.py)
            off = (self.mech.relay_log_place_turns_gtid_off and self.receiver.gtid_replica(ch)
                   and ("master_log_file" in op or resume is not None) and "master_use_gtid" not in op)
            was = self.receiver.using_gtid(ch)
            if "master_log_file" in op:
                self.change_source(ch, source, op["master_log_file"], op["master_log_pos"])
            elif by_id:
                self.change_source_by_id(ch, source)
            elif by_gtid:
                self.change_source_by_gtid(ch, source, "master_host" in op)
                ch.current_pos = use_gtid == "current_pos"
            elif "master_host" in op:  # MASTER_USE_GTID=no to a new master: its first binlog (sql_repl.cc)
                self.change_source(ch, source, "", 0)
            if use_gtid == "no":
                self.use_positions(ch)
            self.domainfilter.take(ch, op)
            if resume is not None:
                ch.sql_pos = ch.group_start = resume
            if off:
                errno, message = ER_WARN_USING_GTID_CHANGED, ("CHANGE MASTER TO is implicitly changing the value "
                                                              f"of 'Using_Gtid' from '{was}' to 'No'")
                ch.by_position = True
            self.rli.write_relay_log_info(ch)
        self._stmt(ch, op, errno, message, warning=errno == ER_WARN_USING_GTID_CHANGED, delay=value)
        if purge:
            self._purge_relay_logs(ch)

    def _purge_relay_logs(self, ch: Channel) -> None:
        """CHANGE MASTER with both threads stopped and no new place: the relay logs are purged and the
        IO thread fetches again from the SQL thread's executed position, so what was relayed and not
        applied comes again, once (need_relay_log_purge, then the master position set to
        rli's group_master_log_name/pos: MariaDB sql_repl.cc and MySQL rpl_replica.cc, change_master;
        with auto-position MySQL's purge_relay_logs also clears the retrieved GTID set, rpl_rli.cc).
        MySQL 5.7.4 to 5.7.17 rewound only when a receiver option was given: a MASTER_DELAY change kept
        Read_Master_Log_Pos and skipped the purged transactions (Bug #84249, #84375, #87102)."""
        fetched = ch.fetch
        self.receiver.drop_relay(ch, "change_master")  # a GTID replica then asks by GTID (MySQL: auto-position)
        if M.DELAY_CHANGE_KEEPS_FETCH_POSITION in self.mutants:
            ch.fetch = fetched
            return
        self.receiver.fetch_from_group(ch)

    def op_reset_slave(self, node: Node, op: dict) -> None:
        ch = self._channel_or_error(node, op)
        if ch is None:
            return
        if ch.sql_running or ch.io_running:
            self._stmt(ch, op, ER_SLAVE_MUST_STOP, "This operation cannot be performed with a running slave; run STOP SLAVE first")
            return
        ch.delay = 0
        self.receiver.cut_relay(ch, 0)
        ch.relay_file_no += 1
        ch.relay_pos = BINLOG_START
        ch.sql_pos = ch.group_start = 0
        ch.fetch = None
        ch.group_master_file, ch.group_master_pos = "", 0
        # init_master_log_pos (MariaDB rpl_mi.cc, MySQL rpl_slave.cc): '' and BIN_LOG_HEADER_SIZE
        # (multi_source/simple.result: Read_Master_Log_Pos 4 after RESET SLAVE 'slave1')
        ch.read_master_file, ch.read_master_pos = "", BINLOG_START
        ch.connect_by_id = False
        ch.last_io_errno, ch.last_io_error = 0, ""
        # MariaDB 10.5+ (MDEV-19801): RESET SLAVE turns Using_Gtid=No back to its default Slave_Pos for a
        # master with GTIDs, with note 4190 (rpl_using_gtid_default.result: "RESET SLAVE is implicitly
        # changing the value of 'Using_Gtid' from 'No' to 'Slave_Pos'")
        # Current_Pos turns back to Slave_Pos the same way (rpl_using_gtid_default.result)
        was = self.receiver.using_gtid(ch)
        note = self.mech.gtid_domains and ch.source.gtid_mode and was != "Slave_Pos"
        if note:
            ch.by_position = ch.current_pos = False
        if not node.gtid_mode:
            # Anonymous groups are in no gtid_executed: what the slave applied it knows only by its
            # position, which RESET SLAVE forgets, so a group that comes again is applied again
            # (rpl_semi_sync.result, 5.6: after RESET MASTER and RESET SLAVE the new binlog's groups)
            node.executed = set()
        self.rli.write_relay_log_info(ch)
        if note:
            self._stmt(ch, op, ER_WARN_USING_GTID_CHANGED, "RESET SLAVE is implicitly changing the value of 'Using_Gtid' "
                                                          f"from '{was}' to 'Slave_Pos'", warning=True)
        else:
            self._stmt(ch, op, None, "")

    def op_stop_slave(self, node: Node, op: dict) -> None:
        ch = self._channel_or_error(node, op)
        if ch is None:
            return
        thread = op.get("thread")
        running = (thread in (None, "sql") and ch.sql_running) or (thread in (None, "io") and ch.io_running)
        self.stop_threads(ch, io=thread in (None, "io"), sql=thread in (None, "sql"))
        self._stmt(ch, op, None if running else ER_SLAVE_WAS_NOT_RUNNING,
                   "" if running else "Slave already has been stopped", warning=not running)

    def op_start_slave(self, node: Node, op: dict) -> None:
        until = op.get("until") or {}
        # MariaDB's grammar knows no SQL_AFTER_MTS_GAPS (sql_yacc.yy, slave_until: log positions and
        # MASTER_GTID_POS only), MySQL's no MASTER_GTID_POS (slave_until_opts): a syntax error, nothing started
        near = ("SQL_AFTER_MTS_GAPS" if until.get("sql_after_mts_gaps") and self.mech.texts == X.MARIADB else
                f"master_gtid_pos = '{until['master_gtid_pos']}'" if "master_gtid_pos" in until
                and not self.mech.gtid_domains else None)
        if near:
            args = {k: v for k, v in op.items() if k not in ("at", "op", "node")}
            self.emit("stmt", node.id, op="start_slave", errno=D.ER_PARSE_ERROR, warning=None, message=DOM.syntax_error(
                "MariaDB" if self.mech.texts == X.MARIADB else "MySQL", near), **args)
            return
        ch = self._channel_or_error(node, op)
        if ch is None:
            return
        if refused := self.untilgtid.refusal(ch, op):
            self._stmt(ch, op, *refused)
            return
        thread = op.get("thread")
        io = thread in (None, "io") and not ch.io_running
        sql = thread in (None, "sql") and not ch.sql_running
        if not (io or sql):
            self._stmt(ch, op, ER_SLAVE_WAS_RUNNING, "Slave is already running", warning=True)
            return
        if sql and (op.get("until") or {}).get("sql_after_mts_gaps") and not self.workers.computes_mts_gaps(ch):
            # start_slave_threads (rpl_replica.cc): no gaps were computed, the UNTIL stops at once
            self._stmt(ch, op, ER_WARN_SQL_AFTER_MTS_GAPS_GAP_NOT_CALCULATED, (
                f"The until clause SQL_AFTER_MTS_GAPS is being used for channel '{ch.connection or ''}' when "
                "GTID_MODE = ON and SOURCE_AUTO_POSITION=1 meaning the server did not compute internally what gaps "
                "may exist in the relay log transaction execution. To close any execution gaps use either the "
                "SQL_BEFORE_GTIDS or SQL_AFTER_GTIDS until clause."), warning=True)
        else:
            self._stmt(ch, op, None, "")
        self.start_threads(ch, io, sql, op.get("until"))

    def start_threads(self, ch: Channel, io: bool, sql: bool, until: dict | None = None) -> None:
        if sql:
            ch.until = until
            ch.last_sql_errno, ch.last_sql_error = 0, ""
        if io and sql:
            self.start_both(ch)
        elif io:
            self.receiver.start_io(ch)
        else:
            self.applier.start_sql(ch)

    def stop_threads(self, ch: Channel, io: bool, sql: bool) -> None:
        if sql and ch.sql_running:
            self.applier.stop_sql(ch, "stop")
        if io and ch.io_running:
            self.receiver.disconnect(ch)
            ch.io_running = False

    def op_start_all_slaves(self, node: Node, op: dict) -> None:
        """START ALL SLAVES: each connection whose threads are not both running starts, in turn
        (Master_info_index::start_all_slaves, sql/rpl_mi.cc); one statement, one answer."""
        self._all_slaves(node, op, lambda ch: not (ch.io_running and ch.sql_running),
                         lambda ch: self.start_threads(ch, not ch.io_running, not ch.sql_running))

    def op_stop_all_slaves(self, node: Node, op: dict) -> None:
        """STOP ALL SLAVES: each connection with a running thread stops (Master_info_index::stop_all_slaves)."""
        self._all_slaves(node, op, lambda ch: ch.io_running or ch.sql_running, lambda ch: self.stop_threads(ch, True, True))

    def _all_slaves(self, node: Node, op: dict, acts: Callable[[Channel], bool], do: Callable[[Channel], None]) -> None:
        acting = [c for c in MS.channels(node) if acts(c)]
        warning, message = MS.all_slaves_note(op["op"], [c.connection for c in acting], self.mech.texts == X.MARIADB)
        self.emit("stmt", node.id, op=op["op"], errno=None, warning=warning, message=message)
        for ch in acting:
            do(ch)
            self.status.status(ch)  # its row of SHOW ALL SLAVES STATUS right after

    def op_reset_master(self, node: Node, op: dict) -> None:
        """RESET MASTER: every binlog goes and a new one starts at number 1, with an empty binlog GTID
        state, so the next local GTID of each domain is seq_no 1 (MariaDB sql_repl.cc reset_master ->
        MYSQL_BIN_LOG::reset_logs, rpl_global_gtid_binlog_state.reset(); MySQL binlog.cc reset_logs
        also clears gtid_executed). Without a binlog: ER_FLUSH_MASTER_BINLOG_CLOSED. The suites reset
        a master with its slaves stopped; a dump thread still connected reads on from the new head."""
        if not node.log_bin:
            self.emit("stmt", node.id, op="reset_master", errno=ER_FLUSH_MASTER_BINLOG_CLOSED, warning=None,
                      message="Binlog closed, cannot RESET MASTER")
            return
        self.emit("stmt", node.id, op="reset_master", errno=None, warning=None, message="")
        self.reset_binlog(node)

    def reset_binlog(self, node: Node) -> None:
        """What RESET MASTER does to a node with a binlog (MYSQL_BIN_LOG::reset_logs)."""
        if not self.mech.gtid_domains and node.gtid_mode:
            node.executed -= {e.ev.gtid for e in node.binlog if e.ev.gtid}
        node.binlog, node.binlog_file_no, node.binlog_gtids, node.gtid_seq, node.base_gtids = [], 0, {}, {}, []
        node.purged, node.mtimes, node.file_start, node.index, node.set_ids, node.dropped = set(), {}, {}, [], {}, {}
        node.synced = node.published = node.writes_since_sync = 0
        for ch in node.replicas:
            ch.gtid_floor = None
            if ch.connected:
                ch.fetch = 0
        self.source.open_binlog(node)
        for hook in self.hooks.on_reset_master:
            hook(node)

    def op_flush_status(self, node: Node, op: dict) -> None:
        self.emit("stmt", node.id, op="flush_status", errno=None, warning=None, message="")
        for hook in self.hooks.on_flush_status:
            hook(node)

    def op_binlog_statement(self, node: Node, op: dict) -> None:
        types = op["event_types"]
        errno, message = None, ""
        bad = [t for t in types if t not in BINLOG_STATEMENT_EVENTS]
        if types and types[0] != "FORMAT_DESCRIPTION_EVENT":
            errno = ER_NO_FORMAT_DESCRIPTION_EVENT_BEFORE_BINLOG_STATEMENT
            message = f"The BINLOG statement of type `{types[0]}` was not preceded by a format description BINLOG statement."
        elif bad:
            errno = ER_ONLY_FD_AND_RBR_EVENTS_ALLOWED_IN_BINLOG_STATEMENT
            message = f"Only Format_description_log_event and row events are allowed in BINLOG statements (but {bad[0]} was provided)"
        self.emit("stmt", node.id, op="binlog_statement", event_types=types, errno=errno, message=message)

    def _channel_or_error(self, node: Node, op: dict) -> Channel | None:
        if node.channel is None and node.connections:
            errno, warning, message = MS.unconfigured_default(op["op"], self.mech.texts == X.MARIADB)
            self.emit("stmt", node.id, op=op["op"], errno=errno, warning=warning, message=message)
        elif node.channel is None:
            self.emit("stmt", node.id, op=op["op"], errno=ER_BAD_SLAVE,
                      message="The server is not configured as slave; fix in config file or with CHANGE MASTER TO")
        return node.channel

    def _stmt(self, ch: Channel, op: dict, errno: int | None, message: str, warning: bool = False, **extra) -> None:
        args = {k: v for k, v in op.items() if k not in ("at", "op", "node")}
        fields = {**args, **{k: v for k, v in extra.items() if k not in args}}
        self.emit("stmt", ch.node.id, op=op["op"], errno=None if warning else errno,
                  warning=errno if warning else None, message=message, **fields)

    def change_source(self, ch: Channel, source: Node, file: str, pos: int) -> None:
        """CHANGE MASTER TO MASTER_HOST, MASTER_LOG_FILE, MASTER_LOG_POS: old relay logs go (as
        after RESET SLAVE), reading resumes at that place of the new source's binlog."""
        if ch.source is not source:
            ch.source.replicas.remove(ch)
            source.replicas.append(ch)
            ch.source = source
        self.receiver.cut_relay(ch, 0)
        ch.relay_file_no += 1
        ch.relay_pos = BINLOG_START
        ch.sql_pos = ch.group_start = 0
        ch.engine_pos = None
        ch.connect_by_id = False
        ch.by_position = bool(file)
        ch.fetch = binlog_index(source, file, pos)
        ch.group_master_file, ch.group_master_pos = file, pos
        ch.read_master_file, ch.read_master_pos = file, pos

    def change_source_by_id(self, ch: Channel, source: Node) -> None:
        """CHANGE MASTER TO CONNECT_USING_GROUP_ID: where to start is known only once the master has
        looked the slave's last group ID up."""
        self.change_source(ch, source, "", 0)
        ch.fetch, ch.connect_by_id = None, True

    def use_positions(self, ch: Channel) -> None:
        """CHANGE MASTER TO MASTER_USE_GTID=no (MariaDB sql_repl.cc, change_master: using_gtid= USE_GTID_NO;
        MySQL's MASTER_AUTO_POSITION = 0): replication by position from then on. Without a new host or
        place, the relay logs are purged (op_change_master) and the IO thread reads again from the SQL
        thread's executed coordinates (rli.group_master_log_name/pos), as for any option naming no place."""
        ch.by_position, ch.current_pos = True, False

    def change_source_by_gtid(self, ch: Channel, source: Node, new_host: bool = True) -> None:
        """CHANGE MASTER TO [MASTER_HOST,] MASTER_USE_GTID: the relay logs go and the next connect asks
        by GTID (MariaDB sql_repl.cc, change_master: a new master or GTID mode purges the relay logs).
        Without MASTER_HOST the master coordinates are the SQL thread's, kept for a later
        MASTER_USE_GTID=no (change_master: no host, port or log name, so rli.group_master_log_name/pos;
        MDEV-4483, rpl_gtid_startpos.result)."""
        kept = (ch.group_master_file, ch.group_master_pos)
        self.change_source(ch, source, "", 0)
        ch.fetch = None
        if not new_host:
            ch.group_master_file, ch.group_master_pos = ch.read_master_file, ch.read_master_pos = kept

    def start_both(self, ch: Channel) -> None:
        """Both replication threads start (START SLAVE, or the server's own start). With
        MASTER_USE_GTID, MariaDB first throws the relay logs away (start_slave_threads in
        sql/slave.cc): the IO thread fetches again from the GTID position."""
        if self.mech.gtid_start_purges_relay and self.receiver.gtid_replica(ch) and ch.sql_pos < len(ch.relay):
            self.receiver.drop_relay(ch, "gtid")
        self.receiver.start_io(ch)
        self.applier.start_sql(ch)
