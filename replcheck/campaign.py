"""`replcheck campaign`: N generated Histories x systems x properties, cross-checked, on Spark.

History i of seed S is `generate(S, i)` (replcheck/generate.py), so a campaign needs no input
data and any row can be reproduced from (seed, index, system). The N indices are cut into
fixed chunks; each chunk is one Spark task, and each wave of chunks one Spark job. A task writes
its chunk's rows as one Parquet file, `OUT/table/chunk=K/part-00000.parquet` (a partitioned
table), which appears whole or not at all, on a local disk as on an object store (outfs.py). A
campaign killed at any point and re-run with the same arguments skips the chunks whose files
exist and redoes the others, so no row is lost or duplicated and the table equals an
uninterrupted run's.

Rows (the schema is in docs/campaigns.md, "Results"): one per (index, system) with the
requirements it passed, violated and did not exercise; one per violation, with the first
witness and what reproduces it; one per cross-check difference between two systems
(crosscheck.py); per chunk, the counts the summary adds up. A History passes most requirements
on most systems, so its passes are names in a list, not rows. A finding is a violation the system does not declare (for a mutant, the bug it re-creates) or
an unexpected cross-check difference. On a cluster: docs/cluster.md.

A real server (server:mariadb-X.Y, replcheck.systems) is a system like the models: its campaign's
Histories are generated for it (the plan's `target`, part of its identity), each runs on servers of
its own (the harness: loopback ports and directories of its own, torn down whatever happens), and
its Trace is cross-checked against the other systems' Traces of the History as it ran there (its
times scaled, its ops as late as they started). A task runs `groups` of its chunk's Histories at
once: a server group mostly waits for time to pass.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import threading
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import asdict, dataclass, replace
from typing import Callable, Iterator

from replcheck import __version__, coverage, io, outdir, outfs, systems, targets
from replcheck.outfs import Out
from replcheck.provenance import code_digest
from replcheck.progress import Progress as Line
from replcheck.spark import (ClusterError, TaskFailed, await_executors, cluster_cause, first_line, own_session as spark_session,
                             task_failure)
from replcheck.generate import GENERATOR, generate
from replcheck.harness.groups import in_groups
from replcheck.properties.core import INCONCLUSIVE, NOT_EXERCISED, PASS, VIOLATED
from replcheck.results import Finding, FindingKind, excused

DEFAULT_SYSTEMS = ("model:wl344", "model:wl7318", "model:after-sync", "model:after-commit")
DEFAULT_CHUNK = 250
SERVER_CHUNK = 4  # a real server's History takes seconds, a model's milliseconds
# Server groups a task runs at once (the harness's servers mostly sleep through the History's
# time): 2 per core keeps this 2-core machine's cores busy without starving the servers' polls.
DEFAULT_GROUPS = 2
TABLE = "replcheck.campaign-table/4"  # 2: `reached`, the conditions each requirement's check reached; 3: `inconclusive`;
# 4: `trace`, a real server's Trace of a History with a finding
# Spark master URLs (https://spark.apache.org/docs/latest/submitting-applications.html#master-urls)
MASTER = re.compile(r"local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|local-cluster\[[0-9]+,[0-9]+,[0-9]+\]|"
                    r"(spark|mesos|k8s)://\S+|yarn")
COLUMNS = (("index", "long"), ("seed", "long"), ("family", "string"), ("kind", "string"), ("system", "string"),
           ("other_system", "string"), ("requirement", "string"), ("verdict", "string"), ("checked", "int"),
           ("expected", "string"), ("finding", "boolean"), ("witness", "string"), ("reproduce", "string"),
           ("history_digest", "string"), ("trace_digest", "string"), ("passed", "array<string>"),
           ("violated", "array<string>"), ("not_exercised", "array<string>"), ("inconclusive", "array<string>"),
           ("checks", "map<string,int>"),
           ("reached", "map<string,array<string>>"), ("findings", "int"), ("histories", "int"), ("trace", "string"),
           ("chunk", "int"))
COLUMN = {name: i for i, (name, _) in enumerate(COLUMNS)}  # a row's positions
FINDING = COLUMN["finding"]  # what the tasks and benches read
NO_LISTS = (None,) * 9  # a detail row leaves the History row's columns, passed .. trace, null
# a History row's list column of each verdict (inconclusive: a real server's sampling too coarse for the check)
LISTS = {PASS: "passed", VIOLATED: "violated", NOT_EXERCISED: "not_exercised", INCONCLUSIVE: "inconclusive"}


class CampaignError(Exception):
    """Bad arguments or an output directory that holds another campaign: exit 2."""


@dataclass(frozen=True)
class Plan:
    histories: int
    seed: int
    systems: tuple[str, ...]
    chunk: int = DEFAULT_CHUNK
    generator: str = GENERATOR
    families: tuple[str, ...] | None = None  # the generator's, all of them (campaign.json before --families has none)
    table: str = TABLE  # the table's columns: a campaign written with others is not resumed
    target: str | None = None  # the server the Histories are generated for (replcheck.targets); None: the models

    def chunks(self) -> list[tuple[int, int, int]]:
        """(chunk, first index, end index): fixed by the arguments alone."""
        return [(k, start, min(start + self.chunk, self.histories)) for k, start in enumerate(range(0, self.histories, self.chunk))]


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def reproduce(seed: int, index: int, system: str, requirement: str = "", other: str = "",
              families: tuple[str, ...] | None = None, target: str | None = None) -> str:
    """The commands that regenerate the History (from the same families, for the same server) and
    show the finding; for a real server's, the same on the server and on its flavour model."""
    drawn = f" --families {','.join(families)}" if families else ""
    drawn += f" --target {target}" if target else ""
    if other:
        return f"replcheck explain {seed} {index} --system {system} --other {other}{drawn}"
    flavour = systems.flavour_of(system)
    return " ; ".join(f"replcheck replay {seed} {index} --system {name}{drawn}"
                      + (f" && replcheck explain {seed} {index} --system {name} --requirement {requirement}{drawn}" if requirement else "")
                      for name in (system, *([flavour.name] if flavour else [])))


def run_history(seed: int, index: int, names: tuple[str, ...], chunk: int = 0,
                families: tuple[str, ...] | None = None, target: str | None = None) -> list[tuple]:
    """Every row of one History (COLUMNS): what each Spark task does, and what the bench runs alone
    (which may draw from some of the generator's families only, for a server `target`)."""
    with systems.cycles_uncollected():  # as for one simulation: a History's work frees what it allocates
        return _history_rows(generate(seed, index, families, target), seed, index, names, chunk, families, target)


def _history_rows(history: dict, seed: int, index: int, names: tuple[str, ...], chunk: int,
                  families: tuple[str, ...] | None, target: str | None = None) -> list[tuple]:
    from replcheck import crosscheck
    from replcheck.properties.judge import judge

    # gen-FAMILY-SEED-INDEX, and -SERVER when generated for one (generate.py)
    family = history["header"]["name"][len("gen-"):].removesuffix(f"-{target.partition(':')[2]}" if target else "").rsplit("-", 2)[0]
    hdigest = systems.history_digest(history)
    rows, facts, judged, bodies, tallies = [], {}, {}, {}, {}

    def judgement(name: str):
        if name not in judged:
            system = systems.get(name)
            # a system whose run is one already judged but for its name is not run again
            twin = next((n for n in judged if systems.same_runs(systems.get(n), system)), None)
            judged[name] = judged[twin].of(system) if twin else judge(system, history, trace=systems.run(system, history, hdigest))
        return judged[name]

    for name in names:
        system, j = systems.get(name), judgement(name)
        # a Trace equal to one of this History's before, but for the system's name, has its facts and lines
        twin = j.same_as if j.same_as in facts else None
        facts[name] = replace(facts[twin], header=j.trace.header) if twin else crosscheck.facts(*j.trace)
        # A mutant shows its bug only where its base model, on the same History, holds.
        base = judgement(system.declares.base) if system.declares.base and j.violations else None
        why = excused(j, base)  # each violation that is no finding, and why (declared, or the base shows it too)
        # what `replay` must reproduce byte for byte; only a failing row needs it (it costs 10%)
        tdigest = None
        if j.violations:
            body = bodies[name] = bodies.get(twin) or io.dumps_rows(j.trace.observations)
            tdigest = _digest(io.dumps_lines(j.trace.header, ()) + body)
        # a twin's verdicts are its twin's: so are their lists
        lists, checks, reached = tallies[name] = tallies.get(twin) or _tally(j.verdicts)
        details = []
        for v in j.violations:
            w = v.witnesses[0]
            witness = f"trace:{','.join(map(str, w.lines))}: {w.message}" if w.lines else w.message
            details.append((index, seed, family, "violation", name, None, v.requirement, VIOLATED, v.checked,
                            why.get(v.requirement, ""), v.requirement not in why, witness,
                            reproduce(seed, index, name, v.requirement, families=families, target=target), hdigest, tdigest,
                            *NO_LISTS, chunk))
        worst = VIOLATED if lists[VIOLATED] else PASS if lists[PASS] else INCONCLUSIVE if lists[INCONCLUSIVE] else NOT_EXERCISED
        rows.append((index, seed, family, "history", name, None, None, worst, sum(checks.values()), None, None, None, None,
                     hdigest, tdigest, *(lists[status] for status in LISTS), checks, reached, sum(d[FINDING] for d in details), None,
                     None, chunk))
        rows += details
    for a, b in itertools.combinations(names, 2):
        pair = systems.traces_to_compare(history, a, b, {n: j.trace for n, j in judged.items()})
        for d in crosscheck.compare(*(facts[n] if t is judged[n].trace else crosscheck.facts(*t) for n, t in zip((a, b), pair))):
            witness = (f"{d.aspect} on {d.node}, {d.subject}: {a} {d.left}; {b} {d.right}"
                       + (f" (+{d.knock_on} later on {d.node})" if d.knock_on else ""))
            rows.append((index, seed, family, "difference", a, b, f"crosscheck:{d.aspect}",
                         "expected" if d.expected else "unexpected", d.knock_on, f"{d.rule}: {d.reason}" if d.expected else "",
                         not d.expected, witness, None if d.expected else reproduce(seed, index, a, other=b, families=families, target=target),
                         hdigest, None,
                         *NO_LISTS, chunk))
    return _keep_server_traces(rows, judged)


def _tally(verdicts) -> tuple[dict[str, list[str]], dict[str, int], dict[str, list[str]]]:
    """A History row's requirements by verdict (LISTS), instances judged and conditions reached, each
    requirement's."""
    lists: dict[str, list[str]] = {status: [] for status in LISTS}
    checks, reached = {}, {}
    for v in verdicts:
        lists[v.status].append(v.requirement)  # a status without a list (inconclusive) is no campaign's: exit 3
        if v.checked:
            checks[v.requirement] = v.checked
        if v.conditions:
            reached[v.requirement] = list(v.conditions)
    return lists, checks, reached


def _keep_server_traces(rows: list[tuple], judged: dict) -> list[tuple]:
    """A real server's Trace of a History where it shows a finding goes into its History row: a
    run on real servers is not reproduced byte for byte (their timing is the machine's), so a
    finding that a replay does not show again is triaged on the Trace that showed it
    (`replay --kept`)."""
    finding, system, other = FINDING, COLUMN["system"], COLUMN["other_system"]
    showing = {row[name] for row in rows if row[finding] for name in (system, other) if row[name]}
    trace = COLUMN["trace"]
    return [row[:trace] + (io.dumps_lines(*judged[row[system]].trace),) + row[trace + 1:]
            if row[COLUMN["kind"]] == "history" and row[system] in showing and systems.get(row[system]).kind == "server" else row
            for row in rows]


def _rows_of(plan: Plan, k: int, indices: range, groups: int) -> Iterator[list[tuple]]:
    """Each History's rows, in index order; `groups` at once when the plan has a real server."""
    def rows(index: int) -> list[tuple]:
        return run_history(plan.seed, index, plan.systems, k, plan.families, plan.target)
    yield from in_groups(rows, indices, groups if any(map(systems.is_server, plan.systems)) else 1)


def run_chunk(plan: Plan, chunk: tuple[int, int, int], groups: int = 1) -> Iterator[tuple]:
    """The chunk's rows, then its counts: a row per (system, requirement, verdict) with how many
    of its Histories gave it and the instances judged on them. The summary adds these up instead
    of unfolding every History row's lists (which cost it minutes at a million Histories); written
    with the chunk's rows, they are there exactly when the chunk is."""
    from replcheck.features import load_features

    load_features()
    k, start, end = chunk
    histories: Counter = Counter()
    checked: Counter = Counter()
    for history_rows in _rows_of(plan, k, range(start, end), groups):
        for row in history_rows:
            if row[COLUMN["kind"]] == "history":
                system, checks = row[COLUMN["system"]], row[COLUMN["checks"]]
                for status, column in LISTS.items():
                    for requirement in row[COLUMN[column]]:
                        histories[system, requirement, status] += 1
                        checked[system, requirement, status] += checks.get(requirement, 0)
            yield row
    for (system, requirement, status), n in sorted(histories.items()):
        row = dict(index=start, seed=plan.seed, kind="counts", system=system, requirement=requirement, verdict=status,
                   checked=checked[system, requirement, status], histories=n, chunk=k)
        yield tuple(row.get(name) for name, _ in COLUMNS)


# -- Spark ----------------------------------------------------------------------------------------
def schema():
    from pyspark.sql import types as T

    kinds = {"long": T.LongType(), "int": T.IntegerType(), "string": T.StringType(), "boolean": T.BooleanType(),
             "array<string>": T.ArrayType(T.StringType(), False), "map<string,int>": T.MapType(T.StringType(), T.IntegerType(), False),
             "map<string,array<string>>": T.MapType(T.StringType(), T.ArrayType(T.StringType(), False), False)}
    return T.StructType([T.StructField(n, kinds[t], nullable=n not in ("index", "seed", "kind", "system", "chunk"))
                         for n, t in COLUMNS])


def done_chunks(out: str | os.PathLike | Out) -> set[int]:
    return set(outfs.as_out(out).chunk_files())


def _open(out: str | os.PathLike | Out) -> Out:
    try:
        return outfs.as_out(out)
    except outfs.OutError as e:
        raise CampaignError(str(e)) from None
    except OSError as e:
        raise ClusterError(f"--out {out}: {first_line(str(e))}") from None


def _check_out(out: str | os.PathLike | Out, plan: Plan) -> None:
    """OUT holds this campaign (resume it), nothing (start it), or another one (refuse)."""
    out = _open(out)
    if out.local:
        outdir.place(out.path())  # a link, a file or the current directory is refused as every output directory is
    meta = out.path("campaign.json") if out.local else f"{out.uri}/campaign.json"
    wanted = asdict(plan) | {"systems": list(plan.systems), "families": plan.families and list(plan.families)}
    kind = out.kind()
    if kind == "file":
        raise CampaignError(f"--out {out}: not a directory")
    if kind is not None and out.kind("campaign.json") is not None:
        before = io.parse_json(out.read_text("campaign.json"), meta)
        before_plan = before.get("plan") if isinstance(before, dict) else None
        if not isinstance(before_plan, dict):
            raise io.InputError(meta, None, "plan", "missing or not an object: not a campaign directory; use another --out")
        for key, value in wanted.items():
            if key == "table" and before_plan.get(key) != value:
                columns = before_plan.get(key) or f"before {value}"
                raise io.InputError(meta, None, "plan.table", f"a table of other columns ({columns}): this version "
                                    "does not resume it; use another --out")
            if before_plan.get(key) != value:
                raise io.InputError(meta, None, f"plan.{key}", f"{before_plan.get(key)!r}, not {value!r}: "
                                    "holds a campaign with other arguments; use another --out")
        if set(before_plan) - set(wanted):
            raise io.InputError(meta, None, io.field_path("plan", [sorted(set(before_plan) - set(wanted))[0]]),
                                "unknown field: not this version's campaign")
        if before.get("code") != code_digest():
            raise io.InputError(meta, None, "code", f"{before.get('code')!r}, not {code_digest()!r}: its rows were made by "
                                "another version of replcheck's models, properties or harness; use another --out")
    elif kind == "dir" and not out.is_empty():
        raise CampaignError(f"{out}: exists and is not a campaign directory; use another --out")
    else:
        out.write_text("campaign.json", json.dumps({"schema": "replcheck.campaign/1", "replcheck": __version__,
                                                      "code": code_digest(), "plan": wanted}, indent=1))


def kept_trace(out: str | os.PathLike, seed: int, index: int, system: str) -> tuple[str, str, str]:
    """The Trace a campaign kept of History `index` on a real server `system` (`_keep_server_traces`):
    (where it was read, for errors; the History's digest; the Trace's lines). Read by the driver alone."""
    import pyarrow.parquet as pq

    where = _open(out)
    meta = where.path("campaign.json") if where.local else f"{where.uri}/campaign.json"
    if where.kind("campaign.json") is None:
        raise io.InputError(meta, None, "", "no such file: not a campaign directory")
    plan = io.parse_json(where.read_text("campaign.json"), meta).get("plan") or {}
    if plan.get("seed") != seed or system not in plan.get("systems", ()) or not 0 <= index < plan.get("histories", 0):
        raise io.InputError(meta, None, "plan", f"a campaign of seed {plan.get('seed')} on {','.join(plan.get('systems', ()))} "
                            f"with {plan.get('histories')} Histories: it holds no History {index} of seed {seed} on {system}")
    if plan.get("table") != TABLE:
        raise io.InputError(meta, None, "plan.table", f"{plan.get('table')}: a table of other columns keeps no Trace; {TABLE} does")
    name = f"{where}/table (History {index} on {system})"
    k = index // plan["chunk"]
    for path in where.chunk_files().get(k, ()):
        with where.fs.open_input_file(path) as f:
            rows = pq.read_table(f, columns=["index", "kind", "system", "history_digest", "trace"],
                                 filters=[("index", "=", index), ("kind", "=", "history"), ("system", "=", system)]).to_pylist()
        if rows and rows[0]["trace"] is None:
            raise io.InputError(name, None, "trace", "null: the campaign keeps a real server's Trace only of a History where it shows a finding")
        if rows:
            return name, rows[0]["history_digest"], rows[0]["trace"]
    raise io.InputError(name, None, "", f"no row: chunk {k} is not done (resume the campaign)")


def validate(histories: int, seed: int, names: list[str], master: str | None, chunk: int,
             families: tuple[str, ...] | None = None) -> Plan:
    if histories < 1:
        raise CampaignError(f"--histories: {histories} is not positive")
    if chunk < 1:
        raise CampaignError(f"--chunk: {chunk} is not positive")
    if not 0 <= seed < 2**63:  # the Parquet seed column is a signed 64-bit integer
        raise CampaignError(f"--seed: {seed} is not in 0..{2**63 - 1}")
    servers = [name for name in names if systems.is_server(name)]
    for name in names:
        if name not in systems.systems() and name not in servers:
            raise CampaignError(f"--systems: unknown system {name!r}; known: {', '.join(systems.systems())}, server:mariadb-X.Y")
    if len(set(names)) != len(names) or not names:
        raise CampaignError(f"--systems: {','.join(names)!r} must name each system once")
    if len(servers) > 1:
        raise CampaignError(f"--systems: {', '.join(servers)}: one real server per campaign (its Histories are drawn for it)")
    for name in servers:
        systems.get(name, "--systems")  # this machine's build is of that version (else bad input), or there is none (exit 3)
        if name not in targets.TARGETS:
            raise CampaignError(f"--systems: {name}: no generation target for it (targets: {', '.join(targets.TARGETS)})")
    if master is not None and not MASTER.fullmatch(master):
        raise CampaignError(f"--master: {master!r} is not a Spark master URL (local[N], local[*], spark://HOST:PORT, yarn, k8s://URL)")
    return Plan(histories, seed, tuple(names), chunk, families=families, target=servers[0] if servers else None)


class Progress:
    """Histories done of the total, rate, time left and findings so far: the progress line every long
    command draws (replcheck/progress.py), moved as the tasks finish chunks; the counts go to `emit`
    too once the last wave is done."""

    def __init__(self, plan: Plan, done: int, findings: int, sc, emit: Callable[[str], None], every_s: float = 1.0):
        self.plan, self.base, self.base_findings, self.emit, self.every_s = plan, done, findings, emit, every_s
        # the tasks add to these as each chunk finishes
        self.histories, self.findings = sc.accumulator(0), sc.accumulator(0)
        self.start = time.monotonic()
        self._stop = threading.Event()
        self._shown = (0, 0)
        self.bar = Line("campaign", plan.histories, "History", done=done)
        self._moving = threading.Lock()  # the ticking thread and the waves' ends both move the line
        self.bar.now(f"findings {findings}")

    def line(self) -> str:
        new = self.histories.value
        findings = self.base_findings + self.findings.value
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = new / elapsed
        done = self.base + new
        left = self.plan.histories - done
        eta = f", about {left / rate / 60:.1f} min left" if rate > 0 and left else ""
        shown = f"{rate:.1f}/s" if rate >= 1 else f"{rate * 3600:.0f}/h"  # a real server's few per minute
        return f"histories {done}/{self.plan.histories} ({shown}){eta}, findings {findings}"

    def show(self, force: bool = False) -> None:
        """The line moved by what finished since (the rate alone moving is no news); with force,
        the counts to `emit` as well."""
        with self._moving:
            counts = (self.histories.value, self.findings.value)
            if counts != self._shown:
                self.bar.now(f"findings {self.base_findings + counts[1]}")
                self.bar.done(counts[0] - self._shown[0])
                self._shown = counts
        if force:
            self.emit(self.line())

    def __enter__(self):
        def tick():
            while not self._stop.wait(self.every_s):
                self.show()
        threading.Thread(target=tick, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.bar.close()


def run(plan: Plan, out: str | os.PathLike | Out, master: str | None = "local[*]", verbose: bool = False, spark=None,
        emit: Callable[[str], None] | None = None, wave: int | None = None, conf: tuple[tuple[str, str], ...] = (),
        ui: bool = False, ship: str = "zip", groups: int = DEFAULT_GROUPS) -> dict:
    """Run (or resume) the campaign into OUT (a path or a URI, outfs.py); returns the summary (also
    OUT/summary.json). A failure of Spark or the cluster is a ClusterError naming its cause. `groups`:
    the real-server Histories each task runs at once."""
    emit = emit or io.progress("campaign")
    out = _open(out)
    try:
        _check_out(out, plan)
        out.remove_temporaries()
        started = time.monotonic()
        with ExitStack() as own:
            if spark is None:
                emit(f"starting Spark ({master or 'master from spark-submit'})")
                spark = own.enter_context(spark_session(master, verbose, conf=conf, ui=ui, ship=ship))
            try:
                summary = _run_spark(spark, plan, out, emit, wave, ui, groups)
            except Exception as e:  # read while the session lives: a captured exception's text asks its JVM
                if cause := cluster_cause(e):
                    raise ClusterError(cause) from None
                if failed := task_failure(e):  # a bug in a task: its own traceback says where, not "PythonException"
                    raise TaskFailed(f"a campaign task failed:\n{failed}") from None
                raise
        summary["campaign"]["seconds"] = round(time.monotonic() - started, 1)
        out.write_text("summary.json", json.dumps(summary, indent=1))
    except OSError as e:  # --out's filesystem: no such bucket, an endpoint that does not answer, no permission
        raise ClusterError(f"--out {out}: {first_line(str(e))}") from None
    except Exception as e:
        if cause := cluster_cause(e):
            raise ClusterError(cause) from None
        raise
    return summary


def _run_spark(spark, plan: Plan, out: Out, emit: Callable[[str], None], wave: int | None, ui: bool, groups: int) -> dict:
    table = f"{out.uri.rstrip('/')}/table"
    sc = spark.sparkContext
    if ui:
        emit(f"Spark UI: {sc.uiWebUrl}")
    await_executors(sc)
    done = done_chunks(out)
    pending = [c for c in plan.chunks() if c[0] not in done]
    done_histories = sum(end - start for k, start, end in plan.chunks() if k in done)
    findings = table_frame(spark, out).where("finding").count() if done else 0
    if done:
        emit(f"resuming: {len(done)} of {len(plan.chunks())} chunks already in {table}")
    per_wave = wave or max(4 * sc.defaultParallelism, 1)
    progress = Progress(plan, done_histories, findings, sc, emit)
    with progress:
        for w in range(0, len(pending), per_wave):
            _run_wave(spark, plan, pending[w:w + per_wave], out, progress, groups)
            progress.show(force=w + per_wave >= len(pending))
    df = table_frame(spark, out)
    summary = summarise(spark, plan, df, table)
    summary["coverage"] = coverage.of_table(df)
    summary["campaign"]["spark"] = {"master": sc.master, "application": sc.applicationId, "ui": sc.uiWebUrl}
    return summary


def _run_wave(spark, plan: Plan, chunks: list[tuple[int, int, int]], out: Out, progress: Progress, groups: int) -> None:
    """One Spark job: a task per chunk, which writes the chunk's file (outfs.py) and hands the
    driver its number only. The rows become Arrow columns at once, not pickled Python rows."""
    histories, findings = progress.histories, progress.findings
    spark_schema = schema()

    def task(ids):
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        arrow = to_arrow_schema(spark_schema)
        for batch in ids:
            for k in batch.column(0).to_pylist():
                chunk = chunks[k]
                rows = list(run_chunk(plan, chunk, groups))
                write_chunk(out, chunk[0], rows, arrow)
                histories.add(chunk[2] - chunk[1])
                findings.add(sum(bool(row[FINDING]) for row in rows))
                yield pa.record_batch([pa.array([chunk[0]], pa.int32())], names=["chunk"])

    # spark.range with as many partitions as elements: one chunk per task, as a retry redoes it whole
    spark.range(len(chunks), numPartitions=len(chunks)).mapInArrow(task, "chunk int").collect()


def table_frame(spark, out: Out):
    """The table as a DataFrame, its files read by the tasks through the layer that wrote them
    (Spark's own reader would need a Hadoop connector for the filesystem)."""
    files = sorted((k, path) for k, paths in out.chunk_files().items() for path in paths)
    spark_schema = schema()

    def task(ids):
        import pyarrow as pa
        import pyarrow.parquet as pq
        from pyspark.sql.pandas.types import to_arrow_schema

        arrow = to_arrow_schema(spark_schema)
        body = pa.schema([f for f in arrow if f.name != "chunk"])
        for batch in ids:
            for i in batch.column(0).to_pylist():
                k, path = files[i]
                with out.fs.open_input_file(path) as f:
                    rows = pq.read_table(f).select(body.names).cast(body)
                yield from rows.append_column(arrow.field("chunk"), pa.array([k] * len(rows), pa.int32())).to_batches()

    parts = max(1, min(len(files), 4 * spark.sparkContext.defaultParallelism))
    return spark.range(len(files), numPartitions=parts).mapInArrow(task, spark_schema)


def write_chunk(out: Out, k: int, rows: list[tuple], arrow=None) -> None:
    """Chunk `k`'s file of `rows` (run_chunk's tuples) in the table; `arrow`, the table's Arrow
    schema when the caller has it already."""
    import pyarrow as pa

    if arrow is None:
        from pyspark.sql.pandas.types import to_arrow_schema

        arrow = to_arrow_schema(schema())
    # the chunk is the file's folder (chunk=K), as a partitioned table has it
    out.write_chunk(k, pa.Table.from_batches([_batch(pa, arrow, rows)]).drop_columns(["chunk"]))


def _batch(pa, arrow, rows: list[tuple]):
    """The rows as one record batch of the table's Arrow schema (a map column takes its pairs)."""
    columns = list(zip(*rows))  # a chunk has at least a row per History and system
    maps = {i for i, (_, kind) in enumerate(COLUMNS) if kind.startswith("map")}
    return pa.RecordBatch.from_arrays(
        [pa.array([None if v is None else list(v.items()) for v in col] if i in maps else col, type=arrow.field(i).type)
         for i, col in enumerate(columns)], schema=arrow)


def summarise(spark, plan: Plan, df, table: str) -> dict:
    """The campaign as a results file (`replcheck report` reads it): one row per (system,
    requirement) with its counts, the findings with the first History that shows each."""
    from pyspark.sql import functions as F

    counts = (df.where("kind = 'counts'").groupBy("system", "requirement", "verdict")
              .agg(F.sum("histories").alias("n"), F.sum("checked").alias("checked"), F.count("*").alias("rows")).collect())
    keys = ("kind", "system", "other_system", "requirement", "verdict", "expected")
    groups = (df.where("finding OR expected <> ''").groupBy(*keys)
              .agg(F.count("*").alias("n"), F.min(F.struct("index", "witness", "reproduce")).alias("first"))
              .orderBy(*keys).collect())
    rows: dict[tuple[str, str], dict] = {}
    for r in sorted(counts, key=lambda r: (r["system"], r["requirement"], r["verdict"])):
        row = rows.setdefault((r["system"], r["requirement"]), {
            "source": "campaign", "system": r["system"], "history": f"campaign seed {plan.seed}, {plan.histories} histories",
            "requirement": r["requirement"], "status": "not_exercised", "checked": 0, "counts": {}, "witnesses": []})
        row["counts"][r["verdict"]] = r["n"]
        row["checked"] += r["checked"]
        row["status"] = min(row["status"], r["verdict"], key=["violated", "pass", "inconclusive", "not_exercised"].index)
    findings, differences, found, declared = [], [], {}, []
    for r in groups:
        f = r["first"]
        if r["kind"] == "difference":
            differences.append({"systems": [r["system"], r["other_system"]], "aspect": r["requirement"], "verdict": r["verdict"],
                                "rule": r["expected"].split(":")[0], "count": r["n"]})
        else:
            row = rows[(r["system"], r["requirement"])]
            row["witnesses"] = [{"message": f"history {f['index']}: {f['witness']}", "lines": []}]
            row["reproduce"] = f["reproduce"]
            if r["expected"]:
                row["expected"] = "violated"
                # triage already done: what the system declares it violates, and why (spec/systems.toml)
                declared.append({"system": r["system"], "requirement": r["requirement"], "histories": r["n"],
                                 "first_index": f["index"], "why": r["expected"]})
        if r["expected"]:
            continue
        system = systems.get(r["system"])
        kind = (FindingKind.CAMPAIGN_DIFFERENCE if r["kind"] == "difference" else FindingKind.MUTANT_FOUND if system.kind == "mutant"
                else FindingKind.SERVER_DIFFERS if system.kind == "server" else FindingKind.MODEL_VIOLATES_SEED)
        findings.append(Finding(kind, system=r["system"] + (f" vs {r['other_system']}" if r["other_system"] else ""),
                                requirement=r["requirement"], histories=r["n"], first_index=f["index"],
                                witness=f["witness"], reproduce=f["reproduce"]).as_dict())
        if r["kind"] == "violation":
            found.setdefault(r["system"], []).append(r["requirement"])
    mutants = {}
    for name in plan.systems:
        system = systems.get(name)
        if system.kind == "mutant":
            mutants[name] = {"bug": system.declares.bug, "kills": list(system.declares.kills),
                             "found_by": [req for req in found.get(name, []) if req in system.declares.kills],
                             "also_violates": [req for req in found.get(name, []) if req not in system.declares.kills]}
    return {
        "schema": "replcheck.results/1", "seed": plan.seed, "systems": list(plan.systems),
        "campaign": {"histories": plan.histories, "chunks": len(plan.chunks()), "chunk": plan.chunk,
                     "generator": plan.generator, "families": plan.families and list(plan.families), "table": table,
                     "rows": plan.histories * len(plan.systems) + sum(r["n"] for r in groups) + sum(r["rows"] for r in counts),
                     "mutants": mutants, "differences": differences, "declared": declared,
                     "findings_per_family": {r["family"]: r["count"] for r in df.where("finding").groupBy("family").count().collect()}},
        "findings": findings,
        "rows": list(rows.values()),
    }
