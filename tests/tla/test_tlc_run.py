"""TLC run for real on the small configurations: each gives what spec/tla/manifest.toml pins
(result, violated property, distinct states, depth), each mutant its counterexample; a spec
broken on purpose is caught, and `replcheck tlc` prints its counterexample as numbered steps."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from replcheck import tlc
from replcheck.cli import main

from conftest import tlc_once

pytestmark = [pytest.mark.tlc, pytest.mark.skipif(not (shutil.which("java") or os.environ.get("JAVA_HOME")),
                                                  reason="TLC needs Java (ci/setup installs it)")]


@pytest.mark.parametrize("check", tlc.select(size="small"), ids=lambda c: c.name)
def test_each_small_check_is_as_pinned(check):
    with tlc_once():  # test_counterexample_history runs the violated ones too
        r = tlc.run(check.path, check.config_text())
    assert r.status != "error", r.errors
    assert tlc.differences(check, r) == []
    assert r.status == check.expect and r.violated == check.violated
    assert bool(r.trace) == (check.expect == "violated")


def test_after_commit_loses_a_read_transaction_in_the_shortest_way():
    c = tlc.select(config="SemiSync_after_commit")[0]
    r = tlc.run(c.path, c.config_text())
    assert [s.action for s in r.trace] == ["Initial predicate", "Write", "Commit", "Read", "Crash", "Failover"]
    last = r.trace[-1].state
    assert last["read"] == "{1}" and last["relay"] == "(r1 :> 0 @@ r2 :> 0)" and last["master"] == "r1"


def test_the_halt_rule_off_replays_a_group_recovery_committed():
    """GroupIds: the shortest way to play a group twice is the seed's hazard, a crash between the
    slave's binlog write and its engine commit, recovery committing it, the SQL thread replaying it."""
    c = next(c for c in tlc.select(mutant="no-halt-on-lower-id") if c.violated == "GGID_RECOVERY_EXACTLY_ONCE")
    r = tlc.run(c.path, c.config_text())
    assert [s.action for s in r.trace] == ["Initial predicate", "ClientCommit", "PlayCrash", "Restart", "Play"]
    crashed = r.trace[2].state
    assert crashed["prepared"] == "(s1 :> 0 @@ s2 :> 1 @@ s3 :> 0)" and crashed["rli"] == "(s1 :> 0 @@ s2 :> 0 @@ s3 :> 0)"
    assert r.trace[-1].state["applied"] == "(s1 :> <<1>> @@ s2 :> <<1, 1>> @@ s3 :> <<>>)"


def test_a_repoint_that_skips_a_group_is_caught_across_failover(tla_copy):
    """GroupIds' small configuration reaches a failover with a group to skip: CHANGE MASTER one group
    past the slave's last loses it, and TLC says so."""
    _break(tla_copy, "ELSE CHOOSE i \\in Holding(master, gid[s]) : TRUE]", "ELSE 1 + CHOOSE i \\in Holding(master, gid[s]) : TRUE]",
           "GroupIds.tla")
    c = tlc.select(config="GroupIds_small", size="small")[0]
    r = tlc.run(c.path, c.config_text())
    assert r.status == "violated" and r.violated == "GGID_RECOVERY_EXACTLY_ONCE"
    assert [s.action for s in r.trace][-5:] == ["Failover", "ClientCommit", "ClientCommit", "Repoint", "Play"]


def _break(tla_copy, old: str, new: str, module: str = "Incident.tla"):
    f = tla_copy / module
    text = f.read_text()
    assert old in text
    f.write_text(text.replace(old, new, 1))


def test_a_broken_spec_gives_a_violation_and_the_cli_prints_its_steps(tla_copy, capsys):
    # the SQL thread goes past an incident without stopping, as if the skip counter were always armed
    _break(tla_copy, 'ELSE IF skip > 0 \\/ "incident-ignored" \\in MUTANTS', "ELSE IF TRUE")
    files = sorted(p.name for p in tla_copy.iterdir())
    assert main(["tlc", "--config", "Incident_small"]) == 1
    assert sorted(p.name for p in tla_copy.iterdir()) == files  # TLC's states and trace files went elsewhere
    out = capsys.readouterr().out
    assert "incident: Incident Incident_small.cfg: violated WL3464_R3_1" in out and ": DIFFERS" in out
    assert "difference: expected holds, TLC says violated (WL3464_R3_1)" in out
    assert re.search(r"WL3464\.R3\.1 +violated", out)
    steps = re.findall(r"^ +(\d+)\. (\w[\w ]*):", out, re.M)
    assert steps[:4] == [("1", "Initial predicate"), ("2", "Lose"), ("3", "WriteIncident"), ("4", "Apply")], out


def test_a_spec_tlc_cannot_parse_exits_3_never_1(tla_copy, capsys):
    _break(tla_copy, "SkipAndStart(n) ==", "SkipAndStart(n) == == ")
    assert main(["tlc", "--config", "Incident_small"]) == 3
    out, err = capsys.readouterr()
    assert "TLC FAILED" in out and "Parse Error" in out and "not a verdict" in err


def test_the_cli_says_as_pinned_and_exits_0(capsys):
    assert main(["tlc", "--mutant", "incident-on-rollback"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("incident-on-rollback: Incident Incident_small.cfg [mutant incident-on-rollback]: "
                                   "violated WL3464_NO_FALSE, 17 distinct states, depth 3: as pinned")
    first = next(line for line in out.splitlines() if "1. Initial predicate:" in line)
    assert "made = 0" in first and 'log = <<[kind |-> "incident", marks |-> {}]>>' in out.splitlines()[-1]


def test_the_class_archive_is_written_once_then_mapped_and_changes_no_result(tmp_path, monkeypatch):
    """TLC's classes: archived by the first run, mapped by the next; an unreadable archive, or a
    cache that cannot be written, leaves the JVM loading them from the jar, with the same result."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tlc, "KEEP_RESULTS", False)  # every run runs TLC
    check = min(tlc.select(size="small"), key=lambda c: c.distinct)
    flags, real = [], subprocess.run

    def spy(cmd, **kw):
        flags.append([f.split("=")[0] for f in cmd if f.startswith("-XX:") and "Archive" in f])
        return real(cmd, **kw)
    monkeypatch.setattr(tlc.subprocess, "run", spy)

    def outcome():
        r = tlc.run(check.path, check.config_text())
        return r.status, r.violated, r.distinct, r.depth, [s.action for s in r.trace]
    first = outcome()
    archive = tlc.class_archive()
    assert archive.is_file() and list(archive.parent.iterdir()) == [archive]  # put in place whole, nothing partial left
    assert outcome() == first
    archive.write_bytes(b"not an archive")
    assert outcome() == first
    monkeypatch.setenv("XDG_CACHE_HOME", str(archive))  # a file: no cache folder can be made under it
    assert outcome() == first
    assert flags == [["-XX:ArchiveClassesAtExit"], ["-XX:SharedArchiveFile"], ["-XX:SharedArchiveFile"], []]
    assert first[0] == check.expect and not tlc.differences(check, tlc.run(check.path, check.config_text()))


def test_a_result_is_kept_for_the_same_modules_configuration_and_tlc(tmp_path, monkeypatch):
    """A check run again with the same modules, configuration, TLC and java is read from the output
    kept of the first run, with the same result; another configuration, a spec edited, a kept file
    cut short, or a run that ended in an error runs TLC."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    check = min(tlc.select(size="small"), key=lambda c: c.distinct)
    runs, real = [], subprocess.run

    def counted(cmd, **kw):
        runs.append(cmd)
        return real(cmd, **kw)
    monkeypatch.setattr(tlc.subprocess, "run", counted)

    def outcome(module=check.path, cfg=check.config_text()):
        r = tlc.run(module, cfg)
        return r.status, r.violated, r.distinct, r.depth, [(s.action, s.state) for s in r.trace]
    first = outcome()
    assert outcome() == first and len(runs) == 1
    kept = next((tmp_path / "cache" / "replcheck" / "tlc-results").iterdir())
    kept.write_text(kept.read_text()[:20])
    assert outcome() == first and len(runs) == 2
    assert outcome(cfg=check.config_text() + "\n") == first and len(runs) == 3
    edited = tmp_path / "tla"
    shutil.copytree(tlc.TLA, edited)
    (edited / check.path.name).write_text(check.path.read_text() + "\n\\* edited\n")
    assert outcome(module=edited / check.path.name) == first and len(runs) == 4
    (edited / check.path.name).write_text("---- MODULE broken ----\n")
    assert outcome(module=edited / check.path.name)[0] == "error" == outcome(module=edited / check.path.name)[0]
    assert len(runs) == 6  # an error is never kept
