"""The bad-input fuzzer: structured mutations of real inputs, each run in-process
through `replcheck.cli.main` and classified against the tool's promise for bad input.

Inputs. Every target starts from real, valid inputs (the embedded Histories and the corpus, Traces
of `simulate`, relay-log.info files as WL#344 writes them, the ci/ gate files, a results file of
verify's own code, a campaign directory) and applies one to three mutation operators:
  JSON    a node anywhere in a line's (or the document's) JSON becomes a value of another type
          (see ODD_VALUES: huge and negative integers, 1e308, NaN, deep nesting, control
          characters, a trailing newline, an unknown node name, ...); a key is dropped, renamed,
          duplicated or two keys' values are swapped; an unknown key is added;
  lines   a line is dropped, duplicated, swapped with another, blanked, or replaced by an odd token
          (for TOML and relay-log.info, the value of a `key = value` line or the whole line);
  bytes   truncation at a random byte, non-UTF-8 bytes, control characters or a BOM inserted,
          CRLF line ends, an empty file;
  args    an argument becomes an odd number (non-ASCII digits, 2**63, '', 1e3, ...), an unknown
          system, a path that is a directory, is missing, is a FIFO or /dev/null; an argument is
          dropped, duplicated or an unknown option added.
Every case is a Case: files written into a fresh folder and an argv naming them, so a case can be
saved and replayed as it is.

Randomness. The operators take a `random.Random`. The tests draw it with Hypothesis
(`st.randoms(use_true_random=False)`, with the seed input and the operators drawn as sampled_from),
so a failure shrinks to fewer, simpler mutations and the replcheck-ci profile is derandomised;
the bench (bench/fuzz.py) seeds one `random.Random` per case from (--seed, case number), so each
case is reproducible alone and the run is the same whatever the number of worker processes.

Classification (run_case). Exit 0, 1 and 2 are fine; exit 3 or an exception out of main is a
traceback; a case still running after the guard's seconds is a hang; an exit 2 whose stderr is not
one `replcheck: error:` line of at most 300 characters naming the input (and, for a file with lines
or fields, a line or field) is a bad message; a failed case that changed one of its --out paths
or left a staging file beside it is half-written. Nothing starts Spark, a server or verify's
work: the fuzzer replaces those entry points by a stop (the case got past every check of its input).
"""
from __future__ import annotations

import contextlib
import hashlib
import io as _io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Callable
from unittest import mock

from replcheck import __version__, campaign, cli, io, systems
from replcheck.harness.system import MariaDB

from mutations import ODD_TOKENS, OPERATORS, mutate_json_document, mutate_json_lines, mutate_text  # noqa: F401 (OPERATORS: the tests')

REPO = Path(__file__).resolve().parents[2]


# -- cases and their outcome ----------------------------------------------------------------------
@dataclass
class Case:
    target: str
    argv: list[str]  # "{dir}" stands for the case's folder
    files: dict[str, bytes] = field(default_factory=dict)  # relative path -> content
    fifos: dict[str, bytes] = field(default_factory=dict)  # a FIFO fed this content by a writer thread
    dirs: list[str] = field(default_factory=list)
    names: tuple[str, ...] = ()  # an exit-2 message names one of these (the input file or argument)
    located: bool = False  # the input has lines or fields: the message gives one
    outputs: tuple[str, ...] = ()  # what a failed run leaves as it was
    foreign: tuple[str, ...] = ()  # someone else's files: any run leaves them as they were
    links: dict[str, str] = field(default_factory=dict)  # relative path -> where the symbolic link points
    refuse: bool = False  # the command must refuse its --out (a foreign one) before it starts any work

    def to_json(self) -> str:
        d = asdict(self)
        for k in ("files", "fifos"):
            d[k] = {p: c.decode("latin-1") for p, c in d[k].items()}  # bytes as code points 0..255
        return json.dumps(d, indent=1, ensure_ascii=True)

    @staticmethod
    def from_json(text: str) -> "Case":
        d = json.loads(text)
        for k in ("files", "fifos"):
            d[k] = {p: c.encode("latin-1") for p, c in d[k].items()}
        for k in ("names", "outputs", "foreign"):
            d[k] = tuple(d.get(k, ()))
        return Case(**d)


FINE, STOPPED, TRACEBACK, HANG, BAD_MESSAGE, HALF_WRITTEN = "fine", "stopped", "traceback", "hang", "bad message", "half-written"
CLOBBERED, UNESCAPED = "clobbered", "unescaped"
DEFECTS = (TRACEBACK, HANG, BAD_MESSAGE, HALF_WRITTEN, CLOBBERED, UNESCAPED)


@dataclass
class Outcome:
    kind: str
    code: int | str  # the exit code, or what stopped or interrupted the run
    stderr: str
    signature: str = ""  # what groups equal defects: the raising frame, or the message's shape


class Stop(BaseException):
    """Raised where the fuzzer keeps replcheck from starting Spark, a server or verify's work. A
    BaseException, so that main's `except Exception` cannot take it for an internal error."""


class Hang(BaseException):
    pass


def _stop(what: str) -> Callable:
    def stop(*_, **__):
        raise Stop(what)
    return stop


STOPS = (mock.patch.object(campaign, "spark_session", _stop("Spark")),
         mock.patch.object(MariaDB, "run", _stop("server")),
         mock.patch("replcheck.verify.verify", _stop("verify")))


@contextlib.contextmanager
def stops():
    with contextlib.ExitStack() as stack:
        for p in STOPS:
            stack.enter_context(p)
        yield


@contextlib.contextmanager
def _guard(seconds: float):
    """Hang, in the main thread, once the case has run `seconds`."""
    def alarm(*_):
        raise Hang()
    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _feed(fifo: Path, content: bytes, done: threading.Event) -> threading.Thread:
    """A writer for a FIFO input: it waits for a reader (replcheck may never open it), writes, closes."""
    def write():
        while not done.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: no reader yet
                done.wait(0.005)
                continue
            os.set_blocking(fd, True)
            try:
                os.write(fd, content)
            except BrokenPipeError:  # the reader gave up early
                pass
            finally:
                os.close(fd)
            return
    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def _state(path: Path) -> Any:
    """What a path holds, to tell whether a failed run changed it."""
    if path.is_symlink() or not path.exists():
        return os.readlink(path) if path.is_symlink() else None
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    if path.is_dir():
        return sorted((str(p.relative_to(path)), _state(p) if p.is_file() else "dir") for p in path.rglob("*"))
    return "special"


def materialise(case: Case, folder: Path) -> list[str]:
    for d in case.dirs:
        (folder / d).mkdir(parents=True, exist_ok=True)
    for rel, content in case.files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(content)
    for rel in case.fifos:
        os.mkfifo(folder / rel)
    for rel, to in case.links.items():
        (folder / rel).symlink_to(to)
    return [a.replace("{dir}", str(folder)) for a in case.argv]


@contextlib.contextmanager
def _laid_out(case: Case):
    """The case's folder with its files, its argv and what its outputs held before, the FIFOs' writers
    running; all removed afterwards."""
    folder, done, feeders = Path(tempfile.mkdtemp(prefix="replcheck-fuzz-")), threading.Event(), []
    try:
        argv = materialise(case, folder)
        before = {p: _state(folder / p) for p in case.outputs + case.foreign}
        feeders = [_feed(folder / rel, content, done) for rel, content in case.fifos.items()]
        yield folder, argv, before
    finally:
        done.set()
        for t in feeders:
            t.join()
        shutil.rmtree(folder, ignore_errors=True)


def run_case(case: Case, timeout: float = 10.0, main: Callable[[list[str]], int] = cli.main) -> Outcome:
    with _laid_out(case) as (folder, argv, before):
        out, err = _io.StringIO(), _io.StringIO()
        try:
            # in the case's folder: a relative path (--out '', a shifted argument) writes there, not in the checkout
            with contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), stops(), _guard(timeout):
                try:
                    code: int | str = main(argv)
                except SystemExit as e:  # argparse's --help and --version
                    code = e.code if isinstance(e.code, int) else 0 if e.code is None else 2
        except Stop as e:
            code = f"stop:{e.args[0]}"
        except Hang:
            code = "hang"
        except Exception as e:  # out of main itself: a traceback the user would see
            code = "raised"
            err.write("".join(traceback.format_exception(e)))
        stderr = err.getvalue() if not err.closed else ""
        return classify(case, folder, code, stderr, before, out.getvalue())


# Commands that start Spark, a server or verify's work, which only an in-process run can stop.
WORK = ("verify", "conform", "campaign")


def runs_as_a_process(case: Case) -> bool:
    """Whether the case can go through the real executable: no NUL in an argument (exec cannot pass
    one), and no command that would start real work unless the case must be refused before it."""
    return not any("\0" in a for a in case.argv) and (case.argv[:1] and case.argv[0] not in WORK or case.refuse)


def run_case_exec(case: Case, timeout: float = 60.0) -> Outcome:
    """The case through `python -m replcheck` in a process of its own, as a user runs it: the real
    streams, signal handlers and exit code. A case that outlives `timeout` is a hang."""
    with _laid_out(case) as (folder, argv, before):
        try:
            p = subprocess.run([sys.executable, "-m", "replcheck", *argv], cwd=folder, capture_output=True, timeout=timeout,
                               env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL)
            code: int | str = p.returncode if p.returncode >= 0 else f"signal {-p.returncode}"
            stdout, stderr = (x.decode("utf-8", "backslashreplace") for x in (p.stdout, p.stderr))
        except subprocess.TimeoutExpired:
            code, stdout, stderr = "hang", "", ""
        if "Traceback (most recent call last)" in stderr and code != cli.EXIT_INTERNAL:
            code = "raised"
        return classify(case, folder, code, stderr, before, stdout)


def classify(case: Case, folder: Path, code: int | str, stderr: str, before: dict, stdout: str = "") -> Outcome:
    if code == "hang":
        return Outcome(HANG, code, stderr, f"hang in {case.target}")
    if code == cli.EXIT_INTERNAL or code == "raised":
        return Outcome(TRACEBACK, code, stderr, traceback_signature(stderr))
    clobbered = [p for p in case.foreign if _state(folder / p) != before[p]]
    if clobbered:
        return Outcome(CLOBBERED, code, stderr, f"{case.target}: changed someone else's {clobbered[0]} (exit {code})")
    if case.refuse and code != cli.EXIT_USAGE:
        return Outcome(CLOBBERED, code, stderr, f"{case.target}: took someone else's --out (exit {code})")
    raw = _unescaped(folder / "out", stdout + stderr)
    if raw:
        return Outcome(UNESCAPED, code, stderr, f"{case.target}: {raw}")
    if code not in (cli.EXIT_OK, cli.EXIT_VIOLATION) and not str(code).startswith("stop:"):
        changed = [p for p in case.outputs if _state(folder / p) != before[p] or _staging_left(folder / p)]
        if changed:
            return Outcome(HALF_WRITTEN, code, stderr, f"{case.target}: a failed run changed {changed[0]}")
        problem = message_problem(case, folder, stderr) if code == cli.EXIT_USAGE else f"exit code {code}"
        if problem:
            return Outcome(BAD_MESSAGE, code, stderr, f"{case.target}: {problem}: {_shape(stderr, folder)}")
    return Outcome(STOPPED if str(code).startswith("stop:") else FINE, code, stderr)


TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but newline and tab
MARKUP = (".html", ".md", ".xml")


def _unescaped(out: Path, terminal: str) -> str:
    """Where a control reached the terminal, or a control or raw markup a file of the run, or ''."""
    if TERMINAL_CONTROLS.search(terminal):
        return "a terminal control on stdout or stderr"
    for p in sorted(out.rglob("*")) if out.is_dir() else ():
        if p.is_file() and not p.is_symlink() and p.stat().st_size < 50_000_000:
            text = p.read_bytes().decode("utf-8", "replace")
            if TERMINAL_CONTROLS.sub("", text.replace("\r", "")) != text.replace("\r", ""):
                return f"a control character in {p.suffix or p.name}"
            if p.suffix in MARKUP and "<script>alert" in text:
                return f"raw markup in {p.suffix}"
    return ""


def _shape(stderr: str, folder: Path) -> str:
    """A message without what varies between cases (the folder, numbers, quoted values): equal defects, one signature."""
    text = stderr.strip().split("\n")[-1].replace(str(folder), "DIR")
    return re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'…'", text))[:100]


def _staging_left(out: Path) -> bool:
    return any(out.parent.glob(f".{out.name}.*"))


FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def traceback_signature(stderr: str) -> str:
    """The exception's type and the innermost frame of replcheck's own code that it passed."""
    frames = [m for m in FRAME.finditer(stderr) if "/site-packages/" not in m.group(1) and "/lib/python" not in m.group(1)]
    last = [ln for ln in stderr.strip().splitlines() if ln and not ln.startswith((" ", "replcheck:", "Traceback"))]
    exc = last[-1].split(":")[0] if last else "?"
    if not frames:
        return exc
    f = frames[-1]
    return f"{exc} at {Path(f.group(1)).name}:{f.group(2)} in {f.group(3)}"


# A whole-file problem has no line or field to give.
WHOLE_FILE = ("cannot read", "not UTF-8", "empty file", "nested too deeply", "not a regular file", "not a directory")
# :LINE, or : FIELD: (`rows[0].status`, `column 7`, `ops[1] (at 5 µs)`, `verdicts."a source".X`)
LOCATION = re.compile(r'^(:\d+\b|: (?:[^\s:"]|"[^"]*")+( \d+| \([^)]*\))?: )')


def message_problem(case: Case, folder: Path, stderr: str) -> str:
    """Why an exit-2 stderr breaks the promise, or '' when it keeps it."""
    lines = stderr.strip("\n").split("\n") if stderr.strip() else []
    if len(lines) != 1 or not lines[0].startswith("replcheck: error: "):
        return f"{len(lines)} lines on stderr"
    line = lines[0]
    if len(line) > io.MAX_ERROR_LINE:
        return "over 300 characters"
    names = [io.printable(n.replace("{dir}", str(folder))) for n in case.names]
    # a one-character name ('-', '4') only as a word of its own, or it is found in any message
    named = [n for n in names if n and (n in line if len(n) > 1 else re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", line))]
    if not named:
        return "names neither the input nor the argument"
    if case.located:
        rest = line.split(named[0], 1)[1]
        if not LOCATION.match(rest) and not re.search(r"\bline \d+|end of document", rest) and not any(w in rest for w in WHOLE_FILE):
            return "names no line or field"
    return ""


# -- the real inputs ------------------------------------------------------------------------------
RELAY_LOG_INFO = ["5\n./relay.000001\n4\nbin.000001\n4\n0\n", "7\n./relay.000002\n1234\nbin.000003\n5678\n3600\nextra\n",
                  "./relay.000003\n1234\nbin.000001\n5678\n", "./relay.000003\n1234\nbin.000001\n5678\n99999999\n",
                  "5\n./relay.000001\n4\nbin.000001\n4\n2147483647\n"]


@cache
def seeds() -> dict[str, list[str]]:
    """The valid inputs every target starts from (texts)."""
    from replcheck.results import catches
    from replcheck.verify import Results, check_mutants, run_histories, summarise

    histories = sorted((REPO / "spec" / "histories").glob("*.jsonl")) + sorted((REPO / "corpus").glob("*.jsonl"))
    small = [h for h in histories if h.stat().st_size < 2500]  # quick to run: more cases per second
    traces = [io.dumps_lines(*systems.get(s).run(io.load_history(h)))
              for h, s in zip(small[::6], ["model:wl344", "model:wl7318", "mutant:start-timestamp"] * 10)]
    results = Results()
    names = ["model:wl7318", "mutant:start-timestamp"]
    run_histories([REPO / "spec" / "histories" / f"{h}.jsonl" for h in ("d1-normal-setup", "ss-counters")], names,
                  results, None, lambda _: None)
    check_mutants(results, names)
    summarise(results)
    verify_doc = results.document(seed=0, examples=1, systems=names, mutants=catches(results), searches=[],
                                  figures=results.figures)
    pytest_doc = {"schema": "replcheck.results/1", "findings": [], "rows": [
        {"source": "pytest", "system": "pytest", "history": "t.py::test", "requirement": "WL344.WAIT.RULE", "status": "violated",
         "checked": 1, "evidence": "pytest:t.py::test", "witnesses": [{"message": "m", "lines": [2]}], "reproduce": "pytest t.py"}]}
    plan = campaign.Plan(3, 1, ("model:wl344",), 2)
    return {
        "history": [h.read_text() for h in small],
        "trace": traces,
        "relay-log-info": RELAY_LOG_INFO,
        "results": [json.dumps(verify_doc, indent=1), json.dumps(pytest_doc)],
        "gate": [(REPO / "ci" / n).read_text() for n in ("models.toml", "mariadb.toml")],
        "campaign": [json.dumps({"schema": "replcheck.campaign/1", "replcheck": __version__,
                                 "plan": asdict(plan) | {"systems": list(plan.systems)}}, indent=1)],
    }


# -- the targets: what reads each input, and how ---------------------------------------------------
@dataclass(frozen=True)
class FileTarget:
    """A file input, mutated, and the commands that read it (`{in}` is the file, `{dir}` the case's folder)."""

    name: str
    seed: str  # the key of seeds()
    path: str  # where the input goes in the case folder
    commands: tuple[tuple[str, ...], ...]
    mutate: Callable[[random.Random, str, list[Callable]], bytes] = mutate_text
    outputs: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()  # other inputs, valid: (path, seeds() key)

    def make(self, rng: random.Random, seed_index: int, ops: list[Callable]) -> Case:
        pool = seeds()[self.seed]
        text = pool[seed_index % len(pool)]
        data = self.mutate(rng, text, ops)
        argv = [a.replace("{in}", "{dir}/" + self.path) for a in rng.choice(self.commands)]
        files = {self.path: data} | {p: seeds()[k][0].encode() for p, k in self.files}
        return Case(self.name, argv, files, names=(f"{{dir}}/{self.path}",), located=True, outputs=self.outputs)


HISTORY_COMMANDS = (
    ("simulate", "{in}", "--out", "{dir}/out/trace.jsonl"),
    ("simulate", "{in}", "--system", "mutant:start-timestamp"),
    ("explain", "{in}", "--system", "model:wl344"),
    ("explain", "{in}", "--system", "model:wl7318", "--other", "model:wl344"),
    ("shrink", "{in}", "--system", "model:wl344", "--out", "{dir}/out/trace.jsonl"),
    ("verify", "--histories", "{dir}/in", "--systems", "model:wl344", "--no-tlc", "--out", "{dir}/out/v"),
    ("conform", "--server", "mariadb", "--history", "{in}", "--out", "{dir}/out/v"),
)
FILE_TARGETS = (
    FileTarget("history", "history", "in/h.jsonl", HISTORY_COMMANDS, mutate_json_lines, outputs=("out",)),
    FileTarget("trace", "trace", "t.jsonl", (("check-trace", "{in}"), ("check-trace", "{in}", "--json", "--feature", "semisync")), mutate_json_lines),
    FileTarget("relay-log-info", "relay-log-info", "relay-log.info", (("relay-log-info", "{in}"),)),
    FileTarget("results", "results", "results.json",
               (("report", "{in}", "--out", "{dir}/out/r"), ("gate", "{dir}/g.toml", "{in}"),
                ("gate", "{dir}/out/new.toml", "{in}", "--write")),
               mutate_json_document, outputs=("out",), files=(("g.toml", "gate"),)),
    FileTarget("gate", "gate", "g.toml", (("gate", "{in}", "{dir}/r.json"),), files=(("r.json", "results"),)),
    FileTarget("campaign-folder", "campaign", "c/campaign.json",
               (("campaign", "--histories", "3", "--seed", "1", "--systems", "model:wl344", "--chunk", "2", "--out", "{dir}/c"),),
               mutate_json_document, outputs=("c",)),
)


# Each command's argv with every option given a valid value; `{name}` is a valid input file.
ARG_TEMPLATES = {
    "simulate": ("simulate", "{history}", "--system", "model:wl344", "--out", "{dir}/out/t.jsonl"),
    "check-trace": ("check-trace", "{trace}", "--feature", "delay", "--json"),
    "report": ("report", "{results}", "--out", "{dir}/out/r", "--title", "t"),
    "gate": ("gate", "{gate}", "{results}", "--name", "n", "--description", "d"),
    "systems": ("systems",),
    "replay": ("replay", "3", "1", "--system", "model:wl344", "--out", "{dir}/out/replay"),
    "shrink": ("shrink", "4", "0", "--system", "mutant:start-timestamp", "--requirement", "WL7318.F3", "--out", "{dir}/out/s.jsonl"),
    "explain": ("explain", "4", "0", "--system", "model:wl7318", "--other", "model:wl344", "--requirement", "WL344.WAIT.RULE"),
    "relay-log-info": ("relay-log-info", "{relay-log-info}"),
    "requirements": ("requirements", "--feature", "delay", "--json"),
    "campaign": ("campaign", "--histories", "3", "--seed", "1", "--systems", "model:wl344,model:wl7318", "--chunk", "2",
                 "--master", "local[1]", "--out", "{dir}/out/c"),
    "conform": ("conform", "--server", "mariadb", "--history", "{history}", "--scale", "0.1", "--out", "{dir}/out/conf",
                "--basedir", "/usr", "--tmpdir", "{dir}"),
    "verify": ("verify", "--seed", "1", "--examples", "1", "--systems", "model:wl344", "--histories", "{dir}/hist",
               "--no-tlc", "--out", "{dir}/out/verify"),
}
ODD_ARGS = ODD_TOKENS + ["-5", "00", "+3", "\uff13", "1_000", "model:nope", "model:wl344,", ",", "model:wl344,model:wl344",
                         "WL344.NOPE", "local[0]", "local[*", "--", "-", "--help", "mariadb\n"]
ODD_PATHS = ["{dir}", "{dir}/missing", "{dir}/fifo", "/dev/null", "", "{dir}/hist/h.jsonl/x", "{dir}/empty"]


@dataclass(frozen=True)
class ArgTarget:
    command: str

    def make(self, rng: random.Random, seed_index: int, ops: list[Callable]) -> Case:
        argv = list(ARG_TEMPLATES[self.command])
        inputs = {"history": ("h.jsonl", "history"), "trace": ("t.jsonl", "trace"), "results": ("r.json", "results"),
                  "gate": ("g.toml", "gate"), "relay-log-info": ("relay-log.info", "relay-log-info")}
        files = {"hist/h.jsonl": seeds()["history"][seed_index % len(seeds()["history"])].encode(), "empty": b""}
        fifo = seeds()["history"][0].encode()
        for i, a in enumerate(argv):
            if a.startswith("{") and a[1:-1] in inputs:
                rel, key = inputs[a[1:-1]]
                files[rel] = seeds()[key][seed_index % len(seeds()[key])].encode()
                fifo = files[rel]
                argv[i] = "{dir}/" + rel
        for _ in ops:
            i = rng.randrange(1, len(argv)) if len(argv) > 1 else 1
            how = rng.randrange(6)
            if how == 0 and i < len(argv):
                del argv[i]
            elif how == 1 and i < len(argv):
                argv.insert(i, argv[i])
            elif how == 2:
                argv.insert(i, rng.choice(["--bogus", "--out", "--system", "-x", "--seed=1", "--json"]))
            elif i < len(argv):  # a value: an odd token, or a path of an odd kind
                old = argv[i]
                argv[i] = rng.choice(ODD_PATHS) if "{dir}" in old or how == 3 else rng.choice(ODD_ARGS)
        # A FIFO only where an input is read, once: written to, it waits for a reader (as documented,
        # io.write_atomic), and read again, for a writer; as `cat FIFO FIFO` would, and the fuzzer provides neither.
        argv = ["{dir}/missing" if a == "{dir}/fifo" and (a in argv[:i] or argv[i - 1] == "--out" or "--write" in argv) else a
                for i, a in enumerate(argv)]
        # An argument is named by its value, its option (with or without dashes), or, by argparse,
        # after the subcommand; a short value quoted, as an empty one only can be.
        names = [n[:40] for a in argv[1:] for n in ((a, a.lstrip("-")) if a.strip("-") else (a,)) + (repr(a),)] + [f"{self.command}:"]
        outputs = ("out",) if any("{dir}/out" in a for a in ARG_TEMPLATES[self.command]) else ()
        return Case(f"args:{self.command}", argv, files, {"fifo": fifo}, ["out"],
                    names=tuple(n for n in names if len(n) <= 60), outputs=outputs)


# Each command that writes an output, with everything but the output valid; `{out}` is its --out.
DIRECTORY_WRITERS = {  # command -> (argv, the kind of replcheck output it replaces or adds to)
    "verify": (("verify", "--seed", "1", "--examples", "1", "--systems", "model:wl344", "--histories", "{dir}/hist",
                "--no-tlc", "--out", "{out}"), "report"),
    "conform": (("conform", "--server", "mariadb", "--history", "{dir}/hist/h.jsonl", "--out", "{out}"), "report"),
    "report": (("report", "{dir}/r.json", "--out", "{out}", "--title", "{title}"), "report"),
    "replay": (("replay", "3", "1", "--system", "model:wl344", "--out", "{out}"), "replay"),
    "campaign": (("campaign", "--histories", "3", "--seed", "1", "--systems", "model:wl344", "--chunk", "2",
                  "--master", "local[1]", "--out", "{out}"), "campaign"),
}
FILE_WRITERS = {  # shrink writes as simulate does (io.write_atomic), a search slower by a hundred
    "simulate": ("simulate", "{dir}/hist/h.jsonl", "--system", "model:wl344", "--out", "{out}"),
    "gate": ("gate", "{out}", "{dir}/r.json", "--write", "--name", "{title}", "--description", "{title}"),
}
# What may already be at --out: nothing, an empty folder, someone else's folder, file or link, or a replcheck output.
AT_OUT = ("nothing", "empty", "folder", "file", "link", "report", "replay", "campaign")


@dataclass(frozen=True)
class OutputTarget:
    """A writer whose --out already holds something: someone else's data is never changed, and a
    directory writer refuses it before any work; text passed in (a title, a name) reaches no output raw."""

    command: str

    def make(self, rng: random.Random, seed_index: int, ops: list[Callable]) -> Case:
        from mutations import HOSTILE_TEXTS

        directory = self.command in DIRECTORY_WRITERS
        argv, kind = DIRECTORY_WRITERS[self.command] if directory else (FILE_WRITERS[self.command], None)
        at = rng.choice(AT_OUT)
        title = rng.choice(HOSTILE_TEXTS + ["t"])
        argv = [a.replace("{out}", "{dir}/out/x").replace("{title}", title) for a in argv]
        history = seeds()["history"][seed_index % len(seeds()["history"])].encode()
        files = {"hist/h.jsonl": history, "r.json": seeds()["results"][seed_index % 2].encode()}
        dirs, foreign = ["out"], []
        marker = lambda k: json.dumps({"schema": "replcheck.output/1", "kind": k}).encode()  # noqa: E731
        if at == "empty":
            dirs.append("out/x")
        elif at in ("folder", "link"):
            where = "out/x" if at == "folder" else "elsewhere"
            files |= {f"{where}/thesis.txt": b"years of work", f"{where}/photos/a.jpg": b"\xff\xd8\xff"}
            foreign.append(where)
        elif at == "file":
            files["out/x"] = b"someone's notes"
            foreign += [] if not directory else ["out/x"]  # a file writer replaces a regular file: its promise
        elif at == "campaign":
            files["out/x/campaign.json"] = seeds()["campaign"][0].encode()
        else:
            files |= {"out/x/.replcheck-output": marker(at), "out/x/results.json": b"{}"}
        refuse = at in ("folder", "file", "link") and (directory or at != "file") or (
            directory and at in ("report", "replay", "campaign") and at != kind)
        return Case(f"outputs:{self.command}", argv, files, dirs=dirs, names=("{dir}/out/x", "x", "{dir}/hist/h.jsonl"), foreign=tuple(foreign),
                    refuse=refuse, links={"out/x": "../elsewhere"} if at == "link" else {})


TARGETS: dict[str, FileTarget | ArgTarget | OutputTarget] = (
    {t.name: t for t in FILE_TARGETS} | {f"args:{c}": ArgTarget(c) for c in ARG_TEMPLATES}
    | {f"outputs:{c}": OutputTarget(c) for c in [*DIRECTORY_WRITERS, *FILE_WRITERS]})


def case_from(target: str, rng: random.Random) -> Case:
    """One case from a seeded random.Random alone (the bench)."""
    ops = [rng.choice(OPERATORS) for _ in range(rng.randint(1, 3))]
    return TARGETS[target].make(rng, rng.randrange(1000), ops)


def case_rng(seed: int, number: int) -> random.Random:
    """Case `number` of a run with `seed`: its own stream, whatever ran before it."""
    return random.Random(f"{seed}:{number}")
