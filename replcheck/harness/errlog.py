"""A server's error log: its lines read with their time and level, the line that says why a
start failed, and the log kept when the server's temporary folder is removed.

An error-log line's prefix comes in every format the servers write (reading only two-digit hours
once lost every line written before 10:00).
MariaDB's print_buffer_to_file (sql/log.cc) writes "%d-%02d-%02d %2d:%02d:%02d %lu [%s] ": the
hour is space-padded, so 03:07 is "2026-11-23  3:07:01", and the time is whole seconds of the
server's clock (its resolution: a line stamped S was written in [S, S + 1 s)). handle_fatal_signal
(sql/signal_handler.cc) writes "YYMMDD %2d:MM:SS [ERROR]" with no thread id. MySQL 8.0 writes ISO
8601 with microseconds and a subsystem ("2026-11-23T03:07:01.123456Z 0 [Note] [MY-010116] [Server] ...").
"""
from __future__ import annotations

import datetime
import os
import re
import shutil
import tempfile

LOG_LINE = re.compile(r"^(?P<stamp>\d{4}-\d\d-\d\d\s+\d{1,2}:\d\d:\d\d|\d{6}\s+\d{1,2}:\d\d:\d\d"
                      r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))"
                      r"(?:\s+\d+)?\s+\[(?P<level>\w+)\]\s+(?:\[MY-\d+\]\s+\[\w+\]\s+)?(?P<message>.*)$")
# What the server says as it gives up, after the line that says why (sql/mysqld.cc, unireg_abort).
ABORTING = re.compile(r"^Aborting\b")


def stamp_us(line_stamp: str) -> tuple[int, int] | None:
    """An error-log line's time as (Unix µs, resolution µs): the server's local time, in whole
    seconds unless the line carries a fraction. None when it cannot be read."""
    s = " ".join(line_stamp.split())
    for fmt in ("%Y-%m-%d %H:%M:%S", "%y%m%d %H:%M:%S"):
        try:
            t = datetime.datetime.strptime(s, fmt)
        except ValueError:
            continue
        return int(t.timestamp()) * 1_000_000, 1_000_000  # naive: the local time the server wrote
    try:
        t = datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    return round(t.timestamp() * 1_000_000), 1


def first_error(text: str) -> str | None:
    """The first `[ERROR]` line's message that is not the closing "Aborting": why it stopped."""
    for line in text.splitlines():
        m = LOG_LINE.match(line)
        if m and m["level"] == "ERROR" and not ABORTING.match(m["message"]):
            return m["message"].strip()
    return None


def keep(path: str, node: str, where: str | None = None) -> str:
    """A copy of the error log outside the servers' temporary root (which is removed), in a new
    folder of `where` (else the system's temporary folder); its path, or why it could not be kept."""
    try:
        folder = tempfile.mkdtemp(prefix="replcheck-failed-start-", dir=where)
        kept = os.path.join(folder, f"{node}.err.log")
        shutil.copyfile(path, kept)
    except OSError as e:
        return f"(not kept: {e})"
    return kept
