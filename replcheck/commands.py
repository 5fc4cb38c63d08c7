"""What each `replcheck` command does, once its command line is parsed (replcheck.cli builds the
parser and maps exits): one function per command, taking the parsed arguments, returning the exit code."""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from replcheck import catalogue, io, outdir, suites, systems
from replcheck.progress import Progress
from replcheck.exits import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, UsageError


def requirements_command(args) -> int:
    evidence = catalogue.evidence()
    reqs = [r for r in catalogue.load() if not args.feature or r.feature == args.feature]
    if args.json:
        print(json.dumps([{**r.__dict__, "evidence": evidence.get(r.id, [])} for r in reqs], indent=1))
        return EXIT_OK
    for r in reqs:
        kinds = ", ".join(f"{e['type']}:{e['name']}" for e in evidence.get(r.id, [])) or "NO EVIDENCE"
        print(f"{r.id:24} {r.kind:9} {kinds}")
    missing = [r.id for r in reqs if not evidence.get(r.id)]
    print(_requirements_summary(reqs, evidence), file=sys.stderr)
    return EXIT_VIOLATION if missing else EXIT_OK


def _requirements_summary(reqs, evidence) -> str:
    """Per kind, the requirements with a check of that kind; a check is not yet a verdict (the
    report of a run says which were judged), and a scenario's claim is not yet a real server's."""
    from replcheck.scenarios import load_scenarios

    def having(kind: str) -> int:
        return sum(any(e["type"] == kind for e in evidence.get(r.id, [])) for r in reqs)
    claimed = {x for s in load_scenarios() for x in s.exercises}
    return (f"{len(reqs)} requirements; with a check: property {having('property')}, proof {having('z3-proof')}, "
            f"state machine {having('state-machine')}, TLC {having('tlc')}; exercised by a real-server scenario: "
            f"{sum(r.id in claimed for r in reqs)}; with no check at all: {sum(not evidence.get(r.id) for r in reqs)}")


def simulate_command(args) -> int:
    if args.out:
        io.check_output(args.out)
    history = io.load_history(args.history)
    header, obs = systems.get(args.system).run(history)
    if args.format == "itf":
        from replcheck import itf
        text = itf.dumps(header, obs)
    else:
        text = io.dumps_lines(header, obs)
    if args.out:
        io.write_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def check_trace_command(args) -> int:
    """Judge a Trace file; a known system's declared violations are marked, not counted. Given the
    History it was made from, its expectations too (EXPECT <file>:<line>)."""
    from replcheck.properties.core import PROPERTIES, VIOLATED
    from replcheck.properties.expect import judge_expectations, polled
    from replcheck.properties.judge import judge_trace
    from replcheck.spec.contract import NOTHING, Trace

    with systems.cycles_uncollected():
        header, obs = io.load_trace(args.trace)
        history = _history_of_trace(args.history, header, args.trace) if args.history else None
        known = systems.systems().get(header["system"])
        if known is None and header.get("server_version"):  # a real server's: what its flavour model declares for it
            known = systems.flavour_of(systems.server_name(header["server_version"]))
        wanted = [p.requirement for p in PROPERTIES if args.feature is None or p.feature == args.feature]
        j = judge_trace(Trace(header, obs), known.declares if known else NOTHING, header["system"], wanted)
        for i, o in enumerate(obs, 2):  # the witnesses' lines, as judge_trace numbers them
            o["_line"] = i
        expected = judge_expectations(history, obs, polled(header)) if history is not None else ()
    declared = j.declares.expected_violations
    verdicts = j.verdicts + expected
    if args.json:
        print(json.dumps({"trace": str(args.trace), "system": header["system"],
                          "verdicts": [{**v.as_dict(), **({"declared": declared[v.requirement]} if v in j.violations
                                                          and v.requirement in declared else {})} for v in verdicts]}, indent=1))
    else:
        for v in verdicts:
            mark = " (declared)" if v in j.violations and v.requirement in declared else ""
            print(f"{v.requirement:24} {v.status + mark:24} {v.checked:6}")
            for w in v.witnesses:
                lines = ",".join(map(str, w.lines))
                print(f"    {args.trace}:{lines}: {io.printable(w.message)}")
    observed = sum(o["kind"] == "observed" for o in obs)
    if history is None and observed:
        print(f"check-trace: {observed} expectations observed, not judged: give the History with --history", file=sys.stderr)
    failed = [v for v in expected if v.status == VIOLATED]
    return EXIT_VIOLATION if j.findings or failed else EXIT_OK


def _history_of_trace(path: str, header: dict, trace: str) -> dict:
    """The History a Trace was made from: refused (bad input) when the Trace's digest names another."""
    history = io.load_history(path)
    digest = header.get("history_digest")
    if digest is not None and digest != systems.history_digest(history):
        raise io.InputError(path, None, "", f"is not the History {trace} was made from (its history_digest is {digest})")
    return history


def verify_command(args) -> int:
    from replcheck import search
    from replcheck.verify import verify

    histories = None
    if args.histories:
        d = Path(args.histories)
        if not io.is_dir(d):
            raise io.InputError(d, None, "", "not a directory of .jsonl histories")
        histories = sorted(d.glob("*.jsonl"))
        if not histories:
            raise io.InputError(d, None, "", "holds no .jsonl History")
        for h in histories:  # all bad input is reported before any work starts
            suites.systems_for(io.load_history(h), h, [])
    names = args.systems.split(",") if args.systems is not None else None  # --systems "" names no system: refused
    for n in names or []:
        systems.get(n, "--systems")
    outdir.check(args.out, outdir.REPORT)
    budget = search.THOROUGH if args.thorough else search.DEFAULT
    if args.examples:  # the depth chosen, with another number of examples
        budget = budget.with_examples(args.examples)
    results = verify(Path(args.out), names, histories, budget, seed=args.seed, tlc_size=None if args.no_tlc else "small",
                     full=args.full_results)
    for f in results.findings:
        print(f"finding: {f.kind.value}: {f.system or ''} {f.history or ''} {f.requirement or ''}: {f.witness}")
    for s in results.searches:
        found = (f"found from scratch ({s['requirement']}, in {s['shrunk_steps']} steps)" if s["found"]
                 else "not found from scratch")
        print(f"search: {s['system']}: {s['machine']}, {s['examples']} examples: {found}")
    return EXIT_VIOLATION if results.findings else EXIT_OK


def report_command(args) -> int:
    from replcheck import report

    outdir.check(args.out, outdir.REPORT)
    gate = _gate_arg(args.gate)
    document = report.build_report(report.load_results(args.results), args.title)
    with outdir.staged(args.out, keep=True) as staging:  # keeps what else is there (a verify's results, traces)
        report.write_reports(document, staging, gate)
    s = document["summary"]
    print(f"wrote {args.out}/report.html, report.json, junit.xml, summary.md: {s['requirements']} requirements, "
          f"{s['violated']} unexpected violations, {s['findings']} findings")
    return EXIT_VIOLATION if s["violated"] or s["findings"] or s["expectations_violated"] else EXIT_OK


def _gate_arg(path: str | None) -> tuple[str, dict] | None:
    """--gate of report and conform: the gate file, loaded before any work (a bad one is exit 2)."""
    from replcheck import release, report

    if not path:
        return None
    gate = report.load_gate(path)
    release.reasons(gate, path)  # its reasons too, before any work
    return Path(path).name, gate


def gate_command(args) -> int:
    from replcheck import report

    if args.write:
        io.check_output(args.gate)
    document = report.build_report(report.load_results(args.results))
    if args.write:
        from replcheck import release

        try:  # the reasons the gate gave for its known violations stay with it
            kept = release.reasons(report.load_gate(args.gate), args.gate) if Path(args.gate).is_file() else {}
        except io.InputError:
            kept = {}
        io.write_atomic(args.gate, report.gate_snapshot(document, args.name or Path(args.gate).stem, args.description)
                        + release.why_tables(kept))
        print(f"wrote {args.gate}: {len(document['sources'])} sources pinned")
        return EXIT_OK
    diffs = report.gate_differences(report.load_gate(args.gate), document)
    for d in diffs:
        print(f"gate {args.gate}: {d}")
    print(f"gate {args.gate}: {'FAILED, ' + str(len(diffs)) + ' differences' if diffs else 'passed'}")
    return EXIT_VIOLATION if diffs else EXIT_OK


def conform_command(args) -> int:
    from replcheck import conform
    from replcheck.harness.errors import HarnessError, TopologyError

    if args.history and args.quick:
        raise UsageError("conform: --history and --quick exclude each other")
    if args.scale is not None and not 0 < args.scale <= 10:  # before it is taken for a History's problem
        raise UsageError(f"conform: --scale: {args.scale!r} is not a number in (0, 10]")
    if args.attempts is not None and args.attempts < 1:
        raise UsageError(f"conform: --attempts: {args.attempts} is not a positive number of runs")
    if args.jobs < 1:
        raise UsageError(f"conform: --jobs: {args.jobs} is not a positive number of scenarios")
    outdir.check(args.out, outdir.REPORT)
    gate = _gate_arg(args.gate)
    if args.basedir is not None:  # a build the user named: not there is their input's, not the machine's
        from replcheck.harness.binaries import find_server
        from replcheck.harness.errors import ServerNotFound
        try:
            find_server(args.basedir)
        except ServerNotFound as e:
            raise UsageError(f"conform: --basedir {args.basedir!r}: {str(e).splitlines()[0]}") from None
    try:
        document = conform.conform(Path(args.out), quick=args.quick, history_files=args.history, basedir=args.basedir,
                                   tmpdir=args.tmpdir, scale=args.scale,
                                   attempts=args.attempts or conform.ATTEMPTS, jobs=args.jobs, gate=gate)
    except conform.RunnerError as e:
        raise UsageError(f"conform: {e}") from None
    except TopologyError as e:  # the History's topology: its input
        print(io.error_line(f"conform: {str(e).splitlines()[0]}"), file=sys.stderr)
        return EXIT_USAGE
    except HarnessError as e:  # the machine's or the server's: a server that would not start, none found
        print(io.error_line(f"conform: {str(e).splitlines()[0]}"), file=sys.stderr)
        return EXIT_INTERNAL
    for f in document["findings"]:
        print(f"finding: {f['kind']}: {f.get('history', '')} {f.get('requirement', '')}: {f['witness']}"
              + (f"; the seed says: {f['seed']}" if f.get("seed") else ""))
    return EXIT_VIOLATION if document["findings"] else EXIT_OK


def systems_command(args) -> int:
    for s in systems.systems().values():
        extra = f" [{s.declares.bug}; killed by {', '.join(s.declares.kills)}]" if s.kind == "mutant" else ""
        print(f"{s.name:36} {s.kind:7} {s.description}{extra}")
    return EXIT_OK


def tlc_command(args) -> int:
    """The TLA+ configurations of spec/tla/manifest.toml that the filters select, each checked by
    TLC and compared with what the manifest pins: 1 on any difference, 3 when TLC itself fails."""
    from replcheck import tlc
    from replcheck.model.mutants import REGISTRY

    if args.histories and not args.validate:
        raise io.InputError(str(args.histories), None, "--histories", "only with --validate")
    if args.validate:
        return validate_command(args)
    if args.spec and args.spec not in {c.module for c in tlc.manifest().checks}:
        raise io.InputError(args.spec, None, "--spec", "no TLA+ module of that name in spec/tla/manifest.toml")
    if args.mutant and args.mutant not in REGISTRY:
        raise io.InputError(args.mutant, None, "--mutant", "not a mutant of the registry (replcheck systems lists them)")
    checks = tlc.select(args.spec, args.config, args.mutant, args.size or (None if args.config or args.mutant else "small"))
    if not checks:
        what = ", ".join(f"{k} {v}" for k, v in (("--spec", args.spec), ("--config", args.config), ("--mutant", args.mutant),
                                                   ("--size", args.size)) if v)
        raise io.InputError("spec/tla/manifest.toml", None, what or "--size", "no check matches")
    if args.history_out:
        io.check_output(args.history_out)
        from replcheck.tla import COUNTEREXAMPLES
        if other := sorted({c.module for c in checks} - set(COUNTEREXAMPLES)):
            raise io.InputError(args.history_out, None, "--history-out",
                                f"a counterexample becomes a History for {', '.join(COUNTEREXAMPLES)} only, not {', '.join(other)}")
    with Progress("tlc", len(checks)) as bar:
        return _tlc_checks(args, checks, bar)


def _tlc_checks(args, checks, bar: Progress) -> int:
    """Each check run and printed, counted on the progress line."""
    from replcheck import tlc

    mapping, differ, failed, written = tlc.manifest().requirements, 0, 0, False
    for c in checks:
        bar.now(c.name)
        r = tlc.run(c.path, c.config_text())
        bar.done()
        mutants = f" [mutant {', '.join(c.mutants)}]" if c.mutants else ""
        found = f"violated {r.violated or r.kind}" if r.status == "violated" else r.status
        diffs = tlc.differences(c, r)
        mark = "TLC FAILED" if r.status == "error" else "DIFFERS" if diffs else "as pinned"
        print(f"{c.name}: {c.module} {c.config}{mutants}: {found}, {r.distinct} distinct states, depth {r.depth}: {mark}")
        for d in diffs:
            print(f"    difference: {d}")
        for e in r.errors:
            for line in e.splitlines()[:8]:
                print(f"    TLC: {_echo(line)}")
        for name, rid, verdict in tlc.verdicts(c, r, mapping):
            print(f"    {rid:28} {verdict:13} ({name})")
        if r.trace:
            print(f"    counterexample, {len(r.trace)} states:")
            for line in tlc.steps(r.trace):
                print(f"      {_echo(line)}")
        if args.history_out and r.trace and not written:  # the first counterexample of the selection
            from replcheck.tla import counterexample_history
            system, history = counterexample_history(c, r)
            io.write_atomic(args.history_out, io.dumps_history(history))
            written = True
            print(f"    wrote {args.history_out}: this counterexample as a History; replay it with "
                  f"`replcheck simulate {args.history_out} --system {system}`")
        differ += bool(diffs)
        failed += r.status == "error"
    if failed:
        print(f"replcheck: internal error: TLC failed on {failed} of {len(checks)} checks (not a verdict)", file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_VIOLATION if differ else EXIT_OK


def validate_command(args) -> int:
    """Trace validation of the model systems' Traces: per spec, how many were accepted whole, how
    many up to an operation outside its subject (on purpose), how many up to the end of its
    vocabulary (a gap to fill), and each rejection with the step it names."""
    from replcheck import generate, suites
    from replcheck.tla import SUBJECT, VOCABULARY, sweep
    from replcheck.verify import embedded_histories

    models = [n for n, s in systems.systems().items() if s.kind == "model"]
    if args.histories:
        items = [(f"{args.seed}/{i}", h, models) for i in range(args.histories) for h in [generate.generate(args.seed, i)]]
    else:
        items = [(p.stem, h, suites.systems_for(h, p, models))
                 for p in embedded_histories() + suites.histories() for h in [io.load_history(p)]]
    done = sweep(items)
    for spec in sorted({v.spec for _, _, v in done.validations}):
        mine = [v for _, _, v in done.validations if v.spec == spec]
        ok = [v for v in mine if v.ok]
        print(f"{spec}: {len(mine)} traces, {len(ok)} accepted ({sum(v.whole for v in ok)} whole, "
              f"{sum(v.beyond == SUBJECT for v in ok)} up to an operation outside the spec's subject, "
              f"{sum(v.beyond == VOCABULARY for v in ok)} up to the end of its vocabulary), {len(mine) - len(ok)} rejected")
    for name, system, v in done.rejected:
        print(f"rejected: {name} on {system}: {v.describe()}")
    runs = len({(n, s) for n, s, _ in done.validations} | set(done.uncovered))
    print(f"{len(items)} Histories, {runs} Traces; in no spec's vocabulary: {len(done.uncovered)} "
          f"({', '.join(sorted({n for n, _ in done.uncovered})) or 'none'})")
    return EXIT_VIOLATION if done.rejected else EXIT_OK


def relay_log_info_command(args) -> int:
    from replcheck.model import relayinfo

    try:
        info = relayinfo.parse(io.read_text(args.file))
    except relayinfo.RelayLogInfoError as e:
        raise io.InputError(args.file, e.line, e.field, e.problem) from None
    print(json.dumps(info.__dict__, indent=1))
    return EXIT_OK


def campaign_command(args) -> int:
    from replcheck import campaign, coverage

    names = args.systems.split(",") if args.systems is not None else list(campaign.DEFAULT_SYSTEMS)
    try:
        if args.groups is not None and args.groups < 1:
            raise campaign.CampaignError(f"--groups: {args.groups} is not positive")
        chunk = args.chunk if args.chunk is not None else (campaign.SERVER_CHUNK if any(map(systems.is_server, names)) else campaign.DEFAULT_CHUNK)
        plan = campaign.validate(args.histories, args.seed, names, args.master, chunk, args.families)
        # under spark-submit without --master, the master is spark-submit's
        master = args.master or (None if os.environ.get("PYSPARK_GATEWAY_PORT") else "local[*]")
        summary = campaign.run(plan, args.out, master, args.verbose, conf=tuple(args.conf), ui=args.ui, ship=args.ship,
                               groups=args.groups or campaign.DEFAULT_GROUPS)
    except campaign.CampaignError as e:
        raise UsageError(f"campaign: {e}") from None
    except campaign.ClusterError as e:  # the environment's failure: its cause, no traceback
        print(io.error_line(f"campaign: {e}"), file=sys.stderr)
        return EXIT_INTERNAL
    c = summary["campaign"]
    print(f"campaign seed {plan.seed}: {c['histories']} histories x {len(plan.systems)} systems, {c['rows']} rows in "
          f"{c['table']}, {c['seconds']} s; {len(summary['findings'])} findings")
    shown = 40  # the rest are in summary.json and the table
    for f in summary["findings"][:shown]:
        print(f"finding: {f['kind']}: {f['system']} {f['requirement']} in {f['histories']} histories, first "
              f"{f['first_index']}: {f['witness']}\n    {f['reproduce']}")
    if len(summary["findings"]) > shown:
        print(f"... {len(summary['findings']) - shown} more findings in {args.out}/summary.json")
    if c["findings_per_family"]:
        print("findings per family: " + ", ".join(f"{k} {n}" for k, n in sorted(c["findings_per_family"].items())))
    for d in c["declared"]:  # violations the system declares: triaged, each with its reason
        print(f"declared: {d['system']} {d['requirement']} in {d['histories']} histories, first {d['first_index']}: {d['why']}")
    for name, m in c["mutants"].items():
        print(f"mutant {name} ({m['bug']}): " + (f"found by {', '.join(m['found_by'])}" if m["found_by"] else "NOT found"))
    print("\n".join(coverage.lines(summary["coverage"])))
    return EXIT_VIOLATION if summary["findings"] else EXIT_OK


def replay_command(args) -> int:
    from replcheck import investigate
    from replcheck.generate import generate
    from replcheck.spec.contract import Trace

    systems.get(args.system)
    if args.out:
        outdir.check(args.out, outdir.REPLAY)
    history = generate(args.seed, args.index, args.families, args.target)
    htext = io.dumps_history(history)
    if args.kept:  # what the servers did then, which a new run on them need not do again
        from replcheck import campaign
        try:
            where, digest, ttext = campaign.kept_trace(args.kept, args.seed, args.index, args.system)
        except campaign.CampaignError as e:
            raise UsageError(f"replay: --kept: {e}") from None
        except campaign.ClusterError as e:  # the filesystem's failure: its cause
            print(io.error_line(f"replay: {e}"), file=sys.stderr)
            return EXIT_INTERNAL
        if digest != systems.history_digest(history):
            raise io.InputError(where, None, "history_digest", f"{digest}, not the regenerated History's "
                                f"{systems.history_digest(history)}: give the campaign's --families and --target")
        header, obs = io.load_trace(where, ttext)
        for o in obs:
            del o["_line"]
    else:
        header, obs, ttext = investigate.trace_of(history, args.system)
    if args.out:
        stem, where = f"{args.seed}-{args.index}", outdir.ensure(args.out, outdir.REPLAY)
        io.write_atomic(where / f"{stem}.history.jsonl", htext)
        io.write_atomic(where / f"{stem}.{args.system.replace(':', '-')}.trace.jsonl", ttext)
    found = investigate.findings(history, args.system, Trace(header, obs))
    print(f"seed {args.seed} index {args.index} on {args.system}: history {systems.history_digest(history)}, "
          f"trace sha256:{hashlib.sha256(ttext.encode()).hexdigest()[:16]}" + (f", written to {args.out}/" if args.out else ""))
    for v in found:
        print(f"violated {v.requirement}: {io.printable(v.witnesses[0].message)}")
    return EXIT_VIOLATION if found else EXIT_OK


SERVER_BUDGET = 600.0  # s: a real server's shrink runs the History for real at each attempt, tens of them


def shrink_command(args) -> int:
    from replcheck import investigate

    involved = [systems.get(args.system)] + ([systems.get(args.other, "--other")] if args.other else [])
    real = any(s.kind == "server" for s in involved)
    if args.budget is not None and args.budget <= 0:
        raise UsageError(f"shrink: --budget: {args.budget:g} is not a positive number of seconds")
    budget = args.budget if args.budget is not None else SERVER_BUDGET if real else None
    if args.out:
        io.check_output(args.out)
    t = investigate.target(args.target, args.families, args.generated_for)
    if real:
        print(f"{t.label}: each attempt runs the History on real servers of its own, in real time; "
              f"no attempt starts after {budget:g} s (--budget)")
    fails = investigate.failure(t.history, args.system, args.requirement, args.other, t.label)
    small, runs = investigate.shrink(t.history, fails, budget)
    print(f"{t.label}: {fails.what}; shrunk from {len(t.history['ops'])} to {len(small['ops'])} operations in {runs} runs")
    print(_echo(investigate.describe(small)))
    if args.out:
        io.write_atomic(args.out, io.dumps_history(small))
        print(f"wrote {args.out}")
        trace = fails.trace_of(small)
        if real and trace is not None:  # a real server's Trace is evidence that cannot be made again byte for byte
            where = str(Path(args.out).with_suffix("")) + ".trace.jsonl"
            io.write_atomic(where, io.dumps_lines(*trace))
            print(f"wrote {where} ({args.system}'s Trace of it)")
    return EXIT_VIOLATION


def explain_command(args) -> int:
    from replcheck import investigate

    systems.get(args.system)
    if args.other:
        systems.get(args.other)
    if args.requirement and args.requirement not in {r.id for r in catalogue.load()}:
        raise io.InputError(args.requirement, None, "--requirement", "unknown requirement")
    t = investigate.target(args.target, args.families, args.generated_for)
    print(f"{t.label}:")
    print(_echo(investigate.explain(t.history, args.system, args.requirement, args.other)))
    return EXIT_OK


def _echo(text: str) -> str:
    """Lines that quote the input (names, witnesses), its terminal controls escaped line by line."""
    return "\n".join(map(io.printable, text.split("\n")))
