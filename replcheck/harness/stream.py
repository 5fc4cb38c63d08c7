"""The binlog stream a source sends a replica, read by the channel's relay so that it can cut the
connection between two events (the History op `cut_io`).

After COM_BINLOG_DUMP the source's dump thread sends each event as one network packet: the OK byte
0x00, then, to a replica that asked for semi-sync, the 2-byte semi-sync header (0xEF and the
flag asking for an ack), then the event (mysql_binlog_send and send_event_to_slave in
sql/sql_repl.cc; the header in repl_semi_sync_master.cc). A payload of 0xFFFFFF bytes continues in
the next packet (the client/server protocol's split of packets over 16 MB). The event begins with
the common header: timestamp 4, type 1, server_id 4, event_size 4, log_pos 4 (its end in the
source's binlog; 0 for the fake Rotate and the heartbeats), flags 2. An error packet (0xFF, e.g.
1236) or EOF (0xFE) carries no event. Whether a payload carries the semi-sync header is read from
the sizes, not guessed from the 0xEF byte: the header is there exactly when the event after it is
as long as its event_size says.

A group is what MariaDB's GTID event begins (GTID_EVENT, 162): it ends with its XID_EVENT, a Query
COMMIT or ROLLBACK (a group of non-transactional changes), or, for a group flagged FL_STANDALONE
(DDL), with the one event after the GTID. The Rotate, format description, Gtid_list and
Binlog_checkpoint events the dump sends at its start, and the heartbeats, are in no group.

The cut is counted as the reference model counts it (model/sim/dump.py, arrive): in events of groups,
where a statement is one event. Under binlog_format=ROW a statement is an Annotate_rows, Table_maps
and Rows events of which the last carries STMT_END_F; it counts once, when that last one has
passed, so `after_events: 2` cuts after the GTID event and the first statement whatever the
format. The events a GTID reconnect sends again, which the IO thread already queued and does not
queue twice (queue_event's gtid_reconnect_event_skip_count, sql/slave.cc), are not counted. (A
START SLAVE with both threads stopped purges the relay logs and resets that count
(start_slave_threads): the group is then queued whole again, but the relay cannot see the purge
and still leaves its first events uncounted, so a cut armed across such a restart falls that many
events later than the model's.)
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

OK, ERR, EOF = 0x00, 0xFF, 0xFE
SEMI_SYNC_MAGIC = 0xEF
MAX_PAYLOAD = 0xFFFFFF  # a payload this long continues in the next packet
COMMON_HEADER = 19
# Log_event_type codes (sql/log_event.h)
QUERY, ROTATE, XID, HEARTBEAT, GTID = 2, 4, 16, 27, 162
ROWS = frozenset({23, 24, 25, 30, 31, 32, 169, 170, 171, 172, 173, 174})  # v1, v2 and compressed Rows events
STMT_END_F = 1  # Rows_log_event flags, after the 6-byte table id
FL_STANDALONE = 1  # Gtid_log_event flags2
QUERY_POST_HEADER = 13  # thread id 4, exec time 4, db length 1, error code 2, status vars length 2
GROUP_END_QUERY = re.compile(rb"(COMMIT|ROLLBACK)[\s\S]{0,4}")  # up to 4 checksum bytes after it


@dataclass(frozen=True)
class BinlogEvent:
    type: int
    server_id: int
    log_pos: int
    data: bytes  # the whole event, header first

    @property
    def body(self) -> bytes:
        return self.data[COMMON_HEADER:]


@dataclass(frozen=True)
class Packet:
    """One logical packet of the stream: its bytes as sent (every physical packet of it) and the
    event it carries, if any."""
    raw: bytes
    event: BinlogEvent | None


def event_of(payload: bytes) -> BinlogEvent | None:
    """The binlog event a dump packet's payload carries, with or without the semi-sync header."""
    if not payload or payload[0] != OK:
        return None
    for start in ((3, 1) if len(payload) > 2 and payload[1] == SEMI_SYNC_MAGIC else (1,)):
        data = payload[start:]
        if len(data) >= COMMON_HEADER and int.from_bytes(data[9:13], "little") == len(data):
            return BinlogEvent(data[4], int.from_bytes(data[5:9], "little"), int.from_bytes(data[13:17], "little"), data)
    return None


class DumpStream:
    """Bytes from the source after COM_BINLOG_DUMP, fed as they come, cut into whole packets."""

    def __init__(self) -> None:
        self._buf = b""
        self._raw = b""  # the physical packets of a split payload so far
        self._payload = b""

    def feed(self, data: bytes) -> list[Packet]:
        self._buf += data
        out = []
        while len(self._buf) >= 4 and len(self._buf) >= 4 + (n := int.from_bytes(self._buf[:3], "little")):
            packet, self._buf = self._buf[:4 + n], self._buf[4 + n:]
            self._raw += packet
            self._payload += packet[4:]
            if n == MAX_PAYLOAD:
                continue
            out.append(Packet(self._raw, event_of(self._payload)))
            self._raw = self._payload = b""
        return out


def has_checksum(ev: BinlogEvent) -> bool:
    """The event ends with its CRC32 (binlog_checksum=CRC32, which the replica asked to get): the
    last 4 bytes are the CRC32 of all before them. Told by the bytes, as the fake Rotate comes
    before the format description event that would say."""
    return len(ev.data) > COMMON_HEADER + 4 and zlib.crc32(ev.data[:-4]) == int.from_bytes(ev.data[-4:], "little")


def gtid_of(ev: BinlogEvent) -> str:
    """A Gtid_log_event's GTID, domain-server-sequence: seq_no 8, domain_id 4 (log_event.cc)."""
    b = ev.body
    return f"{int.from_bytes(b[8:12], 'little')}-{ev.server_id}-{int.from_bytes(b[0:8], 'little')}"


def standalone(gtid_body: bytes) -> bool:
    """A Gtid_log_event flagged FL_STANDALONE: its group is the one event after it (DDL)."""
    return len(gtid_body) > 12 and bool(gtid_body[12] & FL_STANDALONE)


def ends_statement(code: int, body: bytes) -> bool:
    """The event of a group is the last of a statement (or the group's end): a Query, an XID, or a
    Rows event flagged STMT_END_F (the Annotate_rows and Table_maps before it are not)."""
    if code in ROWS:
        return len(body) >= 8 and bool(int.from_bytes(body[6:8], "little") & STMT_END_F)
    return code in (QUERY, XID)


def ends_group(code: int, body: bytes, alone: bool) -> bool:
    """The event of a group (`alone`: its GTID was standalone) is the group's last: an XID, a Query
    COMMIT or ROLLBACK (query text after the post-header, the status variables and the db name)."""
    if code == XID:
        return True
    if code != QUERY:
        return alone and ends_statement(code, body)
    if alone or len(body) < QUERY_POST_HEADER:
        return alone
    db_len, vars_len = body[8], int.from_bytes(body[11:13], "little")
    return bool(GROUP_END_QUERY.fullmatch(body[QUERY_POST_HEADER + vars_len + db_len + 1:]))


class GroupCounter:
    """Where one channel's stream is in its groups, across its connections: counts the events of
    groups as the model does (see the module's text) and knows the source's binlog place of the
    last event passed (the file from the last Rotate, the position from log_pos)."""

    def __init__(self) -> None:
        self.gtid: str | None = None  # the group being passed
        self.standalone = False
        self.passed = 0  # events of it passed (as sent, each counted or not)
        self.partial: tuple[str, int] | None = None  # (gtid, events passed) of a group a cut left open
        self.resent = 0  # events of that group a reconnect sends again: not counted
        self.file, self.pos = "", 0

    def connected(self) -> None:
        """A new dump: the stream starts outside any group; a group left open is sent again."""
        if self.gtid is not None and self.passed:
            self.partial = (self.gtid, self.passed)
        self.gtid, self.passed = None, 0

    def count(self, ev: BinlogEvent) -> int:
        """Passes the event; returns how many events of groups (as the model counts) it completes."""
        if ev.type == ROTATE and len(ev.body) >= 8:
            # position 8, then the file name to the end, less the checksum if the event has one
            name = ev.body[8:-4] if has_checksum(ev) else ev.body[8:]
            self.file, self.pos = name.decode("utf-8", "replace"), int.from_bytes(ev.body[:8], "little")
            return 0
        if ev.log_pos and ev.type != HEARTBEAT:
            self.pos = ev.log_pos
        if ev.type == GTID:
            self.gtid, self.passed = gtid_of(ev), 1
            self.standalone = standalone(ev.body)
            self.resent = self.partial[1] if self.partial and self.partial[0] == self.gtid else 0
            self.partial = None
            return int(self.passed > self.resent)
        if self.gtid is None:
            return 0  # in no group: the dump's fake events, a heartbeat
        self.passed += 1
        counted = ends_statement(ev.type, ev.body) and self.passed > self.resent
        if ends_group(ev.type, ev.body, self.standalone):
            self.gtid = None
        return int(counted)
