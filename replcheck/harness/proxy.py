"""A loopback relay between a replica and its source: the network of one channel, under control.

Every channel of a run connects to such a relay instead of its source. The relay copies both
directions byte for byte, with two exceptions, both read from the client/server protocol:

- **Acks.** The History op `lose_acks` ("the network loses this replica's next `count` semi-sync
  acknowledgements") done for real: whole ack packets are dropped on the way to the source while a
  count is pending. Everything else, the binlog stream included, passes untouched.
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
    dropped; `on_clock(exchange)` of every clock query relayed. `late`: hold each clock answer into
    the next second. `clock`, `sleep`: the wall clock and a sleep (tests give their own)."""

    def __init__(self, target: Callable[[], int], on_ack: Callable[[str, int], None] = lambda f, p: None,
                 on_lost: Callable[[str, int], None] = lambda f, p: None,
                 on_clock: Callable[[ClockExchange], None] = lambda x: None, late: bool = False,
                 clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep):
        self.target, self.on_ack, self.on_lost, self.on_clock = target, on_ack, on_lost, on_clock
        self.late, self.clock, self.sleep = late, clock, sleep
        self.pending = 0  # acks still to lose
        self.lost: list[tuple[str, int]] = []
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
            asked: list[float] = []  # this connection's clock query, passed on and not answered yet
            threading.Thread(target=self._upstream, args=(replica, source, asked), daemon=True).start()
            threading.Thread(target=self._downstream, args=(source, replica, asked), daemon=True).start()

    def _downstream(self, source: socket.socket, replica: socket.socket, asked: list[float]) -> None:
        """Source to replica, untouched, but for the answer to a clock query: held into the next
        second for a late channel (when it came within the query's second: else it is late already)."""
        try:
            while data := source.recv(65536):
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

    def _upstream(self, replica: socket.socket, source: socket.socket, asked: list[float]) -> None:
        """Replica to source, packet by packet: drops pending acks once the dump has begun; passes
        the clock query on in the steady part of a second."""
        buf, dumping = b"", False
        try:
            while data := replica.recv(65536):
                buf += data
                out = b""
                while len(buf) >= 4 and len(buf) >= 4 + (n := int.from_bytes(buf[:3], "little")):
                    packet, buf = buf[:4 + n], buf[4 + n:]
                    command = packet[3] == 0 and n > 0
                    if command and packet[4] == COM_BINLOG_DUMP:
                        dumping = True
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
                            source.sendall(out)
                            out = b""
                        self.on_ack(file, pos)
                    out += packet
                if out:
                    source.sendall(out)
        except OSError:
            pass
        self._hang_up(replica, source)

    def _take(self) -> bool:
        with self._lock:
            if self.pending <= 0:
                return False
            self.pending -= 1
            return True

    @staticmethod
    def _hang_up(a: socket.socket, b: socket.socket) -> None:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
