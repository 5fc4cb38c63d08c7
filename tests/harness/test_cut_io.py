"""cut_io on a real MariaDB (a connection cut inside a group): the channel's relay cuts the binlog stream
between two events of a group, and the relay log really holds the partial copy (read with
mariadb-binlog, as the runner reads it), which the IO thread completes when it comes back. The
conformance scenarios of the same names; skipped when there is no server."""
from __future__ import annotations


import pytest

from replcheck import io
from replcheck.features import load_features
from replcheck.harness import runner as R
from replcheck.properties import core
from conftest import HISTORIES
from test_harness_mariadb import require_server


@pytest.fixture(scope="module")
def server():
    return require_server()



def _run(name: str, scale: float, tmpdir: str) -> tuple[dict, list[dict]]:
    load_features()
    return R.Runner(io.load_history(HISTORIES / f"{name}.jsonl"), scale=scale, tmpdir=tmpdir, name=name).run()


def _copy(obs: list[dict], gtid: str) -> list[tuple[str, int, bool]]:
    """B's relay log as read: the copy of one group, each event's relay log, index and last flag."""
    return [(o["file"], o["idx"], o["last"]) for o in obs if o["kind"] == "relay" and o["node"] == "B" and o["gtid"] == gtid]


def _verdicts(header: dict, obs: list[dict]) -> dict[str, str]:
    return {v.requirement: v.status for v in core.run_properties(core.TraceView(header, obs))}


def test_a_network_cut_inside_a_group_leaves_a_partial_copy_the_reconnect_completes(server, short_tmp):
    """Cut after t2's GTID event and first statement (its GTID, Annotate_rows, Table_map and
    Write_rows): relay.000002 ends there; the IO thread reconnects by GTID, skips those 4 events
    and writes the rest into relay.000003. t2 is applied once, whole."""
    header, obs = _run("cut-mid-group-reconnect", 0.5, short_tmp)
    [cut] = [o for o in obs if o["kind"] == "io_cut"]
    assert cut["then"] == "reconnect" and cut["node"] == "B"
    copy = _copy(obs, "0-1-2")
    assert [i for _, i, _ in copy] == list(range(11)) and [last for _, _, last in copy] == [False] * 10 + [True], copy
    assert copy[3][0] != copy[4][0]  # the partial copy in one relay log, its rest in the next
    notes = [o["message"] for o in obs if o["kind"] == "log" and o["node"] == "B"]
    assert ("Slave IO thread is reconnected to receive Gtid_log_event 0-1-2. It is to skip 4 already received "
            "events including the gtid one") in notes
    # The relay's place is the IO thread's: the server logs where it reconnects from.
    assert any(f"reconnecting to retry, log '{cut['master_log_file']}' at position {cut['master_log_pos']};" in n for n in notes)
    assert next(o for o in obs if o["kind"] == "data" and o["node"] == "B")["counts"] == {"t1": 1, "t2": 1, "t3": 1}
    v = _verdicts(header, obs)
    assert v["PARTIAL.GROUP.WHOLE"] == v["PARTIAL.IO_POS.WHOLE"] == v["GGID.RECOVERY.EXACTLY_ONCE"] == core.PASS, v


def test_stop_slave_io_thread_mid_transfer_leaves_the_group_s_start_in_the_relay_log(server, short_tmp):
    """The stream held after t1's GTID event, STOP SLAVE IO_THREAD: the relay log holds that one
    event while the SQL thread waits for its delay; the samples meanwhile show a stopped IO thread
    and a Gtid_IO_Pos without t1; START SLAVE IO_THREAD queues the rest."""
    header, obs = _run("cut-stop-mid-group-delayed", 0.5, short_tmp)
    [cut] = [o for o in obs if o["kind"] == "io_cut"]
    assert cut["then"] == "stop"
    start = next(o for o in obs if o["kind"] == "stmt" and o["op"] == "start_slave")
    before = [o for o in obs if o["kind"] == "relay" and o["node"] == "B" and o["gtid"] == "0-1-1" and o["t"] < start["t"]]
    assert [(o["idx"], o["last"]) for o in before] == [(0, False)]
    held = [o for o in obs if o["kind"] == "status" and o["node"] == "B" and cut["t"] <= o["t"] < start["t"]]
    assert held and all(o["Slave_IO_Running"] == "No" and "0-1-1" not in o["Gtid_IO_Pos"] for o in held), held
    assert [i for _, i, _ in _copy(obs, "0-1-1")] == list(range(8))
    assert next(o for o in obs if o["kind"] == "data" and o["node"] == "B")["counts"] == {"t1": 1, "t2": 1}
    v = _verdicts(header, obs)
    assert v["PARTIAL.GROUP.WHOLE"] == v["PARTIAL.IO_POS.WHOLE"] == v["GGID.RECOVERY.EXACTLY_ONCE"] == core.PASS, v
