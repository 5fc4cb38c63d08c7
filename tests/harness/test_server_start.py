"""A History's servers before they run: the variables it starts them with checked against the build
(refused, exit 2, one line naming the variable and the version), and a server that will not start
(exit 3, its own [ERROR] line, its error log kept)."""
from __future__ import annotations

import json
import os

import pytest

from replcheck.cli import main
from replcheck.harness import errlog, mariadb, variables
from replcheck.harness.binaries import ServerBinaries
from replcheck.harness.errors import ServerStartError
from replcheck.harness.mariadb import Cluster
from replcheck.harness.topology import Node, Topology
from test_harness_mariadb import require_server

HELP = """mariadbd  Ver 10.11.99-MariaDB for Linux on x86_64 (Source)
  --binlog-ignore-db=name
                      Tells the primary that updates to the given database
  --gtid-strict-mode  Enforce strict seq_no ordering of events in the binary log.

Variables (--variable-name=value)
and boolean options {FALSE|TRUE}                             Value (after reading options)
------------------------------------------------------------ -------------
gtid-strict-mode                                             FALSE
rpl-semi-sync-master-enabled                                 FALSE

To see what variables a running server is using, type
"""


def _history(variables_: dict) -> dict:
    return {"header": {"schema": "replcheck.history/1", "name": "h", "end_us": 1_000_000,
                       "topology": {"nodes": [{"id": "a", "variables": variables_}]}},
            "ops": [{"at": 0, "op": "read", "node": "a"}]}


def _fake_build(tmp_path, help_text: str) -> ServerBinaries:
    (tmp_path / "help.txt").write_text(help_text)
    tool = tmp_path / "mariadbd"
    tool.write_text(f"#!/bin/sh\ncat {tmp_path / 'help.txt'}\n")
    tool.chmod(0o755)
    return ServerBinaries(str(tool), "", "", "", None, "10.11.99-MariaDB", "")


def test_the_variables_of_a_build_are_its_table_its_options_and_the_run_time_ones(tmp_path):
    have = variables.of(_fake_build(tmp_path, HELP))
    assert {"gtid_strict_mode", "rpl_semi_sync_master_enabled", "binlog_ignore_db", "sql_slave_skip_counter"} <= have
    assert "rpl_semi_sync_master_wait_for_slave_count" not in have


def test_a_variable_the_build_lacks_is_named_with_the_version(tmp_path):
    build = _fake_build(tmp_path, HELP)
    assert variables.lacking(_history({"gtid_strict_mode": True, "binlog_ignore_db": "x"}), build) is None
    problem = variables.lacking(_history({"rpl_semi_sync_master_wait_for_slave_count": 2}), build)
    assert problem == ("topology.nodes[0].variables.rpl_semi_sync_master_wait_for_slave_count: MariaDB 10.11.99-MariaDB "
                       "has no variable rpl_semi_sync_master_wait_for_slave_count (its mariadbd --verbose --help lists none such)")


def test_a_build_whose_help_lists_no_variables_cannot_say(tmp_path):
    with pytest.raises(variables.Unreadable, match="no 'Variables"):
        variables.of(_fake_build(tmp_path, "mariadbd: unknown option '--verbose'\n"))


def test_the_first_error_line_is_why_the_server_stopped_not_its_aborting():
    log = ("2026-11-29  8:28:03 0 [Note] InnoDB: Completed initialization of buffer pool\n"
           "2026-11-29  8:28:03 0 [ERROR] mariadbd: unknown variable 'bogus=1'\n"
           "2026-11-29  8:28:03 0 [ERROR] Aborting\n")
    assert errlog.first_error(log) == "mariadbd: unknown variable 'bogus=1'"
    assert errlog.first_error(log.splitlines()[2]) is None


# ---------------------------------------------------------------------------------------------
# With a real server


@pytest.fixture(scope="module")
def server():
    return require_server()


def test_a_server_that_will_not_start_says_why_and_keeps_its_log(server, short_tmp):
    with pytest.raises(ServerStartError) as e:
        with Cluster(Topology([Node("a", 1, ("--bogus-option-of-a-test=1",))]), server=server, tmpdir=short_tmp):
            pass
    first = str(e.value).splitlines()[0]
    assert first.startswith("node a: mariadbd exited with code ")
    assert first.endswith("unknown variable 'bogus-option-of-a-test=1'")
    assert f"error log kept in {e.value.log}" in first
    assert "[ERROR] Aborting" in open(e.value.log).read()  # the whole log, not its last lines
    assert not any(n.startswith("replcheck-mariadb-") for n in os.listdir(short_tmp))  # the servers' root is gone


def test_a_first_start_is_mysql_test_runs_so_start_slave_until_does_not_warn(server, short_tmp):
    """--skip-slave-start, as mysql-test-run's servers: else START SLAVE UNTIL warns 1278
    (ER_MISSING_SKIP_SLAVE), which no .result shows (rpl_gtid_basic.result, the skip counter's UNTIL)."""
    with Cluster(Topology([Node("a", 1)]), server=server, tmpdir=short_tmp) as c:
        c.sql("a", "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=1, MASTER_USE_GTID=no, "
                   "MASTER_LOG_FILE='bin.000001', MASTER_LOG_POS=4")
        assert c.query("a", "START SLAVE SQL_THREAD UNTIL MASTER_LOG_FILE='bin.000001', MASTER_LOG_POS=4; SHOW WARNINGS")[1] == []


def _write(tmp_path, h: dict):
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [h["header"], *h["ops"]]) + "\n")
    return path


def test_conform_refuses_a_variable_the_server_lacks_before_any_server_starts(server, tmp_path, capsys):
    path = _write(tmp_path, _history({"rpl_semi_sync_master_wait_for_slave_count": 2}))
    assert main(["conform", "--server", "mariadb", "--history", str(path), "--out", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "rpl_semi_sync_master_wait_for_slave_count" in line and f"MariaDB {server.version}" in line
    assert not (tmp_path / "out").exists()


def test_conform_exits_3_when_a_server_will_not_start(server, tmp_path, short_tmp, capsys, monkeypatch):
    args = Cluster._server_args
    monkeypatch.setattr(Cluster, "_server_args", lambda self, st, options=(): [*args(self, st, options), "--bogus-option-of-a-test=1"])
    monkeypatch.setenv(mariadb.TMPDIR_ENV, short_tmp)
    path = _write(tmp_path, _history({}))
    assert main(["conform", "--server", "mariadb", "--history", str(path), "--out", str(tmp_path / "out")]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("replcheck: error: conform: node a: mariadbd exited with code ")
    assert err[-1].endswith("unknown variable 'bogus-option-of-a-test=1'")
    kept = err[-1].partition("error log kept in ")[2].partition(")")[0]
    assert os.path.isfile(kept) and not (tmp_path / "out").exists()


def test_a_targets_list_of_what_it_lacks_is_its_builds(server):
    from replcheck import targets
    from replcheck.spec import ROOT
    t = next((t for t in targets.TARGETS.values() if t.major_minor == tuple(server.version_tuple[:2])), None)
    if t is None:
        pytest.skip(f"no target for MariaDB {server.version}")
    schema = json.loads((ROOT / "schemas" / "history.schema.json").read_text())
    names = set(schema["$defs"]["variables"]["properties"])
    assert t.lacks == {n for n in names if n not in variables.of(server)}
