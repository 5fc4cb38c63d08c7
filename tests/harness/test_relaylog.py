"""The relay-log reader on real relay logs: a replica B of A in inc-cache-overflow (MariaDB
10.11.19), captured before B's GTID START SLAVE purged them. relay.000001 holds only B's own FDE
and its closing Rotate; relay.000002 the master's fake Rotate, FDE, Gtid_list, Binlog_checkpoint,
an artificial Gtid_list, the incident and two GTID groups. The .txt files are mariadb-binlog
--hexdump output of them (whole, and from position 615)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replcheck.harness.relaylog import RelayLogError, RelayLogs, parse

HERE = Path(__file__).parent / "relay"
RELAY_2 = [  # (position, size, type name, server id, end_log_pos, when) of relay.000002
    (4, 252, "Format_desc", 2, 256, 1795416673), (256, 41, "Rotate", 1, 0, 0),
    (297, 252, "Format_desc", 1, 256, 1795416672), (549, 29, "Gtid_list", 1, 285, 1795416672),
    (578, 37, "Binlog_checkpoint", 1, 322, 1795416672), (615, 43, "Gtid_list", 1, 476, 0),
    (658, 57, "Incident", 1, 533, 1795416673), (715, 42, "Gtid", 1, 575, 1795416673),
    (757, 72, "Annotate_rows", 1, 647, 1795416673), (829, 46, "Table_map", 1, 693, 1795416673),
    (875, 43, "Write_rows_v1", 1, 736, 1795416673), (918, 31, "Xid", 1, 767, 1795416673),
    (949, 42, "Gtid", 1, 809, 1795416673), (991, 72, "Annotate_rows", 1, 881, 1795416673),
    (1063, 46, "Table_map", 1, 927, 1795416673), (1109, 43, "Write_rows_v1", 1, 970, 1795416673),
    (1152, 31, "Xid", 1, 1001, 1795416673),
]


def _shape(events):
    return [(e.pos, e.size, e.name, e.server_id, e.end, e.when) for e in events]


def test_parse_a_whole_relay_log():
    events = parse((HERE / "relay.000002.txt").read_text(), 4)
    assert _shape(events) == RELAY_2
    by_pos = {e.pos: e for e in events}
    assert by_pos[256].text == "Rotate to bin.000001  pos: 4"  # the dump's fake Rotate: timestamp and end 0
    assert by_pos[715].text == "GTID 0-1-2 trans" and by_pos[949].text == "GTID 0-1-3 trans"
    # mariadb-binlog prints no incident message; it comes from the event's bytes.
    assert by_pos[658].incident() == {"incident": 1, "message": "error writing to the binary log"}
    assert [e.name for e in parse((HERE / "relay.000001.txt").read_text(), 4)] == ["Format_desc", "Rotate"]


def test_parse_from_a_position_whose_first_dump_includes_the_header():
    events = parse((HERE / "relay.000002-from-615.txt").read_text(), 615)
    assert _shape(events) == [e for e in RELAY_2 if e[0] >= 615]
    assert events[1].incident() == {"incident": 1, "message": "error writing to the binary log"}


def test_parse_refuses_output_it_cannot_place():
    text = (HERE / "relay.000002.txt").read_text()
    with pytest.raises(RelayLogError, match="expected at 256"):
        parse(text, 256)  # positions that do not chain from where the read began
    with pytest.raises(RelayLogError, match="'# at' lines"):
        parse(text.replace("# at 658\n", ""), 4)


def test_an_unfinished_last_event_is_read_next_time(tmp_path, binlog_tool):
    data = (HERE / "relay.000002").read_bytes()
    (tmp_path / "relay.index").write_text("./relay.000002\n")
    (tmp_path / "relay.000002").write_bytes(data[:1100])  # the IO thread is writing the Table_map at 1063
    logs = RelayLogs(binlog_tool, str(tmp_path), label="B")
    first = logs.read()
    # The Annotate_rows at 991 waits for its Table_map in mariadb-binlog's output: read again from there.
    assert [e.pos for _, e in first] == [p for p, *_ in RELAY_2 if p <= 949]
    assert logs.read() == [] and logs.gaps == []  # nothing new: not run again
    (tmp_path / "relay.000002").write_bytes(data)
    assert [e.pos for _, e in logs.read()] == [991, 1063, 1109, 1152] and logs.gaps == []


def test_vanished_and_skipped_files_are_gaps(tmp_path, binlog_tool):
    for f in ("relay.000001", "relay.000002"):
        shutil.copy(HERE / f, tmp_path / f)
    (tmp_path / "relay.index").write_text("./relay.000001\n./relay.000002\n")
    logs = RelayLogs(binlog_tool, str(tmp_path), label="B")
    assert len(logs.read()) == 2 + len(RELAY_2)
    # relay.000001 was closed and read whole: purging it loses nothing.
    (tmp_path / "relay.000001").unlink()
    (tmp_path / "relay.index").write_text("./relay.000002\n")
    assert logs.read() == [] and logs.gaps == []
    # The active relay.000002, purged without a settled read: what was written after it is unknown.
    # relay.000004 appears without relay.000003 ever listed: purged unread.
    (tmp_path / "relay.000002").rename(tmp_path / "relay.000004")
    (tmp_path / "relay.index").write_text("./relay.000004\n")
    logs.read()
    assert logs.gaps == ["relay log of B: relay.000002 was purged with 0 bytes from 1183 unread, or written to "
                         "after its last read", "relay log of B: relay.000003 to .000003 were purged unread"]


def test_a_settled_read_makes_the_active_file_whole_and_a_reused_name_is_a_new_file(tmp_path, binlog_tool):
    shutil.copy(HERE / "relay.000002", tmp_path / "relay.000001")
    (tmp_path / "relay.index").write_text("./relay.000001\n")
    logs = RelayLogs(binlog_tool, str(tmp_path), label="B")
    assert len(logs.read(settled=True)) == len(RELAY_2)  # the IO thread stopped: read whole
    # A GTID START SLAVE purges it and starts again at relay.000001: a new file under the old name
    # (here also the old inode), shorter than what was read.
    (tmp_path / "relay.000001").unlink()
    shutil.copy(HERE / "relay.000001", tmp_path / "relay.000001")
    assert [e.name for _, e in logs.read()] == ["Format_desc", "Rotate"] and logs.gaps == []
    logs.read(settled=True)
    # Purged again, and a new one, longer than what was read, in the same inode: its bytes where the
    # old one's last event ended are not that event's checksum.
    (tmp_path / "relay.000001").write_bytes((HERE / "relay.000002").read_bytes())
    assert [e.pos for _, e in logs.read()] == [p for p, *_ in RELAY_2] and logs.gaps == []


def test_an_unreadable_file_at_the_final_read_is_a_gap(tmp_path, binlog_tool):
    (tmp_path / "relay.index").write_text("./relay.000001\n")
    (tmp_path / "relay.000001").write_bytes(b"\xfebin" + b"\0" * 40)  # no event mariadb-binlog can read
    logs = RelayLogs(binlog_tool, str(tmp_path), label="B")
    assert logs.read() == [] and logs.gaps == []  # perhaps still being written
    assert logs.read(final=True) == []
    assert len(logs.gaps) == 1 and logs.gaps[0].startswith("relay log of B: relay.000001: 40 bytes from 4 unread (")


@pytest.fixture
def binlog_tool():
    tool = shutil.which("mariadb-binlog")
    if tool is None:
        pytest.skip("needs mariadb-binlog (mariadb-client)")
    return tool


def test_a_query_event_s_exec_time_is_read_from_its_post_header():
    # thread id 7, then exec_time: 10000 s for a statement under SET TIMESTAMP 10000 s back, and
    # 2**32 - 5 for one set 5 s ahead (the source's `(ulong)(end_time - start_time)`, 4 bytes)
    from replcheck.harness.relaylog import Event
    post = (7).to_bytes(4, "little")
    assert Event(4, 60, 1, 2, 1, 64, post=post + (10000).to_bytes(4, "little") + b"\0" * 5).exec_time() == 10000
    assert Event(4, 60, 1, 2, 1, 64, post=post + (2**32 - 5).to_bytes(4, "little")).exec_time() == 2**32 - 5
    assert Event(4, 31, 1, 16, 1, 64, post=post + (9).to_bytes(4, "little")).exec_time() == 0  # an Xid has none
