"""CHANGE MASTER TO DO_DOMAIN_IDS / IGNORE_DOMAIN_IDS (MariaDB 10.1+): the IO thread of a replica
by GTID drops the groups of the domains the lists leave out (sql/slave.cc queue_event: a Gtid
event starts Domain_id_filter::do_filter, the group's events are then not written to the relay
log; sql/rpl_mi.cc Domain_id_filter). A feature on the core's hooks; admin.py asks it about the
statement.
"""
from __future__ import annotations

from replcheck.spec import formats as F


from .component import Feature
from .state import Channel, Entry

ER_MASTER_INFO = 1201
DO, IGNORE = "do_domain_ids", "ignore_domain_ids"


class DomainFilter(Feature):
    """Which domains a connection's IO thread drops, and CHANGE MASTER's checks of the lists."""

    def refusal(self, ch: Channel, op: dict, by_gtid: bool) -> tuple[int, str] | None:
        """Domain_id_filter::update_ids (rpl_mi.cc), with the Using_Gtid the statement leaves: both
        lists non-empty, or a list non-empty with MASTER_USE_GTID=no, fails the statement with
        ER_MASTER_INFO (the reason goes to the error log only); nothing of it is taken."""
        do = op[DO] if DO in op else ch.do_domains
        ignore = op[IGNORE] if IGNORE in op else ch.ignore_domains
        if (do and ignore) or ((do or ignore) and not by_gtid):
            name = ch.connection or ""
            return ER_MASTER_INFO, (f"Could not initialize master info structure for '{name}'; more error messages "
                                    "can be found in the MariaDB error log")
        return None

    @staticmethod
    def take(ch: Channel, op: dict) -> None:
        """The lists given, sorted and without repeats (update_change_master_ids sorts them)."""
        if DO in op:
            ch.do_domains = tuple(sorted(set(op[DO])))
        if IGNORE in op:
            ch.ignore_domains = tuple(sorted(set(op[IGNORE])))

    @staticmethod
    def status_fields(ch: Channel, fields: dict) -> None:
        if ch.do_domains or ch.ignore_domains or "Using_Gtid" in fields:  # MariaDB's columns
            fields["Replicate_Do_Domain_Ids"] = ", ".join(map(str, ch.do_domains))
            fields["Replicate_Ignore_Domain_Ids"] = ", ".join(map(str, ch.ignore_domains))

    def queues(self, ch: Channel, src: Entry) -> Entry | None:
        """A group's Gtid event decides whether the IO thread drops the group (queue_event: only with
        Using_Gtid other than No); its events are then read past, not relayed. Its GTID still goes to
        gtid_slave_pos, as a filtered group's does, so a later START SLAVE does not ask for it again
        (measured on 10.11.19: gtid_slave_pos 0-1-3,2-1-3 with domain 2 ignored, mdb-rpl_gtid_mdev9033;
        rpl_domain_id_filter.result: a domain's rows dropped once never arrive after the lists change)."""
        ev = src.ev
        if ev.trx is None or not (ch.do_domains or ch.ignore_domains or ch.dropping_group) or not self.receiver.gtid_replica(ch):
            return src
        if ev.idx == 0 and ev.gtid:
            domain = F.parse_gtid(ev.gtid)[0]
            ch.dropping_group = domain in ch.ignore_domains or bool(ch.do_domains and domain not in ch.do_domains)
        if not ch.dropping_group:
            return src
        if src.end:
            ch.read_master_file, ch.read_master_pos = src.file, src.end
        if ev.last:
            ch.dropping_group = False
            node, domain = ch.node, F.parse_gtid(ev.gtid)[0]
            self.emit("filtered", node.id, trx=ev.trx, gtid=ev.gtid, reason="domain_filter")
            node.executed.add(ev.gtid)
            node.record_slave_gtid(ev.gtid, self.mech.gtid_seq_follows_domain)
            node.filter_recorded[domain] = ev.gtid
        return None
