"""`replcheck campaign` on Spark: the table, the findings, reproduction of a finding, resumption
after SIGKILL, bad input. One SparkSession for the module (the JVM takes seconds to start)."""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S

from replcheck import campaign, cli, coverage, crosscheck, io, provenance, report, systems
from replcheck.investigate import findings
from replcheck.properties.core import PROPERTIES

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
SYSTEMS = ("model:wl7318", "mutant:start-timestamp")  # WL#7318 drawback 2: its bug shows in seed 0's first 12 Histories (generator 16)
PLAN = campaign.Plan(histories=12, seed=0, systems=SYSTEMS, chunk=4)
# The group-ID model and its halt rule switched off: the replay shows in two Histories of seed 254 (generator 16).
GROUPID = campaign.Plan(histories=12, seed=254, systems=("model:groupid", "mutant:no-halt-on-lower-id"), chunk=6)


@pytest.fixture(scope="module")
def spark():
    with campaign.spark_session("local[2]") as session:
        yield session


@pytest.fixture(scope="module")
def mutant_campaign(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign") / "c"
    lines: list[str] = []
    summary = campaign.run(PLAN, out, spark=spark, emit=lines.append)
    return out, summary, lines, spark.read.parquet(str(out / "table"))


def test_the_table_has_a_row_per_history_and_system_and_details_only_for_violations_and_differences(mutant_campaign):
    out, summary, lines, table = mutant_campaign
    histories = table.where("kind = 'history'")
    assert histories.count() == PLAN.histories * len(SYSTEMS)
    assert histories.select("index", "system").distinct().count() == histories.count()
    for h in histories.collect():  # every requirement in exactly one list; what was judged has its instance count
        assert sorted(h["passed"] + h["violated"] + h["not_exercised"]) == sorted(p.requirement for p in PROPERTIES)
        assert set(h["checks"]) == set(h["passed"] + h["violated"]) and all(n > 0 for n in h["checks"].values())
        assert h["checked"] == sum(h["checks"].values()) and h["history_digest"].startswith("sha256:")
        assert h["verdict"] == ("violated" if h["violated"] else "pass" if h["passed"] else "not_exercised")
    violations = table.where("kind = 'violation'").collect()
    assert {(v["index"], v["system"], v["requirement"]) for v in violations} == {
        (h["index"], h["system"], r) for h in histories.collect() for r in h["violated"]}
    assert all(v["trace_digest"] and v["reproduce"] and v["witness"] for v in violations)
    assert {h["index"]: h["findings"] for h in histories.where("system = 'mutant:start-timestamp'").collect()} == {
        i: sum(v["finding"] for v in violations if v["index"] == i and v["system"] == "mutant:start-timestamp")
        for i in range(PLAN.histories)}
    # each chunk's counts add up its History rows' lists
    counts = table.where("kind = 'counts'").groupBy("system", "requirement", "verdict").sum("histories", "checked").collect()
    added: dict[tuple, list] = {}
    for h in histories.collect():
        for status, column in campaign.LISTS.items():
            for requirement in h[column]:
                n = added.setdefault((h["system"], requirement, status), [0, 0])
                n[0] += 1
                n[1] += h["checks"].get(requirement, 0)
    assert {(c["system"], c["requirement"], c["verdict"]): [c["sum(histories)"], c["sum(checked)"]] for c in counts} == added
    assert {(r["system"], r["requirement"]) for r in summary["rows"]} == {(s, p.requirement) for s in SYSTEMS for p in PROPERTIES}
    assert {r["chunk"] for r in table.select("chunk").distinct().collect()} == {0, 1, 2}
    assert table.where(f"seed <> {PLAN.seed}").count() == 0
    differences = table.where("kind = 'difference'").collect()
    assert differences and all(d["other_system"] == "mutant:start-timestamp" for d in differences)
    # the mutant's deviation is no rule's business: the apply times it changes are findings
    unexpected = [d for d in differences if d["verdict"] == "unexpected"]
    assert any(d["requirement"] == "crosscheck:apply" for d in unexpected)
    assert all(d["finding"] and d["reproduce"].startswith(f"replcheck explain {PLAN.seed} ") for d in unexpected)
    rules = {r.id for r in crosscheck.rules()}
    assert all(d["expected"].split(":")[0] in rules and not d["finding"] for d in differences if d["verdict"] == "expected")
    assert summary["campaign"]["rows"] == table.count()
    assert json.loads((out / "summary.json").read_text()) == summary
    assert lines[-1].startswith("histories 12/12 (") and "findings" in lines[-1]


def test_the_campaign_finds_the_mutant_and_no_model_finding(mutant_campaign):
    _, summary, _, table = mutant_campaign
    assert summary["campaign"]["mutants"]["mutant:start-timestamp"]["found_by"] == ["WL7318.F2"]
    kinds = {(f["kind"], f["system"]) for f in summary["findings"]}
    assert ("mutant found", "mutant:start-timestamp") in kinds
    assert ("unexpected cross-check difference", "model:wl7318 vs mutant:start-timestamp") in kinds
    assert table.where("finding AND system = 'model:wl7318' AND kind = 'violation'").count() == 0
    failing = table.where("finding").collect()
    assert failing and all(r["reproduce"] for r in failing)  # every failing row says how to reproduce it
    # requirement coverage from the table: the Histories per family, and WL7318.F2 exercised where it was judged
    cov = summary["coverage"]
    assert sum(cov["histories"].values()) == PLAN.histories
    f2 = next(r for r in cov["requirements"] if r["requirement"] == "WL7318.F2")
    judged = table.where("kind = 'history' AND (array_contains(passed, 'WL7318.F2') OR array_contains(violated, 'WL7318.F2'))"
                         ).select("index").distinct().count()
    assert f2["histories"] == judged > 0


def test_the_summary_counts_the_conditions_the_checks_reached(mutant_campaign):
    """Per requirement with distinct conditions, the Histories in which a system's check reached each:
    the table's `reached` adds up to what judging the Histories here gives (it used to print 0s)."""
    from replcheck.generate import generate
    from replcheck.properties.judge import judge

    _, summary, _, _ = mutant_campaign
    expected = coverage.Coverage()
    for index in range(PLAN.histories):
        history = generate(PLAN.seed, index)
        family = history["header"]["name"][len("gen-"):].rsplit("-", 2)[0]
        expected.add(family, [v for name in SYSTEMS for v in judge(systems.get(name), history).verdicts])
    want = {r["requirement"]: r["conditions"] for r in expected.as_dict()["requirements"] if r["conditions"]}
    got = {r["requirement"]: r["conditions"] for r in summary["coverage"]["requirements"] if r["conditions"]}
    assert got == want and any(n for c in want.values() for n in c.values()), want


def test_a_groupid_campaign_finds_the_halt_rule_off_and_nothing_on_the_model(spark, tmp_path):
    summary = campaign.run(GROUPID, tmp_path / "g", spark=spark, emit=lambda _: None)
    table = spark.read.parquet(str(tmp_path / "g" / "table"))
    found = summary["campaign"]["mutants"]["mutant:no-halt-on-lower-id"]["found_by"]
    assert set(found) == {"GGID.RECOVERY.EXACTLY_ONCE", "GGID.RECOVERY.HALT"}
    replayed = table.where("finding AND system = 'mutant:no-halt-on-lower-id' AND requirement = 'GGID.RECOVERY.EXACTLY_ONCE'")
    assert {r["family"] for r in replayed.collect()} == {"groupid"} and replayed.count() >= 2
    # the model's verdicts (which do not depend on the other system) have no finding at this N
    assert table.where("system = 'model:groupid' AND kind = 'violation' AND finding").count() == 0
    assert table.where("system = 'model:groupid' AND kind = 'history' AND exists(passed, r -> r LIKE 'GGID.%')").count() > 0
    # the mutant's deviation from the model is no rule's business: every such difference is a finding
    differences = table.where("kind = 'difference' AND family = 'groupid'").collect()
    assert differences and all(d["verdict"] == "unexpected" and d["finding"] for d in differences)
    assert {d["index"] for d in differences} <= {r["index"] for r in table.where("finding AND kind = 'violation'").collect()}


def test_replay_shrink_and_explain_work_on_the_finding(mutant_campaign, tmp_path, capsys):
    _, _, _, table = mutant_campaign
    row = table.where("finding AND requirement = 'WL7318.F2'").orderBy("index").first()
    seed = str(PLAN.seed)
    assert row["reproduce"].startswith(f"replcheck replay {seed} {row['index']} --system mutant:start-timestamp")
    # replay: History and Trace byte for byte, as the Spark task made them
    assert cli.main(["replay", seed, str(row["index"]), "--system", row["system"], "--out", str(tmp_path / "replays")]) == 1
    history = tmp_path / "replays" / f"{seed}-{row['index']}.history.jsonl"
    trace = tmp_path / "replays" / f"{seed}-{row['index']}.mutant-start-timestamp.trace.jsonl"
    assert systems.history_digest(io.load_history(history)) == row["history_digest"]
    assert campaign._digest(trace.read_text()) == row["trace_digest"]
    out = capsys.readouterr().out
    assert row["history_digest"] in out and "violated WL7318.F2" in out
    # shrink: fewer operations, still violating the same requirement, printed as timed steps
    small = tmp_path / "small.jsonl"
    assert cli.main(["shrink", seed, str(row["index"]), "--system", row["system"], "--requirement", "WL7318.F2",
                     "--out", str(small)]) == 1
    out = capsys.readouterr().out
    shrunk = io.load_history(small)
    assert len(shrunk["ops"]) < len(io.load_history(history)["ops"])
    assert f"{len(shrunk['ops']):3}. " in out and " s  A  trx " in out
    assert "WL7318.F2" in {v.requirement for v in findings(shrunk, row["system"])}
    # explain: the requirement's text, the witnessing observations; the two traces side by side
    assert cli.main(["explain", str(small), "--system", row["system"], "--requirement", "WL7318.F2"]) == 0
    out = capsys.readouterr().out
    assert "The delay begins at the transaction's commit on the immediate master" in out
    assert "trace:" in out and '"kind": "apply"' in out
    assert cli.main(["explain", str(small), "--system", "model:wl7318", "--other", row["system"]]) == 0
    out = capsys.readouterr().out
    assert "UNEXPECTED apply difference" in out and "no rule explains it (the systems differ in: mutants" in out
    assert "model:wl7318" in out and " | " in out  # two columns, differing lines marked


def test_report_counts_the_campaign_as_a_source(mutant_campaign):
    out, _, _, _ = mutant_campaign
    document = report.build_report(report.load_results([out]))
    assert "campaign:mutant:start-timestamp" in document["sources"]
    f2 = next(r for r in document["requirements"] if r["id"] == "WL7318.F2")
    cell = f2["verdicts"]["campaign:mutant:start-timestamp"]
    assert cell["status"] == "violated" and cell["expected"] == "violated"  # a mutant is a known bug
    assert sum(cell["counts"].values()) == PLAN.histories
    assert cell["witnesses"][0]["reproduce"].startswith(f"replcheck replay {PLAN.seed} ")
    assert sum(f2["verdicts"]["campaign:model:wl7318"]["counts"].values()) == PLAN.histories


def _sorted_rows(spark, path: Path) -> list:
    df = spark.read.parquet(str(path))
    return df.orderBy(*(c for c, t in df.dtypes if not t.startswith("map"))).collect()  # a map has no order


def test_a_campaign_killed_mid_run_resumes_to_the_same_table(spark, tmp_path):
    """SIGKILL a campaign's whole process group (driver, JVM, Python workers) as soon as its
    first wave has committed, re-run it with the same arguments, compare with an uninterrupted run."""
    args = [sys.executable, "-m", "replcheck.cli", "campaign", "--histories", "48", "--chunk", "4", "--master", "local[1]",
            "--out", str(tmp_path / "killed")]
    # its Spark directory under tmp_path: a killed run cannot remove its own
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True, env=env)
    table = tmp_path / "killed" / "table"
    deadline = time.monotonic() + HANG_GUARD_S  # a bound against a hang: a chunk's time is the machine's load
    while not campaign.done_chunks(tmp_path / "killed") and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = campaign.done_chunks(tmp_path / "killed")
    assert 0 < len(done) < 12, f"not killed mid-run: {len(done)} of 12 chunks done"
    clean = tmp_path / "clean"
    plan = campaign.Plan(48, 0, campaign.DEFAULT_SYSTEMS, 4)
    summary = campaign.run(plan, clean, spark=spark, emit=lambda _: None)
    lines: list[str] = []
    resumed = campaign.run(plan, tmp_path / "killed", spark=spark, emit=lines.append)  # the same arguments
    assert lines[0] == f"resuming: {len(done)} of 12 chunks already in {table}"
    assert _sorted_rows(spark, table) == _sorted_rows(spark, clean / "table")
    assert resumed["findings"] == summary["findings"] and resumed["rows"] == summary["rows"]


@pytest.mark.parametrize("argv, message", [
    (["--histories", "0"], "--histories: 0 is not positive"),
    (["--systems", "model:wl344,model:nope"], "unknown system 'model:nope'"),
    (["--master", "lokal[2]"], "--master: 'lokal[2]' is not a Spark master URL"),
    (["--chunk", "0"], "--chunk: 0 is not positive"),
    (["--families", "delay,nope"], "unknown family 'nope'"),
    (["--conf", "spark.ui.enabled"], "--conf: 'spark.ui.enabled' is not KEY=VALUE"),
    (["--out", "ftp://host/c"], "--out ftp://host/c: scheme 'ftp' is not one of file, s3, s3a, gs, hdfs"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys):
    assert cli.main(["campaign", "--out", str(tmp_path / "c"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "c").exists()  # nothing written


def test_families_are_part_of_a_campaigns_identity(tmp_path):
    """Another draw of families is another campaign; a campaign.json from before --families (no such
    field) is all the families' and resumes."""
    plan = campaign.Plan(1, 0, ("model:wl344",), 1)
    delay = dataclasses.replace(plan, families=("delay",))
    campaign._check_out(tmp_path / "d", delay)
    campaign._check_out(tmp_path / "d", delay)  # the same: resumed
    with pytest.raises(io.InputError, match="plan.families"):
        campaign._check_out(tmp_path / "d", plan)
    campaign._check_out(tmp_path / "old", plan)
    meta = tmp_path / "old" / "campaign.json"
    old = json.loads(meta.read_text())
    del old["plan"]["families"]
    meta.write_text(json.dumps(old))
    campaign._check_out(tmp_path / "old", plan)
    # a table of other columns (before `reached`: no `table` field) is not resumed
    del old["plan"]["table"]
    meta.write_text(json.dumps(old))
    with pytest.raises(io.InputError, match="plan.table: a table of other columns"):
        campaign._check_out(tmp_path / "old", plan)


def test_a_table_begun_by_other_code_is_not_resumed(tmp_path):
    """Rows judged by two versions of the models or properties in one table reproduce neither: a
    campaign.json of other code (or of a version that wrote none) is refused, and left as it was."""
    plan = campaign.Plan(1, 0, ("model:wl344",), 1)
    campaign._check_out(tmp_path / "c", plan)
    meta = tmp_path / "c" / "campaign.json"
    began = json.loads(meta.read_text())
    assert began["code"] == provenance.code_digest()
    campaign._check_out(tmp_path / "c", plan)  # the same code: resumed
    for other in ({**began, "code": "sha256:0000000000000000"}, {k: v for k, v in began.items() if k != "code"}):
        meta.write_text(json.dumps(other))
        with pytest.raises(io.InputError, match=r"campaign\.json: code: .* another version of replcheck"):
            campaign._check_out(tmp_path / "c", plan)
        assert json.loads(meta.read_text()) == other


def test_a_task_that_raises_is_an_internal_error_with_the_tasks_own_cause(spark, tmp_path, capsys, monkeypatch):
    # the task, not the driver, meets the unknown system (run() takes a Plan as given): its error
    # comes back as Spark's PythonException, which alone said nothing but its name
    plan = dataclasses.replace(PLAN, histories=1, chunk=1, systems=("model:no-such-system",))
    with pytest.raises(campaign.TaskFailed) as failed:
        campaign.run(plan, tmp_path / "c", spark=spark, emit=lambda line: None)
    assert "InputError: system: unknown system 'model:no-such-system'" in str(failed.value)
    assert cli._failed(failed.value) == 3
    err = capsys.readouterr().err
    assert "unknown system 'model:no-such-system'" in err and "replcheck: internal error" in err


def test_an_out_dir_of_another_campaign_is_refused(mutant_campaign, capsys):
    out, _, _, _ = mutant_campaign
    assert cli.main(["campaign", "--histories", "13", "--chunk", "4", "--systems", ",".join(SYSTEMS), "--out", str(out)]) == 2
    assert "holds a campaign with other arguments" in capsys.readouterr().err


def test_the_table_reads_with_pyarrow_alone(mutant_campaign):
    """The schema docs/campaigns.md documents, without Spark: Parquet files under table/chunk=K/."""
    pq = pytest.importorskip("pyarrow.parquet")
    out, summary, _, _ = mutant_campaign
    table = pq.read_table(out / "table").to_pylist()
    assert len(table) == summary["campaign"]["rows"]
    names = {c for c, _ in campaign.COLUMNS}
    assert set(table[0]) == names
    mutant = [r for r in table if r["kind"] == "history" and r["system"] == "mutant:start-timestamp"]
    assert len(mutant) == PLAN.histories and sum("WL7318.F2" in r["violated"] for r in mutant) >= 1
    assert all(dict(r["checks"]).keys() == set(r["passed"] + r["violated"]) for r in mutant)
