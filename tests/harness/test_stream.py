"""The binlog stream as the channel relay reads it, and the cut it makes (cut_io), from bytes: no
server. The events are built as MariaDB 10.11 sends them (CRC32 checksums, ROW format: a statement
is Annotate_rows, Table_map, Write_rows with STMT_END_F)."""
from __future__ import annotations

import socket
import struct
import threading
import time
import zlib

import pytest

from replcheck.harness import stream as S
from replcheck.harness.proxy import ChannelProxy, Cut

ANNOTATE, TABLE_MAP, WRITE_ROWS, FDE, GTID_LIST = 160, 19, 23, 15, 163


def event(code: int, body: bytes = b"", log_pos: int = 0, server_id: int = 1) -> bytes:
    size = S.COMMON_HEADER + len(body) + 4
    head = struct.pack("<IBIIIH", 1_700_000_000, code, server_id, size, log_pos, 0)
    data = head + body
    return data + struct.pack("<I", zlib.crc32(data))


def gtid(seq: int, domain: int = 0, standalone: bool = False, log_pos: int = 0) -> bytes:
    return event(S.GTID, struct.pack("<QIB", seq, domain, S.FL_STANDALONE if standalone else 0) + bytes(6), log_pos)


def query(text: bytes, log_pos: int = 0) -> bytes:
    status_vars, db = b"\x00" * 4, b"rc"
    return event(S.QUERY, struct.pack("<IIBHH", 5, 0, len(db), 0, len(status_vars)) + status_vars + db + b"\0" + text, log_pos)


def rows(end: bool, log_pos: int = 0) -> bytes:
    return event(WRITE_ROWS, bytes(6) + struct.pack("<H", S.STMT_END_F if end else 0) + b"rowdata", log_pos)


def rotate(name: bytes, pos: int = 4) -> bytes:
    return event(S.ROTATE, struct.pack("<Q", pos) + name)


def statement(log_pos: int = 0) -> list[bytes]:
    return [event(ANNOTATE, b"INSERT ..."), event(TABLE_MAP, b"map"), rows(True, log_pos)]


def packet(ev: bytes, seq: int = 1, semi_sync: bool = False) -> bytes:
    payload = b"\x00" + (b"\xef\x01" if semi_sync else b"") + ev
    return len(payload).to_bytes(3, "little") + bytes([seq & 0xFF]) + payload


def counts(counter: S.GroupCounter, events: list[bytes]) -> list[int]:
    return [counter.count(S.event_of(b"\x00" + e)) for e in events]


def test_packets_are_cut_whole_however_the_bytes_come():
    evs = [rotate(b"bin.000001"), event(FDE, bytes(60)), gtid(1), *statement(), event(S.XID, bytes(8))]
    data = b"".join(packet(e, i, semi_sync=i % 2 == 0) for i, e in enumerate(evs))
    data += b"\x05\x00\x00\x09\xfe\x00\x00\x02\x00"  # EOF: no event
    s = S.DumpStream()
    got = [p for i in range(len(data)) for p in s.feed(data[i:i + 1])]
    assert [p.event.data if p.event else None for p in got] == evs + [None]
    assert b"".join(p.raw for p in got) == data  # passed on byte for byte


def test_a_semi_sync_header_is_told_by_the_sizes_not_by_its_first_byte():
    ev = event(0xEF, b"x" * 5)  # an event whose type byte... and a body that could pass for the header
    assert S.event_of(b"\x00" + ev).data == ev
    assert S.event_of(b"\x00\xef\x00" + ev).data == ev
    assert S.event_of(b"\xff\x04\x05#HY000Could not find first log file") is None
    assert S.event_of(b"\x00" + ev[:-1]) is None  # not as long as its size says


def test_a_payload_over_16_mb_continues_in_the_next_packet():
    big = event(WRITE_ROWS, bytes(6) + struct.pack("<H", 1) + bytes(S.MAX_PAYLOAD))
    payload = b"\x00" + big
    first, rest = payload[:S.MAX_PAYLOAD], payload[S.MAX_PAYLOAD:]
    data = b"\xff\xff\xff\x01" + first + len(rest).to_bytes(3, "little") + b"\x02" + rest
    [p] = S.DumpStream().feed(data)
    assert p.event.data == big and p.raw == data


def test_events_of_groups_are_counted_as_the_model_counts_them():
    """GTID, each statement once (at its Rows event flagged STMT_END_F), the XID: a one-statement
    group is three, as in the model; the dump's fake events and a heartbeat are in no group."""
    c = S.GroupCounter()
    c.connected()
    head = [rotate(b"bin.000001"), event(FDE, bytes(60)), event(GTID_LIST, bytes(4)), event(S.HEARTBEAT, b"bin.000001")]
    assert counts(c, head) == [0, 0, 0, 0] and c.gtid is None
    assert (c.file, c.pos) == ("bin.000001", 4)  # the Rotate's name, less its checksum
    group = [gtid(7, log_pos=400), *statement(500), *statement(600), event(S.XID, bytes(8), 631)]
    assert counts(c, group) == [1, 0, 0, 1, 0, 0, 1, 1] and c.gtid is None and c.pos == 631
    # DDL: a standalone GTID and its one Query; non-transactional changes: ended by a Query COMMIT
    assert counts(c, [gtid(8, standalone=True), query(b"CREATE TABLE rc.d1 (i INT)")]) == [1, 1] and c.gtid is None
    assert counts(c, [gtid(9), *statement(), query(b"COMMIT")]) == [1, 0, 0, 1, 1] and c.gtid is None
    assert counts(c, [gtid(10), query(b"INSERT INTO rc.m VALUES (1)")]) == [1, 1] and c.gtid == "0-1-10"


def test_what_a_gtid_reconnect_sends_again_is_not_counted():
    """Cut after the GTID and the first statement (4 events sent): the reconnect sends the group
    from its GTID; the IO thread queues only the rest, and only the rest counts."""
    c = S.GroupCounter()
    c.connected()
    assert counts(c, [gtid(2), *statement()]) == [1, 0, 0, 1] and c.gtid == "0-1-2"
    c.connected()
    again = [rotate(b"bin.000001"), gtid(2), *statement(), *statement(), event(S.XID, bytes(8)), gtid(3)]
    assert counts(c, again) == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1]
    c.connected()  # a group left open and never sent again counts whole next time
    assert counts(c, [gtid(4), *statement()]) == [1, 0, 0, 1]


def _dump(replica: socket.socket) -> None:
    replica.sendall(len(b"\x12" + bytes(10)).to_bytes(3, "little") + b"\x00\x12" + bytes(10))


def _read_packets(sock: socket.socket) -> list[S.Packet]:
    """Everything the replica gets up to the end of the stream."""
    s, got = S.DumpStream(), []
    while data := sock.recv(65536):
        got += s.feed(data)
    return got


@pytest.mark.parametrize("then", ["reconnect", "stop"])
def test_the_relay_cuts_after_the_events_asked_for(then):
    """cut_io after 2 events of groups: the replica gets the dump's head, the GTID and the first
    statement, then the end of the stream (reconnect) or nothing more until it hangs up (stop);
    on_cut says where the source's binlog stood."""
    source = socket.create_server(("127.0.0.1", 0))
    cuts: list[Cut] = []
    held = threading.Event()
    proxy = ChannelProxy(lambda: source.getsockname()[1], on_cut=lambda c: (cuts.append(c), held.set()))
    try:
        proxy.cut(2, then)
        replica = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        source.settimeout(10)
        upstream, _ = source.accept()
        _dump(replica)
        assert upstream.recv(64)[4] == 0x12
        evs = [rotate(b"bin.000003", 256), gtid(5, log_pos=300), *statement(380), *statement(460), event(S.XID, bytes(8), 491)]
        upstream.sendall(b"".join(packet(e, i) for i, e in enumerate(evs)))
        if then == "stop":  # held: the IO thread stops (STOP SLAVE IO_THREAD) and hangs up
            assert held.wait(10)
            replica.shutdown(socket.SHUT_WR)
        # Up to the end of the stream: the cut's events and not one more, whatever came after them.
        assert [p.event.data for p in _read_packets(replica)] == evs[:5]
        assert cuts == [Cut(then, "bin.000003", 380, "0-1-5")]
        assert proxy.groups.gtid == "0-1-5" and proxy.groups.passed == 4
    finally:
        proxy.close()
        source.close()


def test_the_relay_reports_how_long_it_held_the_stream():
    """A relay stalled passing an event on (as a loaded machine stalls its thread) says for how
    long, so that no property counts that time against the replica."""
    source = socket.create_server(("127.0.0.1", 0))
    holds: list[float] = []
    proxy = ChannelProxy(lambda: source.getsockname()[1], on_hold=holds.append)
    count = proxy.groups.count

    def stalled(ev):  # the GTID event stalls the relay 50 ms
        if ev.data[4] == S.GTID:
            time.sleep(0.05)
        return count(ev)
    try:
        replica = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        source.settimeout(10)
        upstream, _ = source.accept()
        _dump(replica)
        assert upstream.recv(64)[4] == 0x12
        upstream.sendall(packet(rotate(b"bin.000003", 256), 0))
        assert [p.event.data for p in S.DumpStream().feed(replica.recv(65536))] == [rotate(b"bin.000003", 256)]
        proxy.groups.count = stalled
        evs = [gtid(5, log_pos=300), *statement(380)]
        upstream.sendall(b"".join(packet(e, i) for i, e in enumerate(evs, 1)))
        upstream.close()
        assert [p.event.data for p in _read_packets(replica)] == evs
        assert holds and max(holds) >= 0.05
    finally:
        proxy.close()
        source.close()
