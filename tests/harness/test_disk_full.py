"""A full disk under a node's binlog (replcheck/harness/disk.py): the small filesystem filled and
freed, never a disk that is not its own; then inc-disk-full on a real MariaDB: the commits that
meet the full disk wait for space and are written a minute later, no error, no incident, and the
filesystem goes with the run."""
from __future__ import annotations

import errno
import os

import pytest

from replcheck import io
from replcheck.features import load_features
from replcheck.harness import disk
from replcheck.harness import runner as R
from replcheck.model.sim.diskfull import RETRY_US
from replcheck.properties import core
from conftest import HISTORIES
from test_harness_mariadb import require_server


def test_a_folder_that_is_not_a_filesystem_of_its_own_is_never_filled(tmp_path):
    with pytest.raises(disk.Unavailable, match="not a filesystem of its own"):
        disk.fill(str(tmp_path))
    assert not os.listdir(tmp_path)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root (CI and ci/setup run as root)")
def test_a_small_filesystem_is_filled_freed_and_unmounted(short_tmp):
    point = os.path.join(short_tmp, "binlog")
    os.mkdir(point)
    disk.mount(point)
    try:
        assert disk.mounts_under(short_tmp) == [point]
        disk.fill(point)
        with pytest.raises(OSError) as full, open(os.path.join(point, "bin.000001"), "wb", buffering=0) as f:
            f.write(b"x" * 9000)
        assert full.value.errno == errno.ENOSPC
        disk.free(point)
        with open(os.path.join(point, "bin.000001"), "wb", buffering=0) as f:
            assert f.write(b"x" * 9000) == 9000
    finally:
        assert disk.unmount_under(short_tmp) == []
    assert disk.mounts_under(short_tmp) == []


@pytest.fixture(scope="module")
def server():
    return require_server()


def test_commits_on_a_full_disk_wait_for_space_on_mariadb(server, short_tmp):
    load_features()
    h = io.load_history(HISTORIES / "inc-disk-full.jsonl")
    header, obs = R.Runner(h, scale=1.0, tmpdir=short_tmp).run()
    assert disk.mounts_under(short_tmp) == []
    by = {o["trx"]: o for o in obs if o["kind"] == "commit"}
    freed = next(o["t"] for o in obs if o["kind"] == "disk_freed")
    wait = next(o for o in obs if o["kind"] == "binlog_wait")
    assert wait["node"] == "A" and wait["file"] == "bin.000001"
    for trx in ("t2", "t3"):  # no error; written at the retry, a minute after t2 met the disk, once it was freed
        assert by[trx].get("errno") is None and by[trx]["gtid"], by[trx]
        assert freed < by[trx]["t"] and by[trx]["t"] >= by["t2"]["start"] + RETRY_US - header["resolution_us"]
    assert not [o for o in obs if o["kind"] == "binlog" and o["type"] == "INCIDENT_EVENT"]
    assert {o["node"]: o["counts"] for o in obs if o["kind"] == "data"} == {n: {f"t{i}": 1 for i in range(1, 5)} for n in "AB"}
    verdicts = {v.requirement: v.status for v in core.run_properties(core.TraceView(header, obs))}
    assert verdicts["WL3464.DISK_FULL"] == core.PASS and verdicts["MARIADB.GTID.BINLOG_POS"] == core.PASS
