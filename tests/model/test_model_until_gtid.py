"""START SLAVE UNTIL master_gtid_pos (MariaDB sql/sql_repl.cc start_slave and the dump's
until_gtid_state, rpl_gtid_until.result) and FLUSH BINARY LOGS DELETE_DOMAIN_ID (log.cc
do_delete_gtid_domain, rpl_gtid.cc rpl_binlog_state::drop_domain,
binlog_flush_binlogs_delete_domain.result) in the model."""
from __future__ import annotations

import pytest


MARIADB = "model:mariadb-10.11"


def _stmts(tr, node, op):
    return [o for o in tr.all("stmt", node=node) if o.get("op") == op]


def _trx(at, domain=0):
    return {"at": at, "op": "trx", "node": "M", "domain": domain}


def _until_history(kit, until, extra=()):
    """The slave stopped; the master writes 0-1-1..0-1-2, then in domains 1 and 2 alternately
    1-1-1, 2-1-1, 1-1-2, 2-1-2, 1-1-3, 2-1-3; then START SLAVE UNTIL."""
    ops = [{"at": 500_000, "op": "stop_slave", "node": "R"}, _trx(1_000_000), _trx(1_100_000)]
    ops += [_trx(2_000_000 + 100_000 * k, 1 + k % 2) for k in range(6)]
    ops += [{"at": 3_000_000, "op": "start_slave", "node": "R", "until": {"master_gtid_pos": until}}, *extra]
    return kit.make_history(["M", "R"], [("M", "R", 0)], ops, end_us=6_000_000)


def test_until_master_gtid_pos_stops_both_threads_once_each_listed_domain_is_reached(kit):
    tr = kit.run(MARIADB, _until_history(kit, "0-1-1,1-1-2"))
    assert _stmts(tr, "R", "start_slave")[-1]["errno"] is None
    # domain 2 is not listed: none of it is sent; domain 0 up to 0-1-1, domain 1 up to 1-1-2
    assert [v["gtid"] for v in tr.all("visible", node="R")] == ["0-1-1", "1-1-1", "1-1-2"]
    [stop] = [o for o in tr.all("sql_stop", node="R") if o["reason"] == "until"]
    st = tr.all("status", node="R")[-1]
    assert (st["Slave_IO_Running"], st["Slave_SQL_Running"]) == ("No", "No")


def test_until_a_position_already_reached_stops_at_once(kit):
    later = [{"at": 4_000_000, "op": "start_slave", "node": "R"},
             {"at": 4_500_000, "op": "stop_slave", "node": "R"},
             {"at": 5_000_000, "op": "start_slave", "node": "R", "until": {"master_gtid_pos": "1-1-1"}}]
    tr = kit.run(MARIADB, _until_history(kit, "0-1-2,2-1-1", later))
    assert [v["gtid"] for v in tr.all("visible", node="R")][:3] == ["0-1-1", "0-1-2", "2-1-1"]
    assert len([o for o in tr.all("sql_stop", node="R") if o["reason"] == "until"]) == 2


@pytest.mark.parametrize("ops,errno", [
    ([], 1254),  # a thread running: an error, not the note of a plain START SLAVE
    ([{"at": 200_000, "op": "stop_slave", "node": "R"}, {"at": 300_000, "op": "change_master", "node": "R", "master_log_file": "bin.000001", "master_log_pos": 4}], 1949),
    ([{"at": 200_000, "op": "stop_slave", "node": "R"}], 1277),
    ([{"at": 200_000, "op": "stop_slave", "node": "R"}], 1943),
])
def test_until_master_gtid_pos_is_refused_as_start_slave_refuses_it(kit, ops, errno):
    until = {"at": 1_000_000, "op": "start_slave", "node": "R",
             "until": {"master_gtid_pos": "1-3-100,1-1-100" if errno == 1943 else "0-1-4"}}
    if errno == 1277:
        until["thread"] = "sql"
    tr = kit.run(MARIADB, kit.make_history(["M", "R"], [("M", "R", 0)], [*ops, until], end_us=2_000_000))
    got = _stmts(tr, "R", "start_slave")[-1]
    assert got["errno"] == errno
    if errno == 1943:
        assert got["message"] == "GTID 1-1-100 and 1-3-100 conflict (duplicate domain id 1)"


@pytest.mark.parametrize("system", ["model:mysql-8.0", "model:mysql-5.7", "model:google-5.0"])
def test_other_flavours_refuse_master_gtid_pos_as_a_syntax_error(kit, system):
    h = kit.make_history(["M", "R"], [("M", "R", 0)], [
        {"at": 200_000, "op": "stop_slave", "node": "R"},
        {"at": 1_000_000, "op": "start_slave", "node": "R", "until": {"master_gtid_pos": "0-1-4"}}], end_us=2_000_000)
    got = _stmts(kit.run(system, h), "R", "start_slave")[-1]
    assert got["errno"] == 1064 and got["message"].endswith("MySQL server version for the right syntax to use near "
                                                             "'master_gtid_pos = '0-1-4'' at line 1")


def test_until_a_gtid_of_another_server_is_never_reached_and_one_the_binlog_lacks_stops_before_the_group_past_it(kit):
    tr = kit.run(MARIADB, _until_history(kit, "1-9-1"))  # the master's server_id is 1: not this domain's stop
    assert not [o for o in tr.all("sql_stop", node="R") if o["reason"] == "until"]
    assert [v["gtid"] for v in tr.all("visible", node="R")] == ["1-1-1", "1-1-2", "1-1-3"]  # domain 1 only
    h = _until_history(kit, "1-1-2,2-1-2")
    for o in h["ops"]:
        if o["op"] == "trx" and o["domain"] == 1 and o["at"] >= 2_200_000:  # 1-1-3, 1-1-4: no 1-1-2
            o["gtid_seq_no"] = 3 + (o["at"] - 2_200_000) // 200_000
    tr = kit.run(MARIADB, h)
    # 1-1-3 is past 1-1-2: domain 1 is done without it; 2-1-2 comes after 1-1-3 and still arrives
    assert [v["gtid"] for v in tr.all("visible", node="R")] == ["1-1-1", "2-1-1", "2-1-2"]


def _delete(at, *ids):
    return {"at": at, "op": "flush_logs", "node": "M", "delete_domain_id": list(ids)}


def test_delete_domain_id_is_refused_while_a_binlog_kept_holds_the_domain_then_taken_after_the_purge(kit):
    h = kit.make_history(["M"], [], [
        _delete(500_000, 99),  # not in the state: a warning, no rotation
        {"at": 1_000_000, "op": "trx", "node": "M", "domain": 1},
        _delete(2_000_000, 1),  # bin.000001 holds 1-1-1
        {"at": 3_000_000, "op": "flush_logs", "node": "M"},
        _delete(3_500_000, 1),  # bin.000001 still kept
        {"at": 4_000_000, "op": "purge_binary_logs", "node": "M", "to": "bin.000002"},
        _delete(5_000_000, 1),
        _delete(6_000_000, 1),  # gone: the earliest Gtid_list still names 1-1-1, so both warnings
        {"at": 6_500_000, "op": "trx", "node": "M", "domain": 1},
        {"at": 7_000_000, "op": "expect", "node": "M", "show": "variables", "fields": {"gtid_binlog_state": "1-1-1"}},
        {"at": 7_000_000, "op": "expect", "node": "M", "show": "binary_logs", "binary_logs": ["bin.000002", "bin.000003"]},
    ], end_us=8_000_000)
    tr = kit.run(MARIADB, h)
    got = [(o["errno"], o["warning"], o["message"]) for o in tr.all("stmt", node="M") if o["op"] == "flush_logs"]
    assert got[0] == (None, 1076, "The gtid domain being deleted ('99') is not in the current binlog state")
    refused = ("Could not delete gtid domain. Reason: binlog files may contain gtids from the domain ('1') being deleted. "
               "Make sure to first purge those files.")
    assert got[1] == got[3] == (1076, None, refused)
    assert got[4] == (None, None, "")
    assert got[5][1] == 1076 and got[5][2].startswith("The current gtid binlog state is incompatible with a former one "
                                                      "missing gtids from the '1-1' domain-server pair")
    # the domain's numbering starts again: the next transaction in it is 1-1-1
    assert [o["value"] for o in tr.all("observed", node="M")] == [{"gtid_binlog_state": "1-1-1"}, ["bin.000002", "bin.000003"]]


@pytest.mark.parametrize("system", ["model:mysql-8.0", "model:google-5.0"])
def test_other_flavours_refuse_delete_domain_id_as_a_syntax_error(kit, system):
    tr = kit.run(system, kit.make_history(["M"], [], [_delete(1_000_000, 0)], end_us=2_000_000))
    [got] = [o for o in tr.all("stmt", node="M") if o["op"] == "flush_logs"]
    assert got["errno"] == 1064 and "near 'DELETE_DOMAIN_ID = (0)' at line 1" in got["message"]


def _ahead_of_its_new_source(kit, until):
    """A and B replicate M; stopped, A UNTIL 1-1-1 and B UNTIL 1-1-3 of M's three domain-1 groups;
    then B, ahead of A, is repointed at A and started (UNTIL `until`, or plainly for None)."""
    start = {"at": 6_000_000, "op": "start_slave", "node": "B", **({"until": {"master_gtid_pos": until}} if until is not None else {})}
    return kit.make_history([{"id": "M", "server_id": 1}, {"id": "A", "server_id": 2}, {"id": "B", "server_id": 3}],
                            [("M", "A", 0), ("M", "B", 0)], [
        {"at": 200_000, "op": "stop_slave", "node": "A"}, {"at": 200_000, "op": "stop_slave", "node": "B"},
        _trx(1_000_000, 1), _trx(1_100_000, 1), _trx(1_200_000, 1),
        {"at": 2_000_000, "op": "start_slave", "node": "A", "until": {"master_gtid_pos": "1-1-1"}},
        {"at": 2_000_000, "op": "start_slave", "node": "B", "until": {"master_gtid_pos": "1-1-3"}},
        {"at": 5_000_000, "op": "change_master", "node": "B", "master_host": "A", "master_use_gtid": "current_pos"},
        start], end_us=8_000_000)


@pytest.mark.parametrize("until,refused", [("1-1-1", False), ("", False), ("0-1-5", False), ("1-1-2", True), (None, True)])
def test_a_slave_ahead_of_its_source_is_refused_unless_its_until_stops_before_its_position(kit, until, refused):
    # sql_repl.cc, check_slave_start_position: B asks A for 1-1-3, which A's binlog lacks; an UNTIL
    # naming a GTID A's binlog holds, or leaving domain 1 out, puts the stop before the start:
    # domain 1 is reached, no error (rpl_gtid_master_promote.result); else 1236
    tr = kit.run(MARIADB, _ahead_of_its_new_source(kit, until))
    c = tr.all("connect", node="B", source="A")[-1]
    assert c["gtid_pos"] == "1-1-3"
    assert (c["errno"] == 1236) == refused
    assert not [v for v in tr.all("visible", node="B") if v["t"] > 5_000_000]
    assert kit.verdict("DOMAIN.CONNECT.REFUSED", tr).status != "violated"
