"""The `replcheck` command line. Exit codes: 0 all pass, 1 a violation or finding, 2 bad input or
usage, 3 replcheck itself failed (an internal error: never read as a verdict)."""
from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from replcheck import __version__, commands, exits, io
from replcheck.exits import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, UsageError  # noqa: F401 (EXIT_VIOLATION: cli's codes, read by tests)
from replcheck.harness.errors import HarnessError
from replcheck.harness.statements import RunnerError
from replcheck.tlc import TLCUnavailable


class Parser(argparse.ArgumentParser):
    def parse_args(self, args=None, namespace=None):
        args, extras = self.parse_known_args(args, namespace)
        if extras:  # quoted, so that an empty one shows
            self.error(f"unrecognized arguments: {' '.join(map(repr, extras))}")
        return args

    def error(self, message: str):  # one line, not argparse's usage block
        command = self.prog.partition(" ")[2]
        raise UsageError(f"{command}: {message}" if command else message)


def build_parser() -> Parser:
    p = Parser(prog="replcheck", description=__doc__)
    p.add_argument("--version", action="version", version=f"replcheck {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)

    s = sub.add_parser("requirements", help="the requirement catalogue with the evidence each requirement has")
    s.add_argument("--json", action="store_true")
    s.add_argument("--feature")
    s.set_defaults(fn=commands.requirements_command)

    s = sub.add_parser("simulate", help="run a History on a system and print its Trace (JSON Lines, or ITF JSON)")
    s.add_argument("history")
    s.add_argument("--system", default="model:wl7318")
    s.add_argument("--out", type=_file_name)
    s.add_argument("--format", choices=["jsonl", "itf"], default="jsonl",
                   help="jsonl: the Trace (spec/schemas/trace.schema.json); itf: the same as ITF JSON, Apalache's and Quint's trace format, one state per observation")
    s.set_defaults(fn=commands.simulate_command)

    s = sub.add_parser("check-trace", help="judge a Trace: verdict per requirement")
    s.add_argument("trace")
    s.add_argument("--history", help="the History the Trace was made from: its expectations are judged too (EXPECT <file>:<line>)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--feature")
    s.set_defaults(fn=commands.check_trace_command)

    s = sub.add_parser("verify", help="the main job: every check on the embedded defaults, into a report directory")
    s.add_argument("--out", type=_file_name, default="replcheck-report")
    s.add_argument("--systems", help="comma-separated system names (default: all)")
    s.add_argument("--histories", help="a directory of .jsonl Histories instead of the embedded ones")
    s.add_argument("--examples", type=_positive,
                   help="state-machine examples per machine, on models and mutants alike (default: 15 on a model, 60 on a mutant)")
    s.add_argument("--thorough", action="store_true", help="every state-machine search at full depth (60 examples of 20 steps, a catch shrunk; several times longer)")
    s.add_argument("--full-results", action="store_true",
                   help="results.json with a row per History and requirement (by default passing rows are counted per cell)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--no-tlc", action="store_true",
                   help="leave out TLC's small configurations (a minute or two; the models gate then fails: no TLC verdicts)")
    s.set_defaults(fn=commands.verify_command)

    s = sub.add_parser("report", help="the compliance report (HTML, JSON, JUnit XML, Markdown) from results files")
    s.add_argument("results", nargs="+", help="results.json files (replcheck verify, the pytest plugin)")
    s.add_argument("--out", type=_file_name, default="replcheck-report")
    s.add_argument("--title", default="replcheck compliance report")
    s.add_argument("--gate", type=_file_name, help="a gate file to run for the report's release summary, e.g. ci/mariadb.toml")
    s.set_defaults(fn=commands.report_command)

    s = sub.add_parser("gate", help="compare results with a gate file's pinned verdicts (exit 1 on any difference)")
    s.add_argument("gate", help="a gate file, e.g. ci/models.toml")
    s.add_argument("results", nargs="+")
    s.add_argument("--write", action="store_true", help="pin the results' verdicts into the gate file instead")
    s.add_argument("--name")
    s.add_argument("--description", default="")
    s.set_defaults(fn=commands.gate_command)

    s = sub.add_parser("conform", help="the conformance suite on a real server, into a report directory")
    s.add_argument("--server", choices=["mariadb"], required=True)
    s.add_argument("--quick", action="store_true", help="the scenarios spec/conformance.toml marks quick")
    s.add_argument("--out", type=_file_name, default="replcheck-conform")
    s.add_argument("--history", action="append", type=_file_name, help="run this History file instead (repeatable)")
    s.add_argument("--basedir", help="a MariaDB build's base directory (else $REPLCHECK_MARIADB_BASEDIR, else PATH)")
    s.add_argument("--tmpdir", help="where the servers' private directories go (a tmpfs is faster)")
    s.add_argument("--scale", type=float, help="real seconds per History second (default: each scenario's)")
    s.add_argument("--attempts", type=int, help="runs of a scenario at most (default 3): a run with an inconclusive "
                   "verdict runs again at twice the time scale")
    s.add_argument("--jobs", type=int, default=1, help="scenarios run at once, each on servers of its own (default 1); "
                   "the report is a serial run's")
    s.add_argument("--gate", type=_file_name, help="a gate file to run for the report's release summary, e.g. ci/mariadb.toml")
    s.set_defaults(fn=commands.conform_command)

    s = sub.add_parser("systems", help="the systems a History can run on")
    s.set_defaults(fn=commands.systems_command)

    s = sub.add_parser("campaign", help="N generated Histories on every system, judged and cross-checked, on Spark")
    s.add_argument("--histories", type=int, default=1000, help="how many Histories (N >= 1)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--systems", help="comma-separated system names (default: the four models)")
    s.add_argument("--master", help="Spark master URL (default local[*]; under spark-submit, its own)")
    s.add_argument("--out", type=_uri, default="replcheck-campaign", help="the campaign directory: table/ (Parquet), summary.json; "
                   "a path or a URI: file://, s3:// (s3a://), gs://, hdfs://")
    s.add_argument("--conf", type=_conf, action="append", default=[], metavar="KEY=VALUE", help="a Spark setting (repeatable)")
    s.add_argument("--ui", action="store_true", help="the Spark UI on (its address is printed)")
    s.add_argument("--ship", choices=("zip", "installed"), default="zip", help="replcheck to the executors: zip, its "
                   "packages with the application (default); installed, on the nodes already (docs/cluster.md)")
    s.add_argument("--chunk", type=int, help="Histories per Spark task (part of the campaign's identity; default 250, "
                   "4 with a real server)")
    s.add_argument("--groups", type=int, help="with a real server: the Histories each task runs at once, each on servers "
                   "of its own (default 2: a server group mostly waits)")
    s.add_argument("--families", type=_families, help="draw from these of the generator's families only (comma-separated; default all)")
    s.add_argument("--verbose", action="store_true", help="Spark's own INFO logging")
    s.set_defaults(fn=commands.campaign_command)

    s = sub.add_parser("replay", help="regenerate a campaign row's History and Trace, byte for byte")
    s.add_argument("seed", type=_natural)
    s.add_argument("index", type=_natural)
    s.add_argument("--system", required=True)
    s.add_argument("--families", type=_families, help="the campaign's --families, if it had any")
    s.add_argument("--target", type=_target, help="the campaign's --target, if it had any: generated for that server "
                   "(e.g. server:mariadb-10.11), only what it can run")
    s.add_argument("--out", type=_file_name, help="write SEED-INDEX.history.jsonl and SEED-INDEX.SYSTEM.trace.jsonl here")
    s.add_argument("--kept", type=_uri, metavar="CAMPAIGN", help="a real server's Trace as the campaign in this directory "
                   "kept it (of a History where it showed a finding), instead of a new run")
    s.set_defaults(fn=commands.replay_command)

    for name, fn, text in (("shrink", commands.shrink_command, "reduce a failing History to a minimal one that fails the same way"),
                           ("explain", commands.explain_command, "the requirement, its witnesses; or two Traces side by side")):
        s = sub.add_parser(name, help=text)
        s.add_argument("target", nargs="+", help="SEED INDEX of a campaign, or a History file")
        s.add_argument("--system", required=True)
        s.add_argument("--requirement", help="the violated requirement (default: the first unexpected one)")
        s.add_argument("--other", help="a second system: the cross-check difference with it")
        s.add_argument("--families", type=_families, help="with SEED INDEX: the campaign's --families, if it had any")
        s.add_argument("--target", dest="generated_for", type=_target, help="with SEED INDEX: the campaign's --target, "
                       "if it had any (a campaign with a real server has)")
        if name == "shrink":
            s.add_argument("--out", type=_file_name, help="write the shrunk History here (and, for a real server, "
                           "its Trace of it beside it, .trace.jsonl)")
            s.add_argument("--budget", type=float, help="seconds after which no attempt starts (default: none for a model, "
                           "600 for a real server, whose every attempt is a real run)")
        s.set_defaults(fn=fn)

    s = sub.add_parser("tlc", help="check the TLA+ modules of spec/tla/ with TLC against the manifest's pinned results")
    s.add_argument("--spec", help="a module: SemiSync, Delay, Incident, GroupIds")
    s.add_argument("--config", help="a configuration file of spec/tla/ (default: every small one)")
    s.add_argument("--mutant", help="the checks of this registry mutant")
    s.add_argument("--size", choices=["small", "medium", "large"], help="the checks of this size (default small, unless --config or --mutant)")
    s.add_argument("--history-out", type=_file_name, help="write the first counterexample as a History (SemiSync, Delay, Incident, GroupIds) to replay on the Python model")
    s.add_argument("--validate", action="store_true",
                   help="trace validation instead: every embedded History's Trace on each model that runs it, checked as a behaviour of the specs")
    s.add_argument("--histories", type=_positive, help="with --validate: N generated Histories of --seed instead of the embedded ones")
    s.add_argument("--seed", type=_natural, default=0, help="with --validate --histories: the generator's seed (default 0)")
    s.set_defaults(fn=commands.tlc_command)

    s = sub.add_parser("relay-log-info", help="read a relay-log.info file as WL#344 specifies")
    s.add_argument("file")
    s.set_defaults(fn=commands.relay_log_info_command)
    return p


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _file_name(text: str) -> Path:
    if not text:  # Path("") is ".", the current directory
        raise argparse.ArgumentTypeError("an empty file name")
    return Path(text)


def _uri(text: str) -> str:
    """A path or a URI, kept as text (a Path would fold s3://'s double slash)."""
    _file_name(text)
    return text


def _conf(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key.strip(), value


def _positive(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value


def _target(text: str) -> str:
    """A server the generator draws for (replcheck.targets)."""
    from replcheck import targets
    try:
        return targets.get(text).name
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _families(text: str) -> tuple[str, ...]:
    """Some of the generator's families: a campaign drawing from them only (part of its identity)."""
    from replcheck.generate import DRAW

    names = tuple(text.split(","))
    if unknown := [n for n in names if n not in DRAW]:
        raise argparse.ArgumentTypeError(f"unknown family {unknown[0]!r}; known: {', '.join(DRAW)}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"{text!r} names a family twice")
    return names


def _natural(text: str) -> int:
    """A campaign's seed or index: what its table records."""
    value = _integer(text)
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{value} is not in 0..{2**63 - 1}")
    return value


def main(argv: list[str] | None = None) -> int:
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.CleanStream(sys.stdout), io.CleanStream(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _main(argv: list[str] | None) -> int:
    try:
        with exits.on_signals():
            args = build_parser().parse_args(argv)
            return args.fn(args)
    except (Exception, KeyboardInterrupt, exits.Terminated) as e:
        if exits.stopped_by:  # whatever the signal became on its way out
            return exits.stopped()
        return _failed(e)


def _failed(e: BaseException) -> int:
    """The exit code and the one line (or the traceback) for what ended a run."""
    if isinstance(e, (UsageError, io.InputError)):
        print(io.error_line(str(e)), file=sys.stderr)
        return EXIT_USAGE
    if isinstance(e, RunnerError):  # a History a real server cannot run: the input's
        print(io.error_line(f"replcheck: {e}"), file=sys.stderr)
        return EXIT_USAGE
    if isinstance(e, HarnessError):  # the machine's or the server's (none found, one would not start): its cause
        print(io.error_line(f"replcheck: {str(e).splitlines()[0]}"), file=sys.stderr)
        return EXIT_INTERNAL
    if isinstance(e, TLCUnavailable):
        print(f"replcheck: internal error: {e}", file=sys.stderr)
        return EXIT_INTERNAL
    if isinstance(e, io.SpecError):  # one line, as for bad input, but exit 3: the user can do nothing about it
        print(f"replcheck: internal error: {io.printable(str(e))[:200]}: replcheck's own spec file is broken", file=sys.stderr)
        return EXIT_INTERNAL
    if isinstance(e, BrokenPipeError):  # the reader went away (| head): not an error of ours
        sys.stderr.close()
        return EXIT_OK
    if isinstance(e, KeyboardInterrupt):  # SIGINT where replcheck did not set the handler (not the main thread)
        print("replcheck: interrupted", file=sys.stderr)
        return 130
    # A bug of replcheck's own: never a verdict (1) nor bad input (2).
    traceback.print_exception(e)
    print("replcheck: internal error: replcheck itself failed (a bug, not a finding); the traceback above says where",
          file=sys.stderr)
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
