"""A campaign's Spark writes only in a directory of its own, gone when the campaign ends (and a
killed run's, when the next starts). Its own module: the campaign starts and stops the process's
only Spark session and JVM."""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from replcheck import campaign, spark

pytestmark = [pytest.mark.spark, pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")]


def test_a_campaign_leaves_nothing_in_the_temporary_directory(tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.delenv("TMPDIR", raising=False)
    orphan = tmp / f"{spark.SCRATCH_PREFIX}{2**22 + 1}-x"  # above any pid_max: its run was killed
    (orphan / "blockmgr-1").mkdir(parents=True)
    (orphan / spark.SCRATCH_MARK).touch()
    users = tmp / f"{spark.SCRATCH_PREFIX}{2**22 + 1}-mine"  # a user's directory of that name, without the mark
    users.mkdir()
    seen: list[list[str]] = []

    def emit(line: str) -> None:  # what the campaign's directory holds while it runs
        seen.append(sorted(p.name for d in tmp.glob(f"{spark.SCRATCH_PREFIX}{os.getpid()}-*") for p in d.iterdir()))
    plan = campaign.Plan(histories=2, seed=0, systems=("model:wl344",), chunk=2)
    campaign.run(plan, tmp_path / "c", master="local[1]", emit=emit)
    assert any(any(n.startswith("blockmgr-") for n in names) and any(n.startswith("spark-") for n in names) for names in seen)
    assert list(tmp.iterdir()) == [users]
