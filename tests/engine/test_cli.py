"""The command line: exit codes, one-line errors that name file, line and field, nothing half-written."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from replcheck import io
from replcheck.cli import main
from replcheck.verify import embedded_histories
from conftest import REPO, proofs_once

HISTORIES = REPO / "spec" / "histories"
NORMAL = HISTORIES / "d1-normal-setup.jsonl"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("replcheck: error: "), err
    return lines[0]


def write_history(tmp_path, header_patch=None, ops=None, raw_lines=None) -> Path:
    header, original_ops = NORMAL.read_text().splitlines()[0], NORMAL.read_text().splitlines()[1:]
    h = json.loads(header)
    for key, value in (header_patch or {}).items():
        h[key] = value
    lines = raw_lines if raw_lines is not None else [json.dumps(h)] + [json.dumps(o) for o in (ops or [json.loads(x) for x in original_ops])]
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("patch,ops,where", [
    ({"topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B", "delay": -1}]}},
     None, "h.jsonl:1: topology.channels[0].delay: MASTER_DELAY -1"),
    ({"topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B", "delay": 2**31}]}},
     None, "h.jsonl:1: topology.channels[0].delay: MASTER_DELAY 2147483648"),
    ({"topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "C"}]}},
     None, "h.jsonl:1: topology.channels[0].replica: unknown node 'C'"),
    ({"topology": {"nodes": [{"id": "A"}, {"id": "B"}], "channels": [{"source": "A", "replica": "B"}, {"source": "B", "replica": "A"}]}},
     None, "h.jsonl:1: topology.channels: circular replication"),
    (None, [{"at": 0, "op": "change_master", "node": "B", "delay": 1.5}], "h.jsonl:2: delay: MASTER_DELAY 1.5"),
    (None, [{"at": 0, "op": "trx", "node": "A"}, {"at": 5, "op": "warp", "node": "A"}], "h.jsonl:3: op: 'warp' is not one of"),
    (None, [{"at": -1, "op": "trx", "node": "A"}], "h.jsonl:2: at: -1 is less than the minimum of 0"),
    (None, [{"at": 0, "op": "trx", "node": "A", "colour": "red"}], "h.jsonl:2: unknown field"),
    (None, [{"at": 0, "op": "trx", "node": "Z"}], "h.jsonl:2: node: unknown node 'Z'"),
    (None, [{"at": 0, "op": "trx", "node": "A", "trx": "x"}, {"at": 1, "op": "trx", "node": "A", "trx": "x"}],
     "h.jsonl:3: trx: duplicate transaction name 'x'"),
    # multi-source: a replica's connections are named, each once, each for another source
    ({"topology": {"nodes": [{"id": "A"}, {"id": "B"}, {"id": "R"}], "channels": [
        {"source": "A", "replica": "R", "connection": "a"}, {"source": "B", "replica": "R", "connection": "a"}]}},
     [], "h.jsonl:1: topology.channels[1].connection: 'R' already has a connection named 'a'"),
    ({"topology": {"nodes": [{"id": "A"}, {"id": "B"}, {"id": "R"}], "channels": [
        {"source": "A", "replica": "R", "connection": "a"}, {"source": "B", "replica": "R"}]}},
     [], "h.jsonl:1: topology.channels[1].connection: 'R' has several sources: name each of its connections"),
    ({"topology": {"nodes": [{"id": "A"}, {"id": "R"}], "channels": [
        {"source": "A", "replica": "R", "connection": "a"}, {"source": "A", "replica": "R", "connection": "b"}]}},
     [], "h.jsonl:1: topology.channels[1].source: 'R' already replicates from 'A'"),
    ({"topology": {"nodes": [{"id": "A"}, {"id": "R"}], "channels": [{"source": "A", "replica": "R", "connection": "a"}]}},
     [{"at": 0, "op": "stop_slave", "node": "R", "connection": "b"}], "h.jsonl:2: connection: 'R' has no connection named 'b'"),
    ({"topology": {"nodes": [{"id": "A"}, {"id": "R"}], "channels": [{"source": "A", "replica": "R", "connection": "a"}]}},
     [{"at": 0, "op": "failover", "node": "R"}], "h.jsonl:2: op: op failover of a multi-source replica is not modelled"),
])
def test_bad_history_is_one_line_naming_line_and_field(tmp_path, capsys, patch, ops, where):
    path = write_history(tmp_path, patch, ops)
    out_file = tmp_path / "trace.jsonl"
    code, out, err = run(capsys, "simulate", str(path), "--out", str(out_file))
    assert code == 2
    assert where in one_line_error(err)
    assert not out_file.exists() and out == ""


def test_malformed_json_names_line_and_column(tmp_path, capsys):
    path = write_history(tmp_path, raw_lines=[NORMAL.read_text().splitlines()[0], '{"at": 0, "op": "trx",'])
    code, _, err = run(capsys, "simulate", str(path))
    assert code == 2 and "h.jsonl:2: column" in one_line_error(err)


def test_unknown_option_and_command_and_system(capsys):
    for argv in (["verify", "--frobnicate"], ["warp"], ["simulate", str(NORMAL), "--system", "model:nope"],
                 ["verify", "--examples", "0"]):
        code, _, err = run(capsys, *argv)
        assert code == 2, argv
        one_line_error(err)


def test_simulate_is_deterministic_and_check_trace_passes_the_model(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run(capsys, "simulate", str(NORMAL), "--system", "model:wl344", "--out", str(a))[0] == 0
    assert run(capsys, "simulate", str(NORMAL), "--system", "model:wl344", "--out", str(b))[0] == 0
    assert a.read_bytes() == b.read_bytes()
    code, out, _ = run(capsys, "check-trace", str(a), "--json")
    verdicts = {v["requirement"]: v["status"] for v in json.loads(out)["verdicts"]}
    assert code == 0 and verdicts["WL344.WAIT.RULE"] == "pass" and verdicts["WL344.STATE.WAITING"] == "pass"


def test_check_trace_reports_an_early_apply_with_its_line(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    run(capsys, "simulate", str(NORMAL), "--system", "model:wl344", "--out", str(trace))
    rows = [json.loads(x) for x in trace.read_text().splitlines()]
    # Re-create BUG-like behaviour: the replica applies the row 10 s early.
    for r in rows[1:]:
        if r["kind"] == "apply" and r["type"] == "QUERY_EVENT":
            r["t"] -= 10_000_000
            r["begin"] -= 10_000_000
    rows[1:] = sorted(rows[1:], key=lambda r: r["t"])
    line = next(i for i, r in enumerate(rows, 1) if r.get("kind") == "apply" and r["type"] == "QUERY_EVENT")
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = run(capsys, "check-trace", str(trace))
    assert code == 1
    assert "WL344.WAIT.RULE          violated" in out
    assert f"t.jsonl:{line}: B began QUERY_EVENT of t1" in out


SUITE = HISTORIES / "suites" / "g50-rpl_hier_crash_recovery.jsonl"


def test_check_trace_with_its_history_judges_the_expectations(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    run(capsys, "simulate", str(SUITE), "--system", "model:google-5.0", "--out", str(trace))
    code, out, err = run(capsys, "check-trace", str(trace))
    assert "EXPECT" not in out and "expectations observed, not judged: give the History with --history" in err
    code, out, _ = run(capsys, "check-trace", str(trace), "--history", str(SUITE))
    rows = [line.split() for line in out.splitlines() if line.startswith("EXPECT ")]
    assert code == 0 and rows and all(r[2] == "pass" for r in rows)
    # an observation changed: the expectation it answers is violated, and check-trace says where
    lines = trace.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if json.loads(x).get("kind") == "observed")
    o = json.loads(lines[at])
    o["value"] = {"changed": True}
    lines[at] = json.dumps(o)
    trace.write_text("\n".join(lines) + "\n")
    code, out, _ = run(capsys, "check-trace", str(trace), "--history", str(SUITE))
    assert code == 1 and f"EXPECT {o['expect']}" in out and f"t.jsonl:{at + 1}:" in out


def test_check_trace_refuses_another_history(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    run(capsys, "simulate", str(SUITE), "--system", "model:google-5.0", "--out", str(trace))
    code, _, err = run(capsys, "check-trace", str(trace), "--history", str(NORMAL))
    assert code == 2 and "is not the History" in one_line_error(err) and str(NORMAL) in err


def test_bad_trace_is_one_line(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    run(capsys, "simulate", str(NORMAL), "--out", str(trace))
    lines = trace.read_text().splitlines()
    lines[3] = json.dumps({**json.loads(lines[3]), "t": -5})
    trace.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "check-trace", str(trace))
    assert code == 2 and "t.jsonl:4: t:" in one_line_error(err)
    lines[3] = json.dumps({"t": 0, "kind": "status", "node": "B"})
    trace.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "check-trace", str(trace))
    assert code == 2 and "t.jsonl:4:" in one_line_error(err) and "Slave_IO_Running" in err


@pytest.mark.parametrize("content,where", [
    ("3\n./relay.000001\n4\nbin.000001\n", ":1: number_of_fields: 3 is less than 5"),
    ("5\n./relay.000001\nfour\nbin.000001\n4\n0\n", ":3: relay_log_pos: 'four'"),
    ("5\n./relay.000001\n4\nbin.000001\n4\n", ":6: delay: missing"),
    ("5\n./relay.000001\n4\nbin.000001\n4\n2147483648\n", ":6: delay: 2147483648 exceeds"),
])
def test_corrupt_relay_log_info(tmp_path, capsys, content, where):
    f = tmp_path / "relay-log.info"
    f.write_text(content)
    code, _, err = run(capsys, "relay-log-info", str(f))
    assert code == 2 and f"relay-log.info{where}" in one_line_error(err)


def test_relay_log_info_old_format_with_garbage(tmp_path, capsys):
    f = tmp_path / "relay-log.info"
    f.write_text("./relay.000003\n1234\nbin.000001\n5678\n99999999\n")
    code, out, _ = run(capsys, "relay-log-info", str(f))
    info = json.loads(out)
    assert code == 0 and info["old_format"] and info["delay"] == 0 and info["garbage"] == "99999999\n"


def test_requirements_json_shows_evidence_for_every_requirement(capsys):
    code, out, _ = run(capsys, "requirements", "--json")
    reqs = json.loads(out)
    assert code == 0
    assert {r["id"] for r in reqs} >= {"WL344.WAIT.RULE", "WL344.STOP.NO_EXEC", "WL7318.F3", "WL7318.NF1"}
    assert all(r["evidence"] for r in reqs), [r["id"] for r in reqs if not r["evidence"]]
    by_id = {r["id"]: {e["type"] for e in r["evidence"]} for r in reqs}
    assert "z3-proof" in by_id["WL344.RLI.UNAMBIGUOUS"] and "property" in by_id["WL344.WAIT.RULE"]


@pytest.mark.slow
def test_verify_reports_a_surviving_mutant_as_a_finding(tmp_path, capsys):
    histories = tmp_path / "hist"
    histories.mkdir()
    shutil.copy(HISTORIES / "d1-normal-setup.jsonl", histories)  # no STOP SLAVE: BUG#56442 cannot show
    with proofs_once():
        code, out, _ = run(capsys, "verify", "--out", str(tmp_path / "r"), "--histories", str(histories), "--examples", "3",
                           "--systems", "mutant:stop-applies-waited-event", "--no-tlc")
    assert code == 1 and "mutant survived" in out


def test_verify_refuses_bad_history_before_writing_anything(tmp_path, capsys):
    histories = tmp_path / "hist"
    histories.mkdir()
    (histories / "bad.jsonl").write_text('{"schema": "replcheck.history/1"}\n')
    code, _, err = run(capsys, "verify", "--out", str(tmp_path / "r"), "--histories", str(histories))
    assert code == 2 and "bad.jsonl:1: " in one_line_error(err) and "topology" in err
    assert not (tmp_path / "r").exists()


def test_every_embedded_history_loads():
    assert len(embedded_histories()) >= 20
    for path in embedded_histories():
        h = io.load_history(path)
        assert h["header"]["name"] == path.stem


@pytest.mark.parametrize("system", ["model:wl344", "model:wl7318"])
def test_every_model_trace_is_valid_against_the_trace_schema(tmp_path, system):
    from replcheck import systems

    for path in embedded_histories():
        header, obs = systems.get(system).run(io.load_history(path))
        out = tmp_path / f"{path.stem}.jsonl"
        io.write_atomic(out, io.dumps_lines(header, obs))
        loaded_header, loaded = io.load_trace(out)  # raises InputError on any schema violation
        assert loaded_header["system"] == system and len(loaded) == len(obs)


def _fuzz_trace():
    from hypothesis import strategies as st

    from replcheck import systems

    base = [json.loads(x) for x in io.dumps_lines(*systems.get("model:wl344").run(
        io.load_history(HISTORIES / "d1-stop-start-dml.jsonl"))).splitlines()]
    keys = sorted({k for row in base[1:] for k in row})
    values = st.one_of(st.none(), st.booleans(), st.integers(-2, 2**40), st.text(max_size=5), st.just([]), st.just({}))
    edit = st.one_of(
        st.tuples(st.just("drop"), st.integers(1, len(base) - 1), st.none(), st.none()),
        st.tuples(st.just("dup"), st.integers(1, len(base) - 1), st.none(), st.none()),
        st.tuples(st.just("set"), st.integers(1, len(base) - 1), st.sampled_from(keys), values),
    )
    return base, st.lists(edit, min_size=1, max_size=6)


FUZZ_BASE, FUZZ_EDITS = _fuzz_trace()


def test_check_trace_never_crashes_on_a_damaged_trace(tmp_path_factory):
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(FUZZ_EDITS)
    def judge(edits):
        rows = [dict(r) for r in FUZZ_BASE]
        for what, i, key, value in edits:
            i = min(i, len(rows) - 1)
            if what == "drop" and len(rows) > 2:
                rows.pop(i)
            elif what == "dup":
                rows.insert(i, dict(rows[i]))
            elif what == "set":
                rows[i][key] = value
        path = tmp_path_factory.mktemp("fuzz") / "t.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert main(["check-trace", str(path), "--json"]) in (0, 1, 2)  # a verdict or a one-line error, never a crash

    judge()


def test_an_internal_error_exits_3_never_1_or_2(monkeypatch, capsys):
    """A crash of replcheck itself must not read as "violation found" (1) or "bad input" (2) in
    a CI gate: a KeyError deep inside is a bug, whatever its type."""
    from replcheck import systems

    def broken():
        raise KeyError("a bug, not a user's misspelt system")
    monkeypatch.setattr(systems, "systems", broken)
    assert main(["systems"]) == 3
    assert "internal error" in capsys.readouterr().err


def test_an_unknown_system_is_one_line_and_exit_2(capsys):
    assert main(["simulate", str(embedded_histories()[0]), "--system", "model:wl345"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown system 'model:wl345'" in err[0]
