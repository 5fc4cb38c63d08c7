"""An expectation of SHOW SLAVE 'name' STATUS reads that connection of a multi-source replica
(multi_source/simple.result), and RESET SLAVE shows the master coordinates init_master_log_pos sets."""
from __future__ import annotations

import json

import pytest

from replcheck.cli import main

MARIADB = "model:mariadb-10.11"
NODES = [{"id": "m1", "server_id": 1}, {"id": "m2", "server_id": 2}, {"id": "s", "server_id": 3}]
CHANNELS = [{"source": "m1", "replica": "s", "connection": "a"}, {"source": "m2", "replica": "s", "connection": "b"}]


def _shown(kit, ops: list) -> list:
    h = kit.make_history(NODES, CHANNELS, ops, end_us=2_000_000)
    return [o["value"] for o in kit.run(MARIADB, h).all("observed", node="s")]


def _expect(**k) -> dict:
    return {"at": 1_000_000, "op": "expect", "node": "s", "show": "slave_status",
            "fields": {"Slave_IO_Running": "x", "Read_Master_Log_Pos": 0}, **k}


@pytest.mark.parametrize("connection, shown", [
    ("a", {"Slave_IO_Running": "No", "Read_Master_Log_Pos": 4}),  # stopped and reset
    ("b", {"Slave_IO_Running": "Yes"}),
    ("c", None),  # no such connection (1617 on the server): nothing shown
    (None, None),  # the default connection '' is not configured: an empty set
])
def test_an_expectation_reads_the_connection_it_names(kit, connection, shown):
    ops = [{"at": 100_000, "op": "stop_slave", "node": "s", "connection": "a"},
           {"at": 200_000, "op": "reset_slave", "node": "s", "connection": "a"},
           _expect(**({"connection": connection} if connection else {}))]
    [value] = _shown(kit, ops)
    if shown is None:
        assert value is None
    else:
        assert value["Slave_IO_Running"] == shown["Slave_IO_Running"]
        assert "Read_Master_Log_Pos" not in shown or value["Read_Master_Log_Pos"] == shown["Read_Master_Log_Pos"]


def test_a_connection_on_another_show_is_bad_input(tmp_path, capsys):
    header = {"schema": "replcheck.history/1", "name": "h", "topology": {"nodes": NODES, "channels": CHANNELS}}
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps({"at": 0, "op": "expect", "node": "s", "show": "variables",
                                                            "connection": "a", "fields": {"gtid_slave_pos": ""}}) + "\n")
    assert main(["simulate", str(path)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("replcheck: error: ") and "h.jsonl:2:" in line
