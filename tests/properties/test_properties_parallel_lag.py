"""The lag a parallel replica shows (PARALLEL.SBM.VALUE, PARALLEL.SBM.PENDING; properties/parallel_lag.py):
counted from the group it read after idling, whatever stamp a group carries or a source's clock
reads, and caught where a worker still holds an old group while it shows no lag."""
from __future__ import annotations

from conftest import REPO, US, assert_witness
from test_properties_parallel import IDLE, MARIADB, MYSQL

from replcheck.io import load_history
from replcheck.model.delay import STATE_WAITING
from replcheck.properties.core import PASS


def test_the_lag_of_a_parallel_replica_after_idling_counts_from_the_group_it_read(kit):
    # MySQL's multi-threaded applier: last_master_timestamp 0 once the queue emptied, set again by
    # the next group read (rpl_replica.cc); Bug #84415's applier leaves it 0 while the worker runs
    history = load_history(REPO / "spec" / "histories" / f"{IDLE}.jsonl")
    history["header"]["topology"]["nodes"][1]["variables"] = {"replica_parallel_workers": 4}
    sbm = {s["t"]: s["Seconds_Behind_Master"] for s in kit.run(MYSQL, history).all("status", node="B")}
    assert (sbm[6_000_000], sbm[8_000_000]) == (1, 3)
    tr = kit.run("mutant:mts-lag-zero-after-idle", history)
    assert_witness(kit.verdict("PARALLEL.SBM.PENDING", tr), tr, None, "shows Seconds_Behind_Master 0 but its workers have not committed t2")



def _ahead(timestamp: int | None) -> dict:
    """A parallel replica's worker applying a 3 s group, maybe written under SET TIMESTAMP 50 s ahead."""
    trx = {"at": 0, "op": "trx", "node": "A", "trx": "t1", "statements": [{"duration_us": 1000, "replica_cost_us": 3 * US}]}
    return {"header": {"schema": "replcheck.history/1", "name": "par-ahead", "sample_every_us": 700_000, "end_us": 6 * US,
                       "topology": {"nodes": [{"id": "A"}, {"id": "B", "variables": {"slave_parallel_threads": 4}}],
                                    "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]}},
            "ops": [{**trx, **({"timestamp": timestamp} if timestamp else {})}]}


def test_a_group_stamped_ahead_of_the_replicas_clock_may_show_no_lag(kit):
    # Seconds_Behind_Master counts from the timestamp, and one ahead shows 0 (max(0L, time_diff))
    tr = kit.run(MARIADB, _ahead(1_700_000_050))
    busy = [s for s in tr.all("status", node="B") if 2 * US < s["t"] < 3 * US]
    assert busy and all(s["Seconds_Behind_Master"] == 0 for s in busy)
    assert kit.verdict("PARALLEL.SBM.PENDING", tr).status == PASS
    _no_lag_while_busy_is_caught(kit, kit.run(MARIADB, _ahead(None)))  # stamped when written, the same 0 is a violation


def test_a_group_queued_behind_one_stamped_ahead_may_show_no_lag(kit):
    # MySQL's checkpoint counts from the oldest group queued: t2 behind t1 (stamped 50 s ahead) shows 0
    history = _ahead(1_700_000_050)
    history["ops"].append({"at": 100_000, "op": "trx", "node": "A", "trx": "t2"})
    history["header"]["topology"]["nodes"][1]["variables"] = {"replica_parallel_workers": 2}
    tr = kit.run(MYSQL, history)
    assert kit.verdict("PARALLEL.SBM.PENDING", tr).status == PASS
    history["ops"][0].pop("timestamp")
    _no_lag_while_busy_is_caught(kit, kit.run(MYSQL, history))


def _no_lag_while_busy_is_caught(kit, tr) -> None:
    """Seconds_Behind_Master 0 while t1 (stamped when written) waits for its workers is a violation."""
    for s in tr.all("status", node="B"):
        if 2 * US < s["t"] < 3 * US:
            s["Seconds_Behind_Master"] = 0
    assert_witness(kit.verdict("PARALLEL.SBM.PENDING", tr), tr, None, "shows Seconds_Behind_Master 0 but its workers have not committed t1")


def test_a_wl7318_worker_waits_from_the_commit_timestamp_not_a_set_timestamp(kit):
    # MySQL 8.0's delay counts from immediate_commit_timestamp: SET TIMESTAMP 50 s ahead moves nothing
    history = _ahead(1_700_000_050)
    history["header"]["topology"]["nodes"][1]["variables"] = {"replica_parallel_workers": 2}
    history["header"]["topology"]["channels"][0]["delay"] = 2
    tr = kit.run(MYSQL, history)
    t1 = tr.first("visible", node="B", trx="t1")
    assert 2 * US <= t1["start"] <= 3 * US and kit.verdict("PARALLEL.DELAY", tr).status == PASS
    t1["start"] = US  # begun before the 2 s ran out
    assert_witness(kit.verdict("PARALLEL.DELAY", tr), tr, t1, "B's worker began t1 at 1 s, before its MASTER_DELAY 2 ran out at 2 s")


def _corpus_run(kit, system: str, name: str):
    return kit.run(system, load_history(REPO / "corpus" / f"{name}.jsonl"))


def test_a_second_format_description_before_any_group_may_leave_the_count_where_the_first_set_it(kit):
    """Filter-family finding (seed 17001, History 488, shrunk): B's dump by GTID starts in A's
    first binlog, so its SQL thread reads that binlog's format description (A's start, 0 s), then
    the next binlog's (3 s), then t3. The first read set last_master_timestamp and ended "caught
    up"; the second moves it only if the thread caught up in between: 4 at 4.2 s is within the
    rules. With no first format description, the count is from 3 s and 4 is too much."""
    tr = _corpus_run(kit, MARIADB, "finding-parallel-lag-second-format-description")
    lag = tr.first("status", node="B", t=4_200_000)
    assert lag["Seconds_Behind_Master"] == 4 and kit.verdict("PARALLEL.SBM.VALUE", tr).status == PASS
    tr.drop(next(o for o in tr.all("apply", node="B", type="FORMAT_DESCRIPTION_EVENT") if o["t"] > 3 * US and o["when"] % 100 == 0))
    assert_witness(kit.verdict("PARALLEL.SBM.VALUE", tr), tr, lag, "B at 4.2 s shows Seconds_Behind_Master 4")


def test_down_a_chain_the_lag_counts_the_originating_masters_clock_against_the_sources(kit):
    """Mixed-family finding (seed 17001, History 220): B's clock is an hour ahead; C, B's parallel
    replica, measured its clock difference with B, while t2's timestamp is A's (B binlogs it with
    A's `when`): C's lag is an hour more than the true one, 3602 at 3.5 s. An hour and five
    seconds more is a violation."""
    tr = _corpus_run(kit, MARIADB, "finding-parallel-lag-chain-origin-clock")
    lag = tr.first("status", node="C", t=3_500_000)
    assert lag["Seconds_Behind_Master"] == 3602 and kit.verdict("PARALLEL.SBM.VALUE", tr).status == PASS
    lag["Seconds_Behind_Master"] += 5
    assert_witness(kit.verdict("PARALLEL.SBM.VALUE", tr), tr, lag, "C at 3.5 s shows Seconds_Behind_Master 3607")


def test_a_group_waiting_for_its_delay_counts_from_its_read_when_a_stop_breaks_the_wait(kit):
    """Mixed-family finding (seed 17001, History 61): B (MySQL 8.0, parallel, delay 2) idles after
    t7, then reads t8, dated 0 s by SET TIMESTAMP, and waits for its delay; STOP SLAVE breaks the
    wait, so the trace never shows t8 applied. The read set last_master_timestamp (an empty GAQ
    takes the first event's), so 7 at 7.7 s is within the rules; 10 is not."""
    tr = _corpus_run(kit, MYSQL, "finding-parallel-lag-wait-broken-by-stop")
    lag = tr.first("status", node="B", t=7_700_000)
    assert (lag["Seconds_Behind_Master"], lag["Slave_SQL_Running_State"]) == (7, STATE_WAITING)
    assert not tr.all("apply", node="B", trx="t8") and kit.verdict("PARALLEL.SBM.VALUE", tr).status == PASS
    lag["Seconds_Behind_Master"] = 10
    assert_witness(kit.verdict("PARALLEL.SBM.VALUE", tr), tr, lag, "B at 7.7 s shows Seconds_Behind_Master 10")


def test_a_format_description_sent_again_inside_a_group_may_date_the_lag(kit):
    """Mixed-family finding (seed 17005, History 10): B read t2 after idling (3 s); its IO thread,
    cut inside t2, connects again and A's format description, dated 0 s, comes again while the SQL
    thread waits for t2's rest with no group at its workers. MariaDB moves the timestamp only
    forward there (the model shows 4 at 7.7 s); counted from the format description (7), the lag is
    within the rules too; with no format description read there, 7 is too much."""
    tr = _corpus_run(kit, MARIADB, "finding-parallel-lag-older-format-description-at-a-reconnect")
    lag = tr.first("status", node="B", t=7_700_000)
    assert lag["Seconds_Behind_Master"] == 4 and kit.verdict("PARALLEL.SBM.VALUE", tr).status == PASS
    lag["Seconds_Behind_Master"] = 7
    assert kit.verdict("PARALLEL.SBM.VALUE", tr).status == PASS
    tr.drop(next(o for o in tr.all("apply", node="B", type="FORMAT_DESCRIPTION_EVENT") if o["t"] > 7 * US))
    assert_witness(kit.verdict("PARALLEL.SBM.VALUE", tr), tr, lag, "B at 7.7 s shows Seconds_Behind_Master 7")

def test_a_worker_is_judged_only_where_the_clocks_agreed_from_the_write_to_its_start(kit):
    # B's clock is 2 s behind when its IO thread, reconnecting after a cut, measures
    # clock_diff_with_master (-2); A's steps back as far after writing t1. At 5 s both clocks agree, yet B's delay counts t1's stamp with the
    # difference measured before A's step: due at 5 s (sql_delay_event), not at 7 s on A's clock now.
    nodes = ["A", {"id": "B", "variables": {"slave_parallel_threads": 2, "replica_parallel_workers": 2}}]
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t1"}, {"at": 0, "op": "clock_step", "node": "B", "delta_us": -2 * US},
           {"at": 0, "op": "cut_io", "node": "B", "after_events": 1}, {"at": 400_000, "op": "clock_step", "node": "A", "delta_us": -2 * US}]
    history = kit.make_history(nodes, [{"source": "A", "replica": "B", "delay": 5, "latency_us": 1000}], ops,
                               sample_every_us=700_000, end_us=9 * US)
    tr = kit.run(MARIADB, history)
    assert tr.first("visible", node="B", trx="t1")["start"] == 5 * US
    assert kit.verdict("PARALLEL.DELAY", tr).status in (PASS, "not_exercised")
    history["ops"] = ops[:1]  # no clock steps: judged, and a worker begun before the 5 s is caught
    tr = kit.run(MARIADB, history)
    t1 = tr.first("visible", node="B", trx="t1")
    assert t1["start"] == 5 * US and kit.verdict("PARALLEL.DELAY", tr).status == PASS
    t1["start"] = 4 * US
    assert_witness(kit.verdict("PARALLEL.DELAY", tr), tr, t1, "B's worker began t1 at 4 s, before its MASTER_DELAY 5 ran out at 5 s")
def test_the_lag_counts_the_clock_of_the_source_the_difference_was_measured_with(kit):
    """Domains-family finding (seed 31, History 258): a failover moved R from M to B, whose clock then
    stepped an hour ahead; R, restarted parallel, measured its clock difference with B and counts from
    B's format description, dated before the step: 3600 at 0.9 s is within the rules (B's step, not
    M's, shifts it); 3605 is not."""
    tr = _corpus_run(kit, MARIADB, "finding-parallel-lag-clock-difference-taken-with-the-new-source")
    lag = tr.first("status", node="R", t=900_000)
    assert lag["Seconds_Behind_Master"] == 3600 and kit.verdict("PARALLEL.SBM.VALUE", tr).status == PASS
    lag["Seconds_Behind_Master"] = 3605
    assert_witness(kit.verdict("PARALLEL.SBM.VALUE", tr), tr, lag, "R at 0.9 s shows Seconds_Behind_Master 3605")


def test_a_format_description_sent_again_is_dated_by_its_sources_clock_when_written(kit):
    """Parallel-family finding (seed 31, History 746): A's clock stepped 2 s back as its binlog began;
    B, restarted after a crash, connects by position inside it and gets that binlog's format
    description again (log_pos 0), dated before the step: MariaDB counts from it and shows 0 at 2.5 s
    while t3 waits at a worker. With no format description read there, the count is from t3 and 0
    is a violation."""
    tr = _corpus_run(kit, MARIADB, "finding-parallel-lag-format-description-sent-again-after-its-source-clock-stepped-back")
    lag = tr.first("status", node="B", t=2_500_000)
    assert lag["Seconds_Behind_Master"] == 0 and kit.verdict("PARALLEL.SBM.PENDING", tr).status == PASS
    tr.drop(tr.all("apply", node="B", type="FORMAT_DESCRIPTION_EVENT")[-1])  # the one read after the restart
    assert_witness(kit.verdict("PARALLEL.SBM.PENDING", tr), tr, lag, "B at 2.5 s shows Seconds_Behind_Master 0 but its workers have not committed t3")
