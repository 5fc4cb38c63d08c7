"""GTID ownership between a replica's named connections (multi-source): with
gtid_ignore_duplicates (MariaDB) or always (MySQL's channels), a group's GTID is decided once it
is due: skipped when applied already, waited for while another connection owns its domain, else
owned until the group commits or the SQL thread stops. A feature on the core's hooks.
"""
from __future__ import annotations

from typing import Any

from replcheck.spec import formats as F

from .. import delay as D
from .. import multisource as MS
from .. import mutants as M
from ..delay import Event
from .admin import on_off
from .component import Feature
from .state import Channel, Node


class Duplicates(Feature):
    """A replica's connections owning GTID domains (rpl_slave_state::check_duplicate_gtid)."""

    @staticmethod
    def decides_when_due(ch: Channel, ev: Event) -> bool:
        """A named connection decides at a group's GTID, once it is due (after MASTER_DELAY: the
        parallel worker, or the SQL thread past sql_delay_event, calls check_duplicate_gtid; measured
        on 10.11, a connection without delay applies a GTID at once while another holds it in its delay)."""
        return ch.connection is not None and ev.type in D.TRX_START and bool(ev.gtid)

    def on_group_due(self, ch: Channel, ev: Event) -> str | None:
        """A named connection at a group's GTID once it is due: "skip" (the reason the skip shows),
        "wait", or None to apply it. MariaDB without gtid_ignore_duplicates applies what each
        connection brings (gtid_slave_pos is shared, not consulted); with it
        rpl_slave_state::check_duplicate_gtid (sql/rpl_gtid.cc): skip when the domain is at or past
        the GTID, else wait while another connection owns the domain, else own it until the group
        commits or the SQL thread stops. MySQL's channels always skip a GTID in gtid_executed and
        wait while another thread owns it (sql/rpl_gtid_state.cc, Gtid_state::acquire_ownership):
        the same ownership, per GTID set instead of per domain."""
        if not self.decides_when_due(ch, ev):
            return None
        node, gtid = ch.node, ev.gtid
        mariadb = self.mech.gtid_domains
        if mariadb and not node.runtime.get(MS.IGNORE_DUPLICATES):
            return None
        if MS.duplicate(node, gtid) if mariadb else gtid in node.executed:
            return MS.SKIP_REASON if mariadb else "gtid already executed"
        domain = F.parse_gtid(gtid)[0]
        owner = node.domain_owner.get(domain)
        if owner is not None and owner[0] is not ch and M.IGNORE_DUPLICATES_RACE not in self.mutants:
            return "wait"
        # Owned once per group: a connection whose workers hold several groups of the domain keeps it
        # until the last commits (check_duplicate_gtid: "Already own this domain, increment reference
        # count"; release_domain_owner frees it at owner_count 0, sql/rpl_gtid.cc).
        node.domain_owner[domain] = [ch, owner[1] + 1 if owner is not None and owner[0] is ch else 1]
        return None

    def on_group_released(self, ch: Channel, gtid: str | None) -> None:
        """release_domain_owner: the group's domain is one group less the connection's, free again at
        none; at an SQL thread's stop all its domains are. Connections waiting for one read on."""
        node = ch.node
        mine = [d for d, (owner, _) in node.domain_owner.items() if owner is ch
                and (gtid is None or d == F.parse_gtid(gtid)[0])]
        freed = []
        for d in mine:
            node.domain_owner[d][1] -= 1
            if gtid is None or not node.domain_owner[d][1]:
                del node.domain_owner[d]
                freed.append(d)
        if freed:
            for other in MS.channels(node):
                if other is not ch and other.sql_running:
                    self.at(self.sim.now, self._resume, other, other.sql_gen)

    def _resume(self, ch: Channel, gen: int) -> None:
        if gen == ch.sql_gen and ch.state == "idle":
            self.applier.kick(ch)

    @staticmethod
    def on_crash(node: Node) -> None:
        node.domain_owner = {}

    def on_set_global(self, node: Node, name: str, value: Any, op: dict) -> bool:
        """SET GLOBAL gtid_ignore_duplicates (MariaDB): a boolean (ON/OFF, 1/0), only with every
        connection stopped; the next group a connection reads is checked by it."""
        if name != MS.IGNORE_DUPLICATES or not self.mech.gtid_domains:
            return False
        self.admin.take_global(node, name, value, on_off(value), stopped_only=True)
        return True
