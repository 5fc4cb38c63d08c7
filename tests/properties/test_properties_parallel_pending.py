"""PARALLEL.SBM.PENDING and PARALLEL.SBM.VALUE on the model campaigns' findings: a parallel replica
shows 0 while a worker holds an old group only where the server's own count makes it 0 (clocks down
a chain, a stamp ahead read before); a count started again at a read after idling is not bounded by
a commit stamped ahead before it."""
from __future__ import annotations

from conftest import REPO, assert_witness

from replcheck.io import load_history
from replcheck.properties.core import PASS

MARIADB = "model:mariadb-10.11"
PENDING = "PARALLEL.SBM.PENDING"
VALUE = "PARALLEL.SBM.VALUE"


def _corpus(name: str) -> dict:
    return load_history(REPO / "corpus" / f"{name}.jsonl")


def test_down_a_chain_a_writer_clock_ahead_of_the_source_shows_no_lag(kit):
    """Campaign finding (seed 100071, History 13, shrunk): A's clock is an hour ahead; C measured its
    clock difference with B (0), while t2's timestamp is A's: C shows 0 at 6.3 s as its worker holds
    t2 (max(0, time_diff), slave.cc send_show_master_info_data). With A's clock not stepped, the
    same 0 is a violation."""
    history = _corpus("finding-parallel-lag-chain-writer-clock-ahead")
    tr = kit.run(MARIADB, history)
    lag = tr.first("status", node="C", t=6_300_000)
    assert lag["Seconds_Behind_Master"] == 0 and tr.first("visible", node="C", trx="t2")["t"] > lag["t"]
    assert kit.verdict(PENDING, tr).status == PASS
    history["ops"] = [o for o in history["ops"] if o["op"] != "clock_step"]
    tr = kit.run(MARIADB, history)
    lag = tr.first("status", node="C", t=6_300_000)
    assert lag["Seconds_Behind_Master"] > 0
    lag["Seconds_Behind_Master"] = 0
    assert_witness(kit.verdict(PENDING, tr), tr, lag, "C at 6.3 s shows Seconds_Behind_Master 0 but its workers have not committed t2")


def test_a_group_stamped_ahead_read_before_a_restart_keeps_the_lag_at_zero(kit):
    """Campaign finding (seed 100072, History 27, shrunk): B read t3, stamped 50 s ahead, and waited
    for its delay; STOP SLAVE SQL_THREAD, sql_slave_skip_counter 3 and START skipped it. Its read set
    last_master_timestamp, kept across the restart and moved only forward: 0 at 20.3 s while t11
    executes at a worker. The wait alone shows the read (the skip left out); with t3 stamped when
    written, the 0 is a violation."""
    tr = kit.run(MARIADB, _corpus("finding-parallel-lag-skipped-group-stamped-ahead"))
    lag = tr.first("status", node="B", t=20_300_000)
    assert lag["Seconds_Behind_Master"] == 0 and tr.first("visible", node="B", trx="t11")["t"] > lag["t"]
    assert [o["trx"] for o in tr.all("skip", node="B")] == ["t3"] * 3 and kit.verdict(PENDING, tr).status == PASS
    for o in tr.all("skip", node="B"):
        tr.drop(o)
    assert kit.verdict(PENDING, tr).status == PASS
    for o in tr.all("binlog", node="A", trx="t3") + tr.all("relay", node="B", trx="t3"):
        o["when"] = 1_700_000_000
    assert_witness(kit.verdict(PENDING, tr), tr, lag, "B at 20.3 s shows Seconds_Behind_Master 0 but its workers have not committed t11")


def test_a_format_description_of_a_binlog_begun_after_the_group_keeps_the_lag_at_zero(kit):
    """Campaign finding (seed 400037, History 28, shrunk): B crashed and restarted at 2.01 s, beginning
    bin.000002; C (parallel), started again, connected and read B's format description (stamped
    2 s), then t4 (A's, stamped 0 s), which executes at a worker for 4 s. The format description
    set last_master_timestamp and t4's older stamp does not move it back (MDEV-30619's `<
    ev->when`): 0 at 2.8 s. Without that read, the 0 is a violation."""
    tr = kit.run(MARIADB, _corpus("finding-parallel-lag-format-description-of-a-binlog-begun-after-the-group"))
    lag = tr.first("status", node="C", t=2_800_000)
    assert lag["Seconds_Behind_Master"] == 0 and tr.first("visible", node="C", trx="t4")["t"] > lag["t"]
    assert kit.verdict(PENDING, tr).status == PASS
    for o in tr.all("apply", node="C", type="FORMAT_DESCRIPTION_EVENT"):
        tr.drop(o)
    assert_witness(kit.verdict(PENDING, tr), tr, lag, "C at 2.8 s shows Seconds_Behind_Master 0 but its workers have not committed t4")


def test_a_read_after_a_commit_stamped_ahead_counts_the_lag_again(kit):
    """Campaign finding (seed 400086, History 24, shrunk; MySQL's mechanics): B, restarted, committed
    t3 (stamped 50 s ahead), its IO thread connected again by position and the dump sent A's format
    description again (log_pos 0), then t6 (stamped 1 s). The checkpoint found no group queued and
    set last_master_timestamp to 0, so t6's read set it (rpl_replica.cc, mta_checkpoint_routine and
    exec_relay_log_event): 3 at 4.2 s while t6 executes. 3 s more is a violation."""
    tr = kit.run("model:wl7318", _corpus("finding-parallel-lag-format-description-sent-again-after-a-commit-stamped-ahead"))
    lag = tr.first("status", node="B", t=4_200_000)
    assert lag["Seconds_Behind_Master"] == 3 and tr.first("visible", node="B", trx="t6")["t"] > lag["t"]
    assert kit.verdict(VALUE, tr).status == PASS
    lag["Seconds_Behind_Master"] = 6
    assert_witness(kit.verdict(VALUE, tr), tr, lag, "B at 4.2 s shows Seconds_Behind_Master 6")


def test_a_format_description_read_after_a_restart_starts_the_count_from_its_binlogs_start(kit):
    """Parallel-family finding (seed 500079, History 30, shrunk): B crashes and restarts as A writes
    t1; its IO thread connects by position inside bin.000001, so A sends that binlog's format
    description again (log_pos 0, dated its start, 0 s), then t1 (2 s), 1 s at a worker. The restart
    left last_master_timestamp 0: the format description sets it and ends "caught up", so t1's read
    moves nothing (slave.cc, exec_relay_log_event, MDEV-30619) and B counts from 0 s while t1
    executes. Counted from a later moment than the format description's date, the lag is too much."""
    tr = kit.run(MARIADB, _corpus("finding-parallel-lag-format-description-read-after-a-restart"))
    fde = tr.all("apply", node="B", type="FORMAT_DESCRIPTION_EVENT")[-1]
    lag = next(s for s in tr.all("status", node="B") if s["t"] > fde["t"] and s["Seconds_Behind_Master"])
    assert fde["when"] % 100 == 0 and kit.verdict(VALUE, tr).status == PASS
    lag["Seconds_Behind_Master"] += 2
    assert_witness(kit.verdict(VALUE, tr), tr, lag, f"B at {lag['t'] / 1e6:g} s shows Seconds_Behind_Master {lag['Seconds_Behind_Master']}")
