"""Status: SHOW SLAVE STATUS (Seconds_Behind_Master among it), SHOW GLOBAL STATUS/VARIABLES, SHOW
MASTER STATUS and the other SHOW statements an expectation reads.
"""
from __future__ import annotations

from typing import Any

from replcheck.spec import formats as F
from replcheck.spec.formats import BINLOG_START

from .. import delay as D
from .. import groupid as G
from .. import incident as I
from .. import mechanics as X
from .. import domains as DOM
from .. import multisource as MS
from .. import semisync as SS
from ..delay import US
from .component import Component
from .state import Channel, Entry, Node

ER_WARN_DEPRECATED_SYNTAX = 1287
GTID_BINLOG_STATE = "gtid_binlog_state"
# the statements MySQL 8.0.22+ deprecates, in the spelling an op stands for, and their replacements
# (sql_yacc.yy: push_deprecated_warn as it parses the SLAVE / MASTER spelling, e.g. show_replica_status_stmt:
# "SHOW SLAVE STATUS", "SHOW REPLICA STATUS"; change_replication_source: "CHANGE MASTER", 8.0.23)
DEPRECATED_SPELLINGS = {"start_slave": ("START SLAVE", "START REPLICA"), "stop_slave": ("STOP SLAVE", "STOP REPLICA"),
                        "reset_slave": ("RESET SLAVE", "RESET REPLICA"),
                        "change_master": ("CHANGE MASTER", "CHANGE REPLICATION SOURCE"),
                        "show_slave_status": ("SHOW SLAVE STATUS", "SHOW REPLICA STATUS")}
# Slave_SQL_Running_State of each state of a channel's SQL thread
SQL_STATES = {"stopped": "", "idle": D.STATE_IDLE, "waiting": D.STATE_WAITING, "executing": D.STATE_EXECUTING,
              "acking": SS.STATE_ACK_WAIT}


class Status(Component):
    """What a client reading a node's status sees."""

    def op_show_slave_status(self, node: Node, op: dict) -> None:
        if node.channel is not None:  # a server that is no replica answers an empty set, no error (10.11, measured)
            self.status(node.channel)
        if self.mech.deprecated_slave_syntax:  # a statement with a warning of its own: the last one's answer
            self.sim.last_stmt[node.id] = {"op": "show_slave_status", "errno": None, "warning": None, "message": ""}

    def _master_status_fields(self, node: Node) -> dict:
        fields = {"File": node.binlog_file, "Position": node.binlog_pos}
        for hook in self.hooks.master_status_fields:
            hook(node, fields)
        return fields

    def master_status(self, node: Node, **extra: Any) -> dict:
        self.emit("master_status", node.id, **self._master_status_fields(node), **extra)
        return self.sim.obs[-1]

    def op_show_master_status(self, node: Node, op: dict) -> None:
        self.master_status(node)

    def status(self, ch: Channel) -> dict:
        # emit's dict, built once: a sample is no statement (emit's bookkeeping) and the most frequent observation
        row = self._status_fields(ch, {"t": self.sim.now, "kind": "status", "node": ch.node.id, **MS.tagged(ch.connection)})
        self.sim.obs.append(row)
        return row

    def shown_again(self, row: dict, ch: Channel | None) -> dict:
        """A sample's row (of this channel's status, or of a server's if None) taken again later
        with no event run since: the same but for what the clock moves. Its values are copies, as
        every row's are its own."""
        again = {**row, "t": self.sim.now}
        if ch is not None:
            self._clock_fields(ch, again)
        elif again["kind"] == "server_status":
            again["variables"] = dict(again["variables"])
            again["slave_hosts"] = [dict(h) for h in again["slave_hosts"]]
        return again

    def _status_fields(self, ch: Channel, head: dict | None = None) -> dict:
        """SHOW SLAVE STATUS of the channel, after `head`: one dict for a whole sample."""
        state = SQL_STATES[ch.state]
        io = "Yes" if ch.connected else ("Connecting" if ch.io_running else "No")
        relay_file, relay_pos = self.rli.group_position(ch)
        exec_file, exec_pos = self.rli.exec_master(ch)
        fields = {
            **(head or {}),
            "Slave_IO_Running": io,
            "Slave_SQL_Running": "Yes" if ch.sql_running else "No",
            "SQL_Delay": ch.delay,
            "SQL_Remaining_Delay": None,  # these two and REMAINING_DELAY: _clock_fields
            "Slave_SQL_Running_State": state,
            "Relay_Log_File": relay_file,
            "Relay_Log_Pos": relay_pos,
            "Relay_Master_Log_File": exec_file,
            "Exec_Master_Log_Pos": exec_pos,
            "Master_Log_File": ch.read_master_file,
            "Read_Master_Log_Pos": ch.read_master_pos,
            "Seconds_Behind_Master": None,
            "Last_IO_Errno": ch.last_io_errno,
            "Last_IO_Error": ch.last_io_error,
            "Last_SQL_Errno": ch.last_sql_errno,
            "Last_SQL_Error": ch.last_sql_error,
            "Skip_Counter": ch.skip_counter,
            "processlist_state": state if ch.sql_running else None,
            "Gtid_IO_Pos": F.format_pos(ch.io_gtids),
        }
        if self.mech.gtid_domains:
            fields["Using_Gtid"] = self.receiver.using_gtid(ch)
        for hook in self.hooks.status_fields:
            hook(ch, fields)
        if self.rule.rule == D.WL7318:
            # performance_schema.replication_applier_configuration / _status (WL#7318 F4)
            fields["DESIRED_DELAY"] = ch.delay
            fields["REMAINING_DELAY"] = None
        self._clock_fields(ch, fields)
        return fields

    def _clock_fields(self, ch: Channel, fields: dict) -> None:
        """The fields of SHOW SLAVE STATUS that move with the clock alone."""
        remaining = self._remaining(ch) if ch.state == "waiting" else None
        fields["SQL_Remaining_Delay"] = remaining
        fields["Seconds_Behind_Master"] = self._seconds_behind(ch)
        if self.rule.rule == D.WL7318:
            fields["REMAINING_DELAY"] = remaining

    def server_status(self, node: Node) -> dict:
        variables = self._server_variables(node)
        hosts: list = []
        for hook in self.hooks.slave_hosts:
            hook(node, hosts)
        self.emit("server_status", node.id, variables=variables, slave_hosts=hosts)
        return self.sim.obs[-1]

    def _server_variables(self, node: Node) -> dict:
        """SHOW GLOBAL STATUS and VARIABLES: what the features show, then the GTID positions."""
        variables: dict = {}
        for hook in self.hooks.status_variables:
            hook(node, variables)
        variables.update(gtid_binlog_pos=F.format_pos(node.binlog_gtids), gtid_slave_pos=F.format_pos(node.slave_gtids),
                         gtid_current_pos=F.format_pos(G.current_pos(node.binlog_gtids, node.slave_gtids, node.server_id)))
        return variables

    def op_expect(self, node: Node, op: dict) -> None:
        value = getattr(self, f"_shows_{op['show']}")(node, op) if node.up or op["show"] in F.CLIENT_SHOWN else None
        self.emit("observed", node.id, expect=F.expect_where(self.sim.history, op), show=op["show"], value=value)

    def _shows_slave_status(self, node: Node, op: dict) -> dict | None:
        if node.channel is None:  # not a replica: an empty set
            return None
        fields = self._status_fields(node.channel)
        return {k: fields[k] for k in op["fields"] if k in fields}

    def _shows_master_status(self, node: Node, op: dict) -> dict | None:
        if not node.log_bin:  # an empty set
            return None
        fields = self._master_status_fields(node)
        return {k: fields[k] for k in op["fields"] if k in fields}

    def _shows_status(self, node: Node, op: dict) -> dict:
        variables = {k: v for k, v in self._server_variables(node).items() if k[0].isupper()}
        return {k: variables[k] for k in op["fields"] if k in variables}

    def _shows_variables(self, node: Node, op: dict) -> dict:
        """As SHOW GLOBAL VARIABLES shows them (a boolean as ON or OFF), a default where none was set."""
        variables = {**SS.VARIABLES, **node.runtime, **{k: v for k, v in self._server_variables(node).items() if not k[0].isupper()}}
        if self.mech.gtid_domains and GTID_BINLOG_STATE in op["fields"]:  # read only here: it scans the binlog
            variables[GTID_BINLOG_STATE] = self._binlog_state(node)
        return {k: ("ON" if variables[k] else "OFF") if isinstance(variables[k], bool) else variables[k]
                for k in op["fields"] if k in variables}

    def _binlog_state(self, node: Node) -> str:
        """@@gtid_binlog_state: per domain each server's last GTID, the domain's most recent last
        (MYSQL_BIN_LOG::append_state, rpl_binlog_state::get_gtid_list), from the state a SET
        GLOBAL gtid_binlog_state started the binlog with on, less the domains deleted since."""
        return ",".join(F.gtid(*g) for g in DOM.listed(self.domains.gtid_lists(node, torn=False)[1]))

    @staticmethod
    def _binlog_files(node: Node) -> list[str] | None:
        if not node.log_bin:  # ER_NO_BINARY_LOGGING
            return None
        return [f for f in dict.fromkeys(e.file for e in node.binlog) if f not in node.purged]

    def _shows_binary_logs(self, node: Node, op: dict) -> list[str] | None:
        return self._binlog_files(node)

    def _shows_binlog_events(self, node: Node, op: dict) -> list[dict] | None:
        files = self._binlog_files(node) or []
        wanted = F.binlog_number(op["in"]) if "in" in op else None
        name = next((f for f in files if wanted is None or F.binlog_number(f) == wanted), None)
        if name is None:  # ER_ERROR_WHEN_EXECUTING_COMMAND: could not find target log
            return None
        entries = [e for e in node.binlog if e.file == name]
        return F.after_header([{"Event_type": F.EVENT_TYPE_SHOWN.get(e.ev.type, e.ev.type),
                                "Info": _event_info(e, entries)} for e in entries])

    def _shows_result(self, node: Node, op: dict) -> dict | None:
        """The last statement's answer as a client reads it: its error, else the first warning SHOW
        WARNINGS lists, which for a deprecated spelling is the parser's deprecation, pushed before
        the statement runs."""
        last = self.sim.last_stmt.get(node.id)
        if last is None:
            return None
        if last.get("errno") is None and self.mech.deprecated_slave_syntax and last.get("op") in DEPRECATED_SPELLINGS:
            old, new = DEPRECATED_SPELLINGS[last["op"]]
            return {"errno": None, "warning": ER_WARN_DEPRECATED_SYNTAX,
                    "message": f"'{old}' is deprecated and will be removed in a future release. Please use {new} instead"}
        return {k: last.get(k) for k in ("errno", "warning", "message")}

    @staticmethod
    def _shows_rows(node: Node, op: dict) -> list[str]:
        return sorted(node.visible)

    def _remaining(self, ch: Channel) -> int:
        """SQL_Remaining_Delay: the seed's whole seconds left; a server that measures its clock
        difference counts to a deadline on its own clock (sql_delay_end - time(0)), which a clock step
        since the wait began moves (its wake-up, a timed wait set at the start, it does not)."""
        due = ch.cur_due
        if ch.clock_diff_s is not None:
            due += ch.cur_due_offset - ch.node.offset
        return self.rule.remaining_s(due, self.sim.now)

    def _seconds_behind(self, ch: Channel) -> int | None:
        """MariaDB (slave.cc, send_show_master_info_data): NULL unless the IO thread is connected and the
        SQL thread runs; 0 while caught up or before any timestamp; else now - last_master_timestamp -
        clock difference, never negative. MySQL (rpl_replica.cc, show_slave_status_send_data): NULL
        unless the SQL thread runs; caught up is Exec_Master_Log_Pos == Read_Master_Log_Pos, 0 with the
        IO thread connected and NULL without; otherwise the same difference, whatever the IO thread.
        The clock difference is the writer's offset, as the delay rule compensates it (model/delay.py)."""
        if not ch.sql_running:
            return None
        if self.mech.seconds_behind_master == X.MARIADB:
            if not ch.connected:
                return None
            if ch.sql_thread_caught_up:
                return 0
        elif (ch.read_master_file, ch.read_master_pos) == self.rli.exec_master(ch):
            return 0 if ch.connected else None
        if ch.last_master_timestamp is None:
            return 0
        when, off = ch.last_master_timestamp
        if ch.clock_diff_s is not None:  # time(0) - last_master_timestamp - clock_diff_with_master, as shown
            return max(0, self.sim.local(ch.node, self.sim.now) // US - when - ch.clock_diff_s)
        return max(0, (self.sim.now - (when * US - off - self.sim.epoch)) // US)


def _event_info(entry: Entry, entries: list[Entry]) -> str:
    """SHOW BINLOG EVENTS' Info column where the model knows it (MariaDB's wording, log_event_server.cc
    Gtid_log_event::pack_info, Incident_log_event::pack_info and Rotate_log_event::pack_info): a
    group's GTID, BEGIN before it unless the group is one DDL statement; an incident's code; a
    Rotate's next binlog. The statements' text is not modelled."""
    ev = entry.ev
    if ev.type == "GTID_LOG_EVENT":
        xid = any(e.ev.gtid == ev.gtid and e.ev.type == "XID_EVENT" for e in entries)
        return f"{'BEGIN ' if xid else ''}GTID {ev.gtid}"
    if ev.type == "INCIDENT_EVENT":  # Incident_log_event::pack_info: "#<code> (<name>)"
        return f"#{ev.incident} ({I.symbol(ev.incident)})"
    if ev.type == "ROTATE_EVENT":
        number = int(F.binlog_number(entry.file)) + 1
        return f"{entry.file.rpartition('.')[0]}.{number:06d};pos={BINLOG_START}"
    return ""
