"""Regression investigation without Spark: delta debugging, shrinking to the same failure, the
readable step list, explain's witnesses and side-by-side traces, and bad input."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import REPO

from replcheck import cli, crosscheck, crosscheck_conditions, investigate, io, systems
from replcheck.generate import generate
from replcheck.spec import ROOT as SPEC

HISTORIES = Path(__file__).parent / "histories"


def _gen13(family: str, index: int) -> dict:
    """History `index` of seed 0's `family` as generator 13 drew it, kept as a file: generator 14 (the
    shared vocabulary in every family) draws others, and these tests need these situations."""
    return json.loads((HISTORIES / f"gen13-{family}-0-{index}.json").read_text())


def test_ddmin_finds_the_one_minimal_failing_subset():
    calls = []

    def fails(items):
        calls.append(items)
        return 3 in items and 17 in items

    assert investigate.ddmin(list(range(20)), fails) == [3, 17]
    assert investigate.ddmin([5], lambda items: True) == []  # nothing at all still fails
    assert investigate.ddmin(list(range(8)), lambda items: len(items) == 8) == list(range(8))  # nothing can go


def test_shrink_keeps_the_same_failure_and_closes_the_gaps():
    # History 4 of seed 0's delay family catches WL#7318 drawback 3 (every event waits for its own
    # timestamp); History 14 did until generator 12's set_delays moved the family's draws
    history = _gen13("delay", 4)
    fails = investigate.failure(history, "mutant:per-event-wait", "WL7318.F3", None)
    assert fails.what == "WL7318.F3 violated on mutant:per-event-wait" and fails(history)
    small, runs = investigate.shrink(history, fails)
    assert fails.trace_of(small) == systems.get("mutant:per-event-wait").run(small)  # the Trace of the last that failed
    assert fails(small) and len(small["ops"]) < len(history["ops"]) and runs > 1
    assert small["header"]["end_us"] <= history["header"]["end_us"]
    # 1-minimal: without any one of its operations it no longer fails
    for i in range(len(small["ops"])):
        assert not fails({**small, "ops": small["ops"][:i] + small["ops"][i + 1:]})
    text = investigate.describe(small)
    assert text.splitlines()[0] == "History gen-delay-0-4:"
    assert "  A -> B: " in text and "    1.     0.000000 s  A  trx " in text


def test_a_shrink_out_of_time_keeps_what_it_has_shrunk():
    history = _gen13("delay", 4)
    fails = investigate.failure(history, "mutant:per-event-wait", "WL7318.F3", None)
    assert investigate.shrink(history, fails, seconds=0) == (history, 0)  # no attempt starts after the bound
    assert fails.trace_of(history) is not None and fails.trace_of({**history, "ops": []}) is None


def test_an_attempt_a_real_server_cannot_run_does_not_fail_the_same_way():
    # Dropping a restart leaves the node down for a later op: the harness's NodeDown is the smaller
    # History's, so the attempt is not kept; any other harness failure still ends the shrink.
    from replcheck.harness.errors import HarnessError, NodeDown

    def run(h):
        if not h["ops"]:
            raise NodeDown("node C is not running")
        if len(h["ops"]) == 1:
            raise HarnessError("mariadbd vanished")
        return True, None
    fails = investigate.Failing("X violated on server:mariadb-10.11", run)
    assert fails({"ops": [1, 2]}) and not fails({"ops": []})
    with pytest.raises(HarnessError, match="vanished"):
        fails({"ops": [1]})


def test_a_history_that_fails_nothing_cannot_be_shrunk():
    history = generate(0, 0)
    with pytest.raises(io.InputError, match="violates nothing unexpected"):
        investigate.failure(history, "model:wl7318", None, None)
    with pytest.raises(io.InputError, match="differ in nothing unexpected"):
        investigate.failure(history, "model:wl7318", None, "model:after-sync")


def test_explain_an_expected_cross_check_difference_side_by_side():
    # History 5 of seed 0's delay family: a transaction whose statement started a second before its commit
    text = investigate.explain(_gen13("delay", 5), "model:wl344", other="model:wl7318")
    assert "expected apply difference" in text and "rule delay.commit-vs-start-time:" in text
    assert "model:wl344" in text.splitlines()[2] and "model:wl7318" in text.splitlines()[2]
    assert any(" | " in line and " s  " in line for line in text.splitlines())


def test_explain_says_when_there_is_nothing_to_explain():
    history = generate(0, 0)
    assert investigate.explain(history, "model:wl7318") == "model:wl7318 violates nothing unexpected on this History."
    assert investigate.explain(history, "model:wl7318", "WL7318.F2") == "model:wl7318 does not violate WL7318.F2 on this History."


@pytest.mark.parametrize("argv, message", [
    (["replay", "0", "-1", "--system", "model:wl344"], "-1 is not in 0..9223372036854775807"),
    (["replay", "0", "1", "--system", "model:nope"], "unknown system 'model:nope'"),
    (["shrink", "0", "1", "2", "--system", "model:wl344"], "expected SEED INDEX"),
    (["shrink", "no-such-file.jsonl", "--system", "model:wl344"], "no-such-file.jsonl: cannot read"),
    (["explain", "0", "1", "--system", "model:wl344", "--requirement", "NOPE.X"], "NOPE.X: --requirement: unknown requirement"),
    (["replay", "0", "1", "--system", "model:wl344", "--families", "delay,nope"], "unknown family 'nope'"),
    (["explain", "0", "1", "--system", "model:wl344", "--families", "delay,delay"], "names a family twice"),
    (["shrink", "0", "1", "--system", "mutant:start-timestamp", "--requirement", "NOPE.X"], "unknown requirement 'NOPE.X'"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_replay_without_out_prints_the_digests_and_exits_by_findings(capsys):
    assert cli.main(["replay", "0", "0", "--system", "model:wl7318"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("seed 0 index 0 on model:wl7318: history sha256:") and ", trace sha256:" in out
    assert cli.main(["replay", "5", "12", "--system", "mutant:start-timestamp"]) == 1  # generator 14: a delay History it fails
    assert "violated WL7318.F2:" in capsys.readouterr().out


def test_a_families_campaign_row_reproduces_its_own_history(capsys):
    """A campaign drawing from some families only: its row's command regenerates that History
    (not History INDEX of all families) and shows the same violation."""
    from replcheck import campaign

    mutant, families = "mutant:delay-skipped-while-workers-busy", ("parallel",)
    # a History that all the families would not draw (seed 0's History 1 draws the parallel family anyway)
    row = next(r for i in range(30) if generate(0, i)["header"]["name"] != f"gen-parallel-0-{i}"
               for r in campaign.run_history(0, i, (mutant,), families=families)
               if r[campaign.COLUMN["kind"]] == "violation" and r[campaign.FINDING])
    assert systems.history_digest(generate(0, row[campaign.COLUMN["index"]], families)) == row[campaign.COLUMN["history_digest"]]
    replay, explain = row[campaign.COLUMN["reproduce"]].split(" && ")
    assert cli.main(replay.split()[1:]) == 1
    out = capsys.readouterr().out
    assert f"history {row[campaign.COLUMN['history_digest']]}" in out and row[campaign.COLUMN["requirement"]] in out
    assert cli.main(explain.split()[1:]) == 0
    assert row[campaign.COLUMN["requirement"]] in capsys.readouterr().out


# -- cross-check rules (spec/crosscheck.toml) -----------------------------------------------------
def _differences(index: int, left: str, right: str, family: str) -> list:
    return _differences_of(_gen13(family, index), left, right)


def _differences_of(history: dict, left: str, right: str) -> list:
    return crosscheck.compare(*(crosscheck.facts(*systems.get(s).run(history)) for s in (left, right)))


@pytest.mark.parametrize("index, family, left, right, aspect, rule", [
    (5, "delay", "model:wl344", "model:wl7318", "apply", "delay.commit-vs-start-time"),
    # visible at another time because applied at another time: named by the apply divergence's cause
    (5, "delay", "model:wl344", "model:wl7318", "visible", "delay.commit-vs-start-time"),
    # History 3394 until generator 12's set_delays, which delays both hops of a chain: 1 in about 800
    # delay Histories before it
    (86, "delay", "model:wl344", "model:wl7318", "apply", "delay.chain-immediate-master"),
    (7, "semisync", "model:after-sync", "model:after-commit", "visible", "semisync.visible-before-ack"),
])
def test_every_rule_explains_a_real_difference(index, family, left, right, aspect, rule):
    found = [d for d in _differences(index, left, right, family) if d.aspect == aspect]
    assert found and all(d.expected for d in found) and rule in {d.rule for d in found}
    assert {rule} <= {r.id for r in crosscheck.rules()}


def test_a_change_master_refused_by_one_flavour_is_an_expected_difference():
    # Seed 0 History 3185 (History 138 until generator 12's set_delays moved the delay family's draws;
    # first seen as seed 291825 History 57 of generator 5): B's SQL thread stopped, its IO thread
    # running, CHANGE MASTER TO MASTER_DELAY: MariaDB refuses it (1198), MySQL 5.7.4+ takes it.
    found = _differences_of(_gen13("delay", 3185), "model:mariadb-10.11", "model:wl7318")
    stmt = next(d for d in found if d.aspect == "stmt")
    assert (stmt.node, stmt.subject, stmt.left, stmt.right) == ("B", "change_master #1", "errno 1198", "ok")
    assert stmt.expected and stmt.rule == "flavour.change-master-while-running"
    # the same outcome on both sides: the condition does not hold
    same = crosscheck.facts(*systems.get("model:mariadb-10.11").run(_gen13("delay", 3185)))
    assert not crosscheck_conditions.change_master_differs((same, same, "stmt", "B", "change_master #1"))


@pytest.mark.parametrize("name, aspect, subject, rule, condition", [  # the condition fails on a MySQL Trace against itself
    # B runs 4 workers in optimistic mode on MariaDB (commit order kept) and 4 without
    # replica_preserve_commit_order on the seeds' server
    ("parallel-applier-commit-order", "visible", "t1", "flavour.parallel-applier", crosscheck_conditions.applier_differs),
    # SET GLOBAL slave_parallel_threads while the slave runs: MariaDB refuses it, MySQL knows no such name
    ("parallel-applier-set-global", "stmt", "set_global #1", "flavour.parallel-applier", crosscheck_conditions.applier_differs),
    # SET GLOBAL replicate_ignore_table on B with its slave stopped: MariaDB takes it, MySQL knows no such name
    ("variable-unknown", "stmt", "set_global #1", "flavour.variable-unknown", crosscheck_conditions.variable_unknown_differs),
    # after a failover to B, which never had R's last GTID 0-1-1, MariaDB answers R's GTID connect
    # with 1236 where MySQL's auto-position sends B's transactions
    ("gtid-connect-refused", "apply", "t3", "flavour.gtid-connect-refused", crosscheck_conditions.connect_refused_differs),
    # R asks its new primary B for 0-1-4, which B never logged: MariaDB's dump skips B's own domain-0
    # groups waiting for server 1 at seq_no 4, MySQL's auto-position sends them
    ("gtid-connect-skips-the-domain", "apply", "t5", "flavour.gtid-connect-skips-the-domain",
     crosscheck_conditions.gtid_asked_past_the_source),
    # t1, a MyISAM INSERT cut by a duplicate key after its row, is binlogged with the error: MariaDB
    # answers it at once (its wait comes at the session's end), the seeds' server once the wait timed out
    ("failed-statement-waits-at-session-end", "commit", "t1", "flavour.failed-statement-waits-at-session-end",
     crosscheck_conditions.failed_statement_later),
    # t4 commits on A before any semi-sync replica's dump request arrives (wait_no_slave OFF): the
    # seeds' server switches OFF and t1 returns at once, MariaDB stays ON and t1 waits its timeout
    ("no-semi-sync-slave-keeps-on", "commit", "t1", "flavour.no-semi-sync-slave-keeps-on",
     crosscheck_conditions.no_slave_switched_off),
])
def test_the_flavours_differ_where_their_applier_or_gtid_connect_does(name, aspect, subject, rule, condition):
    history = io.load_history(REPO / "corpus" / f"crosscheck-flavour-{name}.jsonl")
    found = _differences_of(history, "model:mariadb-10.11", "model:wl7318")
    d = next(d for d in found if d.aspect == aspect)
    assert (d.subject, d.expected, d.rule) == (subject, True, rule)
    same = crosscheck.facts(*systems.get("model:wl7318").run(history))
    # (a statement other than SET GLOBAL of an applier setting, for the stmt aspect)
    assert not condition((same, same, aspect, d.node, "start_slave #1" if aspect == "stmt" else subject))


def test_a_filter_only_mariadb_knows_explains_what_it_keeps_out_here_and_downstream():
    """B ignores rc.r on MariaDB (SET GLOBAL replicate_ignore_table) and MySQL answers 1193: B, and C
    below it, hold t1 in one Trace only. Not explained on A, above the filter, nor between two Traces
    that both took (or both refused) the statement."""
    history = io.load_history(REPO / "corpus" / "crosscheck-flavour-variable-unknown.jsonl")
    left, right = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:mariadb-10.11", "model:wl7318"))
    data = next(d for d in crosscheck.compare(left, right) if (d.aspect, d.node) == ("data", "B"))
    assert (data.subject, data.left, data.right, data.rule) == ("t1", "absent", "1 copy", "flavour.variable-unknown")
    assert crosscheck_conditions.variable_unknown_differs((left, right, "data", "C", "t1"))
    assert not crosscheck_conditions.variable_unknown_differs((left, right, "data", "A", "t1"))
    for same in (left, right):
        assert not crosscheck_conditions.variable_unknown_differs((same, same, "stmt", "B", "set_global #1"))
        assert not crosscheck_conditions.variable_unknown_differs((same, same, "data", "C", "t1"))


def test_start_or_stop_all_slaves_differs_only_by_mariadbs_notes():
    """STOP ALL SLAVES on a replica of two named connections: MariaDB notes each connection it
    stopped (1938), the seeds' servers nothing; a refusal (an errno) would be another outcome."""
    history = io.load_history(REPO / "corpus" / "crosscheck-flavour-all-slaves-notes.jsonl")
    left, right = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:mariadb-10.11", "model:wl344"))
    [d] = crosscheck.compare(left, right)
    assert (d.aspect, d.node, d.subject, d.left, d.right) == ("stmt", "R", "stop_all_slaves #1", "errno None warning 1938", "ok")
    assert d.expected and d.rule == "flavour.all-slaves-notes"
    assert not crosscheck_conditions.all_slaves_noted((left, left, "stmt", "R", "stop_all_slaves #1"))
    refused = dataclasses.replace(left, seqs={**left.seqs, ("stmt", "R"): (("stop_all_slaves #1", (1200, None)),)})
    assert not crosscheck_conditions.all_slaves_noted((refused, right, "stmt", "R", "stop_all_slaves #1"))


def test_an_order_difference_is_explained_by_either_transaction_at_it():
    # MASTER_DELAY 2: t1's event carries second 5, its commit second 6, so WL#344 (model:groupid) finds
    # it due at the restart where WL#7318 does not, and a skip then takes t1 in one and not the other.
    # The first divergence of B's applies names t2 on the left; only t1, the right's, has an event
    # timestamp other than its commit second.
    history = io.load_history(REPO / "corpus" / "crosscheck-order-swap-either-transaction.jsonl")
    left, right = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:wl7318", "model:groupid"))
    d = next(d for d in crosscheck.compare(left, right) if d.aspect == "apply")
    assert (d.node, d.left, d.right, d.expected, d.rule) == ("B", "t2 first", "t1 first", True, "delay.commit-vs-start-time")
    assert crosscheck_conditions.event_timestamp_not_commit_time((left, right, "apply", "B", "t1"))
    assert not crosscheck_conditions.event_timestamp_not_commit_time((left, right, "apply", "B", "t2"))


def test_the_groupid_model_differs_from_no_model_and_its_halt_rule_off_is_a_finding():
    # History 77 of seed 0's groupid family (generator 8): B restarts after a crash with t1, which it applied, still
    # ahead of its SQL thread, and without the halt rule plays it again
    assert generate(0, 77, ("groupid",))["header"]["name"] == "gen-groupid-0-77"
    # no delay and no semi-sync: the delay rule and wait point cannot matter to group IDs
    for other in ("model:wl344", "model:wl7318", "model:after-sync", "model:after-commit"):
        assert _differences(77, "model:groupid", other, "groupid") == [], other
    # without the halt rule B plays t1 again (and C with it): no rule explains that, it is the mutant's bug
    found = _differences(77, "model:groupid", "mutant:no-halt-on-lower-id", "groupid")
    assert {(d.aspect, d.node, d.subject) for d in found} >= {("apply", "B", "t1"), ("visible", "B", "t1")}
    assert not any(d.expected for d in found) and all("mutants" in d.reason for d in found)


def test_a_rule_does_not_explain_what_its_setting_cannot():
    # the same History on the same settings, one apply moved: nothing the rules know differs
    history = _gen13("delay", 5)
    header, obs = systems.get("model:wl7318").run(history)
    moved = [{**o, "begin": o["begin"] + 1} if o["kind"] == "apply" and o.get("trx") and o["idx"] == 0 else o for o in obs]
    found = crosscheck.compare(crosscheck.facts(header, obs), crosscheck.facts(header, moved))
    assert found and not any(d.expected for d in found)
    assert found[0].reason == "no rule explains it (the systems differ in: nothing)" and found[0].knock_on >= 0
    # waiting for an ack explains a visibility difference only where a client committed
    history = _gen13("semisync", 2)
    sync, commit = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:after-sync", "model:after-commit"))
    d = next(d for d in crosscheck.compare(sync, commit) if d.rule == "semisync.visible-before-ack" and d.aspect == "visible")
    assert crosscheck_conditions.waiting_for_ack((sync, commit, "visible", d.node, d.subject))
    replica = next(c["replica"] for c in sync.header["topology"]["channels"] if c["source"] == d.node)
    assert not crosscheck_conditions.waiting_for_ack((sync, commit, "visible", replica, d.subject))


@pytest.mark.parametrize("text, field", [
    ('[[rule]]\nid = "x"\naspects = ["apply"]\ndiffers = "delay_rule"\nwhen = "nope"\nsource = "s"\nreason = "r"\n', "rule[0].when"),
    ('[[rule]]\nid = "x"\naspects = ["apply"]\ndiffers = "colour"\nwhen = "chain_hop"\nsource = "s"\nreason = "r"\n', "rule[0].differs"),
    ('[[rule]]\nid = "x"\naspects = ["lag"]\ndiffers = "delay_rule"\nwhen = "chain_hop"\nsource = "s"\nreason = "r"\n', "rule[0].aspects"),
    ('[[rule]]\nid = "x"\n', "rule[0].aspects"),
    ('[[rule\n', ""),
])
def test_a_bad_rules_file_is_one_clear_error(text, field, tmp_path):
    path = tmp_path / "crosscheck.toml"
    path.write_text(text)
    with pytest.raises(io.InputError) as e:
        crosscheck.rules(str(path))
    assert e.value.field == field and str(path) in str(e.value)


def test_a_change_due_after_the_end_under_one_delay_rule_is_an_expected_data_difference():
    """Seed 0, History 1766 (History 786, t3, until generator 12's set_delays moved the delay
    family's draws): under WL#344 t2 is due after the History ends, so B does not hold it at the
    end; the final-copies aspect follows the apply difference's rule."""
    history = _gen13("delay", 1766)
    assert investigate.unexpected_differences(history, "model:wl344", "model:wl7318") == []
    left, right = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:wl344", "model:wl7318"))
    [data] = [d for d in crosscheck.compare(left, right) if d.aspect == "data"]
    assert data.expected and data.rule == "delay.commit-vs-start-time" and (data.node, data.subject) == ("B", "t2")
    assert data.reason.startswith("visible when applied (delay.visible-when-applied); applied at another time: WL#344 waits")


def test_which_connection_applied_a_transaction_is_part_of_its_apply():
    """The million-History campaign's seed 2000, History 112738: a diamond into D with
    gtid_ignore_duplicates. Under WL#344 connection 'b' wins t6, under WL#7318 'c' (same µs), and
    STOP SLAVE 'c' rolls it back only there. The apply difference is the connection, explained by the
    delay rules; compared by time alone the applies agree and t6's visibility is left unexplained."""
    history = io.load_history(REPO / "corpus" / "crosscheck-delay-diamond-winner-stopped.jsonl")
    left, right = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:wl344", "model:wl7318"))
    found = {d.aspect: d for d in crosscheck.compare(left, right) if d.node == "D"}
    assert (found["apply"].subject, found["apply"].left, found["apply"].right) == (
        "t6", "at 2.002000 s by connection 'b'", "at 2.002000 s by connection 'c'")
    assert all(d.expected and d.rule == "delay.commit-vs-start-time" for d in found.values())
    timed_only = dataclasses.replace(right, seqs={**right.seqs, ("apply", "D"): tuple(
        (trx, (begin, dict(left.seqs[("apply", "D")]).get(trx, (None, c))[1])) for trx, (begin, c) in right.seqs[("apply", "D")])})
    visible = next(d for d in crosscheck.compare(left, timed_only) if (d.node, d.aspect) == ("D", "visible"))
    assert not visible.expected and visible.subject == "t6"


def test_two_until_stops_in_one_microsecond_are_two():
    """The million-History campaign's History 414783: under WL#344 both of B's UNTIL runs at 8.04 s
    stop at once, under WL#7318 the second runs on (t4 due later), so START SLAVE then warns 1254 in
    one Trace only; the delay rule explains it. As a set of times the UNTIL stops were the same."""
    history = io.load_history(REPO / "corpus" / "crosscheck-delay-until-stopped-twice-at-once.jsonl")
    left, right = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:wl344", "model:wl7318"))
    [stmt] = [d for d in crosscheck.compare(left, right) if d.aspect == "stmt"]
    assert (stmt.node, stmt.subject, stmt.right) == ("B", "start_slave #6", "errno None warning 1254")
    assert stmt.expected and stmt.rule == "delay.until-reached-at-another-time"
    as_sets = [dataclasses.replace(f, untils=tuple(sorted(set(f.untils)))) for f in (left, right)]
    assert not crosscheck_conditions.until_differs((*as_sets, "stmt", "B", stmt.subject))


def test_a_visible_difference_is_named_by_its_apply_divergences_cause():
    """MariaDB's model (parallel applier, optimistic: commit order kept) against MySQL 8.0's without
    replica_preserve_commit_order: B makes t1 visible at another time because it applied it at
    another time, which the parallel applier explains; the delay rules differ too (the knock-on rule
    delay.visible-when-applied comes first in the file and used to name the cause), but are not it.
    Where a Trace does not time applies (a polled server), the knock-on rule itself explains it."""
    history = io.load_history(REPO / "corpus" / "crosscheck-flavour-parallel-applier-commit-order.jsonl")
    left, right = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:mariadb-10.11", "model:mysql-8.0"))
    found = {d.aspect: d for d in crosscheck.compare(left, right) if d.node == "B"}
    assert found["apply"].rule == "flavour.parallel-applier" and found["visible"].rule == "flavour.parallel-applier"
    assert found["visible"].expected and "visible when applied" in found["visible"].reason
    untimed = dataclasses.replace(left, observed=left.observed - {"apply"}, seqs={k: v for k, v in left.seqs.items() if k[0] != "apply"})
    visible = next(d for d in crosscheck.compare(untimed, right) if (d.node, d.aspect) == ("B", "visible"))
    assert visible.expected and visible.rule == "delay.visible-when-applied"


def test_the_flavours_differ_after_an_incident_as_their_rule_says():
    # MariaDB's model stops a second time at the incident its DBA skipped (a GTID reconnect sends
    # it again); the seeds' server rotated after it and replicates on: expected, by the flavour rule.
    history = io.load_history(SPEC.joinpath("histories", "inc-skip-then-reconnect.jsonl"))
    # model:wl344: the same delay rule and wait point as model:mariadb-10.11, the seeds' mechanics
    mariadb, mysql = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:mariadb-10.11", "model:wl344"))
    found = crosscheck.compare(mariadb, mysql)
    assert found and all(d.expected and d.rule == "flavour.incident-and-gtid-restart" for d in found)
    assert {d.aspect for d in found} >= {"data"}
    # no incident and no restart of replication: the flavours' mechanics cannot be why
    quiet = replace(mysql, restarts=frozenset(), incidents=frozenset())
    assert not crosscheck_conditions.incident_or_restart((quiet, quiet, "data", "B", "last"))
    assert crosscheck_conditions.incident_or_restart((quiet, replace(quiet, restarts=frozenset({"B"})), "data", "B", "last"))


def test_a_reconnect_after_a_cut_explains_a_semisync_commit_difference_by_flavour():
    # B's first ack is lost and its connection drops after t1: MariaDB's model reconnects by GTID
    # and acknowledges nothing it holds (dump_start), the MySQL flavour by position re-acknowledges
    # t1 at the reconnect, so t1's commit on A returns at another time: the flavour rule, as B's
    # replication started again.
    semi = {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 500}
    history = {"header": {"schema": "replcheck.history/1", "name": "cut-ack", "sample_every_us": 700_000, "end_us": 3_000_000,
                          "topology": {"nodes": [{"id": "A", "variables": semi},
                                                 {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}}],
                                       "channels": [{"source": "A", "replica": "B", "latency_us": 1000}]}},
               "ops": [{"at": 0, "op": "lose_acks", "node": "B", "count": 1},
                       {"at": 0, "op": "cut_io", "node": "B", "after_events": 3},
                       {"at": 0, "op": "trx", "node": "A", "trx": "t1"},
                       {"at": 0, "op": "trx", "node": "A", "trx": "t2", "statements": [{}, {}]}]}
    left, right = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:mariadb-10.11", "model:wl7318"))
    [d] = [d for d in crosscheck.compare(left, right) if d.aspect == "commit"]
    assert (d.node, d.subject, d.expected, d.rule) == ("A", "t1", True, "flavour.incident-and-gtid-restart")
    quiet = [replace(f, restarts=frozenset()) for f in (left, right)]
    assert not crosscheck_conditions.incident_or_restart((*quiet, "commit", "A", "t1"))  # nothing reconnected: no reason


def test_mysql_8_0_rounds_the_commit_stamp_up_where_the_seed_truncates_it():
    history = io.load_history(REPO / "corpus" / "crosscheck-flavour-delay-from-rounded-commit-stamp.jsonl")
    found = _differences_of(history, "model:mysql-8.0", "model:wl7318")
    d = next(d for d in found if d.aspect == "apply")
    assert (d.node, d.subject, d.left, d.right) == ("B", "t2", "at 4.000000 s", "at 3.000000 s")
    assert d.expected and d.rule == "flavour.delay-from-rounded-commit-stamp"
    # the same mechanics on both sides: the condition does not hold
    same = crosscheck.facts(*systems.get("model:wl7318").run(history))
    assert not crosscheck_conditions.delay_stamp_differs((same, same, "apply", "B", "t2"))


def test_a_server_flavour_counts_the_delay_with_the_clock_difference_it_measured_at_the_connect():
    history = io.load_history(REPO / "corpus" / "crosscheck-flavour-measured-clock-difference.jsonl")
    found = [d for d in _differences_of(history, "model:mariadb-10.11", "model:wl344") if d.aspect == "apply"]
    # t1 due at 4 s by the exact difference; B counts 1 + 0 + 3 on its clock, 0.8 s ahead: 3.2 s
    d = found[0]
    assert (d.node, d.subject, d.left, d.right) == ("B", "t1", "at 3.200000 s", "at 4.000000 s")
    assert all(d.expected and d.rule == "flavour.measured-clock-difference" for d in found), found
    same = crosscheck.facts(*systems.get("model:wl344").run(history))
    assert not crosscheck_conditions.clock_estimate_differs((same, same, "apply", "B", "t1"))


def test_an_applier_held_for_its_ack_is_judged_by_the_group_that_became_visible_apart():
    # t4 is two MyISAM groups under one name; B, a semi-sync master without a replica, makes the
    # first visible after its ack timeout under AFTER_SYNC and at once under AFTER_COMMIT; the second
    # group, after the switch OFF, at the same time in both
    history = io.load_history(REPO / "corpus" / "crosscheck-semisync-applier-held-multi-group.jsonl")
    sync, commit = (crosscheck.facts(*systems.get(s).run(history)) for s in ("model:wl7318", "model:groupid"))
    d = next(d for d in crosscheck.compare(sync, commit) if d.aspect == "visible")
    assert (d.node, d.subject, d.expected, d.rule) == ("B", "t4", True, "semisync.visible-before-ack")
    assert crosscheck_conditions.waiting_for_ack((sync, commit, "visible", "B", "t4"))
    # the same two Traces with the first group's lag gone: nothing held it
    assert not crosscheck_conditions.waiting_for_ack((commit, commit, "visible", "B", "t4"))
