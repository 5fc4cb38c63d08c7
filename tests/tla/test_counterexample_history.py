"""TLC counterexamples as Histories (replcheck.tla.counterexample_history): replayed on the Python
model, each fails the requirement TLC found violated, on the same mutant or model."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from replcheck import io, systems, tlc
from replcheck.cli import main
from replcheck.properties.judge import judge
from replcheck.tla import counterexample_history, parse_value

from conftest import tlc_once

pytestmark = [pytest.mark.tlc, pytest.mark.skipif(not (shutil.which("java") or os.environ.get("JAVA_HOME")),
                                                  reason="TLC needs Java (ci/setup installs it)")]
# The counterexamples a History cannot reproduce: the spec's freedom the model does not have
# (an ack the replica never sends, a middle node that lags with its SQL thread running, a slave
# that lags across commits while running, a slave that receives the group its master crashed on
# after the binlog write), a start crashing after its new binlog right after a crash at a commit
# point (a History arms one crash point at a time, on a running server), and a purge of some of a
# binlog's groups (a server purges whole files). gg-purge and gg-connect-by-id catch those two
# mutants on the model.
NOT_REPRODUCIBLE = {"semisync-switch-back-first-ack", "delay-wl344-chain", "groupids-recovery-ignores-index",
                    "groupids-recovery-ignores-index-unique", "groupids-purge-silent-skip",
                    "groupids-connect-ignores-server-id"}
CHECKS = [c for c in tlc.select(size="small") if c.expect == "violated" and c.name not in NOT_REPRODUCIBLE]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name)
def test_counterexample_replayed_on_the_model_fails_the_same_requirement(check, tmp_path):
    with tlc_once():  # test_tlc_run checks the same run against the manifest
        r = tlc.run(check.path, check.config_text())
    system, history = counterexample_history(check, r)
    path = tmp_path / "h.jsonl"
    path.write_text(io.dumps_history(history))
    j = judge(systems.get(system), io.load_history(path))  # the schema's check too
    assert j.violated(tlc.manifest().requirement(check.violated))


def test_history_out_writes_the_first_counterexample(tmp_path, capsys):
    out = tmp_path / "h.jsonl"
    assert main(["tlc", "--config", "SemiSync_after_commit", "--history-out", str(out)]) == 0
    h = io.load_history(out)
    assert [o["op"] for o in h["ops"]] == ["stop_slave", "stop_slave", "trx", "read", "crash", "failover", "restart"]
    assert "--system model:wl344" in capsys.readouterr().out


def test_history_out_refuses_a_spec_without_a_mapping(tmp_path, capsys, monkeypatch):
    from replcheck import tla

    monkeypatch.delitem(tla.COUNTEREXAMPLES, "GroupIds")
    assert main(["tlc", "--config", "GroupIds_small", "--history-out", str(tmp_path / "h")]) == 2
    assert "--history-out" in capsys.readouterr().err and not (tmp_path / "h").exists()


@pytest.mark.server
def test_after_commit_counterexample_loses_a_read_transaction_on_mariadb(tmp_path):
    """TLC's AFTER_COMMIT counterexample (Write, Commit, Read, Crash, Failover), as a History on a
    real MariaDB: the row another session read is not on the new primary. At 10 real seconds per
    History second, so that the commit has reached the engine before the read on a loaded machine."""
    from test_harness_mariadb import require_server

    require_server()
    check = next(c for c in tlc.select(config="SemiSync_after_commit"))
    _, history = counterexample_history(check, tlc.run(check.path, check.config_text()))
    path, out = tmp_path / "h.jsonl", tmp_path / "out"
    path.write_text(io.dumps_history(history))
    assert main(["conform", "--server", "mariadb", "--history", str(path), "--scale", "10", "--out", str(out)]) in (0, 1)
    rows = json.loads((out / "results.json").read_text())["rows"]
    verdict = {r["requirement"]: r for r in rows}["WL6355.FAILOVER.NO_LOSS"]
    assert verdict["status"] == "violated", verdict


def test_tlc_values():
    assert parse_value('(r1 :> 0 @@ r2 :> 1)') == {"r1": 0, "r2": 1}
    assert parse_value('<<<<0, -1>>, {}>>') == ((0, -1), frozenset())
    assert parse_value('[kind |-> "tx", c |-> TRUE]') == {"kind": "tx", "c": True}
