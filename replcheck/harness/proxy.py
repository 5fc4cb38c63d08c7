"""A loopback relay between a replica and its source: the network of one channel, under control.

Every channel of a run connects to such a relay instead of its source. The relay copies both
directions byte for byte, with three exceptions, all read from the client/server protocol:

- **Acks.** The History op `lose_acks` ("the network loses this replica's next `count` semi-sync
  acknowledgements") done for real: whole ack packets are dropped on the way to the source while a
  count is pending. Everything else passes untouched (the binlog stream too, but for a cut).
- **The clock query.** At each connect the IO thread asks the source `SELECT UNIX_TIMESTAMP()` and
  takes `clock_diff_with_master` = its own time() minus the answer, both in whole seconds
  (get_master_version_and_clock, sql/slave.cc); every delay then counts to
  when + clock_diff_with_master + MASTER_DELAY (sql_delay_event). On one machine the true
  difference is 0, but the estimate is 1 if the answer reaches the replica in the next second, and
  -1 if the master's precise clock has turned a second while the replica's coarse time() (measured
  up to 3 ms behind here) has not. Left to chance, that made a delay a second short or long in about
  one run of four. The relay takes chance out: it passes the query on only inside a second, at
  least STEADY_FROM after its turn and before STEADY_UNTIL (held at most 30 ms), so the answer and
  the replica's clock agree (estimate 0) unless the answer takes more than 10 ms; or, for a
  channel whose History asks for `clock_reply: "next_second"`, it holds the answer until
  LATE_MARGIN into the next second (estimate +1: the delay runs a second long, a divergence
  from WL#344's "independent of any unsynchronized clocks"). Each exchange is reported with the
  estimate it makes (`on_clock`), so the trace shows why a deadline moved.

- **The cut.** The History op `cut_io` done for real: once the dump has begun, the source's stream
  is read event by event (replcheck/harness/stream.py); after the next `after_events` events of
  groups (counted as the reference model counts them) the connection is cut at that event
  boundary. `then: reconnect`: the replica's side gets an end of stream after the last event
  passed (shutdown for writing: what was sent arrives), the source's side is closed; the IO thread
  finds the connection lost and reconnects (at once the first time: try_to_reconnect,
  sql/slave.cc). `then: stop`: the stream is held there, a transfer that does not go on, until
  the replica hangs up (the runner's STOP SLAVE IO_THREAD, told by `on_cut`), so the relay log
  keeps the part of the group passed.

An ack is recognised by the client/server protocol, not guessed: after COM_BINLOG_DUMP (a command
packet, sequence number 0, first byte 0x12) the replica sends only semi-sync replies, each its own
packet with sequence number 0 and first byte 0xEF (the semi-sync magic), then the 8-byte binlog
position and the file name. MariaDB's ack receiver resets the sequence number before every read
(net_clear in Ack_receiver::run), so a dropped reply leaves no trace in the stream: to the source
it is an ack that never came, as the op says.
"""
from __future__ import annotations

import math
import re
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable

from replcheck.harness.stream import DumpStream, GroupCounter

COM_QUERY = 0x03
COM_BINLOG_DUMP = 0x12
SEMI_SYNC_MAGIC = 0xEF
CLOCK_QUERY = b"SELECT UNIX_TIMESTAMP()"  # the IO thread's, verbatim (sql/slave.cc)
# The phase of a second in which the query is passed on (s): after the replica's coarse clock has
# turned too (up to 4 ms behind), and early enough that a ms-fast answer comes in the same second. A
# hold is at most 30 ms: the run's timing barely moves (a longer one kept an IO thread in its
# connect past a STOP SLAVE at time scale 0.1).
STEADY_FROM, STEADY_UNTIL = 0.02, 0.99
LATE_MARGIN = 0.05  # how far into the next second a held answer is released (s)
# A part of the dump stream or an ack the relay held this long or longer (s) is reported (`on_hold`):
# the relay is replcheck's, so a delay it made (a loaded machine stalling its thread) is no server's.
HOLD_NOTED = 0.01
# The answer's one text-protocol row: a length-encoded string of 10 digits (seconds since 1970).
ANSWER = re.compile(rb"\x0a(\d{10})")


def query_wait(now: float) -> float:
    """How long to hold the clock query arriving at `now` (wall-clock s) so that it is passed on in
    the steady part of a second: none inside it, else until STEADY_FROM after the next turn."""
    phase = now - math.floor(now)
    if STEADY_FROM <= phase < STEADY_UNTIL:
        return 0.0
    return (STEADY_FROM - phase) if phase < STEADY_FROM else (1 - phase + STEADY_FROM)


@dataclass(frozen=True)
class Cut:
    """A cut the relay made: where the source's binlog stood after the last event passed (the IO
    thread's Read_Master_Log_Pos, as the relay knows it), and the group it fell inside (None: between
    two groups)."""
    then: str
    master_log_file: str
    master_log_pos: int
    gtid: str | None


class _Connection:
    """One relayed connection: its clock query asked and not answered yet, whether the dump began,
    whether either side hung up."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self.dumping = threading.Event()
        self.gone = threading.Event()


@dataclass(frozen=True)
class ClockExchange:
    """One clock query as relayed: when it was passed on and answered (wall-clock s), the master's
    answer, when the replica got it, and the estimate that gives if the replica reads its clock
    within the second it got it (None when the answer could not be read)."""
    asked: float
    answered: float
    master_unix_timestamp: int | None
    delivered: float
    late: bool  # held into the next second on purpose

    @property
    def clock_diff_with_master(self) -> int | None:
        if self.master_unix_timestamp is None:
            return None
        return math.floor(self.delivered) - self.master_unix_timestamp


class ChannelProxy:
    """Listens on a free loopback port; each connection is relayed to `target()` (the source's
    port, asked at connect time: a restarted source keeps its port). `on_ack(file, pos)` is told
    of every ack passed on to the source, just before it is sent; `on_lost(file, pos)` of every ack
    dropped; `on_clock(exchange)` of every clock query relayed; `on_cut(cut)` of every cut made, in
    the relaying thread (a `stop` cut holds the stream until the replica hangs up); `on_hold(s)` of
    every part of the dump stream, and every ack, it held HOLD_NOTED or longer before passing it on.
    `late`: hold each clock answer into the next second. `clock`, `sleep`: the wall clock and a
    sleep (tests give their own)."""

    def __init__(self, target: Callable[[], int], on_ack: Callable[[str, int], None] = lambda f, p: None,
                 on_lost: Callable[[str, int], None] = lambda f, p: None,
                 on_clock: Callable[[ClockExchange], None] = lambda x: None,
                 on_cut: Callable[[Cut], None] = lambda c: None, on_hold: Callable[[float], None] = lambda s: None,
                 late: bool = False, clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep):
        self.target, self.on_ack, self.on_lost, self.on_clock, self.on_cut = target, on_ack, on_lost, on_clock, on_cut
        self.on_hold = on_hold
        self.late, self.clock, self.sleep = late, clock, sleep
        self.pending = 0  # acks still to lose
        self.lost: list[tuple[str, int]] = []
        self.groups = GroupCounter()  # the channel's stream, across its connections
        self._cut: tuple[int, str] | None = None  # (events of groups still to pass, then) of an armed cut
        self._lock = threading.Lock()
        self._closed = False
        self._socks: list[socket.socket] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, name=f"replcheck-proxy-{self.port}", daemon=True).start()

    def lose(self, count: int) -> None:
        with self._lock:
            self.pending += count

    def cut(self, after_events: int, then: str = "reconnect") -> None:
        """Cut the connection after the next `after_events` events of groups the replica gets."""
        with self._lock:
            self._cut = (after_events, then)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            socks, self._socks = self._socks + [self._listener], []
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _accept(self) -> None:
        while True:
            try:
                replica, _ = self._listener.accept()
            except OSError:
                return  # closed
            try:
                source = socket.create_connection(("127.0.0.1", self.target()), timeout=5)
                source.settimeout(None)
            except Exception:  # the source is down or not started yet: the replica's IO thread retries
                replica.close()
                continue
            with self._lock:
                if self._closed:
                    replica.close()
                    source.close()
                    return
                self._socks += [replica, source]
            for sock in (replica, source):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Connection()
            threading.Thread(target=self._upstream, args=(replica, source, conn), daemon=True).start()
            threading.Thread(target=self._downstream, args=(source, replica, conn), daemon=True).start()

    def _downstream(self, source: socket.socket, replica: socket.socket, conn: _Connection) -> None:
        """Source to replica, untouched, but for the answer to a clock query: held into the next
        second for a late channel (when it came within the query's second: else it is late already);
        and, once the dump has begun, read event by event for a cut."""
        asked, stream = conn.asked, None
        try:
            while data := source.recv(65536):
                if conn.dumping.is_set():
                    if stream is None:
                        stream = DumpStream()
                        self.groups.connected()
                    got = time.monotonic()
                    if self._relay_dump(stream.feed(data), replica, source, conn, got):
                        return
                    continue
                if asked:
                    answered = self.clock()
                    found = ANSWER.search(data)
                    release = math.floor(asked[0]) + 1 + LATE_MARGIN
                    late = self.late and answered < math.floor(asked[0]) + 1
                    if late:
                        self.sleep(release - answered)
                    self.on_clock(ClockExchange(asked.pop(), answered, found and int(found.group(1)),
                                                self.clock() if late else answered, late))
                    replica.sendall(data)  # after the report: whoever reads the answer may count on it
                    continue
                replica.sendall(data)
        except OSError:
            pass
        self._hang_up(source, replica)

    def _relay_dump(self, packets, replica: socket.socket, source: socket.socket, conn: _Connection, got: float) -> bool:
        """Passes the dump's packets (received at `got`, monotonic s) on, counting events of groups for
        an armed cut; True once it cut. Reports how long it held them (on_hold), up to a cut."""
        sending = 0.0  # a replica not reading (its IO thread held) blocks the send: that is its time

        def held() -> None:
            if (s := time.monotonic() - got - sending) >= HOLD_NOTED:
                self.on_hold(s)
        for packet in packets:
            counted = self.groups.count(packet.event) if packet.event else 0
            sent = time.monotonic()
            replica.sendall(packet.raw)
            sending += time.monotonic() - sent
            with self._lock:
                if not (self._cut and counted):
                    continue
                left, then = self._cut[0] - counted, self._cut[1]
                self._cut = (left, then) if left > 0 else None
            if left > 0:
                continue
            # At this event boundary: the replica gets all passed so far, then nothing more.
            held()  # what a `stop` cut holds from here on is the History's
            g = self.groups
            made = Cut(then, g.file, g.pos, g.gtid)
            self.on_cut(made)  # first: whoever learns of the cut from the stream's end finds it recorded
            if then == "reconnect":
                self._hang_up(source)
                try:
                    replica.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            else:
                conn.gone.wait()  # held: what else the source sends is never passed
            return True
        held()
        return False

    def _upstream(self, replica: socket.socket, source: socket.socket, conn: _Connection) -> None:
        """Replica to source, packet by packet: drops pending acks once the dump has begun; passes
        the clock query on in the steady part of a second; reports how long it held an ack it passes."""
        buf, dumping, asked = b"", False, conn.asked
        try:
            while data := replica.recv(65536):
                got, sending = time.monotonic(), 0.0
                buf += data
                out = b""
                while len(buf) >= 4 and len(buf) >= 4 + (n := int.from_bytes(buf[:3], "little")):
                    packet, buf = buf[:4 + n], buf[4 + n:]
                    command = packet[3] == 0 and n > 0
                    if command and packet[4] == COM_BINLOG_DUMP:
                        dumping = True
                        conn.dumping.set()  # before it is sent: the source's answer is the dump
                    elif not dumping and command and packet[4:] == bytes([COM_QUERY]) + CLOCK_QUERY:
                        if out:
                            source.sendall(out)
                            out = b""
                        self.sleep(query_wait(self.clock()))
                        asked.append(self.clock())
                    elif dumping and command and packet[4] == SEMI_SYNC_MAGIC and n >= 9:
                        # The position, then the file name with its terminating NUL.
                        pos, file = int.from_bytes(packet[5:13], "little"), packet[13:].rstrip(b"\0").decode("utf-8", "replace")
                        if self._take():
                            self.lost.append((file, pos))
                            self.on_lost(file, pos)
                            continue
                        if out:  # what came before it goes first
                            sent = time.monotonic()
                            source.sendall(out)
                            sending += time.monotonic() - sent
                            out = b""
                        if (held := time.monotonic() - got - sending) >= HOLD_NOTED:
                            self.on_hold(held)  # before the ack is observed: it was held this long
                        self.on_ack(file, pos)
                        got, sending = time.monotonic(), 0.0  # the next ack's hold begins here
                    out += packet
                if out:
                    source.sendall(out)
        except OSError:
            pass
        conn.gone.set()
        self._hang_up(replica, source)

    def _take(self) -> bool:
        with self._lock:
            if self.pending <= 0:
                return False
            self.pending -= 1
            return True

    @staticmethod
    def _hang_up(*socks: socket.socket) -> None:
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
