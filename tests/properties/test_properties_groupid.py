"""Every group-ID property (the hierarchical-replication design) and every property of its
MariaDB-GTID view passes on an honest trace and catches a realistic fault.

Passing traces come from model:groupid on the gg-* scenarios; violating traces from a group-ID
mutant (an ID reissued after recovery, a Stop event at shutdown, a replayed group) or from a model
trace edited to re-create one fault (an event of a group with ID 0, a slave binlogging its own
change, a wrong answer to SHOW BINLOG INFO FOR, an empty gtid_binlog_pos after restart...). Each
violation must be reported with a witness naming the faulty observation.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_witness
from test_properties_incident import Case, pick

from replcheck import io
from replcheck.properties.core import PASS, PROPERTIES, VIOLATED, TraceView
from replcheck.properties.core import run_properties as core_run
from replcheck.spec import ROOT
from replcheck.spec import formats as F
from replcheck.systems import systems

M = "model:groupid"
GROUPID_REQUIREMENTS = {p.requirement for p in PROPERTIES if p.feature == "groupid"}
RECOVERY = {p.requirement for p in PROPERTIES if p.feature == "recovery"}


def model(history: str):
    return lambda k: k.run(M, history)


def edit(history: str, kind: str, system: str = M, **match):
    """A model trace and the observation a fault builder changes."""
    def build(k, change):
        tr = k.run(system, history)
        o = tr.first(kind, **match)
        change(o)
        return tr, o
    return build


def with_fields(history: str, kind: str, fields: dict, **match):
    return lambda k: edit(history, kind, **match)(k, lambda o: o.update(fields))


def with_variable(history: str, node: str, t: int, name: str, value: str):
    return lambda k: edit(history, "server_status", node=node, t=t)(k, lambda o: o["variables"].update({name: value}))


def slave_logs_own_write(k):
    # B binlogs a change its own client made although it has a master (the filter is off).
    tr = k.run(M, "gg-hier-basic")
    commit = tr.first("commit", node="B", trx="b-local-1")
    tr.insert_before(tr.obs[tr.index(commit) + 1], {**tr.first("binlog", node="A", trx="t1", idx=0), "node": "B",
                                                     "trx": "b-local-1", "server_id": 2})
    return tr, commit


def changed_to_wrong_position(k):
    # The repair of gg-crash-binlog-commit, pointed 170 bytes past what SHOW BINLOG INFO FOR 3 gave.
    h = k.history("gg-crash-binlog-commit")
    [cm] = [o for o in h["ops"] if o["op"] == "change_master"]
    cm["master_log_pos"] = 753
    tr = k.run(M, h)
    return tr, tr.first("stmt", node="B", op="change_master")


def election_ignores_candidate(k):
    # D's sample at the election shows it further ahead than B, which was promoted all the same.
    tr = k.run(M, "gg-failover")
    d = tr.first("master_status", node="D", election="A")
    d["Group_ID"] = 99
    return tr, tr.first("failover", node="B")


def gtid_reused(k):
    # C logs t5 under the GTID t3 already has (known bugs §3 G6: a sequence number reissued).
    tr = k.run(M, "gg-failover")
    for o in tr.all("binlog", node="C", trx="t5"):
        o["gtid"] = "0-1-3"
    return tr, tr.first("binlog", node="C", trx="t5", idx=0)


def purge_keeps_second_oldest(k):
    # PURGE BINARY LOGS TO bin.000003 that reports having purged only bin.000001, without a warning.
    tr = k.run(M, "gg-purge")
    o = tr.first("stmt", node="A", op="purge_binary_logs", to="bin.000003")
    o.update(purged=[], remaining=["bin.000002", "bin.000003"])
    return tr, o


def connect_placed_after_wrong_group(k):
    # The master places B after group 2 although B asked for 3 (a lookup one group off).
    tr = k.run(M, "gg-connect-by-id")
    o = tr.all("connect", node="B", by="group_id")[-1]
    o.update(master_log_pos=430)
    return tr, o


CASES: dict[str, Case] = {
    "GGID.UNIQUE": Case(
        model("gg-failover"), lambda k: pick(k.run("mutant:recovery-ignores-index", "gg-dirty-fde"), "binlog", node="A", trx="t3", idx=0),
        "group ID 1 issued twice: A logged it for t1, A for t3"),
    "GGID.MONOTONIC": Case(
        model("gg-hier-basic"),
        lambda k: (lambda tr: (tr, tr.all("binlog", node="B", trx="t3", idx=0)[1]))(k.run("mutant:no-halt-on-lower-id", "gg-crash-binlog-commit")),
        "B: group ID 3 (t3) follows 3 in its binlog"),
    "GGID.GROUP.SHARED": Case(
        model("gg-hier-basic"), with_fields("gg-hier-basic", "binlog", {"group_id": 0}, node="A", trx="t2", idx=2),
        "A: events of t2 carry group IDs ['0', '1009']"),
    "GGID.FRAMING.NO_ID": Case(
        model("gg-hier-basic"), with_fields("gg-hier-basic", "binlog", {"group_id": 1008}, node="A", type="ROTATE_EVENT"),
        "A: ROTATE_EVENT carries group ID 1008"),
    "GGID.NO_STOP_EVENT": Case(
        model("gg-hier-basic"), lambda k: pick(k.run("mutant:stop-event", "gg-hier-basic"), "binlog", node="A", type="STOP_EVENT"),
        "A: STOP_EVENT in its binlog (group ID 1012)"),
    "GGID.FILTER": Case(model("gg-hier-basic"), slave_logs_own_write, "B has a master but binlogged its own b-local-1"),
    "GGID.SLAVE.PRESERVE": Case(
        model("gg-failover"), with_fields("gg-failover", "binlog", {"group_id": 103}, node="C", trx="t3", idx=0),
        "C logged t3 as group 103; the root gave it 3"),
    "GGID.MIXED_MODE": Case(
        model("gg-mixed-mode"), with_fields("gg-mixed-mode", "binlog", {"group_id": 1}, node="B", trx="t1", idx=0),
        "B logged t1 from a master without group IDs as 1, not 0"),
    "GGID.STARTUP.OPTIONS": Case(
        model("gg-startup-options"),
        with_fields("gg-startup-options", "error", {"message": "ready for connections"}, node="B", op="startup"),
        "B started with inconsistent options (expected: You need to use --log-bin to make --log-slave-updates work.)"),
    "GGID.INDEX.FORMAT": Case(
        model("gg-dirty-fde"), with_fields("gg-dirty-fde", "binlog_index", {"content": "bin.000001\nbin.000002|2|\n"}, node="A"),
        "A: index file 'bin.000001\\nbin.000002|2|\\n' is not a well-formed group-ID index"),
    "GGID.SHOW_MASTER_STATUS": Case(
        model("gg-hier-basic"), with_fields("gg-hier-basic", "master_status", {"Group_ID": 1009}, node="A", t=3_000_000),
        "A: SHOW MASTER STATUS Group_ID 1009, its binlog says 1010"),
    "GGID.SHOW_SLAVE_STATUS": Case(
        model("gg-hier-basic"), with_fields("gg-hier-basic", "status", {"Exec_Master_Group_ID": 0}, node="B", t=3_000_000),
        "B: SHOW SLAVE STATUS Exec_Master_Group_ID 0, last played 1010"),
    "GGID.BINLOG_INFO": Case(
        model("gg-hier-basic"), with_fields("gg-hier-basic", "stmt", {"Pos": 500}, node="A", op="show_binlog_info", group_id=1009),
        "A: SHOW BINLOG INFO FOR 1009 answered ('bin.000002', 500, 1), the group ends at ('bin.000002', 559, 1)"),
    "GGID.PURGE": Case(model("gg-purge"), purge_keeps_second_oldest,
                       "A: PURGE BINARY LOGS TO 'bin.000003' removed [] of ['bin.000002', 'bin.000003']; expected ['bin.000002']"),
    "GGID.PURGE.NO_SKIP": Case(
        model("gg-purge"), lambda k: pick(k.run("mutant:purge-silent-skip", "gg-purge"), "apply", node="C", trx="t5", last=True),
        "C applied t5 from A but lacks ['t2', 't3', 't4'], purged from A's binlogs"),
    "GGID.CONNECT_BY_ID": Case(
        model("gg-connect-by-id"),
        lambda k: pick(k.run("mutant:connect-ignores-server-id", "gg-connect-by-id"), "connect", node="B", server_id=99),
        "A answered B's connect by group ID 3 with errno None ''; expected 1236 \"Slave trying to connect using group_id = 3, "
        "but server_id from the slave doesn't match that found in the bin log. Slave appears to have alternate future.\""),
    "GGID.CONNECT_BY_ID.FLAG": Case(
        model("gg-connect-by-id"), with_fields("gg-connect-by-id", "status", {"Connect_Using_Group_ID": "No"}, node="B", t=3_300_000),
        "B: SHOW SLAVE STATUS Connect_Using_Group_ID No, expected Yes"),
    "GGID.SET": Case(
        model("gg-hier-basic"),
        with_fields("gg-hier-basic", "stmt", {"errno": None, "message": ""}, node="A", op="set_binlog_group_id", group_id=19),
        "A: SET BINLOG_GROUP_ID=19 (current 1010) gave errno None, expected 1644"),
    "GGID.CHANGE_MASTER": Case(model("gg-crash-binlog-commit"), changed_to_wrong_position,
                               "B: CHANGE MASTER to A bin.000001:753, but the last group it played is 3"),
    "GGID.FAILOVER.ELECT": Case(model("gg-failover"), election_ignores_candidate,
                                "failover promoted B (group ID 4) although a candidate had 99"),
    "GGID.FAILOVER.CONTINUE": Case(
        model("gg-failover"), with_fields("gg-failover", "commit", {"group_id": 7}, node="B", trx="t5"),
        "new root B issued 7 first, expected 5"),
    "MARIADB.GTID.UNIQUE": Case(model("gg-failover"), gtid_reused, "GTID 0-1-3 names t3 on B and t5 on C"),
    "MARIADB.GTID.BINLOG_POS": Case(  # MDEV-6391: the binlog state comes back empty after a restart
        model("gg-dirty-fde"), with_variable("gg-dirty-fde", "A", 4_000_000, "gtid_binlog_pos", ""),
        "A: gtid_binlog_pos '', its binlog ends with '0-1-2'"),
    "MARIADB.GTID.SLAVE_POS": Case(
        model("gg-crash-engine-rli"), with_variable("gg-crash-engine-rli", "B", 2_000_000, "gtid_slave_pos", "0-1-2"),
        "B: gtid_slave_pos '0-1-2', it replicated up to '0-1-1'"),
    "MARIADB.GTID.CURRENT_POS": Case(
        model("gg-failover"), with_variable("gg-failover", "B", 5_000_000, "gtid_current_pos", "0-1-4"),
        "B: gtid_current_pos '0-1-4', expected '0-2-6'"),
    "MARIADB.GTID.IO_POS": Case(  # Bug #69943: the GTID counted as received at its first event
        model("gg-crash-engine-rli"), with_fields("gg-crash-engine-rli", "status", {"Gtid_IO_Pos": "0-1-4"}, node="C", t=5_000_000),
        "C: Gtid_IO_Pos names 0-1-4, not yet whole in any binlog"),
}


def test_every_groupid_property_has_a_case():
    assert set(CASES) == GROUPID_REQUIREMENTS


# -- each group-ID mutant is killed on an embedded History, which passes on the model -------------
GG_MUTANTS = {s.name: s for s in systems().values() if s.kind == "mutant" and {*s.declares.kills} & (GROUPID_REQUIREMENTS | RECOVERY)}
KILLS = {
    "mutant:no-halt-on-lower-id": "gg-crash-binlog-commit",
    "mutant:halt-strictly-lower": "gg-crash-engine-rli",
    "mutant:recovery-ignores-index": "gg-dirty-fde",
    "mutant:stop-event": "gg-hier-basic",
    "mutant:purge-silent-skip": "gg-purge",
    "mutant:connect-ignores-server-id": "gg-connect-by-id",
    "mutant:group-id-before-binlog-lock": "gg-overlapping-commits",
    "mutant:gtid-received-at-first-event": "partial-cut-reconnect",
    "mutant:delay-change-keeps-fetch-position": "d7-delay-change-relay-log-purged",
    "mutant:gtid-state-lags-binlog": "dur-process-crash",
    "mutant:send-before-sync": "dur-machine-crash-before-sync",
    "mutant:state-file-missing-empty": "mdb-state-file-missing",
    "mutant:mts-gaps-not-filled": "par-mts-gaps",
    "mutant:rli-written-after-commit": "hist-rli-written-after-commit",
    "mutant:parallel-restart-past-given-up": "hist-parallel-restart-past-given-up",
}


@pytest.mark.parametrize("mutant", sorted(GG_MUTANTS))
def test_groupid_mutant_killed(kit, mutant):
    history = KILLS[mutant]  # a new group-ID mutant without a killing history fails here
    kills = GG_MUTANTS[mutant].declares.kills
    assert all(kit.verdict(r, kit.run(mutant, history)).status == VIOLATED for r in kills)
    assert all(kit.verdict(r, kit.run(M, history)).status == PASS for r in kills)


def test_set_group_id_refused_by_any_rule_that_applies(kit):
    # Unprivileged and lowering without WITH RESET: the seed orders neither check first, so 1644
    # and 1227 are both right; 1290 (no --rpl-hierarchical) is not, A has it.
    tr = kit.run(M, "gg-hier-basic")
    o = tr.first("stmt", node="A", op="set_binlog_group_id", group_id=19)
    o["privileged"] = False
    for errno in (1644, 1227):
        o["errno"] = errno
        assert kit.verdict("GGID.SET", tr).status == PASS
    o["errno"] = 1290
    assert_witness(kit.verdict("GGID.SET", tr), tr, o, "SET BINLOG_GROUP_ID=19 (current 1010) gave errno 1290, expected 1227 or 1644")


def test_binlog_info_error_for_unknown_ids(kit):
    # rpl_hier step 4: 0, 1006 (below the SET ID) and 1900 (never issued) are not found.
    tr = kit.run(M, "gg-hier-basic")
    errors = {o["group_id"]: o["message"] for o in tr.all("stmt", node="A", op="show_binlog_info") if o["errno"] == 1220}
    assert errors == {g: "Error when executing command SHOW BINLOG INFO FOR: Failed to find matching binlog group."
                      for g in (0, 1006, 1900)}
    wrong = tr.first("stmt", node="A", op="show_binlog_info", group_id=1900)
    wrong.update(errno=None, message="", Log_name="bin.000002", Pos=124, Server_ID=1)
    assert_witness(kit.verdict("GGID.BINLOG_INFO", tr), tr, wrong, "SHOW BINLOG INFO FOR 1900 answered bin.000002:124; no binlog holds it")


def test_binlog_info_after_purge(kit):
    # rpl_hier step 5: once its binlog is purged, a group is not found; the SET ID of a later binlog is.
    tr = kit.run(M, "gg-purge")
    answers = [(o["t"], o["group_id"], o["errno"], o.get("Server_ID")) for o in tr.all("stmt", node="A", op="show_binlog_info")]
    assert [a for a in answers if a[0] > 6_000_000] == [
        (6_100_000, 3, 1220, None), (6_200_000, 1800, None, 34), (9_100_000, 1800, 1220, None),
        (9_200_000, 1801, 1220, None), (9_300_000, 1850, None, 1)]
    # A model that still answered from a purged binlog is caught.
    stale = tr.first("stmt", node="A", op="show_binlog_info", group_id=3, t=6_100_000)
    stale.update(errno=None, message="", Log_name="bin.000001", Pos=583, Server_ID=1)
    assert_witness(kit.verdict("GGID.BINLOG_INFO", tr), tr, stale, "SHOW BINLOG INFO FOR 3 answered bin.000001:583; no binlog holds it")


def test_purge_never_removes_the_active_binlog_and_refuses_unknown_targets(kit):
    tr = kit.run(M, "gg-purge")
    purges = [(o.get("to"), o["errno"], o["purged"], o["remaining"]) for o in tr.all("stmt", node="A", op="purge_binary_logs")]
    assert purges == [(None, None, ["bin.000001"], ["bin.000002"]), ("bin.000003", None, ["bin.000002"], ["bin.000003"]),
                      ("bin.000009", 1373, [], ["bin.000003"]), ("bin.000003", None, [], ["bin.000003"])]
    # Purging the active binlog is a violation.
    o = tr.all("stmt", node="A", op="purge_binary_logs")[-1]
    o.update(purged=["bin.000003"], remaining=[])
    assert_witness(kit.verdict("GGID.PURGE", tr), tr, o, "removed ['bin.000003'] of ['bin.000003']")


def test_purge_stops_at_a_binlog_a_connected_slave_reads(kit):
    # B lags 2 s behind A on the wire: at 3.5 s it has read bin.000001 and still reads t2 in
    # bin.000002, so PURGE TO bin.000003 removes bin.000001 only.
    h = kit.history("gg-purge")
    h["header"]["topology"]["channels"][0]["latency_us"] = 2_000_000
    h["ops"] = [{"at": 1_000_000, "op": "trx", "node": "A", "trx": "t1"}, {"at": 1_200_000, "op": "flush_logs", "node": "A"},
                {"at": 2_000_000, "op": "trx", "node": "A", "trx": "t2"}, {"at": 3_200_000, "op": "flush_logs", "node": "A"},
                {"at": 3_500_000, "op": "purge_binary_logs", "node": "A", "to": "bin.000003"}]
    tr = kit.run(M, h)
    o = tr.first("stmt", node="A", op="purge_binary_logs")
    assert (o["purged"], o["warning"]) == (["bin.000001"], 1867) and "bin.000002 was not purged" in o["message"]
    assert kit.verdict("GGID.PURGE", tr).status == PASS
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == PASS


def test_gtid_slave_needing_purged_groups_is_refused(kit):
    # A GTID auto-position slave (not hierarchical) that lacks purged groups gets 1236, not a gap.
    h = kit.history("gg-purge")
    for n in h["header"]["topology"]["nodes"]:
        n.pop("rpl_hierarchical")
    h["ops"] = [o for o in h["ops"] if o["op"] not in ("set_binlog_group_id", "show_binlog_info")]
    h["ops"] += [{"at": 3_500_000, "op": "flush_logs", "node": "A"}, {"at": 7_500_000, "op": "flush_logs", "node": "A"},
                 {"at": 9_900_000, "op": "stop_slave", "node": "C"}, {"at": 10_000_000, "op": "reset_slave", "node": "C"}]
    h["ops"].sort(key=lambda o: o["at"])
    tr = kit.run("model:wl344", h)
    c = tr.all("connect", node="C")[-1]
    assert (c["by"], c["errno"]) == ("gtid", 1236) and "required binlog files have been purged" in c["message"]
    assert tr.first("error", node="C", thread="io")["errno"] == 1236
    assert not [o for o in tr.all("apply", node="C") if o["trx"] in ("t4", "t5")]
    assert kit.verdict("GGID.PURGE.NO_SKIP", tr).status == PASS
    skipped = kit.run("mutant:purge-silent-skip", h)
    assert_witness(kit.verdict("GGID.PURGE.NO_SKIP", skipped), skipped, skipped.first("apply", node="C", trx="t5", last=True),
                   "C applied t5 from A but lacks ['t2', 't3', 't4']")


def test_mariadb_view_judges_a_trace_without_group_ids(kit):
    # A MariaDB trace has GTIDs and the gtid_*_pos variables, no group IDs: the view still judges it.
    tr = kit.run(M, "gg-failover")
    for o in tr.obs:
        o.pop("group_id", None)
        o.pop("Group_ID", None)
        o.pop("Exec_Master_Group_ID", None)
    for r in ("MARIADB.GTID.UNIQUE", "MARIADB.GTID.BINLOG_POS", "MARIADB.GTID.SLAVE_POS", "MARIADB.GTID.CURRENT_POS",
              "MARIADB.GTID.IO_POS"):
        v = kit.verdict(r, tr)
        assert v.status == PASS and v.checked > 0, v


@pytest.mark.parametrize("shown, resolution_us, status", [
    ("0-1-1009", 800_000, PASS),  # t3 binlogged and committed 0.799 s before the poll: within its resolution
    ("0-1-1009", 500_000, VIOLATED),  # the same lag outside a finer resolution
    ("0-1-1009", 0, VIOLATED),  # a model's trace is exact
    ("0-1-1008", 800_000, VIOLATED),  # two groups behind: t2 ended 0.899 s before, more than the resolution
])
def test_a_polled_gtid_slave_pos_may_lag_within_the_resolution_only(kit, shown, resolution_us, status):
    tr = kit.run(M, "gg-hier-basic")
    tr.header["resolution_us"] = resolution_us
    tr.first("server_status", node="B", t=3_000_000)["variables"]["gtid_slave_pos"] = shown
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == status


def test_gtid_replica_that_needs_nothing_purged_resumes(kit):
    # mdb-purge-not-needed: only the Rotate after B's last group went with bin.000001. By GTID B
    # resumes at bin.000002 (MariaDB 10.11 does the same); a position in the purged file would not.
    tr = kit.run("model:wl344", "mdb-purge-not-needed")
    c = tr.all("connect", node="B")[-1]
    assert (c["by"], c["errno"], c["master_log_file"]) == ("gtid", None, "bin.000002")
    assert tr.first("data", node="B")["counts"] == {"n1": 1, "n2": 1, "n3": 1}



def test_gtid_slave_pos_after_a_skip_a_trace_cannot_show_is_not_judged(kit):
    # MariaDB 10.11 on inc-skip-after-rotation (a conform run): the counter skipped after_gap
    # (0-1-2) and gtid_slave_pos moved past it, which the trace, with no relay log read, cannot
    # show. From that START SLAVE to the next group the position is not judged.
    header, obs = io.load_trace(Path(__file__).parent / "traces" / "mariadb-inc-skip-after-rotation.jsonl")
    prop = kit.prop("MARIADB.GTID.SLAVE_POS")
    assert prop.run(TraceView(header, obs)).status == "pass"
    seeing = {**header, "unobserved": [k for k in header["unobserved"] if k != "relay"]}
    judged = prop.run(TraceView(seeing, obs))
    assert judged.status == "violated" and "gtid_slave_pos '0-1-2', it replicated up to '0-1-1'" in judged.witnesses[0].message


def test_a_skip_placed_after_the_next_group_on_a_polled_trace_was_the_position_before_it(kit):
    # MariaDB 10.11, inc-skip-after-rotation at load 14 (resolution 1.35 s): the sample that read
    # the skip counter's note showed gtid_slave_pos 0-1-2 (after_gap, skipped) and gtid_binlog_pos
    # already with later's 0-1-3, so later's binlog write is placed at that sample, before the
    # skip stamped by the note. The SQL thread skips in relay order: 0-1-2 was the position for a
    # moment before 0-1-3, and a sample within the resolution may show it; a GTID never
    # replicated may not.
    header, obs = io.load_trace(Path(__file__).parent / "traces" / "mariadb-inc-skip-after-rotation-later-binlogged-first.jsonl")
    prop = kit.prop("MARIADB.GTID.SLAVE_POS")
    sample = next(o for o in obs if o["kind"] == "server_status" and o["node"] == "B" and o["t"] == 2927149)
    assert sample["variables"]["gtid_slave_pos"] == "0-1-2" and "0-1-3" in sample["variables"]["gtid_binlog_pos"]
    assert prop.run(TraceView(header, obs)).status == PASS
    unskipped = [o for o in obs if o["kind"] != "skip"]  # without the skip, 0-1-2 was never the position
    v = prop.run(TraceView(header, unskipped))
    assert v.status == VIOLATED and "B: gtid_slave_pos '0-1-2', it replicated up to '0-1-1' or '0-1-3'" == v.witnesses[0].message
    sample["variables"]["gtid_slave_pos"] = "0-1-4"
    assert prop.run(TraceView(header, obs)).status == VIOLATED


@pytest.mark.parametrize("shown, status", [("0-1-2", PASS), ("0-1-1", VIOLATED)])
def test_a_group_the_skip_counter_skipped_moves_gtid_slave_pos(kit, shown, status):
    # inc-skip-after-rotation on MariaDB 10.11 (a loaded run sampled B between the skip and the next
    # group): SQL_SLAVE_SKIP_COUNTER = 1 skipped after_gap (0-1-2), and gtid_slave_pos showed
    # 0-1-2 (sql/rpl_gtid.cc, record_and_update_gtid records a group that ends without a commit).
    tr = kit.run("model:mariadb-10.11", "inc-skip-after-rotation")
    skips = tr.all("skip", node="B", gtid="0-1-2")
    assert skips and all(s["reason"] == "sql_slave_skip_counter" for s in skips)
    sample = {"t": skips[-1]["t"], "kind": "server_status", "node": "B",
              "variables": {"gtid_binlog_pos": "", "gtid_slave_pos": shown, "gtid_current_pos": shown}}
    tr.obs.insert(tr.index(skips[-1]) + 1, sample)
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == status


@pytest.mark.parametrize("binlogged_at, resolution_us, status", [
    (2_300_000, 350_000, PASS),  # a polled binlog stamp (its first poll logged) within the resolution after the sample
    (2_300_000, 0, VIOLATED),  # a model's trace is exact: named before it was written
    (2_700_000, 350_000, VIOLATED),  # later than the resolution allows
    (None, 350_000, VIOLATED),  # in no binlog at all
])
def test_io_pos_allows_a_polled_binlog_stamp_its_resolution(binlogged_at, resolution_us, status):
    # cut-mid-group-reconnect on MariaDB 10.11: B's sample at 2.0 s names 0-1-2, whose XID A's binlog
    # shows from the first poll that found gtid_binlog_pos past it, up to a poll later than written.
    header = {"schema": "replcheck.trace/1", "system": "mariadb:10.11", "resolution_us": resolution_us,
              "topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B"}]}}
    obs = [{"t": 2_000_000, "kind": "status", "node": "B", "Gtid_IO_Pos": "0-1-2"}]
    if binlogged_at is not None:
        obs.append({"t": binlogged_at, "kind": "binlog", "node": "A", "trx": "t2", "gtid": "0-1-2", "idx": 4, "last": True,
                    "type": "XID_EVENT", "server_id": 1})
    [v] = [v for v in core_run(TraceView(header, obs), "groupid") if v.requirement == "MARIADB.GTID.IO_POS"]
    assert v.status == status, v


def test_purge_before_compares_whole_seconds(kit):
    # MariaDB's purge_logs_before_date compares the binlog's mtime (whole seconds) with the BEFORE
    # time rounded half up to a second: bin.000001, last written at 1.7 s, goes with BEFORE 1.6 s
    # (second 1 < 2); bin.000002, last written at 3.2 s, stays with BEFORE 3.4 s (3 < 3 is false).
    h = kit.history("gg-purge")
    h["ops"] = [{"at": 1_000_000, "op": "trx", "node": "A", "trx": "t1"}, {"at": 1_700_000, "op": "flush_logs", "node": "A"},
                {"at": 2_000_000, "op": "purge_binary_logs", "node": "A", "before_us": 1_600_000},
                {"at": 3_000_000, "op": "trx", "node": "A", "trx": "t2"}, {"at": 3_200_000, "op": "flush_logs", "node": "A"},
                {"at": 4_000_000, "op": "purge_binary_logs", "node": "A", "before_us": 3_400_000}]
    tr = kit.run(M, h)
    first, second = tr.all("stmt", node="A", op="purge_binary_logs")
    assert (first["purged"], second["purged"]) == (["bin.000001"], [])
    assert kit.verdict("GGID.PURGE", tr).status == PASS
    # Comparing µs instead: bin.000002 (3.2 s < 3.4 s) would go too.
    second.update(purged=["bin.000002"], remaining=["bin.000003"])
    assert_witness(kit.verdict("GGID.PURGE", tr), tr, second, "BEFORE 3.4 s removed ['bin.000002'] of ['bin.000002', 'bin.000003']; expected []")


@pytest.mark.parametrize("shown, status", [("", PASS), ("0-10-1", VIOLATED)])
def test_a_clients_own_server_id_is_not_a_replicated_gtid(kit, shown, status):
    # SET SESSION server_id= 10 on the master (rpl_gtid_crash, MDEV-6391): its GTID names server 10,
    # yet only the SQL thread records a GTID in gtid_slave_pos
    h = kit.make_history([{"id": "A", "server_id": 1}, {"id": "B", "server_id": 2}], [("A", "B", 0)],
                         [{"at": 500_000, "op": "trx", "node": "A", "trx": "w0", "domain": 1},  # two domains: sampled
                          {"at": 1_000_000, "op": "trx", "node": "A", "trx": "w1", "server_id": 10}],
                         sample_every_us=1_000_000, end_us=3_000_000)
    tr = kit.run("model:mariadb-10.11", h)
    sample = tr.first("server_status", node="A", t=2_000_000)
    assert sample["variables"]["gtid_slave_pos"] == ""
    sample["variables"]["gtid_slave_pos"] = shown
    assert kit.verdict("MARIADB.GTID.SLAVE_POS", tr).status == status


def test_binlog_info_without_group_ids_is_refused_with_1290(kit):
    # Google's rpl_skip_hier.result: on a --skip-rpl-hierarchical server SHOW BINLOG INFO FOR 1 is
    # refused as the other group-ID statements are (ER_OPTION_PREVENTS_STATEMENT), no answer to judge
    tr = kit.run("model:google-5.0", io.load_history(ROOT / "histories" / "suites" / "g50-rpl_skip_hier.jsonl"))
    assert kit.verdict("GGID.BINLOG_INFO", tr).status == PASS
    refused = tr.first("stmt", node="master", op="show_binlog_info")
    refused.update(errno=F.ER_ERROR_WHEN_EXECUTING_COMMAND, message=F.BINLOG_INFO_NOT_FOUND)
    assert_witness(kit.verdict("GGID.BINLOG_INFO", tr), tr, refused,
                   "master: SHOW BINLOG INFO FOR 1 without --rpl-hierarchical gave errno 1220, expected 1290")


def test_a_server_refused_at_start_works_once_restarted_with_consistent_options(kit):
    # C (--rpl-hierarchical without --log-slave-updates) refuses to start; a restart with
    # --log-slave-updates brings it up, and what it then writes is no start with inconsistent options.
    nodes = [{"id": "A", "rpl_hierarchical": True}, {"id": "C", "rpl_hierarchical": True, "log_slave_updates": False}]
    ops = [{"at": 0, "op": "restart", "node": "C", "log_slave_updates": True},
           {"at": 500_000, "op": "trx", "node": "A", "trx": "t1"}]
    h = kit.make_history(nodes, [{"source": "A", "replica": "C"}], ops, sample_every_us=500_000, end_us=2_000_000)
    tr = kit.run("model:groupid", h)
    assert tr.first("restart", node="C")["log_slave_updates"] is True
    tr.obs.append({**tr.first("binlog", node="A", trx="t1"), "node": "C"})  # C writes t1 after it
    assert kit.verdict("GGID.STARTUP.OPTIONS", tr).status == PASS
    tr.first("restart", node="C").pop("log_slave_updates")  # as if it started again with the same options
    assert_witness(kit.verdict("GGID.STARTUP.OPTIONS", tr), tr, None, "C started with inconsistent options")


def test_groups_purged_before_a_slaves_first_dump_are_owed_to_no_one(kit):
    # C refuses to start (hierarchical without --log-slave-updates) until A has purged the binlog
    # holding t1; restarted, it asks with no master position and starts at A's first binlog left.
    nodes = [{"id": "A", "rpl_hierarchical": True}, {"id": "C", "rpl_hierarchical": True, "log_slave_updates": False}]
    ops = [{"at": 0, "op": "trx", "node": "A", "trx": "t1"}, {"at": 1, "op": "flush_logs", "node": "A"},
           {"at": 400_000, "op": "purge_binary_logs", "node": "A", "to": "bin.000002"},
           {"at": 400_000, "op": "trx", "node": "A", "trx": "t2"},
           {"at": 500_000, "op": "restart", "node": "C", "log_slave_updates": True}]
    tr = kit.run("model:groupid", kit.make_history(nodes, [{"source": "A", "replica": "C"}], ops, sample_every_us=500_000,
                                                   end_us=2_000_000))
    assert tr.first("connect", node="C")["master_log_file"] == "bin.000002" and not tr.all("apply", node="C", trx="t1")
    for requirement in ("GGID.PURGE.NO_SKIP", "GGID.RECOVERY.EXACTLY_ONCE"):
        assert kit.verdict(requirement, tr).status == PASS
    tr.first("connect", node="C")["by"] = "group_id"  # a dump that asked for a place is owed what was purged before it
    assert_witness(kit.verdict("GGID.PURGE.NO_SKIP", tr), tr, tr.first("apply", node="C", trx="t2", last=True),
                   "C applied t2 from A but lacks ['t1'], purged from A's binlogs")
    assert kit.verdict("GGID.RECOVERY.EXACTLY_ONCE", tr).status == VIOLATED
