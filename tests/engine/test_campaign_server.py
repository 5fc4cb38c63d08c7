"""A tiny campaign on the real server beside its flavour model: Histories of several families drawn
for the server, each on servers of its own, rows like any system's, nothing left behind, the same
table again when resumed."""
from __future__ import annotations

import os
import shutil

import pytest

from replcheck import campaign
from replcheck.generate import generate
from replcheck.harness.mariadb import TMPDIR_ENV
from replcheck.properties.core import PROPERTIES
from test_harness_mariadb import require_server

pytestmark = [pytest.mark.server, pytest.mark.spark,
              pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")]
SERVER, MODEL = "server:mariadb-10.11", "model:mariadb-10.11"


def _ours(root) -> list[int]:
    """Processes whose command line names a directory under `root` (the servers of this test)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if str(root).encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def test_a_server_campaign_gives_rows_like_a_models_and_leaves_nothing_behind(tmp_path, short_tmp, monkeypatch):
    require_server()
    servers = short_tmp
    monkeypatch.setenv(TMPDIR_ENV, str(servers))  # each History's servers' directories, to see that none stays
    plan = campaign.validate(3, 0, [SERVER, MODEL], "local[1]", 2)  # groupid, parallel, semisync
    lines: list[str] = []
    with campaign.spark_session("local[1]") as spark:
        summary = campaign.run(plan, tmp_path / "c", spark=spark, emit=lines.append, groups=2)
        table = spark.read.parquet(str(tmp_path / "c" / "table"))
        histories = table.where("kind = 'history'").collect()
        showing = {(r["index"], name) for r in table.where("finding").collect() for name in (r["system"], r["other_system"])}
        again = campaign.run(plan, tmp_path / "c", spark=spark, emit=lines.append, groups=2)  # resumed: nothing to run
    assert sorted((h["index"], h["system"]) for h in histories) == [(i, s) for i in range(3) for s in sorted((MODEL, SERVER))]
    assert len({generate(0, h["index"], target=SERVER)["header"]["name"].split("-")[1] for h in histories}) == 3
    for h in histories:  # every requirement in exactly one list, a real server's too
        assert sorted(h["passed"] + h["violated"] + h["not_exercised"] + h["inconclusive"]) == sorted(p.requirement for p in PROPERTIES)
        # the server's Trace kept where it shows a finding (replay --kept reads it), no model's
        assert (h["trace"] is not None) == (h["system"] == SERVER and (h["index"], SERVER) in showing)
    assert summary["campaign"]["histories"] == 3 and plan.target == SERVER
    for f in summary["findings"]:
        if f["system"] == SERVER:
            assert f["kind"] == "MariaDB differs from the seed" and f"--system {MODEL} --target {SERVER}" in f["reproduce"]
    for d in summary["campaign"]["declared"]:  # what the flavour model declares is triaged, with its reason, not new
        assert d["why"] and d["requirement"] not in {f["requirement"] for f in summary["findings"] if f["system"] == d["system"]}
    assert any(line.startswith("histories 3/3") for line in lines) and any(line.startswith("resuming: 2 of 2 chunks") for line in lines)
    assert again["findings"] == summary["findings"] and again["rows"] == summary["rows"]
    assert os.listdir(servers) == [] and _ours(servers) == []  # no server, no directory left
