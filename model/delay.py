"""Time-delayed replication: WL#344 (per event, originating master's event timestamp, whole
seconds) and WL#7318 (per transaction at the GTID event, immediate master's commit timestamp in
microseconds, falling back to WL#344 when the immediate master sends none).

The simulator asks this module three things: when an event read by the SQL thread becomes due,
what the SQL thread's state strings are, and whether a MASTER_DELAY value is accepted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields
from operator import attrgetter

from replcheck.spec.formats import MAX_MASTER_DELAY, US

from . import mutants as M


WL344, WL7318 = "wl344", "wl7318"

STATE_WAITING = "Waiting until MASTER_DELAY seconds after master executed event"
STATE_IDLE = "Slave has read all relay log; waiting for the slave I/O thread to update it"
STATE_EXECUTING = "Executing event"

# Never waited for: they only change the SQL thread's own state, and ROTATE_EVENT's timestamp
# is sometimes wrong (WL#344).
EXEMPT = frozenset({"START_EVENT_V3", "ROTATE_EVENT", "FORMAT_DESCRIPTION_EVENT"})
TRX_START = frozenset({"GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT"})
# The events no group holds: MariaDB's Log_event::is_group_event is false for them (sql/log_event.h)
NOT_GROUP_EVENTS = frozenset({"START_EVENT_V3", "STOP_EVENT", "ROTATE_EVENT", "SLAVE_EVENT", "FORMAT_DESCRIPTION_EVENT",
                              "INCIDENT_EVENT", "HEARTBEAT_LOG_EVENT", "BINLOG_CHECKPOINT_EVENT", "GTID_LIST_EVENT",
                              "START_ENCRYPTION_EVENT"})

ER_PARSE_ERROR = 1064
ER_MASTER_DELAY_VALUE_OUT_OF_RANGE = 1729


@dataclass(frozen=True, slots=True)  # slots: a long History holds millions
class Event:
    """One binlog event as it travels: immutable, shared by every log that holds it."""

    type: str
    trx: str | None = None
    idx: int = 0  # position within its transaction
    last: bool = False  # ends its event group
    when: int = 0  # header timestamp: whole seconds, clock of the server that first executed it
    when_off: int = 0  # that server's clock offset when it wrote `when` (µs)
    server_id: int = 0
    gtid: str | None = None
    # immediate_commit_timestamp (µs, immediate master's clock) of the GTID event that opened
    # the group, copied to every event of the group: the SQL thread remembers it.
    ict: int | None = None
    ict_off: int = 0
    oct: int | None = None  # original_commit_timestamp, µs, clock of the originating master
    oct_off: int = 0
    cost_us: int = 0  # time the replica spends executing it
    size: int = 40
    incident: int | None = None  # INCIDENT_EVENT only: its code and message (WL#3464)
    message: str = ""
    table: str = ""  # the table its transaction writes (model/filter.py)
    skip: bool = False  # LOG_EVENT_SKIP_REPLICATION_F: written by a session with @@skip_replication
    error_code: int = 0  # QUERY_EVENT: the error the statement got on the source (model/srcerr.py)
    # written by a replica's relay log itself at a rotation (LOG_EVENT_RELAY_LOG_F, or the artificial
    # copy of the source's format description): never received from the source
    relay_log: bool = False
    until_reached: bool = False  # GTID_LIST_EVENT only: MariaDB's FLAG_UNTIL_REACHED, the dump's last event

    def restamped(self, ict: int | None, ict_off: int) -> "Event":
        """This event with another immediate commit timestamp, as a replica logs it again: made from
        its values read at once, where dataclasses.replace reads and passes them field by field."""
        values = list(_VALUES(self))
        values[_ICT], values[_ICT_OFF] = ict, ict_off
        return Event(*values)


_NAMES = [f.name for f in fields(Event)]
_VALUES = attrgetter(*_NAMES)
_ICT, _ICT_OFF = _NAMES.index("ict"), _NAMES.index("ict_off")


# MariaDB's parser takes MASTER_DELAY as ulong_num: a plain, hexadecimal, decimal or float literal,
# read by my_strtoll10 up to its first non-digit (sql_yacc.yy), so 1.5 is 1 and 1e3 is 1; a sign
# other than + is a syntax error. Measured on 10.11 (the d1-invalid-values scenario and by hand:
# +5, 0x10, .5, 7., 2.5e1, 2147483647.9 are accepted as 5, 16, 0, 7, 2, 2147483647).
_MARIADB_NUMBER = re.compile(r"\+?(?:(?P<int>[0-9]+)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|0x(?P<hex>[0-9a-fA-F]+)")


def parse_master_delay(text: str, ulong_num: bool = False, server: str = "MySQL") -> tuple[int | None, int | None, str]:
    """(delay, errno, message) for the token after MASTER_DELAY = ; delay None on error. The seed
    takes a non-negative integer only; `ulong_num`, what MariaDB's parser takes. `server` is the
    name ER_PARSE_ERROR's text gives."""
    token = text.strip()
    number = _MARIADB_NUMBER.fullmatch(token) if ulong_num else None
    if number or re.fullmatch(r"[0-9]+", token):
        value = int(number["hex"], 16) if number and number["hex"] else int(number["int"] or 0) if number else int(token)
        if value > MAX_MASTER_DELAY:
            return None, ER_MASTER_DELAY_VALUE_OUT_OF_RANGE, (
                f"The requested value {value} for the master delay exceeds the maximum {MAX_MASTER_DELAY}")
        return value, None, ""
    # ER_PARSE_ERROR, "%s near '%-.80s' at line %d" after ER_SYNTAX_ERROR's text, which names the
    # server (sql/share/errmsg-utf8.txt; MariaDB's rpl_delayed_slave.result shows it whole)
    return None, ER_PARSE_ERROR, (
        f"You have an error in your SQL syntax; check the manual that corresponds to your "
        f"{server} server version for the right syntax to use near '{token[:80]}' at line 1")


def _true_us(local_us: int, writer_off: int, epoch_us: int) -> int:
    return local_us - writer_off - epoch_us


@dataclass(frozen=True)
class DelayRule:
    """The SQL thread's wait rule of one system: WL#344 or WL#7318, possibly mutated."""

    rule: str = WL344
    mutants: frozenset[M.Mutant] = frozenset()
    round_up: bool = False  # immediate_commit_timestamp to whole seconds: up (MySQL 8.0), or down (the seed)
    replica_clock: bool = False  # the commit timestamp is compared with the replica's clock, uncompensated (MySQL 8.0)

    def uses_commit_timestamp(self, ev: Event) -> bool:
        return self.rule == WL7318 and ev.ict is not None

    def due(self, ev: Event, delay_s: int, now: int, replica_off: int, epoch_us: int, clock_diff_s: int | None = None) -> int | None:
        """True time (µs) before which `ev` must not execute; None when it does not wait. With the
        clock difference the replica measured (`clock_diff_s`), an event timestamp is due at
        when + clock_diff_with_master + delay on the replica's clock (sql_delay_event); without, at
        the exact instant the writer's offset gives."""
        m = self.mutants
        if ev.type in EXEMPT:
            if M.FAKE_EVENT_NOW in m and ev.when == 0:
                return now + delay_s * US
            return None
        if not delay_s:
            # No delay set, no wait, even for an event dated ahead: sql_delay_event waits only
            # `if (sql_delay)` (MariaDB sql/slave.cc, MySQL sql/rpl_replica.cc); MariaDB's
            # rpl_delayed_slave2 applies day-ahead events at once after MASTER_DELAY = 0.
            return None
        if self.uses_commit_timestamp(ev):
            if ev.type not in TRX_START:
                if M.PER_EVENT_WAIT not in m:
                    return None  # F3: the rest of the transaction follows its GTID event
                local, off = ev.when * US, ev.when_off
            elif M.ORIGIN_TIMESTAMP in m and ev.oct is not None:
                local, off = ev.oct // US * US, ev.oct_off
            elif M.START_TIMESTAMP in m:
                local, off = ev.when * US, ev.when_off
            else:
                # The seed's immediate_commit_timestamp / 1000000: whole seconds, rounded down; MySQL 8.0
                # rounds up (rpl_replica.cc, sql_delay_event: ceil(immediate_commit_timestamp / 1000000.00)).
                local, off = (-(-ev.ict // US) if self.round_up else ev.ict // US) * US, ev.ict_off
                if self.replica_clock:
                    off = replica_off
        else:
            local, off = ev.when * US, ev.when_off
            if clock_diff_s is not None:
                off = replica_off - clock_diff_s * US
        if M.NO_CLOCK_COMPENSATION in m:
            off = replica_off
        return _true_us(local, off, epoch_us) + delay_s * US

    def remaining_s(self, due: int, now: int) -> int:
        """SQL_Remaining_Delay while waiting: whole seconds left, rounded up."""
        return max(0, -((now - due) // US))
