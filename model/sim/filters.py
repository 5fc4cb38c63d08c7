"""Replication filters as a component (the rules are model/filter.py's): binlog-do/ignore-db on
the source, the dump thread dropping what a replica filters on the master (@@skip_replication with
--replicate-events-marked-for-skip=FILTER_ON_MASTER), and a replica's own filters on what its SQL
thread reads. A feature on the core's hooks.
"""
from __future__ import annotations

from typing import Any

from replcheck.spec import vocabulary as V

from .. import filter as FL
from .. import mechanics as X
from ..delay import Event
from .component import Feature
from .state import Channel, Node

ER_WRONG_TYPE_FOR_VAR = 1232


class Filters(Feature):
    """What the filters keep from the binlog, the dump thread and the SQL thread."""

    def on_commit(self, node: Node, trx: str, start: int, op: dict) -> dict | None:
        """binlog-do/ignore-db: the commit's table is not logged; the client's commit is done."""
        if FL.binlogged(node.variables, V.table_of(op)):
            return {}
        self.source.engine_commit(node, trx, None)
        self.emit("commit", node.id, trx=trx, gtid=None, start=start, **V.commit_fields(op, self.sim.filtering))
        return None

    # The replica's settings are its running values (node.runtime): replicate_events_marked_for_skip
    # changes by SET GLOBAL with the slave stopped, and the IO thread asks for FILTER_ON_MASTER as it
    # connects, so the value read as the dump sends is the one it connected with.
    @staticmethod
    def sends(ch: Channel, ev: Event) -> bool:
        return FL.sent(ch.node.runtime, ev.skip)

    @staticmethod
    def ignores_group(ch: Channel, ev: Event) -> str:
        """A marked group ignored before the skip counter counts it: Log_event::do_shall_skip
        (log_event_server.cc) returns EVENT_SKIP_IGNORE for a marked event ahead of EVENT_SKIP_COUNT."""
        why = FL.replica_filter(ch.node.runtime, ev.table, ev.skip)
        return why if why == FL.SKIP_REPLICATION else ""

    @staticmethod
    def filters_group(ch: Channel, ev: Event) -> str:
        """Applied, with its delay, as a no-op: the rule filtered its table inside the events' apply."""
        return FL.replica_filter(ch.node.runtime, ev.table, ev.skip)

    def on_set_global(self, node: Node, name: str, value: Any, op: dict) -> bool:
        """SET GLOBAL replicate_events_marked_for_skip: one of REPLICATE, FILTER_ON_SLAVE,
        FILTER_ON_MASTER (or its number), refused while a connection runs with ER_SLAVE_MUST_STOP
        naming it (MariaDB rpl_skip_replication.result: "This operation cannot be performed as you
        have a running slave ''; run STOP SLAVE '' first"; sys_vars.cc checks it with
        give_error_if_slave_running). Measured on 10.11.19: that refusal while the IO thread
        connects, 2 taken as FILTER_ON_MASTER, 'nonsense' refused with 1231."""
        if name == FL.MARKED:
            self.admin.take_global(node, name, value, FL.marked_value(value), stopped_only=True)
            return True
        if name in V.REPLICA_RULES and self.mech.texts == X.MARIADB:
            self._set_rule(node, name, value)
            return True
        return False  # MySQL's rules are no variables (CHANGE REPLICATION FILTER): an unknown variable

    def _set_rule(self, node: Node, name: str, value: Any) -> None:
        """SET GLOBAL replicate_do_db (and the other replicate-* rules) on MariaDB: a comma-separated
        list, '' for none, taken with the replica's threads stopped and refused while they run with
        ER_SLAVE_MUST_STOP ("When setting it dynamically, the replica threads must be stopped",
        the MariaDB manual's replicate_do_table; mysql-test rpl_filter_vars / MDEV-15530 checks that
        the slave has to be stopped first); a number is no list (ER_WRONG_TYPE_FOR_VAR,
        sys_vars.replicate_do_db_basic.result). Applied from the SQL thread's next event."""
        if isinstance(value, (int, float)) or value is None:
            self.emit("stmt", node.id, op="set_global", variable=name, value=value, errno=ER_WRONG_TYPE_FOR_VAR,
                      message=f"Incorrect argument type to variable '{name}'")
            return
        self.admin.take_global(node, name, value, str(value), stopped_only=True)
