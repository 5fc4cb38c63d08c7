"""Cross-check rules for differences generated Histories (generator 14, kept as files) showed between
two models: each explains its difference, and its condition does not hold for a Trace against itself."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO

from replcheck import crosscheck, crosscheck_conditions, systems
from replcheck.io import load_history

HISTORIES = Path(__file__).parent / "histories"
PROPERTY_HISTORIES = Path(__file__).parents[1] / "properties" / "histories"


def _facts(system: str, name: str, where: Path = HISTORIES) -> crosscheck.Facts:
    return crosscheck.facts(*systems.get(system).run(json.loads((where / f"{name}.json").read_text())))


@pytest.mark.parametrize("name, where, pair, aspect, node, subject, rule, condition, neutral", [
    # under the seeds' delay rules B reaches the incident at 23 s (WL#7318) or 30.3 s (WL#344, t1's
    # SET TIMESTAMP ahead): the second STOP SLAVE finds its SQL thread already stopped in one (1255)
    ("gen14-incident-820009-34", HISTORIES, ("model:wl7318", "model:groupid"), "stmt", "B", "stop_slave #2",
     "delay.halt-reached-at-another-time", crosscheck_conditions.halt_differs, ("model:wl7318", "stop_slave #2")),
    # t3's second statement, non-transactional, is a group of its own: AFTER_COMMIT returns it at once
    ("gen14-incident-840018-5", HISTORIES, ("model:wl7318", "model:groupid"), "commit", "A", "t3",
     "semisync.statement-group-after-commit", crosscheck_conditions.statement_commit, ("model:wl7318", "t3")),
    # A is restored from B while t3 waits for its ack there: under AFTER_COMMIT the backup holds t3,
    # under AFTER_SYNC A applies it by replication
    ("gen14-groupid-830001-39", PROPERTY_HISTORIES, ("model:wl7318", "model:groupid"), "apply", "A", "t3",
     "semisync.backup-during-wait", crosscheck_conditions.restored_during_wait, ("model:wl7318", "t1")),
    # generator 18: A is restored from B while t9 waits for its ack there, then connects to B by group
    # id. Under AFTER_SYNC its backup ends at group 1, which B purged: SHOW BINLOG INFO FOR fails (1220)
    ("gen18-groupid-400011-0", HISTORIES, ("model:wl7318", "model:groupid"), "stmt", "B", "show_binlog_info #1",
     "semisync.backup-during-wait", crosscheck_conditions.restored_during_wait, ("model:wl7318", "purge_binary_logs #1")),
    # generator 15: B, 2.4 s ahead of A, starts with a relay-log.info naming a delay of 7 s and no
    # delay on its channel: MariaDB counts t1 with the measured 2 s (due 6.6 s), WL#7318 exactly (7 s)
    ("gen15-delay-930024-29", HISTORIES, ("model:mariadb-10.11", "model:wl7318"), "apply", "B", "t1",
     "flavour.measured-clock-difference", crosscheck_conditions.clock_estimate_differs, ("model:wl7318", "t1")),
])
def test_a_generated_difference_is_explained_by_its_rule(name, where, pair, aspect, node, subject, rule, condition, neutral):
    left, right = (_facts(s, name, where) for s in pair)
    found = [d for d in crosscheck.compare(left, right) if (d.aspect, d.node) == (aspect, node)]
    assert [(d.subject, d.expected, d.rule) for d in found][:1] == [(subject, True, rule)], found
    assert not [d for d in crosscheck.compare(left, right) if not d.expected]
    # where nothing differs (one system against itself, or another subject), the condition fails
    same = _facts(neutral[0], name, where)
    assert not condition((same, same, aspect, node, neutral[1]))


def test_a_failed_binlog_write_differs_on_the_node_and_on_a_server_rebuilt_from_its_backup():
    # corpus/crosscheck-flavour-binlog-write-failure-restored: t3's binlog write on B fails (1026);
    # MariaDB rolls it back, the seeds' server has committed it (and binlogs an incident). A, rebuilt
    # from B's backup afterwards, holds t3 in one Trace only: it got it from its donor, not by
    # replication (a seed-77 campaign's History 88).
    h = load_history(REPO / "corpus" / "crosscheck-flavour-binlog-write-failure-restored.jsonl")
    left, right = (crosscheck.facts(*systems.get(s).run(h)) for s in ("model:mariadb-10.11", "model:wl7318"))
    found = {(d.aspect, d.node, d.subject): (d.expected, d.rule) for d in crosscheck.compare(left, right)}
    rule = (True, "flavour.binlog-write-failure")
    assert found == {("data", "A", "t3"): rule, ("data", "B", "t3"): rule, ("visible", "B", "t3"): rule}
    same = crosscheck.facts(*systems.get("model:wl7318").run(h))
    assert not crosscheck_conditions.binlog_write_failed((same, same, "data", "A", "t1"))


def test_a_purge_stopped_by_a_replica_that_connected_again_is_the_flavours_difference():
    # B restarted: a source's PURGE BINARY LOGS stops at the binlog B's dump thread reads (1867), which
    # by GTID is another one than by position; A's other statements are not explained so. In this
    # History A purges before B's request reaches it: no dump thread reads a binlog yet, and the
    # two flavours purge alike
    left, right = (_facts(s, "gen14-delay-840003-15") for s in ("model:mariadb-10.11", "model:wl7318"))
    assert not [d for d in crosscheck.compare(left, right) if d.aspect == "stmt"]
    assert crosscheck_conditions.incident_or_restart((left, right, "stmt", "A", "purge_binary_logs #2"))
    assert not crosscheck_conditions.incident_or_restart((right, right, "stmt", "A", "flush_logs #1"))


def test_a_server_restored_during_a_wait_under_after_sync_may_never_get_the_transaction():
    # corpus/finding-restore-during-wait-asks-purged-group: A is restored from B while t9 waits for
    # its ack there and stops its slave at once: under AFTER_COMMIT the backup holds t9, under
    # AFTER_SYNC A holds it only once replicated, which it never is
    h = load_history(REPO / "corpus" / "finding-restore-during-wait-asks-purged-group.jsonl")
    left, right = (crosscheck.facts(*systems.get(s).run(h)) for s in ("model:wl7318", "model:groupid"))
    found = {(d.aspect, d.node, d.subject): (d.expected, d.rule) for d in crosscheck.compare(left, right)}
    assert found[("data", "A", "t9")] == (True, "semisync.backup-during-wait")
    assert all(expected for expected, _ in found.values()), found


def test_a_server_restored_during_a_wait_may_be_elected_in_one_trace_only():
    # corpus/finding-restore-during-wait-elects-another: A is restored from B while t3 waits for its
    # ack there; B crashes and a failover elects the most advanced replica. Under AFTER_COMMIT A's
    # backup holds t3 and A is promoted, under AFTER_SYNC C is: their failover statements differ
    h = load_history(REPO / "corpus" / "finding-restore-during-wait-elects-another.jsonl")
    left, right = (crosscheck.facts(*systems.get(s).run(h)) for s in ("model:wl7318", "model:groupid"))
    assert left.promotions[-1][1] == "C" and right.promotions[-1][1] == "A"
    found = {(d.aspect, d.node, d.subject): (d.expected, d.rule) for d in crosscheck.compare(left, right)}
    assert found[("stmt", "A", "change_master #2")] == (True, "semisync.backup-during-wait")
    assert found[("stmt", "C", "stop_slave #1")] == (True, "semisync.backup-during-wait")
    assert all(expected for expected, _ in found.values()), found
    assert not crosscheck_conditions.restored_during_wait((left, left, "stmt", "C", "stop_slave #1"))
