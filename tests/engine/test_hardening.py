"""Bad input of every kind is one line naming file, line and field, and exit 2: never a traceback (3)."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict

import pytest

from replcheck import campaign, io, outdir
from replcheck.cli import main
from conftest import REPO

NORMAL = REPO / "spec" / "histories" / "d1-normal-setup.jsonl"
DEEP = "[" * 100_000
LONG = "9" * 5000


def error_of(capsys, *argv) -> str:
    assert main(list(argv)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("replcheck: error: ") and len(lines[0]) <= 300, lines
    return lines[0]


def results_file(tmp_path, **patch) -> str:
    row = {"source": "history", "system": "model:wl344", "requirement": "WL344.R1", "status": "pass", "history": "h"}
    doc = {"schema": "replcheck.results/1", "findings": [], "rows": [row]}
    for key, value in patch.items():
        if key.startswith("row_"):
            row[key[4:]] = value
        else:
            doc[key] = value
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return str(path)


def history_with(tmp_path, line2: str) -> str:
    path = tmp_path / "h.jsonl"
    path.write_text(NORMAL.read_text().splitlines()[0] + "\n" + line2 + "\n")
    return str(path)


@pytest.mark.parametrize("command", ["simulate", "check-trace"])
def test_deeply_nested_json_lines_are_refused(tmp_path, capsys, command):
    assert "h.jsonl:2: not valid JSON: nested too deeply" in error_of(capsys, command, history_with(tmp_path, DEEP))


def test_deeply_nested_results_and_campaign_files_are_refused(tmp_path, capsys):
    (tmp_path / "results.json").write_text(DEEP)
    assert "results.json: not valid JSON: nested too deeply" in error_of(capsys, "report", str(tmp_path / "results.json"))
    (tmp_path / "campaign.json").write_text(DEEP)
    with pytest.raises(Exception, match="campaign.json: not valid JSON: nested too deeply"):
        campaign._check_out(tmp_path, campaign.Plan(1, 0, ("model:wl344",), 1))


def test_an_integer_too_long_for_int_names_its_field(tmp_path, capsys):
    line = '{"at": 0, "op": "lose_acks", "node": "A", "count": %s}' % LONG
    assert "h.jsonl:2: count: an integer of more than 4300 digits" in error_of(capsys, "simulate", history_with(tmp_path, line))
    path = tmp_path / "results.json"
    path.write_text('{"schema": "replcheck.results/1", "rows": [], "seed": %s}' % LONG)
    assert "results.json: seed: an integer of more than 4300 digits" in error_of(capsys, "report", str(path))


@pytest.mark.parametrize("content,where", [
    (f"{LONG}\n", "info:1: number_of_fields: an integer of more than 4300 digits"),
    (f"5\nrelay.000001\n{LONG}\nbin.000001\n4\n0\n", "info:3: relay_log_pos: an integer of more than 4300 digits"),
])
def test_relay_log_info_with_a_too_long_integer(tmp_path, capsys, content, where):
    (tmp_path / "info").write_text(content)
    assert where in error_of(capsys, "relay-log-info", str(tmp_path / "info"))


def test_nan_is_not_json(tmp_path, capsys):
    line = '{"at": NaN, "op": "trx", "node": "A"}'
    assert "h.jsonl:2: not valid JSON: NaN is not a JSON number" in error_of(capsys, "simulate", history_with(tmp_path, line))


@pytest.mark.parametrize("patch,field", [
    ({"rows": [1]}, "rows[0]: 1 is not of type 'object'"),
    ({"row_status": ["pass"]}, "rows[0].status"),
    ({"row_counts": []}, "rows[0].counts"),
    ({"row_counts": {"pass": "3"}}, "rows[0].counts.pass"),
    ({"row_counts": {"passed": 3}}, "rows[0].counts"),
    ({"row_witnesses": "w"}, "rows[0].witnesses"),
    ({"row_witnesses": [{"lines": [1]}]}, "rows[0].witnesses[0].message: missing (required)"),
    ({"row_history": 7}, "rows[0].history"),
    ({"findings": [{"kind": "x"}]}, "findings[0].witness: missing (required)"),
    ({"figures": []}, "figures"),
])
def test_results_of_the_wrong_types_name_the_field(tmp_path, capsys, patch, field):
    path = results_file(tmp_path, **patch)
    assert f"results.json: {field}" in error_of(capsys, "report", path, "--out", str(tmp_path / "r"))
    assert f"results.json: {field}" in error_of(capsys, "gate", str(tmp_path / "g.toml"), path)
    assert not (tmp_path / "r").exists()


def test_explain_takes_ascii_digits_only(capsys):
    assert "expected SEED INDEX" in error_of(capsys, "explain", "\u00b2", "1", "--system", "model:wl344")


@pytest.mark.parametrize("argv,message", [
    (["--seed", str(2**63)], f"--seed: {2**63} is not in 0..{2**63 - 1}"),
    (["--systems", ""], "--systems: unknown system ''"),
])
def test_campaign_refuses_what_it_cannot_record(tmp_path, capsys, argv, message):
    assert message in error_of(capsys, "campaign", "--out", str(tmp_path / "c"), *argv)
    assert not (tmp_path / "c").exists()


def test_verify_refuses_an_empty_system_list(tmp_path, capsys):
    assert "--systems: unknown system ''" in error_of(capsys, "verify", "--systems", "", "--out", str(tmp_path / "v"))


def test_out_refuses_a_symlink_and_a_directory(tmp_path, capsys):
    target = tmp_path / "target"
    target.write_text("kept\n")
    (tmp_path / "link").symlink_to(target)
    assert "link: not a regular file" in error_of(capsys, "simulate", str(NORMAL), "--out", str(tmp_path / "link"))
    assert (tmp_path / "link").is_symlink() and target.read_text() == "kept\n"
    (tmp_path / "dir").mkdir()
    assert "dir: not a regular file" in error_of(capsys, "simulate", str(NORMAL), "--out", str(tmp_path / "dir"))


def test_out_writes_straight_to_a_fifo_and_a_character_device(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with ThreadPoolExecutor(1) as pool:
        read = pool.submit(fifo.read_text)
        assert main(["simulate", str(NORMAL), "--out", str(fifo)]) == 0
        assert read.result(timeout=30).startswith('{"schema": "replcheck.trace/1"')
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert main(["simulate", str(NORMAL), "--out", "/dev/null"]) == 0
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_out_has_the_umask_mode_or_keeps_the_replaced_file_mode(tmp_path):
    io.write_atomic(tmp_path / "new", "x")  # not mkstemp's 0600
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o666 & ~io.UMASK
    (tmp_path / "kept").write_text("old")
    os.chmod(tmp_path / "kept", 0o640)
    io.write_atomic(tmp_path / "kept", "new")
    assert stat.S_IMODE((tmp_path / "kept").stat().st_mode) == 0o640 and (tmp_path / "kept").read_text() == "new"


def trace_with_header(tmp_path, **topology_patch) -> str:
    lines = main_trace_lines(tmp_path)
    header = json.loads(lines[0])
    header["topology"].update(topology_patch)
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return str(path)


def main_trace_lines(tmp_path) -> list[str]:
    assert main(["simulate", str(NORMAL), "--out", str(tmp_path / "base.jsonl")]) == 0
    return (tmp_path / "base.jsonl").read_text().splitlines()


@pytest.mark.parametrize("patch,field", [
    ({"nodes": [{"id": "A", "server_id": "1"}, {"id": "B"}]}, "topology.nodes[0].server_id"),
    ({"nodes": [{"id": "A", "variables": "x"}, {"id": "B"}]}, "topology.nodes[0].variables"),
    ({"nodes": [{"id": "A", "variables": {"rpl_semi_sync_master_timeout": "10"}}, {"id": "B"}]},
     "topology.nodes[0].variables.rpl_semi_sync_master_timeout"),
    ({"nodes": [{"id": "A\n"}, {"id": "B"}]}, "topology.nodes[0].id"),
    ({"channels": [{"source": "A", "replica": "B", "delay": "20"}]}, "topology.channels[0].delay"),
    ({"channels": "A->B"}, "topology.channels"),
])
def test_a_trace_header_the_properties_cannot_read_is_refused(tmp_path, capsys, patch, field):
    assert f"t.jsonl:1: {field}" in error_of(capsys, "check-trace", trace_with_header(tmp_path, **patch))


@pytest.mark.parametrize("line,field", [
    ('{"at": 1e8, "op": "trx", "node": "A"}', "h.jsonl:2: at: 100000000.0 is not of type 'integer'"),
    ('{"at": 0, "op": "change_master", "node": "B", "delay": 5.0}', "h.jsonl:2: delay: MASTER_DELAY 5.0"),
    ('{"at": 1000000000001, "op": "trx", "node": "A"}', "h.jsonl:2: at: 1000000000001 is greater than the maximum"),
    ('{"at": 0, "op": "lose_acks", "node": "B", "count": 70000}', "h.jsonl:2: count: 70000 is greater than the maximum"),
    ('{"at": 0, "op": "trx", "node": "A\\n"}', "h.jsonl:2: node: 'A\\n' does not match"),
    ('{"at": 0, "op": "set_global", "node": "A", "variable": "x\\n", "value": 1}', "h.jsonl:2: variable: 'x\\n' does not match"),
    ('{"at": 0, "op": "restore", "node": "B", "from": "Z"}', "h.jsonl:2: from: unknown node 'Z'"),
    ('{"at": 0, "op": "restore", "node": "B", "from": "A", "source": "Y"}', "h.jsonl:2: source: unknown node 'Y'"),
    ('{"at": 0, "op": "change_master", "node": "B", "master_host": "Q", "master_log_file": "f", "master_log_pos": 4}',
     "h.jsonl:2: master_host: unknown node 'Q'"),
])
def test_history_numbers_are_ints_within_bounds_and_names_resolve(tmp_path, capsys, line, field):
    assert field in error_of(capsys, "simulate", history_with(tmp_path, line))


SAMPLED = ('{"schema": "replcheck.history/1", "sample_every_us": 1000, %s"topology": {"nodes": [{"id": "A"}, {"id": "B"}], '
           '"channels": [{"source": "A", "replica": "B"}]}}')


@pytest.mark.parametrize("header,op,where,samples", [
    ("", '{"at": 1000000000000, "op": "trx", "node": "A"}', "h.jsonl:2: at: 1000000000000 µs", 2 * 10**9),
    ('"end_us": 600000000, ', '{"at": 5, "op": "trx", "node": "A"}', "h.jsonl:1: end_us: 600000000 µs", 1_200_000),
])
def test_a_history_asking_for_too_many_samples_is_refused(tmp_path, capsys, header, op, where, samples):
    path = tmp_path / "h.jsonl"
    path.write_text(SAMPLED % header + "\n" + op + "\n")
    assert f"{where} sampled every 1000 µs on 2 nodes is {samples} samples, more than the {io.MAX_SAMPLES}" in \
        error_of(capsys, "simulate", str(path))


def test_a_history_at_the_sample_limit_loads(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text(SAMPLED % f'"end_us": {io.MAX_SAMPLES // 2 * 1000}, ' + "\n")
    assert io.load_history(path)["header"]["end_us"] == io.MAX_SAMPLES // 2 * 1000


def test_a_history_with_more_ops_than_the_limit_is_refused_at_the_first_one_over(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(io, "MAX_OPS", 3)
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join([SAMPLED % "", *[f'{{"at": {k}, "op": "trx", "node": "A"}}' for k in range(4)]]) + "\n")
    assert "h.jsonl:5: op: more than the 3 ops a History may hold" in error_of(capsys, "simulate", str(path))
    path.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
    assert len(io.load_history(path)["ops"]) == 3


def test_reads_that_would_return_too_many_rows_are_refused(tmp_path, capsys, monkeypatch):
    """A read returns every transaction so far: reads x transactions bounds the Trace, not the ops."""
    monkeypatch.setattr(io, "MAX_READ_ROWS", 5)
    ops = [f'{{"at": {k}, "op": "trx", "node": "A"}}' for k in range(3)]
    ops += [f'{{"at": {10 + k}, "op": "read", "node": "B"}}' for k in range(2)]  # 3 + 3 rows: over at the second
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join([SAMPLED % "", *ops]) + "\n")
    assert "h.jsonl:6: op: the reads up to here may see 6 transactions in all, more than the 5" in \
        error_of(capsys, "simulate", str(path))
    path.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
    assert len(io.load_history(path)["ops"]) == 4


def _patterns(node):
    if isinstance(node, dict):
        yield from ([node["pattern"]] if isinstance(node.get("pattern"), str) else [])
        for v in node.values():
            yield from _patterns(v)
    elif isinstance(node, list):
        for v in node:
            yield from _patterns(v)


PATTERNS = sorted({p for name in ("history", "trace", "report", "results") for p in _patterns(io.schema(name))})


@pytest.mark.parametrize("pattern", PATTERNS)
def test_no_schema_pattern_takes_a_trailing_newline(pattern):
    """jsonschema searches with Python's re, whose $ also matches before a final newline."""
    import re

    from hypothesis import given, settings, strategies as st

    @settings(max_examples=50, deadline=None)
    @given(st.from_regex(pattern))
    def accepted(text):
        assert re.search(pattern, text + "\n") is None

    accepted()


@pytest.mark.parametrize("line,message", [
    ('{"at": 0, "op": "change_master", "node": "B"}',
     "h.jsonl:2: delay | delay_sql | master_log_file + master_log_pos | connect_using_group_id | master_user | master_use_gtid | do_domain_ids | ignore_domain_ids: needs one of these"),
    ('{"at": 0, "op": "change_master", "node": "B", "delay": 1, "delay_sql": "x"}', "h.jsonl:2: delay, delay_sql: exclude each other"),
    ('{"at": 0, "op": "change_master", "node": "B", "delay": 0, "relay_log_file": "relay.000001"}',
     "h.jsonl:2: 'relay_log_pos' is a dependency of 'relay_log_file'"),
    ('{"at": 0, "op": "trx", "node": "A", "statements": {"x": 1}}', "h.jsonl:2: statements: an object is not of type 'array'"),
])
def test_an_invalid_op_names_its_fields_not_the_whole_op(tmp_path, capsys, line, message):
    assert error_of(capsys, "simulate", history_with(tmp_path, line)).endswith(message)


def test_a_long_error_is_cut_to_300_characters_and_controls_are_escaped(tmp_path, capsys):
    line = json.dumps({"at": 0, "op": "trx", "node": "A", "trx": "x", "\x1b[2J" + "y" * 400: 1})
    err = error_of(capsys, "simulate", history_with(tmp_path, line))
    assert err.endswith("\u2026") and "\\x1b[2J" in err and "\x1b" not in err


def test_witnesses_are_printed_with_controls_escaped(tmp_path, capsys):
    lines = main_trace_lines(tmp_path)
    rows = [json.loads(x) for x in lines]
    for r in rows:
        if r.get("trx"):
            r["trx"] = "\x1b]0;pwned\x07"  # an xterm title sequence in a transaction name
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["check-trace", str(path)])
    out = capsys.readouterr().out
    assert "\\x1b]0;pwned\\x07" in out and "\x1b" not in out and "\x07" not in out


def test_a_killed_runs_staging_folder_is_removed_by_the_next_run(tmp_path):
    """kill -9 of verify or conform leaves its hidden staging folder; the next run for the same
    --out removes the ones whose process is gone, and leaves a live run's alone."""
    out = tmp_path / "report"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".report.staging-{dead.pid}-abc"
    live = tmp_path / f".report.staging-{os.getpid()}-def"
    for d in (stale, live):
        (d / "traces").mkdir(parents=True)
    with outdir.staged(out) as mine:
        assert not stale.exists() and live.exists() and mine.parent == tmp_path
        (mine / "results.json").write_text("{}")
    assert (out / "results.json").exists() and not mine.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["report", live.name])


# Found by the fuzzer (tests/engine/fuzzing.py, bench/fuzz.py), one test per signature.
def test_an_odd_unknown_key_of_a_campaign_plan_is_named_as_one_field(tmp_path, capsys):
    (tmp_path / "c").mkdir()
    plan = campaign.validate(1000, 0, ["model:wl344"], None, 250)
    wanted = asdict(plan) | {"systems": list(plan.systems), "families": None, "families ": None}
    (tmp_path / "c" / "campaign.json").write_text(json.dumps({"plan": wanted}))
    line = error_of(capsys, "campaign", "--out", str(tmp_path / "c"), "--systems", "model:wl344")
    assert 'campaign.json: plan."families ": unknown field' in line


def test_a_history_sampled_too_often_for_its_length_is_refused(tmp_path, capsys):
    line = '{"at": 1000000000000, "op": "trx", "node": "A"}'  # 10^6 samples at NORMAL's 1 s: it hung
    assert "h.jsonl:2: at: 1000000000000 µs sampled every" in error_of(capsys, "simulate", history_with(tmp_path, line))


def test_campaign_out_that_is_a_file_or_holds_another_campaign(tmp_path, capsys):
    (tmp_path / "f").write_text("")
    assert str(tmp_path / "f") + ": a regular file: refused as an output directory" in error_of(capsys, "campaign", "--out", str(tmp_path / "f"))
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "campaign.json").write_text('{"plan": {"histories": 5}}')
    assert "campaign.json: plan.histories: 5, not 1000" in error_of(capsys, "campaign", "--out", str(tmp_path / "c"))


@pytest.mark.parametrize("command,name,problem", [
    ("relay-log-info", "", "'': an empty file name"), ("relay-log-info", "a\0b", "a\\x00b: a file name with a NUL byte"),
    ("report", "x" * 256, "x" * 200),  # too long: is it a campaign directory? (the problem, cut to 300 characters)
])
def test_names_no_file_can_have(capsys, command, name, problem):
    assert problem in error_of(capsys, command, name)


def test_an_output_under_a_file_cannot_be_written(tmp_path, capsys):
    (tmp_path / "f").write_text("kept")
    assert "f/r: cannot write: Not a directory" in error_of(capsys, "report", results_file(tmp_path), "--out", str(tmp_path / "f" / "r"))


def test_conform_names_the_history_a_server_cannot_run(tmp_path, capsys):
    h = tmp_path / "h.jsonl"
    h.write_text(NORMAL.read_text().replace('"replica": "B"', '"replica": "B", "latency_us": 10000000', 1))
    assert "h.jsonl: topology.channels[0].latency_us: 10000000 (x 0.1) cannot be made" in error_of(
        capsys, "conform", "--server", "mariadb", "--history", str(h), "--out", str(tmp_path / "o"))
    assert "--scale: nan is not a number in (0, 10]" in error_of(capsys, "conform", "--server", "mariadb", "--scale", "nan")


def test_unrecognized_arguments_are_quoted(capsys):
    assert "unrecognized arguments: ''" in error_of(capsys, "systems", "")


def test_shrink_names_the_history_that_does_not_fail(tmp_path, capsys):
    assert "d1-normal-setup.jsonl: --system: model:wl344 violates nothing" in error_of(capsys, "shrink", str(NORMAL), "--system", "model:wl344")


def test_a_missing_property_and_nan_in_a_results_file_are_located(tmp_path, capsys):
    path = tmp_path / "results.json"
    path.write_text('{"schema": "replcheck.results/1"}')
    assert "results.json: rows: missing (required)" in error_of(capsys, "report", str(path))
    path.write_text('{"schema": "replcheck.results/1",\n "rows": [],\n "seed": -Infinity}')
    assert "results.json:3: not valid JSON: -Infinity is not a JSON number" in error_of(capsys, "report", str(path))


@pytest.mark.parametrize("gate,where", [
    ('[verdicts."conformance:MariaDB 10.11"]\n"WL344.MSG" = true\n', 'g.toml: verdicts."conformance:MariaDB 10.11"."WL344.MSG": unknown verdict True'),
    ('verdicts = {x = 1}\n', 'g.toml: verdicts."x": 1 is not a table'),
    ('[verdicts.x]\ny = {a = 1}\n', 'g.toml: verdicts."x"."y": unknown verdict {\'a\': 1}'),
    (f'[gate]\nname = "g"\n\n[verdicts.x]\ny = {LONG}\n', "g.toml:5: not valid TOML: an integer of more than 4300 digits"),
])
def test_a_bad_gate_file_is_located(tmp_path, capsys, gate, where):
    (tmp_path / "g.toml").write_text(gate)
    assert where in error_of(capsys, "gate", str(tmp_path / "g.toml"), results_file(tmp_path))


@pytest.mark.parametrize("argv", [["explain", LONG, "0"], ["explain", str(2**63), "0"], ["replay", str(2**63), "0"]])
def test_a_seed_beyond_what_a_campaign_records_is_refused(capsys, argv):
    assert "0..9223372036854775807" in error_of(capsys, *argv, "--system", "model:wl344")


def test_a_statement_value_is_typed_as_the_history_gives_it(tmp_path, capsys):
    lines = main_trace_lines(tmp_path)
    t = json.loads(lines[-1])["t"]
    stmt = {"t": t, "kind": "stmt", "node": "A", "op": "set_global", "variable": "x", "value": {"a": 1}, "errno": None}
    (tmp_path / "t.jsonl").write_text("\n".join([*lines, json.dumps(stmt)]) + "\n")
    assert f"t.jsonl:{len(lines) + 1}: value:" in error_of(capsys, "check-trace", str(tmp_path / "t.jsonl"))


def test_a_broken_embedded_spec_file_is_an_internal_error_in_one_line(capsys, monkeypatch):
    from replcheck import systems

    def broken(text):
        raise io.InputError("spec/systems.toml", 3, "system[0].rule", "'x' is not a delay rule")
    monkeypatch.setattr(systems, "load", broken)
    systems.systems.cache_clear()
    try:
        assert main(["systems"]) == 3
    finally:
        monkeypatch.undo()
        systems.systems.cache_clear()
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("replcheck: internal error: spec/systems.toml:3: system[0].rule") and "spec file is broken" in line


def test_conform_refuses_an_empty_history_name_and_an_out_under_a_file(tmp_path, capsys):
    assert "conform: argument --history: an empty file name" in error_of(capsys, "conform", "--server", "mariadb", "--history", "")
    (tmp_path / "f").write_text("")
    assert "f/x: cannot write: Not a directory" in error_of(capsys, "conform", "--server", "mariadb", "--history", str(NORMAL),
                                                        "--out", str(tmp_path / "f" / "x"))


def test_performance_schema_delays_come_together(tmp_path, capsys):
    lines = main_trace_lines(tmp_path)
    n, status = next((n, json.loads(s)) for n, s in enumerate(lines) if '"kind": "status"' in s)
    lines[n] = json.dumps({**{k: v for k, v in status.items() if k != "REMAINING_DELAY"}, "DESIRED_DELAY": 0})
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    assert f"t.jsonl:{n + 1}: 'REMAINING_DELAY' is a dependency of 'DESIRED_DELAY'" in error_of(capsys, "check-trace", str(tmp_path / "t.jsonl"))


def test_an_apply_without_a_gtid_is_judged_by_the_origin_its_due_time_used(tmp_path, capsys):
    assert main(["simulate", str(REPO / "spec" / "histories" / "anonymous-gtid.jsonl"), "--system", "model:wl344",
                 "--out", str(tmp_path / "t.jsonl")]) == 0
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    n = next(n for n, s in enumerate(lines) if '"kind": "apply"' in s and '"type": "QUERY_EVENT"' in s)
    lines[n] = lines[n].replace('"gtid": "0-1-1"', '"gtid": ""')  # its binlog event keeps the GTID: no origin by GTID
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["check-trace", str(tmp_path / "t.jsonl")]) in (0, 1), capsys.readouterr().err


def test_a_trace_observation_of_a_node_the_header_does_not_have(tmp_path, capsys):
    path = trace_with_header(tmp_path, nodes=[{"id": "Z"}, {"id": "B"}])
    assert "t.jsonl:2: node: unknown node 'A'" in error_of(capsys, "check-trace", path)


def test_semi_sync_counters_come_together(tmp_path, capsys):
    assert main(["simulate", str(REPO / "spec" / "histories" / "ss-counters.jsonl"), "--out", str(tmp_path / "t.jsonl")]) == 0
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    n = next(n for n, s in enumerate(lines) if '"Rpl_semi_sync_master_no_tx"' in s)
    lines[n] = lines[n].replace('"Rpl_semi_sync_master_no_tx"', '"no_tx"')
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    assert f"t.jsonl:{n + 1}: variables: 'Rpl_semi_sync_master_no_tx' is a dependency" in error_of(capsys, "check-trace", str(tmp_path / "t.jsonl"))


@pytest.mark.parametrize("json_text,where", [('"x\\ud800"', "results.json: seed: a lone surrogate"),
                                             ('{"\\udfff": 1}', 'results.json: seed."\\\\udfff": a lone surrogate')])
def test_a_lone_surrogate_is_no_character(tmp_path, capsys, json_text, where):
    path = tmp_path / "results.json"
    path.write_text('{"schema": "replcheck.results/1", "rows": [], "seed": %s}' % json_text)
    assert where in error_of(capsys, "report", str(path), "--out", str(tmp_path / "r"))
    path.write_text('\n"\\ud800"')  # the whole document: no field, so its line
    assert "results.json:2: a lone surrogate" in error_of(capsys, "report", str(path))
    path.write_text('{"schema": "replcheck.results/1", "rows": [], "a key": "\\ud800"}')  # quoted: one field
    assert 'results.json: "a key": a lone surrogate' in error_of(capsys, "report", str(path))


def test_broken_own_crosscheck_rules_are_replcheck_s_fault(tmp_path, monkeypatch):
    """The cross-check rules are replcheck's own: a fault in them is not the user's bad input."""
    from replcheck import crosscheck

    (tmp_path / "crosscheck.toml").write_text('[[rule]]\nid = "x"\n')
    monkeypatch.setattr(crosscheck, "SPEC", tmp_path)
    crosscheck.rules.cache_clear()
    try:
        with pytest.raises(io.SpecError, match=r"crosscheck.toml: rule\[0\].aspects: missing"):
            crosscheck.rules()
    finally:
        monkeypatch.undo()
        crosscheck.rules.cache_clear()


def test_broken_own_scenarios_are_an_internal_error(tmp_path, capsys, monkeypatch):
    from replcheck import scenarios

    (tmp_path / "conformance.toml").write_text('[[scenario]]\nname = "x"\n')
    monkeypatch.setattr(scenarios, "SPEC", tmp_path)
    assert main(["requirements"]) == 3
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("replcheck: internal error:") and "conformance.toml: scenario[0]: missing history" in line


@pytest.mark.parametrize("command", [["report", "r.json"], ["verify"], ["simulate", "h.jsonl"], ["campaign"],
                                     ["conform", "--server", "mariadb"], ["replay", "1", "2", "--system", "model:wl344"],
                                     ["shrink", "h.jsonl", "--system", "model:wl344"]])
def test_an_empty_out_is_refused_not_the_current_directory(tmp_path, capsys, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    assert "--out: an empty file name" in error_of(capsys, *command, "--out", "")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("field", ["when", "last", "server_id", "ict"])
def test_an_event_line_without_a_field_the_properties_read_is_refused(tmp_path, capsys, field):
    """Found by the long fuzzer (seed 7, case 18258): a relay line without `when` crashed WL1720.HEADER."""
    lines = main_trace_lines(tmp_path)
    n, line = next((i, json.loads(raw)) for i, raw in enumerate(lines) if json.loads(raw).get("kind") == "relay")
    del line[field]
    lines[n] = json.dumps(line)
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    assert f"t.jsonl:{n + 1}: {field}: missing (required)" in error_of(capsys, "check-trace", str(tmp_path / "t.jsonl"))


def test_a_counter_skip_without_the_event_it_names_is_refused(tmp_path, capsys):
    """Found by the long fuzzer (seed 7, case 89470): a skip line without `type` crashed WL3464.SKIP_GROUP."""
    lines = main_trace_lines(tmp_path)
    skip = {"t": json.loads(lines[-1])["t"], "kind": "skip", "node": "B", "trx": "t1", "gtid": None, "idx": 0,
            "reason": "sql_slave_skip_counter", "relay_file": "relay.000001", "relay_pos": 4}
    (tmp_path / "t.jsonl").write_text("\n".join([*lines, json.dumps(skip)]) + "\n")
    assert f"t.jsonl:{len(lines) + 1}: type: missing (required)" in error_of(capsys, "check-trace", str(tmp_path / "t.jsonl"))
    skip.update(type="GTID_LOG_EVENT")
    (tmp_path / "t.jsonl").write_text("\n".join([*lines, json.dumps(skip)]) + "\n")
    assert main(["check-trace", str(tmp_path / "t.jsonl")]) in (0, 1)  # judged, whatever the verdicts


def test_a_commit_whose_table_is_not_a_name_is_refused(tmp_path, capsys):
    from replcheck import systems

    text = io.dumps_lines(*systems.get("model:wl344").run(io.load_history(REPO / "spec" / "histories" / "flt-binlog-db.jsonl")))
    lines = text.split("\n")
    n = next(i for i, line in enumerate(lines) if '"kind": "commit"' in line and '"table": "' in line)
    doc = json.loads(lines[n])
    lines[n] = json.dumps({**doc, "table": [1]})  # a traceback in the filter checks, found by the fuzzer
    (tmp_path / "t.jsonl").write_text("\n".join(lines))
    assert f"t.jsonl:{n + 1}: table: an array is not of type 'string'" in error_of(capsys, "check-trace", str(tmp_path / "t.jsonl"))
