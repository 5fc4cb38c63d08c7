"""Trace validation (replcheck.tla): the Python model's Traces are behaviours of the TLA+ specs,
and a mutant's is not, with the first step the spec rejects named."""
from __future__ import annotations

import os
import shutil

import pytest

from replcheck import generate, io, suites, systems
from replcheck.tla import (SUBJECT, VOCABULARY, OutOfScope, abstractions, delay, groupid, incident, semisync, sweep, validate,
                           validate_all, value)
from replcheck.verify import embedded_histories

pytestmark = [pytest.mark.tlc, pytest.mark.skipif(not (shutil.which("java") or os.environ.get("JAVA_HOME")),
                                                  reason="TLC needs Java (ci/setup installs it)")]
HISTORIES = {p.stem: p for p in embedded_histories() + suites.histories()}
# In the fast tier, the Histories each feature is about (validated in one batch); every embedded
# History in the slow one.
FAST = [(semisync, "model:wl7318", h) for h in ("ss-shutdown", "ss-counters", "ss-switch-back-n", "ss-phantom-failover")] + \
       [(semisync, "model:after-commit", "ss-after-sync-visibility")] + \
       [(delay, s, h) for s in ("model:wl344", "model:wl7318") for h in ("d1-stop-start-dml", "chain-hop-lag")] + \
       [(incident, "model:wl7318", h) for h in ("inc-gaps", "inc-cache-overflow", "inc-rpl-incident")] + \
       [(groupid, "model:groupid", h) for h in ("gg-crash-binlog-commit", "gg-crash-engine-rli", "gg-failover")]
# Histories whose traces the specs' vocabulary takes whole only since the vocabulary's extension: each
# with the action it needs (CHANGE MASTER TO MASTER_DELAY; STOP and START SLAVE of the SQL thread;
# a skip counter above 1 that skips a group; the DBA's CHANGE MASTER after a halt; an incident
# on a delayed replica, stopped and skipped; a transaction the skip counter passes on a delayed
# replica; SET BINLOG_GROUP_ID; wait_for_slave_count and rpl_semi_sync_master_enabled set on the
# fly; the skip counter set after STOP SLAVE; a stop for an apply error; crashes inside the binlog
# write and before its sync)
WHOLE = [(delay, "model:wl344", "d1-back-to-zero", "ChangeDelay"), (incident, "model:wl7318", "d1-stop-start-dml", "Start"),
         (incident, "model:wl7318", "inc-delayed-skip-group", "SkipGroup"),
         (groupid, "model:groupid", "gg-crash-binlog-commit", "Place"), (delay, "model:wl7318", "inc-rpl-incident", "Start"),
         (delay, "model:wl344", "inc-delayed-skip-group", "SkipTx"), (groupid, "model:groupid", "gg-hier-basic", "SetGroupId"),
         (semisync, "model:wl7318", "ss-wait-for-slave-count", "SetWaitCount"),
         (semisync, "model:mariadb-10.11", "mdb-rpl_semi_sync-on-the-fly", "Disable"),
         (incident, "model:mariadb-10.11", "mdb-rpl_gtid_basic-skip-counter", "SkipAndStart"),
         (incident, "model:mariadb-10.11", "dom-strict-two-domains", "Stop"),
         (groupid, "model:google-5.0", "g50-rpl_hier_crash_recovery", "ClientCommitCrash")]
MODELS = [n for n, s in systems.systems().items() if s.kind == "model"]
# The embedded Histories no spec's vocabulary covers on any model (docs/tla.md, "Trace validation"): a topology
# none has (fan-out, mixed --rpl-hierarchical), or a feature none models (BINLOG statements, clock
# offsets, a partial group, a suite scenario's own expectations), replication filters and named
# connections (no spec has them).
UNCOVERED = {"gg-startup-options",
             "flt-binlog-db", "flt-delay", "flt-replicate-rules", "flt-semisync-unsent", "flt-skip-counter",
             "ms-diamond-ignore-duplicates", "ms-two-sources",
             # suite scenarios of multi-source replicas
             "mdb-multi_source-simple", "mdb-multi_source-multisource", "mdb-multi_source-mdev-9544",
             "mdb-rpl_gtid_mdev4485", "mdb-rpl_semi_sync_skip_replication",
             # suite scenarios whose replicas run replication filters
             "mdb-rpl_skip_replication", "my80-rpl_gtid_filter_ddl_on_binlogless_slave", "mdb-rpl_gtid_slave_filtering",
             # historical bugs' Histories whose replicas run replication filters
             "hist-filtered-ddl-gtid-lost", "hist-parallel-exec-pos-not-at-rotate", "hist-master-fde-lag"}


def _abstract(feature, system: str, history):
    h = history if isinstance(history, dict) else io.load_history(HISTORIES[history])
    try:
        return feature.abstract(systems.get(system).run(h), h)
    except OutOfScope:
        return None


def _validate(feature, system: str, history):
    a = _abstract(feature, system, history)
    return None if a is None else validate(a)


def test_model_traces_are_behaviours_of_the_specs():
    found = [_abstract(*item[:3]) for item in FAST + WHOLE]  # one batch: a TLC run per spec and constants
    done = validate_all(found)
    for item, v in zip(FAST, done):
        assert v.ok and v.steps > 3, f"{item[2]} on {item[1]}: {v.describe()}"
    for (_, system, name, action), a, v in zip(WHOLE, found[len(FAST):], done[len(FAST):]):
        assert action in {s.action for s in a.steps} and v.whole, f"{name} on {system}: {v.describe()}"


def test_where_a_scope_ends_says_why():
    crashed = _abstract(delay, "model:wl344", "crash-during-delay")  # recovery: GroupIds' subject, not Delay's
    assert crashed.beyond == SUBJECT and "outside the spec's subject" in crashed.scope
    replica = _abstract(semisync, "model:wl7318", "ss-replica-drops-relay-log")  # a replica's crash: relay-log recovery's
    assert replica.beyond == SUBJECT and "up to crash on B" in replica.scope
    persisted = _abstract(groupid, "model:google-5.0", "g50-rpl_hier_persistence")  # IDs up to 2^64 - 1, renumbered
    assert persisted.constants["SetIds"] == {2, 4, 5, 6, 8, 9} and "18446744073709551615" in persisted.steps[-3].what
    assert _abstract(delay, "model:wl344", "d1-stop-start-dml").beyond is None


def test_a_failed_statement_answered_before_its_wait_ends_the_semisync_scope(kit):
    # MariaDB answers t1's error at once and waits at the session's end: no commit shows that wait
    failed = {"engine": "myisam", "error": {"errno": 1062, "after_changes": True}}
    h = kit.make_history([{"id": "A", "variables": {"rpl_semi_sync_master_enabled": True}},
                          {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}}], [{"source": "A", "replica": "B", "latency_us": 100_000}],
                         [{"at": 500_000, "op": "trx", "node": "A", "trx": "t0"},
                          {"at": 1_000_000, "op": "trx", "node": "A", "trx": "t1", **failed}], end_us=3_000_000)
    cut = _abstract(semisync, "model:mariadb-10.11", h)
    assert cut.beyond == VOCABULARY and cut.scope.startswith("up to the commit of t1 on A at 1 s")
    assert [s.action for s in cut.steps] == ["Write", "Commit", "Receive", "Ack", "Release"]  # t0 alone
    assert _abstract(semisync, "model:wl344", h).beyond is None


def test_no_semi_sync_replica_connected_before_any_dump_ends_the_semisync_scope():
    """The master counts a semi-sync client from its dump request: a commit before any request
    arrived, with wait_no_slave OFF, switches OFF where the spec's replicas start connected."""
    cut = _abstract(semisync, "model:wl7318", "hist-semisync-waits-while-disabled")
    assert cut.beyond == SUBJECT and "no semi-sync replica connected to A yet" in cut.scope
    assert [s.action for s in cut.steps] == ["Write"]
    later = io.load_history(HISTORIES["hist-semisync-waits-while-disabled"])
    later["ops"] = [{**op, "at": op["at"] + 500_000} if op["op"] == "trx" else op for op in later["ops"]]
    whole = _abstract(semisync, "model:wl7318", later)  # the replicas connected first: judged whole
    assert "no semi-sync replica connected" not in whole.scope and "Release" in [s.action for s in whole.steps]


@pytest.mark.slow
def test_every_embedded_history_is_accepted_on_every_model_that_runs_it():
    done = sweep([(p.stem, h, suites.systems_for(h, p, MODELS))
                  for p in embedded_histories() + suites.histories() for h in [io.load_history(p)]])
    assert not done.rejected, [f"{n} on {s}: {v.describe()}" for n, s, v in done.rejected]
    assert {n for n, _ in done.uncovered} - {n for n, _, _ in done.validations} == UNCOVERED
    assert {v.spec for _, _, v in done.validations} == {"SemiSync", "Delay", "Incident", "GroupIds"}


@pytest.mark.slow
def test_generated_histories_are_accepted():
    done = sweep([(f"{family} 0/{i}", generate.generate(0, i, (family,)), MODELS) for family in generate.FAMILIES for i in range(5)])
    assert not done.rejected, [f"{n} on {s}: {v.describe()}" for n, s, v in done.rejected]
    assert {v.spec for _, _, v in done.validations} == {"SemiSync", "Delay", "Incident", "GroupIds"}


def test_group_id_mutants_are_rejected_naming_the_step():
    replay = _validate(groupid, "mutant:no-halt-on-lower-id", "gg-crash-binlog-commit")
    assert not replay.ok and replay.rejected.action == "Play" and replay.rejected.args["id"] == 3
    assert "B played t3: binlogged with group ID 3" in replay.rejected.what
    assert f"step {replay.accepted + 1} rejected: Play at trace line {replay.rejected.line}" in replay.describe()
    reissued = _validate(groupid, "mutant:recovery-ignores-index", "gg-dirty-fde")  # recovered to ID 0 after FLUSH LOGS
    assert not reissued.ok and reissued.rejected.action == "ClientCommit" and reissued.rejected.args["id"] == 1
    assert "t3 binlogged on A with group ID 1" in reissued.rejected.what


def test_shutdown_acking_waiters_is_rejected_at_the_release():
    v = _validate(semisync, "mutant:shutdown-acks-waiters", "ss-shutdown")
    assert not v.ok and v.rejected.action == "Release" and v.rejected.args == {"t": 2, "outcome": "ok"}
    assert v.accepted == 6 and f"step 7 rejected: Release at trace line {v.rejected.line}" in v.describe()


def test_stop_applying_the_waited_event_is_rejected_at_the_apply():
    v = _validate(delay, "mutant:stop-applies-waited-event", "d1-stop-start-dml")
    assert not v.ok and v.rejected.action == "Apply" and v.rejected.args == {"n": 2, "t": 1}
    assert "B began executing t7 at 11 s" in v.rejected.what and v.accepted == 13


def test_a_group_the_skip_counter_resumes_inside_is_rejected_at_its_apply():
    # BUG#28618: the counter runs out in the middle of the group and the rest of it is executed;
    # the spec's SkipTx passes the whole transaction, so the apply after it is refused
    v = _validate(delay, "mutant:skip-mid-group", "inc-delayed-skip-group")
    assert not v.ok and v.rejected.action == "ReadEvent" and "B's SQL thread read multi" in v.rejected.what
    assert "SkipTx" in {s.action for s in _abstract(delay, "mutant:skip-mid-group", "inc-delayed-skip-group").steps[:v.accepted]}


def _connect_by_id(first_trx_at: int) -> dict:
    """A -> B (--rpl-hierarchical); the DBA moves B to CONNECT_USING_GROUP_ID at 2.1 s."""
    return {"header": {"schema": "replcheck.history/1", "name": "connect-by-id", "description": "CONNECT_USING_GROUP_ID",
                       "topology": {"nodes": [{"id": "A", "rpl_hierarchical": True}, {"id": "B", "rpl_hierarchical": True}],
                                    "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]},
                       "sample_every_us": 1_000_000, "end_us": 6_000_000},
            "ops": [{"at": first_trx_at, "op": "trx", "node": "A", "trx": "t1"}, {"at": 2_000_000, "op": "stop_slave", "node": "B"},
                    {"at": 2_100_000, "op": "change_master", "node": "B", "connect_using_group_id": True},
                    {"at": 2_200_000, "op": "start_slave", "node": "B"}, {"at": 4_000_000, "op": "trx", "node": "A", "trx": "t2"}]}


def test_a_connect_by_group_id_places_the_slave_or_leaves_it_out(tmp_path):
    placed, refused = [], []
    for at, out in ((1_000_000, placed), (3_000_000, refused)):  # B played t1 first; B played nothing (ID 0 is never found)
        path = tmp_path / f"{at}.jsonl"
        path.write_text(io.dumps_history(_connect_by_id(at)))
        h = io.load_history(path)
        a = groupid.abstract(systems.get("model:groupid").run(h), h)
        out += [(s.action, s.args.get("placed")) for s in a.steps], validate(a)
    assert placed[0] == [("ClientCommit", None), ("Play", None), ("ConnectById", True), ("ClientCommit", None), ("Play", None)]
    assert refused[0] == [("ConnectById", False), ("ClientCommit", None), ("ClientCommit", None)]
    assert placed[1].whole and refused[1].whole


def test_incident_mutants_are_rejected_naming_the_step():
    ignored = _validate(incident, "mutant:incident-ignored", "inc-rpl-incident")
    assert not ignored.ok and ignored.rejected.action == "Apply" and "B applied replace4" in ignored.rejected.what
    unmarked = _validate(incident, "mutant:no-incident", "inc-gaps")  # the lost changes are visible on A, unbinlogged
    assert not unmarked.ok and unmarked.rejected.action == "Binlog" and "t2 binlogged on A" in unmarked.rejected.what
    h = io.load_history(HISTORIES["inc-cache-overflow"])
    a = incident.abstract(systems.get("mutant:incident-on-rollback").run(h), h)
    false = validate(a)
    assert [s.action for s in a.steps[:false.accepted]] == ["Binlog", "Apply", "RollBack"]
    assert false.rejected.action == "WriteIncident"  # no change was lost: nothing to mark


def test_a_topology_outside_the_spec_is_out_of_scope():
    h = io.load_history(HISTORIES["fan-out"])  # A -> B, A -> C, A -> D -> E: not one chain, but three
    trace = systems.get("model:wl344").run(h)
    with pytest.raises(OutOfScope):
        delay.abstract(trace, h)
    assert [[n for n, _, _ in hops] for hops in delay.chains(trace[0]["topology"])] == [["A", "B"], ["A", "C"], ["A", "D", "E"]]
    assert [(a.spec, len(a.steps) > 0) for a in abstractions(trace, h)] == [("Delay", True)] * 3 + [("Incident", True)] * 3
    local = validate(delay.each(trace, h)[2])  # A -> D -> E: D's own transaction is master_2's LocalCommit
    assert local.whole and "LocalCommit" in {s.action for s in delay.each(trace, h)[2].steps}
    h = io.load_history(HISTORIES["gg-startup-options"])  # two servers of their own beside D -> C
    assert abstractions(systems.get("model:groupid").run(h), h) == []


def test_tla_values():
    assert value({"a": "Ack", "r": "B", "upto": 2, "e": {1, 3}, "s": (True, "x\"y")}) == \
        '[a |-> "Ack", r |-> "B", upto |-> 2, e |-> {1, 3}, s |-> <<TRUE, "x\\"y">>]'


def test_validate_command_counts_each_spec_and_what_no_spec_covers(monkeypatch, capsys):
    from replcheck import verify
    from replcheck.cli import main

    monkeypatch.setattr(verify, "embedded_histories", lambda: [HISTORIES["gg-crash-binlog-commit"], HISTORIES["gg-startup-options"]])
    monkeypatch.setattr(suites, "histories", lambda: [])
    assert main(["tlc", "--validate"]) == 0
    out = capsys.readouterr().out
    assert ("GroupIds: 6 traces, 6 accepted (6 whole, 0 up to an operation outside the spec's subject, 0 up to the end of "
            "its vocabulary), 0 rejected") in out
    # A -> B: Delay's and Incident's scope ends at B's crash, outside their subject
    assert "Delay: 6 traces, 6 accepted (0 whole, 6 up to an operation outside the spec's subject, 0 up to" in out
    assert "2 Histories, 12 Traces; in no spec's vocabulary: 6 (gg-startup-options)" in out


def test_generated_histories_only_with_validate(capsys):
    from replcheck.cli import main

    assert main(["tlc", "--histories", "3"]) == 2
    assert "--histories: only with --validate" in capsys.readouterr().err
