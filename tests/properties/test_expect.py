"""Expectations in a History (properties/expect.py): what each `show` reads on the model, a pass
and a violation with the observed value as witness, the value matchers, documented flavour
differences, and bad expectation input (one line, exit 2)."""
from __future__ import annotations

import json

import pytest

from replcheck import io, systems
from replcheck.cli import main
from replcheck.properties import expect
from replcheck.properties.core import INCONCLUSIVE, NOT_EXERCISED, PASS, VIOLATED
from replcheck.properties.judge import judge

US = 1_000_000
TOPO = {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B", "delay": 5}]}


def history(*ops: dict, name: str = "h") -> dict:
    return {"header": {"schema": "replcheck.history/1", "name": name, "topology": TOPO},
            "ops": [{"node": "B", **o} for o in ops]}


def verdicts(h: dict, system: str = "model:mariadb-10.11") -> dict[str, tuple[str, str]]:
    j = judge(systems.get(system), h)
    return {v.requirement: (v.status, v.witnesses[0].message if v.witnesses else "") for v in j.expectations}


def one(h: dict, system: str = "model:mariadb-10.11") -> tuple[str, str]:
    [v] = verdicts(h, system).values()
    return v


def trx(at_s: float, name: str) -> dict:
    return {"at": int(at_s * US), "op": "trx", "node": "A", "trx": name}


def exp(at_s: float, **fields) -> dict:
    return {"at": int(at_s * US), "op": "expect", **fields}


# -- each show, held and violated ---------------------------------------------------------------
def test_slave_status_fields_pass_and_a_wrong_one_is_violated_with_what_was_shown():
    ok = history(trx(1, "t1"), exp(3, show="slave_status", fields={"SQL_Delay": 5, "Slave_SQL_Running_State": {
        "like": "Waiting until MASTER_DELAY%"}, "SQL_Remaining_Delay": {"min": 1, "max": 3}}))
    assert one(ok) == (PASS, "")
    bad = history(trx(1, "t1"), exp(3, show="slave_status", fields={"SQL_Delay": 6, "SQL_Remaining_Delay": {"min": 4}}))
    status, witness = one(bad)
    assert status == VIOLATED
    assert witness == "SHOW SLAVE STATUS on B at 3 s: SQL_Delay = 5, expected = 6; SQL_Remaining_Delay = 3, expected >= 4"


def test_the_verdict_is_named_after_the_file_and_line_and_the_trace_records_what_was_seen(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(io.dumps_history(history(trx(1, "t1"), exp(7, show="rows", rows=["t1"]))))
    h = io.load_history(path)
    header, obs = systems.get("model:mariadb-10.11").run(h)
    [seen] = [o for o in obs if o["kind"] == "observed"]
    assert (seen["expect"], seen["show"], seen["value"]) == ("x.jsonl:3", "rows", ["t1"])
    assert verdicts(h) == {"EXPECT x.jsonl:3": (PASS, "")}
    out = tmp_path / "t.jsonl"  # the observation is valid Trace input
    io.write_atomic(out, io.dumps_lines(header, obs))
    assert any(o["kind"] == "observed" for o in io.load_trace(out)[1])


def test_rows_before_and_after_the_delay():
    h = history(trx(1, "t1"), exp(5, show="rows", rows=["t1"]), exp(7, show="rows", rows=["t1"]))
    assert [s for s, _ in verdicts(h).values()] == [VIOLATED, PASS]


def test_status_and_variables():
    h = {"header": {"schema": "replcheck.history/1", "name": "s", "topology": {
        "nodes": [{"id": "A", "variables": {"rpl_semi_sync_master_enabled": True}},
                  {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}}],
        "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]}},
        "ops": [trx(1, "t1"), {**exp(2, show="status", fields={"Rpl_semi_sync_master_yes_tx": 1,
                                                                "Rpl_semi_sync_master_status": "ON"}), "node": "A"},
                {**exp(2, show="variables", fields={"gtid_binlog_pos": "0-1-1", "rpl_semi_sync_master_enabled": "ON",
                                                     "rpl_semi_sync_master_timeout": 10000}), "node": "A"},
                {**exp(2, show="variables", fields={"gtid_slave_pos": "0-1-2"}), "node": "B"}]}
    assert [s for s, _ in verdicts(h).values()] == [PASS, PASS, VIOLATED]


def test_binary_logs_compare_by_sequence_number_and_binlog_events_after_the_header():
    h = history(trx(1, "t1"), {"at": 2 * US, "op": "flush_logs", "node": "A"},
                {**exp(3, show="binary_logs", rows=["master-bin.000001", "master-bin.000002"]), "node": "A"},
                {**exp(3, show="binlog_events", rows=[{"Event_type": "Gtid", "Info": "BEGIN GTID 0-1-1"},
                                                      {"Event_type": "Query"}, {"Event_type": "Xid"},
                                                      {"Event_type": "Rotate", "Info": "bin.000002;pos=4"}]), "node": "A"},
                {**exp(3, show="binlog_events", **{"in": "master-bin.000002"}, rows=[{"Event_type": "Query"}]), "node": "A"})
    v = list(verdicts(h).values())
    assert [s for s, _ in v] == [PASS, PASS, VIOLATED]
    assert v[2][1].endswith("events [], expected ['Query']")


def test_result_of_the_last_statement():
    h = history({"at": 1 * US, "op": "stop_slave"}, {"at": 2 * US, "op": "change_master", "delay_sql": "2147483648"},
                exp(2, show="result", result={"errno": 1729}),
                {"at": 3 * US, "op": "stop_slave"}, exp(3, show="result", result={"errno": None, "warning": 1255}),
                exp(3, show="result", result={"errno": None}))
    assert [s for s, _ in verdicts(h).values()] == [PASS, PASS, PASS]
    nothing = history(exp(1, show="result", result={"errno": None}))
    assert one(nothing) == (VIOLATED, "the last statement on B at 1 s: nothing shown (no such row, no statement, or the node down)")


def test_an_errno_list_is_one_of_them():
    # a .test's `--error A, B`, whose .result says only "Got one of the listed errors"
    h = history({"at": 1 * US, "op": "stop_slave"}, {"at": 2 * US, "op": "change_master", "delay_sql": "2147483648"},
                exp(2, show="result", result={"errno": [1064, 1729]}), exp(2, show="result", result={"errno": [1064, 1197]}))
    assert list(verdicts(h).values()) == [(PASS, ""), (VIOLATED, "the last statement on B at 2 s: errno = 1729, "
                                                                  "expected one of [1064, 1197]")]


def test_master_status_file_by_sequence_number_and_group_id_on_a_hierarchical_server():
    topo = {"nodes": [{"id": "A", "rpl_hierarchical": True}, {"id": "B", "rpl_hierarchical": True}],
            "channels": [{"source": "A", "replica": "B"}]}
    h = {"header": {"schema": "replcheck.history/1", "name": "h", "topology": topo}, "ops": [
        {"at": 1 * US, "op": "set_binlog_group_id", "node": "A", "group_id": 1209},
        {"at": 2 * US, "op": "trx", "node": "A", "trx": "t1"},
        exp(3, node="A", show="master_status", fields={"File": "master-bin.000002", "Group_ID": 1210}),  # SET rotated
        exp(3, node="A", show="master_status", fields={"Group_ID": 1209})]}
    assert list(verdicts(h, "model:google-5.0").values()) == [
        (PASS, ""), (VIOLATED, "SHOW MASTER STATUS on A at 3 s: Group_ID = 1210, expected = 1209")]
    # without --rpl-hierarchical there is no Group_ID to show
    plain = history(trx(1, "t1"), exp(2, node="A", show="master_status", fields={"Group_ID": 1}))
    assert one(plain) == (VIOLATED, "SHOW MASTER STATUS on A at 2 s: Group_ID not shown")


def test_a_down_node_and_a_node_that_is_no_replica_show_nothing():
    h = history({"at": 1 * US, "op": "crash"}, exp(2, show="rows", rows=[]),
                {**exp(2, show="slave_status", fields={"SQL_Delay": 0}), "node": "A"})
    assert [s for s, _ in verdicts(h).values()] == [VIOLATED, VIOLATED]


@pytest.mark.parametrize("expected,actual,held", [
    ({"like": "Slave has read all%"}, "Slave has read all relay log", True), ({"like": "a_c"}, "abc", True),
    ({"like": "a_c"}, "abbc", False), ({"like": "50%"}, 50, False), ({"not_like": "Waiting%"}, "Waiting x", False),
    ({"not_like": "Waiting%"}, "", True), ({"min": 0, "max": 19}, 19, True), ({"min": 20}, 19, False),
    ({"min": 0}, None, False), ({"max": 1}, True, False), (1, True, False), (None, None, True), ("ON", "ON", True),
])
def test_matchers(expected, actual, held):
    assert expect._matches(expected, actual) is held


def test_a_system_without_the_observation_leaves_it_not_exercised():
    h = history(exp(1, show="rows", rows=[]))
    [v] = expect.judge_expectations(h, [])
    assert v.status == NOT_EXERCISED and v.requirement == "EXPECT h.jsonl:2"


def test_rows_read_before_the_rest_arrived_are_inconclusive_on_a_polled_trace_only():
    # A loaded machine: B showed t1 at 19 s and t2 only after; a .test's sync would have waited.
    h = history(exp(19, show="rows", rows=["t1", "t2"]))
    read = {"kind": "observed", "node": "B", "expect": "h.jsonl:2", "show": "rows", "value": ["t1"]}
    arrives = {"kind": "visible", "node": "B", "trx": "t2", "t": 19_500_000}
    [v] = expect.judge_expectations(h, [read, arrives], polled=True)
    assert v.status == INCONCLUSIVE and "read before t2 arrived" in v.witnesses[0].message
    assert expect.judge_expectations(h, [read, arrives])[0].status == VIOLATED  # a model read at its time
    assert expect.judge_expectations(h, [read], polled=True)[0].status == VIOLATED  # never arrived
    extra = {**read, "value": ["t1", "t3"]}  # a row that should not be there is no lateness
    assert expect.judge_expectations(h, [extra, arrives], polled=True)[0].status == VIOLATED


def test_a_documented_flavour_difference_is_declared_for_its_system_only():
    h = history(trx(1, "t1"), exp(7, show="rows", rows=[], differs={"model:mariadb-10.11": "a reason long enough"}))
    assert expect.declared(h, "model:mariadb-10.11") == {"EXPECT h.jsonl:3": "a reason long enough"}
    assert expect.declared(h, "model:wl7318") == {}


# -- bad input: one line naming file, line and field, exit 2 ------------------------------------------
@pytest.mark.parametrize("op,field", [
    ({"show": "slave_status"}, "fields"),
    ({"show": "rows", "rows": ["t1"], "fields": {"SQL_Delay": 1}}, "fields: not allowed with show 'rows'"),
    ({"show": "slave_status", "fields": {"SQL_Delay": [1]}}, "fields.SQL_Delay"),
    ({"show": "slave_status", "fields": {"SQL_Delay": {"min": "1"}}}, "fields.SQL_Delay"),
    ({"show": "tables", "rows": []}, "show"),
    ({"show": "result", "result": {"errno": 0}}, "result.errno"),
    ({"show": "rows", "rows": ["t1"], "in": "bin.000001"}, "in: not allowed with show 'rows'"),
    ({"show": "rows", "rows": ["t1"], "differs": {"model:mariadb-10.11": "short"}}, 'differs."model:mariadb-10.11"'),
])
def test_bad_expectations_are_one_line_naming_file_line_and_field(tmp_path, capsys, op, field):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(history()["header"]) + "\n" + json.dumps({"at": 1, "op": "expect", "node": "B", **op}) + "\n")
    assert main(["simulate", str(path), "--system", "model:mariadb-10.11"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"bad.jsonl:2: {field}" in err[0], err


def test_binlog_events_without_leaves_out_the_event_types_the_include_filters():
    # MySQL's include/show_events.inc drops Gtid and Previous_gtids lines unless $keep_gtid_events
    # (suite scenario my80-binlog_incident); without `without`, the Gtid is compared as any event
    rows = [{"Event_type": "Query"}, {"Event_type": "Xid"}]
    h = history(trx(1, "t1"), {**exp(2, show="binlog_events", rows=rows, without=["Gtid", "Previous_gtids"]), "node": "A"},
                {**exp(2, show="binlog_events", rows=rows), "node": "A"})
    assert [s for s, _ in verdicts(h).values()] == [PASS, VIOLATED]


def test_a_statement_outcome_is_the_clients_record_and_shown_while_the_server_is_down():
    # a crash point's lost connection (suite scenario my56-rpl_crash_safe_master): the client has its 2013
    h = history({"at": 1 * US, "op": "crash", "node": "A", "point": "before_binlog_write"}, trx(2, "t1"),
                {**exp(3, show="result", result={"errno": 2013}), "node": "A"},
                {**exp(3, show="rows", rows=[]), "node": "A"})
    assert [s for s, _ in verdicts(h).values()] == [PASS, VIOLATED]
