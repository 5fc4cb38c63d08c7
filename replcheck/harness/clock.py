"""A server's own clock, offset from the machine's and stepped while it runs, with libfaketime
(Debian's libfaketime package; its README, "Changing the 'x' modifier during run-time" and
"Using offsets for relative dates"): the server runs with LD_PRELOAD of libfaketimeMT.so.1 (the
library for threaded programs), FAKETIME_TIMESTAMP_FILE naming a file that holds a relative offset
in seconds ("+3600", "-2.5"), and FAKETIME_NO_CACHE=1 so that every time call reads the file again:
writing another offset there steps the clock at once. FAKETIME_DONT_FAKE_MONOTONIC=1 keeps the
monotonic clock true: the server's timeouts and InnoDB's timers run on it, and a step must move
only what the wall clock tells (NOW(), UNIX_TIMESTAMP(), the event timestamps, the error log).
"""
from __future__ import annotations

import glob
import os
import time

from replcheck.spec.formats import US

LIBRARY_GLOBS = ("/usr/lib/*/faketime/libfaketimeMT.so.1", "/usr/lib/faketime/libfaketimeMT.so.1",
                 "/usr/local/lib/faketime/libfaketimeMT.so.1")
LIBRARY_ENV = "REPLCHECK_LIBFAKETIME"  # another build of the library
FILE = "faketime.rc"


# Linux's CLOCK_REALTIME_COARSE (Python's time module names only some clock ids)
CLOCK_REALTIME_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", 5)


def read_lag_us() -> int:
    """How far behind true time a server's time() may read: glibc's time() returns the kernel's
    coarse realtime clock, advanced once a tick (vDSO `time`; a tick is 4 ms at HZ=250). A server's
    whole-second values (Seconds_Behind_Master, SQL_Remaining_Delay: sql/slave.cc computes them from
    time(0)) may still show the previous second that long after a second's turn. 0 where the machine
    does not say."""
    try:
        return round(time.clock_getres(CLOCK_REALTIME_COARSE) * US)
    except OSError:
        return 0


class Missing(Exception):
    """libfaketime is not installed (the machine's problem: apt-get install faketime)."""


def library() -> str:
    """The path of libfaketimeMT.so.1, or Missing saying how to get it."""
    if os.environ.get(LIBRARY_ENV):
        if os.path.isfile(os.environ[LIBRARY_ENV]):
            return os.environ[LIBRARY_ENV]
        raise Missing(f"{LIBRARY_ENV}={os.environ[LIBRARY_ENV]} is not a file")
    for pattern in LIBRARY_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise Missing("a History with clock offsets or steps needs libfaketime (Debian: apt-get install faketime), "
                  f"or {LIBRARY_ENV} naming libfaketimeMT.so.1")


def environment(path: str) -> dict[str, str]:
    """What a server's environment needs for its clock to follow the offset in `path`."""
    return {"LD_PRELOAD": library(), "FAKETIME_TIMESTAMP_FILE": path, "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1"}


# What libfaketime 0.9.10 creates for each process it runs in (libfaketime.c, ftpl_init: the shared
# memory and semaphore named by the pid) and unlinks in its destructor only: a server killed with
# SIGKILL leaves them in /dev/shm.
SHARED = ("/dev/shm/faketime_shm_{pid}", "/dev/shm/sem.faketime_sem_{pid}")


def remove_shared(pid: int) -> None:
    """Unlinks what libfaketime left of a reaped process of ours (its names carry the pid)."""
    for name in SHARED:
        try:
            os.unlink(name.format(pid=int(pid)))
        except OSError:
            pass


def offset_text(offset_us: int) -> str:
    """A relative offset as the file holds it: signed seconds with microseconds ('.': the server
    runs in the C locale, whose delimiter it is)."""
    sign = "-" if offset_us < 0 else "+"
    seconds, micros = divmod(abs(int(offset_us)), US)
    return f"{sign}{seconds}.{micros:06d}\n"


def write(path: str, offset_us: int) -> None:
    """Sets the offset: written aside and renamed over the file, so that a server reading it at any
    instant reads the old offset or the new one whole. Readable by the server's own user."""
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(offset_text(offset_us))
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
