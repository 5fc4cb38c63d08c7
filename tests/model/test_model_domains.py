"""MariaDB's GTID domains in the model: the Gtid_list a binlog starts with, where a GTID connect
starts (sql_repl.cc gtid_find_binlog_file / contains_all_slave_gtid, MDEV-4473), what it skips
and refuses, and gtid_strict_mode (rpl_gtid.cc check_strict_sequence)."""
from __future__ import annotations

from replcheck.model import domains as DOM


def test_gtid_list_keeps_each_domains_last_gtid_last():
    logged = [(0, 1, 1), (1, 1, 1), (0, 1, 2), (0, 2, 3), (0, 1, 4), (0, 2, 5)]
    assert DOM.gtid_list(logged) == [(0, 1, 4), (0, 2, 5), (1, 1, 1)]


def test_the_start_binlog_is_the_one_before_when_the_gtid_is_not_its_domains_last():
    # known bugs G8: binlog X's Gtid_list holds 0-1-3, 0-2-5; a slave at 0-1-3 must start in X-1
    files = [("bin.000001", []), ("bin.000002", [(0, 1, 3), (0, 2, 5)])]
    assert DOM.find_binlog_file(files, {0: (0, 1, 3)}) == ("bin.000001", {0: (0, 1, 3)})
    # the mutant: X, with the domain dropped from the state (nothing skipped, 0-2-4 and 0-2-5 lost)
    assert DOM.find_binlog_file(files, {0: (0, 1, 3)}, last_only=False) == ("bin.000002", {})
    # the domain's last entry: X, nothing to skip there
    assert DOM.find_binlog_file(files, {0: (0, 2, 5)}) == ("bin.000002", {})


def test_a_domain_the_slave_lacks_sends_it_back_to_an_earlier_binlog():
    files = [("bin.000001", []), ("bin.000002", [(0, 1, 3), (1, 1, 1)])]
    assert DOM.find_binlog_file(files, {0: (0, 1, 3)})[0] == "bin.000001"
    assert DOM.find_binlog_file(files[1:], {0: (0, 1, 3)}) == (None, {0: (0, 1, 3)})  # purged: refused


def test_skipping_goes_up_to_the_requested_gtid_of_its_server():
    state = {0: (0, 1, 3)}
    assert DOM.skips(state, (0, 1, 2)) and DOM.skips(state, (0, 2, 9))  # another server's: still waiting
    assert DOM.skips(state, (0, 1, 3)) and state == {}  # found: skipped, the domain done
    assert not DOM.skips(state, (0, 2, 4))


def test_start_position_refusals():
    binlog = [(0, 1, 2), (0, 2, 5)]
    refused, _, _ = DOM.start_position({0: (0, 1, 3)}, binlog, {}, 2)
    assert refused == "Error: connecting slave requested to start from GTID 0-1-3, which is not in the master's binlog. " \
        "Since the master's binlog contains GTIDs with higher sequence numbers, it probably means that the slave " \
        "has diverged due to executing extra erroneous transactions"
    refused, _, _ = DOM.start_position({0: (0, 1, 9)}, binlog, {}, 2)
    assert refused == "Error: connecting slave requested to start from GTID 0-1-9, which is not in the master's binlog"
    # a domain the master has nothing of: served by another master, accepted, and checked again when
    # a group of that domain comes (START_ON_EMPTY_DOMAIN)
    assert DOM.start_position({1: (1, 7, 4)}, binlog, {}, 2) == (None, {1: (1, 7, 4)}, {1})
    empty = {1}
    assert DOM.empty_domain_error({1: (1, 7, 4)}, empty, (1, 2, 1), [(1, 2, 1)]) == (
        "Error: connecting slave requested to start from GTID 1-7-4, which is not in the master's binlog") and not empty
    assert DOM.empty_domain_error({1: (1, 7, 4)}, {1}, (1, 7, 5), [(1, 7, 5)]) is None
    # the master's own gtid_slave_pos (replicated without logging it): after its own later GTID
    assert DOM.start_position({0: (0, 1, 3)}, binlog, {0: (0, 1, 3)}, 2) == (None, {0: (0, 2, 3)}, set())


def test_strict_mode_refuses_a_gtid_not_above_its_domains_last():
    assert DOM.strict_out_of_order((0, 2, 2), (0, 1, 2)).startswith(
        "An attempt was made to binlog GTID 0-1-2 which would create an out-of-order sequence number with existing GTID 0-2-2")
    assert DOM.strict_out_of_order((0, 2, 2), (0, 1, 3)) is None and DOM.strict_out_of_order(None, (5, 1, 1)) is None
    assert DOM.start_hole({0: (0, 1, 3)}, (0, 1, 5)).startswith("The binlog on the master is missing the GTID 0-1-3")
    assert DOM.start_hole({0: (0, 1, 3)}, (0, 2, 5)) is None


def test_each_domain_numbers_its_own_gtids(kit):
    h = kit.make_history(["M", "R"], [("M", "R", 0)], [
        {"at": 1_000_000, "op": "trx", "node": "M"}, {"at": 2_000_000, "op": "trx", "node": "M", "domain": 7},
        {"at": 3_000_000, "op": "trx", "node": "M", "domain": 7}, {"at": 4_000_000, "op": "trx", "node": "M"}],
        end_us=6_000_000)
    tr = kit.run("model:mariadb-10.11", h)
    assert [c["gtid"] for c in tr.all("commit", node="M")] == ["0-1-1", "7-1-1", "7-1-2", "0-1-2"]
    assert [v["gtid"] for v in tr.all("visible", node="R")] == ["0-1-1", "7-1-1", "7-1-2", "0-1-2"]


def ignoring_duplicates(kit, history: str) -> dict:
    """A spec History with its replica R run with gtid_ignore_duplicates."""
    from replcheck import io
    from replcheck.spec import ROOT
    h = io.load_history(ROOT.joinpath("histories", f"{history}.jsonl"))
    [r] = [n for n in h["header"]["topology"]["nodes"] if n["id"] == "R"]
    r["variables"] = {**r.get("variables", {}), "gtid_ignore_duplicates": True}
    return h


def test_a_slave_ignoring_duplicates_may_ask_for_more_than_the_masters_binlog_holds(kit):
    # sql_repl.cc, check_slave_start_position: with @slave_gtid_ignore_duplicates a requested GTID
    # above the domain's last in the master's binlog is no error (rpl_gtid_slave_filtering.result);
    # without it, the same connect is refused with 1236
    plain = kit.run("model:mariadb-10.11", "dom-connect-not-in-binlog").first("connect", node="R", source="B")
    got = kit.run("model:mariadb-10.11", ignoring_duplicates(kit, "dom-connect-not-in-binlog")).first("connect", node="R", source="B")
    assert (plain["errno"], got["errno"], got["gtid_pos"]) == (1236, None, "0-1-3")


def test_a_gtid_the_slave_skipped_numbers_its_own_next_gtids_after_it(kit):
    # Measured on 10.11.19 (this History at scale 0.1): B skips 0-1-1 with sql_slave_skip_counter,
    # which records it in gtid_slave_pos (rpl_gtid.cc, record_and_update_gtid), and record_gtid bumps
    # the domain's counter (bump_seq_no_counter_if_needed): promoted, B numbers t4 0-2-2, and R, asking
    # B for 0-1-1 (B's own gtid_slave_pos, START_OWN_SLAVE_POS), is sent t4 and t5.
    from conftest import REPO
    from replcheck import io
    tr = kit.run("model:mariadb-10.11", io.load_history(REPO / "corpus" / "finding-skipped-gtid-numbers-the-new-masters-own.jsonl"))
    assert tr.first("skip", node="B", trx="t1")["gtid"] == "0-1-1"
    assert [c["gtid"] for c in tr.all("commit", node="B")] == ["0-2-2", "0-2-3"]
    connect = tr.first("connect", node="R", source="B")
    assert (connect["gtid_pos"], connect["errno"]) == ("0-1-1", None)
    assert [v["trx"] for v in tr.all("visible", node="R")] == ["t1", "t4", "t5"]


def test_a_gtid_of_a_domain_the_io_thread_drops_numbers_the_replicas_own_after_it(kit):
    # The dropped group's GTID reaches gtid_slave_pos by record_gtid too (log_event_server.cc,
    # Gtid_list_log_event::do_apply_event with FLAG_IGN_GTIDS), which bumps the domain's counter.
    h = kit.make_history([{"id": "M", "server_id": 1}, {"id": "R", "server_id": 2}], [("M", "R", 0)], [
        {"at": 100_000, "op": "stop_slave", "node": "R"},
        {"at": 200_000, "op": "change_master", "node": "R", "ignore_domain_ids": [2]},
        {"at": 300_000, "op": "start_slave", "node": "R"},
        *({"at": 1_000_000 + i, "op": "trx", "node": "M", "trx": f"m{i}", "domain": 2} for i in range(3)),
        {"at": 2_000_000, "op": "trx", "node": "R", "trx": "r", "domain": 2}], end_us=3_000_000)
    tr = kit.run("model:mariadb-10.11", h)
    assert [o["gtid"] for o in tr.all("filtered", node="R")] == ["2-1-1", "2-1-2", "2-1-3"]
    assert tr.first("commit", node="R", trx="r")["gtid"] == "2-2-4"
