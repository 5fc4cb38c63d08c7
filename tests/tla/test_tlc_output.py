"""replcheck.tlc without running TLC: its -tool output as saved from real runs (tests/tla/outputs),
the manifest and its validation, the counterexample as numbered steps, the requirements' evidence."""
from __future__ import annotations

from pathlib import Path

import pytest

from replcheck import catalogue, tlc
from replcheck.cli import main
from replcheck.io import SpecError

OUTPUTS = Path(__file__).parent / "outputs"


def saved(name: str, exit_code: int) -> tlc.Result:
    return tlc.parse((OUTPUTS / f"{name}.out").read_text(), exit_code)


def test_a_run_that_holds():
    r = saved("incident-holds", 0)
    assert (r.status, r.violated, r.distinct, r.generated, r.depth, r.trace, r.errors) == ("holds", None, 1350, 2216, 21, [], [])


def test_an_invariant_violation_with_its_trace():
    r = saved("delay-chain-invariant", 12)
    assert (r.status, r.kind, r.violated, r.distinct, r.depth) == ("violated", "invariant", "WL344_CHAIN_IMMEDIATE", 214, 8)
    assert [s.action for s in r.trace] == ["Initial predicate", "Commit", "Tick", "Tick", "ReadEvent", "Apply", "ReadEvent", "Apply"]
    assert [s.number for s in r.trace] == list(range(1, 9))
    assert r.trace[0].state == {"now": "0", "done": "<<0, 0, 0>>", "at": "<<<<-1>>, <<-1>>, <<-1>>>>",
                                "sql": '(2 :> "idle" @@ 3 :> "idle")'}
    assert r.trace[-1].state["at"] == "<<<<0>>, <<2>>, <<2>>>>"


def test_an_action_property_violation_is_named():
    r = saved("delay-stop-action", 13)
    assert (r.status, r.kind, r.violated, len(r.trace)) == ("violated", "action", "WL344_STOP_NO_EXEC", 4)
    assert r.trace[-1].action == "Stop"


@pytest.mark.parametrize("name,code,words", [
    ("incident-bad-config", 151, "WL3464_NOPE specified in the configuration file"),
    ("incident-parse-error", 150, 'Encountered "Beginning of definition" at line 91'),
])
def test_tlc_failing_is_an_error_with_its_message_never_a_verdict(name, code, words):
    r = saved(name, code)
    assert r.status == "error" and r.violated is None
    assert any(words in e for e in r.errors), r.errors


def test_a_verdict_needs_both_the_message_and_the_exit_code():
    text = (OUTPUTS / "incident-holds.out").read_text()
    assert tlc.parse(text, 0).status == "holds"
    assert tlc.parse(text, 255).status == "error"  # a success message, then a crash
    cut = text[:text.index("@!@!@STARTMSG 2193")]
    assert tlc.parse(cut, 0).status == "error"  # the output ends before the verdict
    violated = (OUTPUTS / "delay-chain-invariant.out").read_text()
    assert tlc.parse(violated, 153).status == "error"
    assert tlc.parse("", 1).errors == ["TLC exited with 1 and printed nothing"]


def test_steps_are_numbered_and_show_what_changed():
    lines = tlc.steps(saved("delay-chain-invariant", 12).trace)
    assert lines[0] == '1. Initial predicate: now = 0, done = <<0, 0, 0>>, at = <<<<-1>>, <<-1>>, <<-1>>>>, sql = (2 :> "idle" @@ 3 :> "idle")'
    assert lines[2] == "3. Tick: now = 1"
    assert lines[-1] == '8. Apply: done = <<1, 1, 1>>, at = <<<<0>>, <<2>>, <<2>>>>, sql = (2 :> "idle" @@ 3 :> "idle")'


def test_manifest_maps_every_checked_property_to_a_catalogue_requirement():
    m = tlc.manifest()
    ids = {r.id for r in catalogue.load()}
    assert set(m.requirements.values()) <= ids
    assert {c.module for c in m.checks} == {"SemiSync", "Delay", "Incident", "GroupIds"}
    for c in m.checks:
        assert set(c.properties()) - {"TypeOK"} <= set(m.requirements), c.name
        assert c.expect == "holds" or c.violated in c.properties()


def test_every_mutant_check_expects_a_requirement_its_registry_entry_kills():
    from replcheck.model.mutants import REGISTRY

    m = tlc.manifest()
    mutant_checks = [c for c in m.checks if c.mutants]
    assert {n for c in mutant_checks for n in c.mutants} == {
        "shutdown-acks-waiters", "switch-back-first-ack", "stop-applies-waited-event", "no-clock-compensation",
        "origin-timestamp", "no-incident", "incident-ignored", "incident-on-rollback", "no-halt-on-lower-id",
        "halt-strictly-lower", "recovery-ignores-index", "stop-event", "purge-silent-skip", "connect-ignores-server-id",
        "group-id-before-binlog-lock"}
    for c in mutant_checks:
        assert c.expect == "violated" and m.requirements[c.violated] in REGISTRY[c.mutants[0]].kills, c.name


def test_a_mutant_check_sets_the_mutants_constant():
    c = tlc.select(mutant="no-incident")[0]
    assert 'MUTANTS = {"no-incident"}' in c.config_text()
    assert "MUTANTS = {}" in (tlc.TLA / c.config).read_text()


def test_only_narrows_the_checked_properties():
    c = next(c for c in tlc.manifest().checks if c.name == "semisync-after-commit")
    text = c.config_text()
    assert c.properties() == ["WL6355_FAILOVER_NO_LOSS"]
    assert "INVARIANTS WL6355_FAILOVER_NO_LOSS\n" in text and "WL1720_ACK_WAIT" not in text
    assert "WL1720_ACK_WAIT" in (tlc.TLA / c.config).read_text()
    full = tlc.select(config="Delay_wl344", size="small")[0]
    assert full.config_text().endswith("INVARIANTS TypeOK WL344_WAIT_RULE\nPROPERTIES WL344_STOP_NO_EXEC\n")


def test_every_property_is_shown_to_fail_by_some_check():
    """Honest oracles: a property no configuration can violate is a defect, unless listed here."""
    not_yet = {"WL1720_ACK_RELAY", "WL3464_HOLD"}  # no registry mutant breaks them yet
    m = tlc.manifest()
    shown = {c.violated for c in m.checks if c.expect == "violated"}
    assert set(m.requirements) - shown == not_yet


def test_select_filters_and_defaults():
    assert {c.size for c in tlc.select(size="small")} == {"small"}
    assert [c.name for c in tlc.select(spec="SemiSync", config="SemiSync_full")] == ["semisync-after-sync-3-replicas"]
    assert tlc.select(config="SemiSync_full.cfg") == tlc.select(config="SemiSync_full")
    assert tlc.select(spec="Delay", mutant="no-incident") == []


@pytest.mark.parametrize("edit,problem", [
    (('"incident-ignored"]', '"no-such-mutant"]'), "unknown mutant 'no-such-mutant'"),
    (('WL3464_GAP = "WL3464.GAP"', 'WL3464_GAP = "WL3464.R1"'), "not a catalogue ID spelt with underscores"),
    (('violated = "WL3464_NO_FALSE"', 'violated = "WL3464_R4"'), "violated names no property the configuration checks"),
    (('config = "Incident_small.cfg"', 'config = "Incident_nope.cfg"'), "no configuration Incident_nope.cfg"),
    (('size = "large"', 'size = "huge"'), "size 'huge'"),
    (('only = ["WL6355_FAILOVER_NO_LOSS"]', 'only = ["WL3464_GAP"]'), "only names a property the configuration does not check"),
    (('depth = 22', 'depth = "deep"'), "ValueError"),
])
def test_a_broken_manifest_is_replchecks_own_fault(tla_copy, edit, problem):
    f = tla_copy / "manifest.toml"
    text = f.read_text()
    assert edit[0] in text
    f.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(SpecError, match="spec/tla/manifest.toml") as e:
        tlc.manifest()
    assert problem in str(e.value)


def test_a_broken_manifest_exits_3(tla_copy, capsys):
    (tla_copy / "manifest.toml").write_text("[requirements]\n")
    assert main(["tlc"]) == 3
    assert "internal error" in capsys.readouterr().err


@pytest.mark.parametrize("argv,words", [
    (["--spec", "Purge"], "Purge: --spec: no TLA+ module of that name"),
    (["--mutant", "nope"], "nope: --mutant: not a mutant of the registry"),
    (["--mutant", "partial-copy-kept"], "spec/tla/manifest.toml: --mutant partial-copy-kept: no check matches"),
    (["--size", "tiny"], "tlc: argument --size: invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    assert main(["tlc", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("replcheck: error: ") and words in err, err


def test_requirements_show_tlc_evidence(capsys):
    assert main(["requirements", "--feature", "incident"]) == 0
    out, err = capsys.readouterr()
    gap = next(line for line in out.splitlines() if line.startswith("WL3464.GAP "))
    assert "tlc:Incident:incident" in gap
    assert "TLC 4;" in err  # GAP, R3.1, HOLD, NO_FALSE
    ev = catalogue.evidence()
    assert [e["name"] for e in ev["WL6355.FAILOVER.NO_LOSS"] if e["type"] == "tlc"] == [
        "SemiSync:semisync-after-sync", "SemiSync:semisync-after-sync-3-replicas", "SemiSync:semisync-after-commit",
        "SemiSync:semisync-dba"]
