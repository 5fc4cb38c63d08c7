"""The `replcheck` command line. Exit codes: 0 all pass, 1 a violation or finding, 2 bad input or usage."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from replcheck import __version__, catalogue, io, systems

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not argparse's usage block
        command = self.prog.partition(" ")[2]
        raise UsageError(f"{command}: {message}" if command else message)


def _requirements(args) -> int:
    evidence = catalogue.evidence()
    reqs = [r for r in catalogue.load() if not args.feature or r.feature == args.feature]
    if args.json:
        print(json.dumps([{**r.__dict__, "evidence": evidence.get(r.id, [])} for r in reqs], indent=1))
        return EXIT_OK
    for r in reqs:
        kinds = ", ".join(f"{e['type']}:{e['name']}" for e in evidence.get(r.id, [])) or "NO EVIDENCE"
        print(f"{r.id:24} {r.kind:9} {kinds}")
    missing = [r.id for r in reqs if not evidence.get(r.id)]
    print(f"{len(reqs)} requirements, {len(reqs) - len(missing)} with evidence", file=sys.stderr)
    return EXIT_VIOLATION if missing else EXIT_OK


def _simulate(args) -> int:
    history = io.load_history(args.history)
    header, obs = systems.get(args.system).run(history)
    text = io.dumps_lines(header, obs)
    if args.out:
        io.write_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _check_trace(args) -> int:
    from replcheck.features import load_features
    from replcheck.properties.core import VIOLATED, TraceView, run_properties

    load_features()
    header, obs = io.load_trace(args.trace)
    verdicts = run_properties(TraceView(header, obs), args.feature)
    if args.json:
        print(json.dumps({"trace": str(args.trace), "system": header["system"],
                          "verdicts": [v.as_dict() for v in verdicts]}, indent=1))
    else:
        for v in verdicts:
            print(f"{v.requirement:24} {v.status:14} {v.checked:6}")
            for w in v.witnesses:
                lines = ",".join(map(str, w.lines))
                print(f"    {args.trace}:{lines}: {w.message}")
    return EXIT_VIOLATION if any(v.status == VIOLATED for v in verdicts) else EXIT_OK


def _verify(args) -> int:
    from replcheck.verify import verify

    histories = None
    if args.histories:
        d = Path(args.histories)
        if not d.is_dir():
            raise io.InputError(d, None, "", "not a directory of .jsonl histories")
        histories = sorted(d.glob("*.jsonl"))
        for h in histories:
            io.load_history(h)  # all bad input is reported before any work starts
    names = args.systems.split(",") if args.systems else None
    for n in names or []:
        systems.get(n)
    results = verify(Path(args.out), names, histories, examples=args.examples, seed=args.seed)
    for f in results.findings:
        print(f"finding: {f['kind']}: {f.get('system', '')} {f.get('history', '')} {f['requirement']}: {f['witness']}")
    return EXIT_VIOLATION if results.findings else EXIT_OK


def _report(args) -> int:
    from replcheck import report

    document = report.build_report(report.load_results(args.results), args.title)
    report.write_reports(document, Path(args.out))
    s = document["summary"]
    print(f"wrote {args.out}/report.html, report.json, junit.xml, summary.md: {s['requirements']} requirements, "
          f"{s['violated']} unexpected violations, {s['findings']} findings")
    return EXIT_VIOLATION if s["violated"] or s["findings"] else EXIT_OK


def _gate(args) -> int:
    from replcheck import report

    document = report.build_report(report.load_results(args.results))
    if args.write:
        io.write_atomic(args.gate, report.gate_snapshot(document, args.name or Path(args.gate).stem, args.description))
        print(f"wrote {args.gate}: {len(document['sources'])} sources pinned")
        return EXIT_OK
    diffs = report.gate_differences(report.load_gate(args.gate), document)
    for d in diffs:
        print(f"gate {args.gate}: {d}")
    print(f"gate {args.gate}: {'FAILED, ' + str(len(diffs)) + ' differences' if diffs else 'passed'}")
    return EXIT_VIOLATION if diffs else EXIT_OK


def _systems(args) -> int:
    for s in systems.systems().values():
        extra = f" [{s.bug}; killed by {', '.join(s.kills)}]" if s.kind == "mutant" else ""
        print(f"{s.name:36} {s.kind:7} {s.description}{extra}")
    return EXIT_OK


def _relay_log_info(args) -> int:
    from replcheck.model import relayinfo

    try:
        content = Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise io.InputError(args.file, None, "", f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        info = relayinfo.parse(content)
    except relayinfo.RelayLogInfoError as e:
        raise io.InputError(args.file, e.line, e.field, e.problem) from None
    print(json.dumps(info.__dict__, indent=1))
    return EXIT_OK


def build_parser() -> Parser:
    p = Parser(prog="replcheck", description=__doc__)
    p.add_argument("--version", action="version", version=f"replcheck {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)

    s = sub.add_parser("requirements", help="the requirement catalogue with the evidence each requirement has")
    s.add_argument("--json", action="store_true")
    s.add_argument("--feature")
    s.set_defaults(fn=_requirements)

    s = sub.add_parser("simulate", help="run a History on a system and print its Trace (JSON Lines)")
    s.add_argument("history")
    s.add_argument("--system", default="model:wl7318")
    s.add_argument("--out")
    s.set_defaults(fn=_simulate)

    s = sub.add_parser("check-trace", help="judge a Trace: verdict per requirement")
    s.add_argument("trace")
    s.add_argument("--json", action="store_true")
    s.add_argument("--feature")
    s.set_defaults(fn=_check_trace)

    s = sub.add_parser("verify", help="the main job: every check on the embedded defaults, into a report directory")
    s.add_argument("--out", default="replcheck-report")
    s.add_argument("--systems", help="comma-separated system names (default: all)")
    s.add_argument("--histories", help="a directory of .jsonl Histories instead of the embedded ones")
    s.add_argument("--examples", type=_positive, default=60, help="state-machine examples per model system")
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(fn=_verify)

    s = sub.add_parser("report", help="the compliance report (HTML, JSON, JUnit XML, Markdown) from results files")
    s.add_argument("results", nargs="+", help="results.json files (replcheck verify, the pytest plugin)")
    s.add_argument("--out", default="replcheck-report")
    s.add_argument("--title", default="replcheck compliance report")
    s.set_defaults(fn=_report)

    s = sub.add_parser("gate", help="compare results with a gate file's pinned verdicts (exit 1 on any difference)")
    s.add_argument("gate", help="a gate file, e.g. ci/models.toml")
    s.add_argument("results", nargs="+")
    s.add_argument("--write", action="store_true", help="pin the results' verdicts into the gate file instead")
    s.add_argument("--name")
    s.add_argument("--description", default="")
    s.set_defaults(fn=_gate)

    s = sub.add_parser("systems", help="the systems a History can run on")
    s.set_defaults(fn=_systems)

    s = sub.add_parser("relay-log-info", help="read a relay-log.info file as WL#344 specifies")
    s.add_argument("file")
    s.set_defaults(fn=_relay_log_info)
    return p


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.fn(args)
    except (UsageError, io.InputError) as e:
        print(f"replcheck: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyError as e:  # an unknown system name
        print(f"replcheck: error: {e.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader went away (| head): not an error of ours
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        print("replcheck: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
