"""A loopback relay between a semi-sync replica and its source that can lose the replica's acks.

The History op `lose_acks` ("the network loses this replica's next `count` semi-sync
acknowledgements") done for real: the replica's channel connects to this relay instead of its
source, the relay copies both directions byte for byte, and drops whole ack packets on the way to
the source while a count is pending. Everything else, the binlog stream included, passes
untouched, so the replica receives, writes and applies as usual.

An ack is recognised by the client/server protocol, not guessed: after COM_BINLOG_DUMP (a command
packet, sequence number 0, first byte 0x12) the replica sends only semi-sync replies, each its own
packet with sequence number 0 and first byte 0xEF (the semi-sync magic), then the 8-byte binlog
position and the file name. MariaDB's ack receiver resets the sequence number before every read
(net_clear in Ack_receiver::run), so a dropped reply leaves no trace in the stream: to the source
it is an ack that never came, as the op says.
"""
from __future__ import annotations

import socket
import threading
from typing import Callable

COM_BINLOG_DUMP = 0x12
SEMI_SYNC_MAGIC = 0xEF


class AckProxy:
    """Listens on a free loopback port; each connection is relayed to `target()` (the source's
    port, asked at connect time: a restarted source keeps its port). `on_ack(file, pos)` is told
    of every ack passed on to the source, just before it is sent; `on_lost(file, pos)` of every ack
    dropped."""

    def __init__(self, target: Callable[[], int], on_ack: Callable[[str, int], None] = lambda f, p: None,
                 on_lost: Callable[[str, int], None] = lambda f, p: None):
        self.target, self.on_ack, self.on_lost = target, on_ack, on_lost
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
        threading.Thread(target=self._accept, name=f"replcheck-ackproxy-{self.port}", daemon=True).start()

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
            threading.Thread(target=self._upstream, args=(replica, source), daemon=True).start()
            threading.Thread(target=self._copy, args=(source, replica), daemon=True).start()

    def _copy(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        self._hang_up(src, dst)

    def _upstream(self, replica: socket.socket, source: socket.socket) -> None:
        """Replica to source, packet by packet: drops pending acks once the dump has begun."""
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
