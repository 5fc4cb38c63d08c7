"""Any History the schema accepts runs on every model, gives a Trace the Trace schema accepts,
and is judged by every property without a crash: the tool never answers valid input with a
traceback."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replcheck import io, systems
from replcheck.features import load_features
from replcheck.model.recovery import CRASH_POINTS
from replcheck.properties.core import TraceView, run_properties

load_features()
S = 1_000_000
NODES = ["A", "B", "C"]
MODELS = [s for s in systems.systems().values() if s.kind == "model"]

node_vars = st.fixed_dictionaries({}, optional={
    "rpl_semi_sync_master_enabled": st.booleans(), "rpl_semi_sync_master_timeout": st.integers(0, 3000),
    "rpl_semi_sync_master_wait_point": st.sampled_from(["AFTER_COMMIT", "AFTER_SYNC"]),
    "rpl_semi_sync_master_wait_no_slave": st.booleans(), "rpl_semi_sync_master_wait_for_slave_count": st.integers(1, 3),
    "rpl_semi_sync_slave_enabled": st.booleans()})
group_ids = st.one_of(st.integers(0, 5), st.just(2**64 - 1))
rli = st.sampled_from(["5\n./relay.000001\n4\nbin.000001\n4\n3\n", "./relay.000002\n9\nbin.000001\n4\n", "2\nx\n", "garbage"])


@st.composite
def histories(draw) -> dict:
    shape = draw(st.sampled_from(["pair", "chain", "fan-out"]))
    links = {"pair": [("A", "B")], "chain": [("A", "B"), ("B", "C")], "fan-out": [("A", "B"), ("A", "C")]}[shape]
    names = sorted({n for link in links for n in link})
    nodes = []
    for n in names:
        node = {"id": n, "clock_offset_us": draw(st.sampled_from([0, -2 * S, 3600 * S])), "variables": draw(node_vars)}
        node.update(draw(st.fixed_dictionaries({}, optional={"gtid_mode": st.booleans(), "commit_timestamps": st.booleans(),
                                                             "relay_log_info": rli, "rpl_hierarchical": st.booleans(),
                                                             "log_slave_updates": st.booleans(), "log_bin": st.booleans(),
                                                             "rpl_transaction_enabled": st.booleans()})))
        nodes.append(node)
    channels = [{"source": s, "replica": r, "delay": draw(st.integers(0, 4)), "latency_us": draw(st.sampled_from([0, 1000, 300_000]))}
                for s, r in links]
    any_node = st.sampled_from(names)
    replica = st.sampled_from([r for _, r in links])
    op = st.one_of(
        st.fixed_dictionaries({"op": st.just("trx"), "node": any_node}, optional={
            "ddl": st.booleans(), "timestamp": st.integers(1_699_999_000, 1_700_000_100), "engine": st.sampled_from(["innodb", "myisam"]),
            "binlog_failure": st.sampled_from(["cache_overflow", "write_error"]),
            "statements": st.lists(st.fixed_dictionaries({}, optional={"duration_us": st.integers(0, 2 * S),
                                                                       "replica_cost_us": st.integers(0, 2 * S)}), min_size=1, max_size=3)}),
        st.fixed_dictionaries({"op": st.just("change_master"), "node": any_node,
                               "delay_sql": st.sampled_from(["0", "3", "-1", "x", "2147483648"])}),
        st.fixed_dictionaries({"op": st.sampled_from(["stop_slave", "start_slave"]), "node": any_node},
                              optional={"thread": st.sampled_from(["io", "sql"])}),
        st.fixed_dictionaries({"op": st.sampled_from(["reset_slave", "flush_logs", "crash", "shutdown", "read", "show_slave_status",
                                                      "failover", "show_master_status"]), "node": any_node}),
        st.fixed_dictionaries({"op": st.just("crash"), "node": any_node, "point": st.sampled_from(list(CRASH_POINTS))}),
        st.fixed_dictionaries({"op": st.just("failover"), "node": any_node, "elect": st.booleans()}),
        st.fixed_dictionaries({"op": st.just("show_binlog_info"), "node": any_node, "group_id": group_ids}),
        st.fixed_dictionaries({"op": st.just("set_binlog_group_id"), "node": any_node, "group_id": group_ids}, optional={
            "master_server_id": st.integers(1, 5), "with_reset": st.booleans(), "privileged": st.booleans()}),
        st.fixed_dictionaries({"op": st.just("restore"), "node": any_node, "from": any_node}, optional={
            "source": any_node, "set_group_id": st.booleans(), "latency_us": st.sampled_from([0, 1000])}),
        st.fixed_dictionaries({"op": st.just("change_master"), "node": any_node, "master_log_file": st.sampled_from(["bin.000001", "bin.000002"]),
                               "master_log_pos": st.integers(4, 900)}, optional={"master_host": any_node}),
        st.fixed_dictionaries({"op": st.just("restart"), "node": any_node}, optional={"relay_log_recovery": st.booleans(),
                                                                                      "start_slave": st.booleans()}),
        st.fixed_dictionaries({"op": st.just("clock_step"), "node": any_node, "delta_us": st.sampled_from([-S, S, 3600 * S])}),
        st.fixed_dictionaries({"op": st.just("set_global"), "node": any_node,
                               "variable": st.sampled_from(["rpl_semi_sync_master_enabled", "rpl_semi_sync_master_wait_for_slave_count",
                                                            "rpl_semi_sync_slave_enabled", "sql_slave_skip_counter", "no_such_var"]),
                               "value": st.one_of(st.booleans(), st.integers(0, 3), st.just("x"))}),
        st.fixed_dictionaries({"op": st.just("lose_acks"), "node": replica, "count": st.integers(1, 3)}),
        st.fixed_dictionaries({"op": st.just("record_incident"), "node": any_node, "code": st.integers(0, 9)},
                              optional={"message": st.text(max_size=10), "via": st.sampled_from(["binlog", "injector"])}),
        st.fixed_dictionaries({"op": st.just("cluster_gap"), "node": any_node,
                               "cause": st.sampled_from(["cluster_node_crash", "server_crash", "network_outage"]),
                               "trxs": st.lists(st.sampled_from(["g1", "g2"]), min_size=1, max_size=2, unique=True)}),
        st.fixed_dictionaries({"op": st.just("start_slave"), "node": replica, "thread": st.just("sql"),
                               "until": st.fixed_dictionaries({"master_log_file": st.just("bin.000001"),
                                                               "master_log_pos": st.integers(4, 900)})}),
        st.fixed_dictionaries({"op": st.just("binlog_statement"), "node": any_node,
                               "event_types": st.lists(st.sampled_from(["FORMAT_DESCRIPTION_EVENT", "WRITE_ROWS_EVENT", "QUERY_EVENT"]),
                                                       max_size=3)}),
    )
    ops, at = [], 0
    for o in draw(st.lists(op, max_size=14)):
        at += draw(st.integers(0, 2 * S))
        ops.append({"at": at, **o})
    for i, o in enumerate(ops):  # names must be unique: cluster gaps and transactions share them
        if o["op"] == "trx":
            o["trx"] = f"t{i}"
        elif o["op"] == "cluster_gap":
            o["trxs"] = [f"{t}_{i}" for t in o["trxs"]]
    header = {"schema": "replcheck.history/1", "name": "any", "sample_every_us": 700_000, "end_us": at + 8 * S,
              "topology": {"nodes": nodes, "channels": channels}}
    return {"header": header, "ops": ops}


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(histories(), st.sampled_from(MODELS))
def test_any_valid_history_simulates_and_is_judged(tmp_path_factory, history, system):
    path = tmp_path_factory.mktemp("h") / "h.jsonl"
    path.write_text(io.dumps_history(history))
    loaded = io.load_history(path)  # the generator makes only what the schema accepts
    header, obs = system.run(loaded)
    trace = path.with_name("t.jsonl")
    io.write_atomic(trace, io.dumps_lines(header, obs))
    header, obs = io.load_trace(trace)
    verdicts = run_properties(TraceView(header, obs))
    assert len(verdicts) >= 71 and all(v.status in ("pass", "violated", "not_exercised") for v in verdicts)
    json.dumps([v.as_dict() for v in verdicts])
