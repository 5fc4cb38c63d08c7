"""A replica's relay logs, read as they grow with mariadb-binlog (the server's own reader).

    logs = RelayLogs(tool, directory, own_server_id=2)
    for name, ev in logs.read():  # the events written since the last read, in order
        ...
    logs.gaps  # what could not be read: the trace cannot claim to have seen every relayed event

Format: `mariadb-binlog --hexdump --base64-output=never --start-position=P FILE` prints, for each
event, a `# at <position>` line, then a table of its 19-byte common header and a hex dump of all
its bytes, then `# Event: <text>`, e.g. (a real relay log, tests/harness/relay-sample.txt):

    # at 658
    #261123  6:51:13 server id 1  end_log_pos 533 CRC32 0x046cb6f6
    # Position
    #           |Timestamp   |Type |Master ID   |Size        |Master Pos  |Flags
    #      292  |61 e2 03 6b |1a   |01 00 00 00 |39 00 00 00 |15 02 00 00 |00 00
    #
    #      292  61 e2 03 6b 1a 01 00 00  00 39 00 00 00 15 02 00  |a..k.....9......|
    #      2a2  00 00 00 01 00 1f 65 72  72 6f 72 20 77 72 69 74  |......error writ|
    ...
    # Event:

The header gives what the text line rounds or omits (the whole-second timestamp, not local time;
the type code; the size, so the next event's position). In a relay log, Master Pos (end_log_pos)
is the event's end in the *master's* binlog, as the IO thread received it. The position column
of the dump is not the event's: mariadb-binlog holds an Annotate_rows back and prints it with the
Table_map after it, both dumps labelled with the Table_map's position (`# at 757` and `# at 829`
come first, then both headers), so positions come from the `# at` lines, in order, checked by
chaining each event's position and size.

Incremental: each file is read from where the last read stopped. mariadb-binlog stops at an event
the IO thread has not finished writing ("Event truncated" on stderr, exit 1); what it printed
before is kept and the rest read next time. Relay logs vanish (the SQL thread purges those it
finished; RESET SLAVE, a GTID START SLAVE and relay_log_recovery purge all of them and start
numbering again at .000001, so a name is reused, and a new file may get the old one's inode: a
file is the one read before if its inode is, it is no shorter than what was read, and its bytes
just before where the reading stopped are still the last event's checksum). A file that
vanished with bytes never read, a file number skipped, or a file still unreadable at the final
read is a gap, recorded in `gaps` and never guessed at.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field

# Log_event_type codes (sql/log_event.h) as SHOW BINLOG EVENTS names them: the runner's binlog
# reader maps these names to the trace's types and groups.
TYPE_NAMES = {
    2: "Query", 3: "Stop", 4: "Rotate", 15: "Format_desc", 16: "Xid", 19: "Table_map",
    23: "Write_rows_v1", 24: "Update_rows_v1", 25: "Delete_rows_v1", 26: "Incident",
    160: "Annotate_rows", 161: "Binlog_checkpoint", 162: "Gtid", 163: "Gtid_list",
}
AT = re.compile(r"^# at (\d+)$")
HEADER = re.compile(r"^#\s+[0-9a-f]+\s+\|([0-9a-f ]+)\|([0-9a-f ]+)\|([0-9a-f ]+)\|([0-9a-f ]+)\|([0-9a-f ]+)\|([0-9a-f ]+)$")
DUMP = re.compile(r"^#\s+[0-9a-f]+  ((?:[0-9a-f]{2} {1,2})+)\s*\|")
TEXT = re.compile(r"^# Event: ?(.*)$")
COMMON_HEADER = 19  # timestamp 4, type 1, server id 4, size 4, log_pos 4, flags 2 (log_event.h LOG_EVENT_HEADER_LEN)


class RelayLogError(Exception):
    """mariadb-binlog printed something this parser cannot place: a reader failure, never a finding."""


@dataclass
class Event:
    pos: int  # where it starts in the relay log
    size: int
    when: int  # the header's timestamp (0 for an artificial event: the master's fake Rotate)
    code: int
    server_id: int
    end: int  # end_log_pos: its end in the master's binlog (0 for a fake Rotate, a resumed dump's FDE)
    text: str = ""  # mariadb-binlog's description, e.g. 'GTID 0-1-2 trans', 'Rotate to bin.000001  pos: 4'
    post: bytes = b""  # the event's bytes after its common header

    @property
    def name(self) -> str:
        return TYPE_NAMES.get(self.code, f"Unknown_{self.code}")

    def exec_time(self) -> int:
        """A Query event's exec_time (post-header: thread id 4, then exec_time 4; log_event.h
        Q_EXEC_TIME_OFFSET), which the replica adds to its timestamp for Seconds_Behind_Master; 0
        for any other event. The source wrote it as its clock at the end less the statement's start,
        which SET TIMESTAMP sets (Query_log_event's constructor: `exec_time = (ulong)(end_time -
        thd->start_time)`, kept to 4 bytes): a timestamp set back makes it that much larger, one set
        ahead wraps it below 2**32."""
        return int.from_bytes(self.post[4:8], "little") if self.code == 2 and len(self.post) >= 8 else 0

    def incident(self) -> dict:
        """An Incident's code and message (post-header: 2-byte code, 1-byte length, message;
        log_event.cc Incident_log_event), which mariadb-binlog's text omits."""
        b = self.post
        if len(b) < 3:
            return {}
        return {"incident": int.from_bytes(b[:2], "little"), "message": b[3:3 + b[2]].decode("utf-8", "replace")}


def parse(text: str, start: int) -> list[Event]:
    """The complete events mariadb-binlog --hexdump printed from `start`, in file order."""
    ats: list[int] = []
    events: list[Event] = []
    dump: list[str] = []
    for line in text.splitlines():
        if m := AT.match(line):
            ats.append(int(m.group(1)))
        elif m := HEADER.match(line):
            ts, code, sid, size, end, _flags = (bytes.fromhex(g) for g in m.groups())
            events.append(Event(-1, int.from_bytes(size, "little"), int.from_bytes(ts, "little"), code[0],
                                int.from_bytes(sid, "little"), int.from_bytes(end, "little")))
            dump = []
        elif events and (m := DUMP.match(line)):
            dump.append(m.group(1))
        elif events and (m := TEXT.match(line)):
            ev = events[-1]
            ev.text = m.group(1).strip()
            # The dump of the first event printed after --start-position begins with the common
            # header, the others' just after it (seen in both tests/harness/relay-sample.txt files):
            # the event's own bytes are its last size - 19.
            ev.post = bytes.fromhex("".join(dump))[COMMON_HEADER - ev.size:] if ev.size > COMMON_HEADER else b""
    if len(events) > len(ats):
        raise RelayLogError(f"{len(events)} event headers but {len(ats)} '# at' lines")
    at = start
    for ev, pos in zip(events, ats):  # a trailing '# at' without its header was not read whole
        if pos != at:
            raise RelayLogError(f"an event at {pos}, expected at {at} (the previous event's end)")
        ev.pos, at = pos, pos + ev.size
    return events


def read_file(tool: str, path: str, start: int = 4) -> tuple[list[Event], str]:
    """mariadb-binlog (`tool`) on a binlog or relay-log file from `start`: the whole events it
    printed, and its complaint if it stopped short (at an event still being written, or at a file
    purged meanwhile)."""
    try:
        out = subprocess.run([tool, "--no-defaults", "--hexdump", "--base64-output=never", f"--start-position={start}", path],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace", timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return [], str(e)
    try:
        events = parse(out.stdout, start)
    except RelayLogError as e:
        return [], f"unreadable output of {os.path.basename(tool)}: {e}"
    return events, (out.stderr.strip().splitlines() or [""])[0] if out.returncode else ""


@dataclass
class _File:
    inode: int
    number: int
    next: int = 4  # past the 4-byte magic: where the next unread event starts
    size: int = 4  # its size at the last look
    closed: bool = False  # a later file was listed when it was last read to its end
    tail: bytes = b""  # the last 4 bytes of the last event read (its CRC32): the file's identity


@dataclass
class RelayLogs:
    tool: str  # mariadb-binlog
    directory: str  # the replica's directory: relay.index and relay.NNNNNN
    label: str = ""  # who they belong to, in gap notes
    basename: str = "relay"
    files: dict[str, _File] = field(default_factory=dict)
    highest: int = 0  # the highest file number seen
    gaps: list[str] = field(default_factory=list)

    def read(self, settled: bool = False, final: bool = False) -> list[tuple[str, Event]]:
        """The events written since the last read, with their file's name. `settled`: nothing
        writes to them now (the IO thread is stopped, the server down), so a file read to its end
        is whole. `final`: the last read: what is still unreadable is a gap."""
        listed = self._index()
        for name in [n for n in self.files if n not in listed]:
            self._vanished(name)
        out: list[tuple[str, Event]] = []
        for i, name in enumerate(listed):
            try:
                st = os.stat(os.path.join(self.directory, name))
            except FileNotFoundError:
                if name in self.files:
                    self._vanished(name)
                continue
            f = self.files.get(name)
            if f is not None and not _same(os.path.join(self.directory, name), f, st):  # purged and created again
                self._vanished(name)
                f = None
            if f is None:
                number = int(name.rsplit(".", 1)[1])
                if self.highest and number > self.highest + 1:
                    self._gap(f"{self.basename}.{self.highest + 1:06d} to .{number - 1:06d} were purged unread")
                self.highest = max(self.highest, number)
                f = self.files[name] = _File(st.st_ino, number)
            f.size = st.st_size
            if f.next < st.st_size:
                events, error = self._run(name, f.next)
                out += [(name, ev) for ev in events]
                if events:
                    f.next, f.tail = events[-1].pos + events[-1].size, events[-1].post[-4:]
                if final and f.next < f.size:
                    self._gap(f"{name}: {f.size - f.next} bytes from {f.next} unread ({error or 'no event printed'})")
                    f.next = f.size
            f.closed = (settled or i < len(listed) - 1) and f.next >= f.size
        return out

    def _index(self) -> list[str]:
        """The relay log files the index lists, oldest first (the index holds their paths)."""
        try:
            with open(os.path.join(self.directory, f"{self.basename}.index"), encoding="utf-8") as fh:
                return [os.path.basename(line.strip()) for line in fh if line.strip()]
        except FileNotFoundError:
            return []

    def _run(self, name: str, start: int) -> tuple[list[Event], str]:
        return read_file(self.tool, os.path.join(self.directory, name), start)

    def _vanished(self, name: str) -> None:
        f = self.files.pop(name)
        if not f.closed:
            self._gap(f"{name} was purged with {f.size - f.next} bytes from {f.next} unread, or written to after "
                      f"its last read")

    def _gap(self, what: str) -> None:
        self.gaps.append(f"relay log of {self.label}: {what}" if self.label else what)


def _same(path: str, f: _File, st: os.stat_result) -> bool:
    if f.inode != st.st_ino or st.st_size < f.next:
        return False
    if not f.tail:
        return True
    try:
        with open(path, "rb") as fh:
            fh.seek(f.next - len(f.tail))
            return fh.read(len(f.tail)) == f.tail
    except OSError:
        return False
