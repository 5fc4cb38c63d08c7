"""A replica's relay log rotating (FLUSH RELAY LOGS, max_relay_log_size), against what MariaDB 10.11
shows here: SHOW RELAYLOG EVENTS after FLUSH RELAY LOGS lists the old file ending with a Rotate of
the replica's own server_id naming the next file, and the next file starting with the replica's
format description, then the source's with End_log_pos 0; with max_relay_log_size 4096 a
120-statement transaction was split across relay logs between a Table_map and its Write_rows,
and the replica applied it whole."""
from __future__ import annotations

import pytest

from replcheck import io, systems

US = 1_000_000
FLAVOURS = ["model:mariadb-10.11", "model:mysql-8.0", "model:mysql-5.7", "model:wl344", "model:wl7318", "model:groupid",
            "model:after-sync", "model:after-commit", "model:google-5.0"]


def history(ops, delay=0, variables=None, end_s=12):
    replica = {"id": "B", **({"variables": variables} if variables else {})}
    topo = {"nodes": [{"id": "A"}, replica], "channels": [{"source": "A", "replica": "B", "latency_us": 100, "delay": delay}]}
    return {"header": {"schema": "replcheck.history/1", "name": "relay-rotation", "sample_every_us": US // 2,
                       "end_us": end_s * US, "topology": topo}, "ops": ops}


def run(name, h):
    return systems.get(name).run(h).observations


def flush_between_two_commits(delay=0):
    return history([{"at": 1 * US, "op": "trx", "node": "A", "trx": "t1"},
                    {"at": 2 * US, "op": "flush_relay_logs", "node": "B"},
                    {"at": 3 * US, "op": "trx", "node": "A", "trx": "t2"}], delay=delay)


@pytest.mark.parametrize("name", FLAVOURS)
def test_flush_relay_logs_ends_the_file_with_a_rotate_and_opens_the_next_with_two_format_descriptions(name):
    obs = run(name, flush_between_two_commits())
    relay = [o for o in obs if o["kind"] == "relay" and o["node"] == "B"]
    own = [o for o in relay if o.get("relay_log")]
    assert [(o["type"], o["server_id"], o["file"]) for o in own] == [
        ("ROTATE_EVENT", 2, "relay.000001"), ("FORMAT_DESCRIPTION_EVENT", 2, "relay.000002"),
        ("FORMAT_DESCRIPTION_EVENT", 1, "relay.000002")]
    assert all(o["master_end"] == 0 for o in own)  # no place in the source's binlog
    t2 = [o for o in relay if o["trx"] == "t2"]
    assert t2 and all(o["file"] == "relay.000002" for o in t2)
    assert [o["errno"] for o in obs if o["kind"] == "stmt" and o["op"] == "flush_relay_logs"] == [None]


@pytest.mark.parametrize("name", FLAVOURS)
def test_the_relay_logs_own_events_move_no_master_position(name):
    # delayed 5 s: the SQL thread reads the rotation's events once t1 is applied, and t2 after them
    obs = run(name, flush_between_two_commits(delay=5))
    status = [o for o in obs if o["kind"] == "status" and o["node"] == "B"]
    last = status[-1]
    assert last["Relay_Log_File"] == "relay.000002"
    master = [o for o in obs if o["kind"] == "binlog" and o["node"] == "A" and o["trx"] == "t2" and o["last"]][0]
    assert last["Exec_Master_Log_Pos"] == master["end"]
    applied = {o["trx"] for o in obs if o["kind"] == "visible" and o["node"] == "B"}
    assert applied == {"t1", "t2"}
    # Exec_Master_Log_Pos never leaves t1's end for the rotation's events (master_end 0)
    t1_end = [o for o in obs if o["kind"] == "binlog" and o["node"] == "A" and o["trx"] == "t1" and o["last"]][0]["end"]
    assert {o["Exec_Master_Log_Pos"] for o in status if 7 * US < o["t"] < 8 * US} == {t1_end}


@pytest.mark.parametrize("name", FLAVOURS)
def test_max_relay_log_size_rotates_inside_a_group_which_is_applied_whole_once(name):
    statements = [{"duration_us": 1000}] * 60
    h = history([{"at": 1 * US, "op": "trx", "node": "A", "trx": "big", "statements": statements},
                 {"at": 3 * US, "op": "trx", "node": "A", "trx": "after"}], variables={"max_relay_log_size": 4096})
    obs = run(name, h)
    files = {o["file"] for o in obs if o["kind"] == "relay" and o["node"] == "B" and o["trx"] == "big"}
    assert len(files) >= 2  # the group spans relay logs
    assert [o["trx"] for o in obs if o["kind"] == "visible" and o["node"] == "B"] == ["big", "after"]
    assert not [o for o in obs if o["kind"] == "rollback" and o["node"] == "B"]


@pytest.mark.parametrize("value,taken,warning", [(5000, 4096, 1292), (4096, 4096, None), (0, 4096, 1292),
                                                 (-1, 4096, 1292), (2_000_000_000, 1 << 30, 1292)])
def test_set_global_max_relay_log_size_takes_whole_blocks_as_mariadb_does(value, taken, warning):
    h = history([{"at": 1 * US, "op": "set_global", "node": "B", "variable": "max_relay_log_size", "value": value},
                 {"at": 2 * US, "op": "expect", "node": "B", "show": "variables", "fields": ["max_relay_log_size"],
                  "equals": {"max_relay_log_size": taken}}])
    obs = run("model:mariadb-10.11", h)
    stmt = [o for o in obs if o["kind"] == "stmt" and o["op"] == "set_global"][0]
    assert (stmt["errno"], stmt["warning"]) == (None, warning)
    assert [o["value"] for o in obs if o["kind"] == "observed"] == [{"max_relay_log_size": taken}]


@pytest.mark.parametrize("value", ["abc", True, 1.5])
def test_set_global_max_relay_log_size_refuses_what_is_no_integer(value):
    h = history([{"at": 1 * US, "op": "set_global", "node": "B", "variable": "max_relay_log_size", "value": value}])
    stmt = [o for o in run("model:mariadb-10.11", h) if o["kind"] == "stmt"][0]
    assert stmt["errno"] == 1232 and stmt["message"] == "Incorrect argument type to variable 'max_relay_log_size'"


def test_a_history_file_with_both_loads(tmp_path):
    h = history([{"at": 1 * US, "op": "flush_relay_logs", "node": "B"}], variables={"max_relay_log_size": 4096})
    path = tmp_path / "h.jsonl"
    path.write_text(io.dumps_history(h))
    assert io.load_history(path)["header"]["topology"]["nodes"][1]["variables"] == {"max_relay_log_size": 4096}
    h["header"]["topology"]["nodes"][1]["variables"] = {"max_relay_log_size": "4k"}
    path.write_text(io.dumps_history(h))
    with pytest.raises(io.InputError, match="max_relay_log_size"):
        io.load_history(path)


def test_flush_relay_logs_on_a_server_that_is_no_replica_answers_ok():
    h = history([{"at": 1 * US, "op": "flush_relay_logs", "node": "A"}])
    obs = run("model:mariadb-10.11", h)
    assert [o["errno"] for o in obs if o["kind"] == "stmt"] == [None]
    assert not [o for o in obs if o["kind"] == "relay" and o.get("relay_log")]
