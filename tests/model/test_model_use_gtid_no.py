"""CHANGE MASTER TO MASTER_USE_GTID=no and Using_Gtid in the model (MariaDB sql_repl.cc change_master,
rpl_mi.cc using_gtid_astext; rpl_using_gtid_default.result, rpl_gtid_startpos.result MDEV-4483)."""
from __future__ import annotations

import json

import pytest

from replcheck.cli import main

MARIADB = "model:mariadb-10.11"
NODES = [{"id": "M", "server_id": 1}, {"id": "R", "server_id": 2}]


def _using_gtid(kit, tr, h) -> list:
    return [o["value"]["Using_Gtid"] for o in tr.all("observed", node="R")]


def _expect(at: int) -> dict:
    return {"at": at, "op": "expect", "node": "R", "show": "slave_status", "fields": {"Using_Gtid": "x"}}


@pytest.mark.parametrize("use_gtid, by, shown", [("no", "position", "No"), ("current_pos", "gtid", "Current_Pos"),
                                                 ("slave_pos", "gtid", "Slave_Pos")])
def test_master_use_gtid_no_resumes_by_position_from_the_sql_threads_place(kit, use_gtid, by, shown):
    # change_master: MASTER_USE_GTID=no alone purges the relay logs and sets the master coordinates
    # to rli.group_master_log_name/pos, so what was applied is neither lost nor fetched twice
    h = kit.make_history(NODES, [("M", "R", 0)], [
        {"at": 100_000, "op": "trx", "node": "M", "trx": "a"}, {"at": 200_000, "op": "trx", "node": "M", "trx": "b"},
        {"at": 1_000_000, "op": "stop_slave", "node": "R"},
        {"at": 1_100_000, "op": "change_master", "node": "R", "master_use_gtid": use_gtid}, _expect(1_150_000),
        {"at": 1_200_000, "op": "start_slave", "node": "R"}, {"at": 2_000_000, "op": "trx", "node": "M", "trx": "c"},
        _expect(3_000_000)], end_us=4_000_000)
    tr = kit.run(MARIADB, h)
    connect = tr.all("connect", node="R")[-1]
    assert connect["by"] == by
    if by == "position":
        applied = [o for o in tr.all("status", node="R") if o["t"] < 1_100_000][-1]
        assert (connect["master_log_file"], connect["master_log_pos"]) == (applied["Relay_Master_Log_File"],
                                                                           applied["Exec_Master_Log_Pos"])
    assert [v["trx"] for v in tr.all("visible", node="R")] == ["a", "b", "c"]
    assert _using_gtid(kit, tr, h) == [shown, shown]


def test_master_use_gtid_no_to_a_new_master_starts_at_its_first_binlog(kit):
    nodes = NODES + [{"id": "N", "server_id": 3}]
    h = kit.make_history(nodes, [("M", "R", 0)], [
        {"at": 100_000, "op": "trx", "node": "N", "trx": "n1"}, {"at": 200_000, "op": "stop_slave", "node": "R"},
        {"at": 300_000, "op": "change_master", "node": "R", "master_host": "N", "master_use_gtid": "no"},
        {"at": 400_000, "op": "start_slave", "node": "R"}], end_us=2_000_000)
    tr = kit.run(MARIADB, h)
    assert (tr.all("connect", node="R")[-1]["source"], tr.all("connect", node="R")[-1]["by"]) == ("N", "position")
    assert [v["trx"] for v in tr.all("visible", node="R")] == ["n1"]


@pytest.mark.parametrize("use_gtid, note", [("current_pos", "Current_Pos"), ("no", "No"), ("slave_pos", None)])
def test_reset_slave_turns_using_gtid_back_to_slave_pos_naming_what_it_was(kit, use_gtid, note):
    # rpl_using_gtid_default.result: RESET SLAVE notes 4190 from 'Current_Pos' and from 'No', nothing
    # for a slave already at Slave_Pos
    h = kit.make_history(NODES, [("M", "R", 0)], [
        {"at": 100_000, "op": "stop_slave", "node": "R"},
        {"at": 200_000, "op": "change_master", "node": "R", "master_use_gtid": use_gtid},
        {"at": 300_000, "op": "reset_slave", "node": "R"}, _expect(350_000)], end_us=1_000_000)
    tr = kit.run(MARIADB, h)
    [reset] = tr.all("stmt", node="R", op="reset_slave")
    assert (reset["warning"], reset["message"]) == (
        (4190, f"RESET SLAVE is implicitly changing the value of 'Using_Gtid' from '{note}' to 'Slave_Pos'")
        if note else (None, ""))
    assert _using_gtid(kit, tr, h) == ["Slave_Pos"]


def test_a_binlog_place_names_current_pos_in_its_note(kit):
    h = kit.make_history(NODES, [("M", "R", 0)], [
        {"at": 100_000, "op": "stop_slave", "node": "R"},
        {"at": 200_000, "op": "change_master", "node": "R", "master_use_gtid": "current_pos"},
        {"at": 300_000, "op": "change_master", "node": "R", "master_log_file": "bin.000001", "master_log_pos": 4}],
        end_us=1_000_000)
    second = kit.run(MARIADB, h).all("stmt", node="R", op="change_master")[1]
    assert second["message"] == "CHANGE MASTER TO is implicitly changing the value of 'Using_Gtid' from 'Current_Pos' to 'No'"


def test_mysql_shows_no_using_gtid(kit):
    h = kit.make_history(NODES, [("M", "R", 0)], [_expect(100_000)], end_us=500_000)
    assert [o["value"] for o in kit.run("model:mysql-5.7", h).all("observed", node="R")] == [{}]


def test_an_unknown_master_use_gtid_is_bad_input(tmp_path, capsys):
    header = {"schema": "replcheck.history/1", "name": "h", "topology": {
        "nodes": NODES, "channels": [{"source": "M", "replica": "R"}]}}
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(
        {"at": 0, "op": "change_master", "node": "R", "master_use_gtid": "yes"}) + "\n")
    assert main(["simulate", str(path)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("replcheck: error: ") and "h.jsonl:2: master_use_gtid" in line
