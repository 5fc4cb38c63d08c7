"""The conformance suite: its scenario list, the cross-check's findings, bad input, the timing
tolerance of the properties; then on a real MariaDB (skipped when there is none): the --quick
suite against the gate ci/mariadb.toml, and a kill -9 of a running `replcheck conform`."""
from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from replcheck import catalogue, conform, crosscheck, io, report, systems
from replcheck.harness import runner
from replcheck.properties.core import NOT_EXERCISED, PASS, VIOLATED
from replcheck.harness.runner import RunnerError, scale_for
from replcheck.harness.system import MariaDB
from replcheck.results import FindingKind
from test_harness_mariadb import require_server
from conftest import HANG_GUARD_S, REPO

ROOT = REPO
US = 1_000_000


def _cli(*args, env=None, timeout=HANG_GUARD_S):
    return subprocess.run([sys.executable, "-m", "replcheck.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


# ---------------------------------------------------------------------------------------------
# Without a server


def test_every_scenario_runs_on_a_real_server_and_names_known_requirements():
    scenarios = conform.load_scenarios()
    known = {r.id for r in catalogue.load()}
    quick = [s for s in scenarios if s.quick]
    assert 8 <= len(quick) < len(scenarios)
    assert len({s.name for s in scenarios}) == len(scenarios)
    for s in scenarios:
        h = io.load_history(s.history)  # the History schema's, like every embedded History
        runner.Runner(h, scale=s.scale or scale_for(h), name=s.name)  # nothing a real server cannot do
        assert s.scale is None or s.scale > scale_for(h), f"{s.name}: a scale its timing chooses anyway, or too small"
        assert s.exercises and set(s.exercises) <= known, s.name
    exercised = {r.split(".")[0] for s in quick for r in s.exercises}
    assert {"WL344", "WL1720", "WL3464"} <= exercised  # delay, semi-sync, incidents in CI
    assert {"GGID.PURGE", "GGID.PURGE.NO_SKIP"} <= {r for s in quick for r in s.exercises}  # and purged binlogs


def _timed(delays=(), timeouts=(), set_timeouts=(), latency=0) -> dict:
    nodes = [{"id": "A", **({"variables": {"rpl_semi_sync_master_timeout": timeouts[0]}} if timeouts else {})}, {"id": "B"}]
    ops = [{"at": 1, "op": "change_master", "node": "B", "delay": d} for d in delays]
    ops += [{"at": 2, "op": "set_global", "node": "A", "variable": "rpl_semi_sync_master_timeout", "value": t} for t in set_timeouts]
    return {"header": {"topology": {"nodes": nodes, "channels": [{"source": "A", "replica": "B", "latency_us": latency}]}},
            "ops": ops}


@pytest.mark.parametrize("history, scale", [
    (_timed(), 0.1),  # nothing timed: as fast as the quick suite allows
    (_timed(delays=[5]), 0.4),  # 5 s of MASTER_DELAY kept at 2 s
    (_timed(delays=[100, 5, 0]), 0.4),  # the shortest nonzero delay decides
    (_timed(delays=[1]), 1.0),  # a delay of 1 s stays whole: real time
    (_timed(timeouts=[5000]), 0.3),  # a 5 s semi-sync timeout kept at 1.5 s
    (_timed(set_timeouts=[2000]), 0.75),  # a timeout set by SET GLOBAL counts as one in the topology
    (_timed(delays=[600], timeouts=[60000]), 0.1),  # long ones: the floor of the range
    (_timed(timeouts=[4000], latency=50_000), 0.2),  # 50 ms of latency is loopback's only up to 0.2
])
def test_a_history_s_timing_chooses_its_scale(history, scale):
    assert scale_for(history) == pytest.approx(scale)


def test_a_bad_scenario_list_is_one_line(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('[[scenario]]\nname = "x"\nhistory = "d1-normal-setup.jsonl"\nexercises = ["WL344.WAIT.RULE"]\nscale = 0\n')
    with pytest.raises(io.InputError, match=r"scenario\[0\]\.scale: 0 is not a number in \(0, 10\]"):
        conform.load_scenarios(bad)
    bad.write_text('[[scenario]]\nname = "x"\n')
    with pytest.raises(io.InputError, match="missing history"):
        conform.load_scenarios(bad)


def test_verify_finds_a_history_that_no_longer_tests_what_its_scenario_claims(monkeypatch):
    """The reference model's trace is held to the scenario's claims: here one it cannot meet (the
    model accepts this CHANGE MASTER), so the requirements it exercises are inconclusive, with a
    finding for the models gate; other models' verdicts are their own."""
    from replcheck import scenarios, verify

    real = next(s for s in scenarios.load_scenarios() if s.name == "d1-back-to-zero")
    refused = replace(real, requires=({"kind": "statement", "node": "B", "op": "change_master", "errno": 1198},))
    monkeypatch.setattr(scenarios, "load_scenarios", lambda path=None: [refused])
    results = verify.Results()
    verify.run_histories([real.history], ["model:mariadb-10.11", "model:wl7318"], results, None, lambda _: None)
    status = {(r["system"], r["requirement"]): r["status"] for r in results.rows}
    assert status[("model:mariadb-10.11", "WL344.CM.SET")] == status[("model:mariadb-10.11", "WL344.WAIT.RULE")] == "inconclusive"
    assert status[("model:wl7318", "WL344.CM.SET")] == PASS
    found = [f for f in results.findings if f.kind is FindingKind.SCENARIO_INCONCLUSIVE]
    assert sorted(f.requirement for f in found) == ["WL344.CM.SET", "WL344.WAIT.RULE"]
    assert "failed with error 1198; change_master at 2 s: it succeeded [traces/model-mariadb-10.11/d1-back-to-zero.jsonl:[" \
        in found[0].witness


def test_unsupported_history_is_refused_before_anything_starts(tmp_path):
    h = tmp_path / "h.jsonl"
    h.write_text('{"schema": "replcheck.history/1", "name": "h", "topology": {"nodes": [{"id": "A"}, {"id": "B"}], '
                 '"channels": [{"source": "A", "replica": "B"}]}}\n'
                 '{"at": 1000, "op": "trx", "node": "A", "trx": "t1"}\n'
                 '{"at": 2000, "op": "cluster_gap", "node": "A", "cause": "server_crash", "trxs": ["x"]}\n')
    out = tmp_path / "out"
    r = _cli("conform", "--server", "mariadb", "--history", str(h), "--out", str(out),
             env={"REPLCHECK_MARIADB_BASEDIR": str(tmp_path / "no-server")})
    assert r.returncode == 2
    [line] = r.stderr.strip().splitlines()
    assert "op cluster_gap is not supported on a real server" in line and "ops[1]" in line
    assert not out.exists()
    r = _cli("conform", "--server", "mariadb", "--quick", "--history", str(h))
    assert r.returncode == 2 and "exclude each other" in r.stderr
    r = _cli("conform", "--server", "mysql")
    assert r.returncode == 2 and "invalid choice: 'mysql'" in r.stderr


def _trace(system, obs, resolution=50_000, version="10.11.99"):
    header = {"schema": "replcheck.trace/1", "system": system, "resolution_us": resolution,
              "topology": {"nodes": [{"id": "A"}, {"id": "B"}]}}
    return ({**header, "server_version": version} if version else header), obs


def test_one_cross_check_classifies_a_real_server_against_its_model():
    model = _trace("model:mariadb-10.11", [
        {"t": 1000, "kind": "commit", "node": "A", "trx": "t1", "gtid": "0-1-1"},
        {"t": 1000, "kind": "commit", "node": "A", "trx": "t2", "gtid": "0-1-2"},
        {"t": 1000, "kind": "visible", "node": "A", "trx": "t1", "gtid": "0-1-1"},
        {"t": 2_000_000, "kind": "visible", "node": "B", "trx": "t1", "gtid": "0-1-1"},
        {"t": 3000, "kind": "stmt", "node": "B", "op": "change_master", "delay_sql": "1.5", "errno": 1064, "warning": None},
        {"t": 9_000_000, "kind": "data", "node": "A", "counts": {"t1": 1}},
        {"t": 9_000_000, "kind": "data", "node": "B", "counts": {"t1": 1}},
    ], 0, version=None)
    real = _trace("mariadb:10.11.99", [
        {"t": 1000, "kind": "commit", "node": "A", "trx": "t1", "gtid": "0-1-1"},
        {"t": 1000, "kind": "commit", "node": "A", "trx": "t2", "gtid": None, "errno": 1197, "message": "cache"},
        {"t": 5000, "kind": "visible", "node": "A", "trx": "t1", "gtid": "0-1-1"},
        {"t": 3_900_000, "kind": "visible", "node": "B", "trx": "t1", "gtid": "0-1-1"},
        {"t": 3000, "kind": "stmt", "node": "B", "op": "change_master", "delay_sql": "1.5", "errno": None, "warning": None},
        {"t": 9_000_000, "kind": "data", "node": "A", "counts": {"t1": 1, "t2": 0}},
        {"t": 9_000_000, "kind": "data", "node": "B", "counts": {"t1": 2, "t2": 0}},
    ])
    diffs = crosscheck.compare(crosscheck.facts(*real), crosscheck.facts(*model))
    unexpected = {(d.aspect, d.node): d for d in diffs if not d.expected}
    # A's visibility 4 ms apart is within the 50 ms resolution: no difference at all.
    assert sorted(unexpected) == [("commit", "A"), ("data", "B"), ("stmt", "B"), ("visible", "B")], diffs
    assert unexpected[("data", "B")].left == "2 copies" and unexpected[("data", "B")].right == "1 copy"  # applied twice
    assert unexpected[("stmt", "B")].subject == "change_master #1"
    # 1.9 s late is beyond the written rule for a real server's timing (1 s + the resolution);
    # 0.9 s late is within it, and classified by that rule with its reason.
    assert "no rule explains it" in unexpected[("visible", "B")].reason
    real[1][3]["t"] = 2_900_000
    [late] = [d for d in crosscheck.compare(crosscheck.facts(*real), crosscheck.facts(*model)) if d.aspect == "visible"]
    assert late.expected and late.rule == "server.real-time"
    # The same trace against itself: nothing; two models: times must agree exactly.
    assert crosscheck.compare(crosscheck.facts(*model), crosscheck.facts(*model)) == []
    shifted = _trace("model:wl7318", [{**o, "t": o["t"] + 1} if o["kind"] == "visible" else o for o in model[1]], 0, None)
    assert [d.aspect for d in crosscheck.compare(crosscheck.facts(*model), crosscheck.facts(*shifted))] == ["visible", "visible"]


def test_the_report_column_survives_a_patch_release():
    assert conform.column("10.11.19-MariaDB-0+deb12u1") == "MariaDB 10.11"
    assert conform.column("11.4.2-MariaDB") == "MariaDB 11.4" and conform.column("weird") == "MariaDB weird"


# -- timing tolerance: a real server's resolution, neither hiding a violation nor flagging noise --


def test_delay_tolerance_is_the_resolution(kit):
    def verdict(shift, resolution):
        tr = kit.run("model:mariadb-10.11", "d1-normal-setup")
        tr.header["resolution_us"] = resolution
        a = tr.first("apply", node="B", trx="t1", type="GTID_LOG_EVENT")
        tr.retime(a, a["t"] + shift)
        return kit.verdict("WL344.WAIT.RULE", tr).status
    assert verdict(0, 0) == PASS
    assert verdict(-400_000, 500_000) == PASS  # 0.4 s early, within a 0.5 s polling resolution: noise
    assert verdict(-600_000, 500_000) == VIOLATED  # 0.6 s early: more than the resolution, a violation
    assert verdict(-1, 0) == VIOLATED  # a model has no resolution


def test_semisync_status_switch_seen_at_the_next_sample(kit):
    def verdict(after_commit, resolution):
        tr = kit.run("model:mariadb-10.11", "ss-counters")
        tr.header["resolution_us"] = resolution
        commit = tr.first("commit", trx="ins500")
        off = next(o for o in tr.all("server_status", node="A") if o["variables"]["Rpl_semi_sync_master_status"] == "OFF")
        assert tr.index(off) < tr.index(commit)  # the model switches OFF before the commit returns
        if after_commit is not None:
            tr.retime(off, commit["t"] + after_commit)
        return kit.verdict("WL1720.TIMEOUT.ASYNC", tr)
    assert verdict(None, 0).status == PASS
    assert verdict(40_000, 50_000).status == PASS  # a poll 40 ms later saw OFF: within the resolution
    v = verdict(80_000, 50_000)  # still ON at the first sample after the resolution: the switch was late
    assert v.status == VIOLATED and "timed out but the status is still ON" in v.witnesses[0].message
    assert verdict(1, 0).status == VIOLATED  # a model's trace is judged exactly


def test_a_property_needing_what_a_server_cannot_see_is_not_exercised(kit):
    tr = kit.run("model:mariadb-10.11", "ss-counters")
    assert kit.verdict("WL1720.COUNT.TX", tr).status == PASS
    tr.header["unobserved"] = ["ack", "relay"]
    v = kit.verdict("WL1720.COUNT.TX", tr)
    assert v.status == NOT_EXERCISED and "does not observe ack" in v.witnesses[0].message
    assert kit.verdict("WL1720.OFF.NO_WAIT", tr).status == PASS  # needs neither


# ---------------------------------------------------------------------------------------------
# With a real server


@pytest.fixture(scope="module")
def server():
    return require_server()


def test_quick_suite_meets_the_mariadb_gate(server, tmp_path, short_tmp):
    out = tmp_path / "conform"
    r = _cli("conform", "--server", "mariadb", "--quick", "--out", str(out), env={"REPLCHECK_TMPDIR": short_tmp})
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert re.search(r"\[conform\] \d+/\d+ scenarios", r.stderr)  # progress on stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["server_version"] == server.version
    judged = {row["requirement"] for row in doc["rows"] if row["status"] != NOT_EXERCISED}
    assert len(judged) >= 20
    assert all(row["source"] == "conformance" and row["system"] == conform.column(server.version) for row in doc["rows"])
    chosen = {s.name: conform.attempt_scales(s.scale or scale_for(h), h, conform.ATTEMPTS)
              for s in conform.load_scenarios() if s.quick for h in [io.load_history(s.history)]}
    # each scenario's first run at its own scale, a retry at a larger one; a row reproduces the run it came from
    runs = {(a["history"], a["attempt"]): a for a in doc["attempts"]}
    assert all(a["time_scale"] == chosen[h][n - 1] for (h, n), a in runs.items())
    assert all(shlex.split(r["reproduce"])[-2:] == ["--scale", f"{runs[(r['history'], r['attempt'])]['time_scale']:g}"]
               for r in doc["rows"])
    for f in doc["findings"]:  # every finding carries its evidence
        assert f["witness"] and f["history"] and f["server_version"] == server.version
        if f["kind"] == "MariaDB differs from the seed":  # stated against the seed's sentence
            req = catalogue.by_id()[f["requirement"]]
            assert f["seed"] == f"{req.seed} ({req.section}): {req.text}"
    assert (out / "report.html").exists() and (out / "traces" / "mariadb").is_dir()
    counts = json.loads((out / "report.json").read_text())["counts"]["servers"][f"conformance:{conform.column(server.version)}"]
    worst = {}  # a requirement's cell: the worst of its rows, as the report ranks them
    for r in (r for r in doc["rows"] if r["requirement"] in catalogue.by_id()):  # expectations are counted apart
        worst[r["requirement"]] = min(worst.get(r["requirement"], r["status"]), r["status"], key=report.ORDER.__getitem__)
    assert counts["judged"] == sum(st in (PASS, VIOLATED) for st in worst.values())
    assert counts["inconclusive"] == sum(st == "inconclusive" for st in worst.values())
    g = _cli("gate", str(ROOT / "ci" / "mariadb.toml"), str(out / "results.json"))
    assert g.returncode == 0, g.stdout
    assert os.listdir(short_tmp) == []  # every server's directory removed


def _processes_mentioning(text: str) -> list[int]:
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        pids.append(int(d))
            except OSError:
                pass
    return pids


def test_kill_9_of_conform_leaves_no_server_behind(server, tmp_path, short_tmp):
    root = Path(short_tmp)
    proc = subprocess.Popen([sys.executable, "-m", "replcheck.cli", "conform", "--server", "mariadb", "--history",
                             str(ROOT / "spec" / "histories" / "d1-normal-setup.jsonl"), "--out", str(tmp_path / "out")],
                            cwd=ROOT, env={**os.environ, "REPLCHECK_TMPDIR": str(root)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # bounds against a hang only (HANG_GUARD_S): how long the servers take to start or go is the machine's load
        deadline = time.monotonic() + HANG_GUARD_S
        while not [p for p in _processes_mentioning(str(root)) if p != proc.pid] and time.monotonic() < deadline:
            assert proc.poll() is None, "conform ended before its servers started"
            time.sleep(0.05)
        servers = [p for p in _processes_mentioning(f"{root}/") if p != proc.pid]
        assert servers, "no mariadbd started under the temporary root"
        time.sleep(0.5)  # mid-run: the History is being executed
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + HANG_GUARD_S
    while (_processes_mentioning(f"{root}/") or list(root.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_mentioning(f"{root}/") == []
    assert list(root.iterdir()) == []  # no data dir left
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_a_read_agrees_only_when_every_change_it_missed_was_at_the_edge():
    """t1 became visible 10 ms before the read (an edge, within the resolution) in both traces;
    t2 a whole 2 s before it in the model: missing t2 is a real difference, however often t1
    counts as an edge."""
    def reads(seen, vis_t2):
        return [{"t": 1_000_000, "kind": "visible", "node": "A", "trx": "t2", "gtid": "0-1-2"},
                {"t": 2_990_000, "kind": "visible", "node": "A", "trx": "t1", "gtid": "0-1-1"},
                {"t": 3_000_000, "kind": "read", "node": "A", "seen": seen}][0 if vis_t2 else 1:]
    model = _trace("model:mariadb-10.11", reads(["t1", "t2"], True), 0, version=None)
    real = _trace("mariadb:10.11.99", reads([], False))
    [d] = [d for d in crosscheck.compare(crosscheck.facts(*real), crosscheck.facts(*model)) if d.aspect == "read"]
    assert not d.expected
    edge = _trace("mariadb:10.11.99", reads(["t2"], False))
    assert not [d for d in crosscheck.compare(crosscheck.facts(*edge), crosscheck.facts(*model)) if d.aspect == "read"]


@pytest.mark.parametrize("name", ["ss-recover-acked-returns", "cut-mid-group-reconnect", "par-delayed-sbm-gtid-start"])
def test_scenarios_outside_quick_meet_the_mariadb_gate(server, tmp_path, short_tmp, name):
    """A conformance scenario left out of --quick (#16 mechanism 3: a second restart of a killed
    primary): its exercised requirements get the verdicts ci/mariadb.toml pins, with no finding."""
    out = tmp_path / "conform"
    r = _cli("conform", "--server", "mariadb", "--history", str(ROOT / "spec" / "histories" / f"{name}.jsonl"),
             "--out", str(out), env={"REPLCHECK_TMPDIR": short_tmp})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-1000:]  # stdout: each finding's line
    doc = json.loads((out / "results.json").read_text())
    scenario = next(s for s in conform.load_scenarios() if s.name == name)
    with open(ROOT / "ci" / "mariadb.toml", "rb") as f:
        pinned = tomllib.load(f)["verdicts"][f"conformance:{conform.column(server.version)}"]
    got = {row["requirement"]: row["status"] for row in doc["rows"] if row["requirement"] in scenario.exercises}
    assert got == {req: pinned[req] for req in scenario.exercises}, doc["findings"]


def test_conform_runs_the_registry_s_server_of_the_build(monkeypatch, tmp_path):
    # The server comes from the registry (named by its build's version), not built by conform.
    asked = []

    class Refusing(MariaDB):
        def check(self, history, name):
            raise RunnerError(f"{self.name} of the registry refuses {name}")
    monkeypatch.setattr(systems, "server_at", lambda basedir=None: asked.append(basedir) or Refusing(name="server:mariadb-10.11"))
    scenario = conform.load_scenarios()[0]
    with pytest.raises(io.InputError, match=f"server:mariadb-10.11 of the registry refuses {scenario.history.stem}"):
        conform.conform(tmp_path / "out", history_files=[scenario.history], basedir="/a/build")
    assert asked == ["/a/build"] and not (tmp_path / "out").exists()


def test_a_stop_of_the_io_thread_with_a_group_in_flight_may_keep_it_in_one_trace_only():
    # seed 8's History 29: t1 and STOP SLAVE IO_THREAD on C both at 0, C's channel 10 ms late (as
    # run). The server committed t1 at 51 ms and its stop ran from 51 to 74 ms: C's IO thread had
    # fetched t1. The model, at the History's times, stopped it first.
    def trace(system, stop_began, stop_returned, written, counts, version):
        header, obs = _trace(system, [
            {"t": written, "kind": "binlog", "node": "A", "trx": "t1", "gtid": "0-1-1", "type": "GTID_LOG_EVENT", "idx": 0},
            {"t": stop_returned, "kind": "stmt", "node": "C", "op": "stop_slave", "thread": "io", "errno": None, "warning": None,
             "duration_us": stop_returned - stop_began},
            {"t": 9_000_000, "kind": "data", "node": "C", "counts": counts}], version=version)
        header["topology"] = {"nodes": [{"id": n} for n in "ABC"], "channels": [
            {"source": "A", "replica": "B", "latency_us": 200}, {"source": "A", "replica": "C", "latency_us": 10_000}]}
        return header, obs
    model = trace("model:mariadb-10.11", 0, 0, 0, {}, None)
    real = trace("mariadb:10.11.99", 50_900, 73_682, 51_220, {"t1": 1}, "10.11.99")
    [d] = crosscheck.compare(crosscheck.facts(*real), crosscheck.facts(*model))
    assert (d.aspect, d.node, d.subject, d.left, d.right) == ("data", "C", "t1", "1 copy", "absent")
    assert d.expected and d.rule == "server.stop-with-a-group-in-flight"
    # the stop a second after t1 in both: the group had arrived long before, a difference to explain
    later = [trace("model:mariadb-10.11", 1_000_000, 1_000_000, 0, {}, None),
             trace("mariadb:10.11.99", 1_050_900, 1_073_682, 51_220, {"t1": 1}, "10.11.99")]
    [d] = crosscheck.compare(crosscheck.facts(*later[1]), crosscheck.facts(*later[0]))
    assert not d.expected and "no rule explains it" in d.reason


def test_a_trace_cut_at_a_statement_not_answered_is_compared_up_to_the_cut():
    """The server did not answer B's STOP SLAVE at 5 s (header cut_short): what the model did from
    there on (the stop's answer, START SLAVE, t2, the rows at the end) the cut Trace cannot show; a
    difference before the cut is still one."""
    model = _trace("model:mariadb-10.11", [
        {"t": 1000, "kind": "commit", "node": "A", "trx": "t1", "gtid": "0-1-1"},
        {"t": 1_000_000, "kind": "visible", "node": "B", "trx": "t1", "gtid": "0-1-1"},
        {"t": 5_000_000, "kind": "stmt", "node": "B", "op": "stop_slave", "errno": None, "warning": None},
        {"t": 6_000_000, "kind": "stmt", "node": "B", "op": "start_slave", "errno": None, "warning": None},
        {"t": 6_000_000, "kind": "commit", "node": "A", "trx": "t2", "gtid": "0-1-2"},
        {"t": 7_000_000, "kind": "visible", "node": "B", "trx": "t2", "gtid": "0-1-2"},
        {"t": 9_000_000, "kind": "data", "node": "B", "counts": {"t1": 1, "t2": 1}},
    ], 0, version=None)

    def cut(visible_t1):
        header, obs = _trace("mariadb:10.11.99", [
            {"t": 1000, "kind": "commit", "node": "A", "trx": "t1", "gtid": "0-1-1"},
            *([{"t": 1_000_000, "kind": "visible", "node": "B", "trx": "t1", "gtid": "0-1-1"}] if visible_t1 else []),
            {"t": 95_000_000, "kind": "stmt", "node": "B", "op": "stop_slave", "errno": None, "warning": None,
             "returned": False, "duration_us": 90_000_000},
            {"t": 95_100_000, "kind": "data", "node": "B", "counts": {"t1": 1 if visible_t1 else 0}}])
        header["cut_short"] = {"t": 5_000_000, "node": "B", "op": "stop_slave", "op_index": 2, "reason": "did not return"}
        return header, obs
    diffs = crosscheck.compare(crosscheck.facts(*cut(True)), crosscheck.facts(*model))
    assert {(d.aspect, d.node, d.subject) for d in diffs} == {
        ("commit", "A", "t2"), ("visible", "B", "t2"), ("stmt", "B", "stop_slave #1"), ("data", "B", "t2")}
    assert all(d.expected and d.rule == "server.statement-did-not-return" for d in diffs), diffs
    assert crosscheck.compare(crosscheck.facts(*model), crosscheck.facts(*cut(True))) == [
        replace(d, left=d.right, right=d.left) for d in diffs]  # either side may be the cut one
    # t1 on B since 1 s in the model, never on the server before the cut at 5 s: a finding
    before = {(d.aspect, d.subject): d for d in crosscheck.compare(crosscheck.facts(*cut(False)), crosscheck.facts(*model))}
    assert not before[("visible", "t1")].expected and not before[("data", "t1")].expected
