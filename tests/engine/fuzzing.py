"""The bad-input fuzzer of issue #15: structured mutations of real inputs, each run in-process
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
import copy
import hashlib
import io as _io
import json
import os
import random
import re
import shutil
import signal
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

REPO = Path(__file__).resolve().parents[2]
US = 1_000_000


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
        d["names"], d["outputs"] = tuple(d["names"]), tuple(d["outputs"])
        return Case(**d)


FINE, STOPPED, TRACEBACK, HANG, BAD_MESSAGE, HALF_WRITTEN = "fine", "stopped", "traceback", "hang", "bad message", "half-written"
DEFECTS = (TRACEBACK, HANG, BAD_MESSAGE, HALF_WRITTEN)


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
    return [a.replace("{dir}", str(folder)) for a in case.argv]


def run_case(case: Case, timeout: float = 10.0, main: Callable[[list[str]], int] = cli.main) -> Outcome:
    folder = Path(tempfile.mkdtemp(prefix="replcheck-fuzz-"))
    try:
        argv = materialise(case, folder)
        before = {p: _state(folder / p) for p in case.outputs}
        done = threading.Event()
        feeders = [_feed(folder / rel, content, done) for rel, content in case.fifos.items()]
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
        finally:
            done.set()
            for t in feeders:
                t.join()
        stderr = err.getvalue() if not err.closed else ""
        return classify(case, folder, code, stderr, before)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def classify(case: Case, folder: Path, code: int | str, stderr: str, before: dict) -> Outcome:
    if code == "hang":
        return Outcome(HANG, code, stderr, f"hang in {case.target}")
    if code == cli.EXIT_INTERNAL or code == "raised":
        return Outcome(TRACEBACK, code, stderr, traceback_signature(stderr))
    if code not in (cli.EXIT_OK, cli.EXIT_VIOLATION) and not str(code).startswith("stop:"):
        changed = [p for p in case.outputs if _state(folder / p) != before[p] or _staging_left(folder / p)]
        if changed:
            return Outcome(HALF_WRITTEN, code, stderr, f"{case.target}: a failed run changed {changed[0]}")
        problem = message_problem(case, folder, stderr) if code == cli.EXIT_USAGE else f"exit code {code}"
        if problem:
            return Outcome(BAD_MESSAGE, code, stderr, f"{case.target}: {problem}: {_shape(stderr, folder)}")
    return Outcome(STOPPED if str(code).startswith("stop:") else FINE, code, stderr)


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


# -- mutation operators ---------------------------------------------------------------------------
class Raw:
    """JSON text put in as it is: what json.dumps cannot write (NaN, 1e999, deep nesting, duplicate keys)."""

    def __init__(self, text: str):
        self.text = text


DEEP = 50_000
ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 1.5, -0.0, "", "x", "A\n", "\x1b[2J", "\u202e", "Z", "mutant:none", [], {}, [1], {"a": 1},
    2**31, 2**63, -(2**63) - 1, 10**30, 10**18, -10**18, 2**62,
    Raw("1e308"), Raw("-1e308"), Raw("1e999"), Raw("NaN"), Raw("-Infinity"), Raw("9" * 5000), Raw("1E400"),
    Raw('"\\ud800"'), Raw('"\\u0000"'), Raw("[" * DEEP + "]" * DEEP), Raw('{"a":' * 3000 + "1" + "}" * 3000),
]
ODD_TOKENS = ["", " ", "-1", "0", "1.5", "1e3", "2147483648", "9223372036854775808", "9" * 5000, "\u0663", "\u00b2",
              "0x10", " 7", "7 ", "nan", "inf", "-inf", "true", "[1, 2]", "{a = 1}", '"x"', "'x'", '"A\\n"', "[[[[",
              "\x00", "\x1b[2J", "\u202e", "=", "[section]", '"unterminated', "1979-05-27T07:32:00Z"]
ODD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\x1b", b"\r", b"\xef\xbb\xbf", b"\x85", b"\xe2\x80\xa8"]


def _paths(doc: Any, limit: int = 2000) -> list[tuple]:
    """Every node's path (keys and indices), breadth first, at most `limit`."""
    out, queue = [()], [((), doc)]
    while queue and len(out) < limit:
        path, node = queue.pop(0)
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            out.append(path + (k,))
            queue.append((path + (k,), v))
    return out


def _get(doc: Any, path: tuple) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _with(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


def dumps(doc: Any, indent: int | None = None) -> str:
    """json.dumps with Raw values as their text."""
    raws: list[str] = []

    def swap(node):
        if isinstance(node, Raw):
            raws.append(node.text)
            return f"\ue000{len(raws) - 1}\ue000"
        if isinstance(node, dict):
            return {k: swap(v) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v) for v in node]
        return node
    text = json.dumps(swap(doc), ensure_ascii=False, indent=indent)
    return re.sub('"\ue000(\\d+)\ue000"', lambda m: raws[int(m.group(1))], text)


def odd_value(rng: random.Random, old: Any) -> Any:
    if isinstance(old, int) and not isinstance(old, bool) and rng.random() < 0.3:  # near the original: an edge
        return rng.choice([old - 1, old + 1, -old, old * 10**6, old + 0.5, str(old)])
    # a copy: a later mutation of the doc must not change the shared value (or put it inside itself)
    return copy.deepcopy(rng.choice(ODD_VALUES))


def json_value(rng: random.Random, doc: Any) -> Any:
    path = rng.choice(_paths(doc))
    return _with(doc, path, odd_value(rng, _get(doc, path)))


def json_key(rng: random.Random, doc: Any) -> Any:
    """Drop, rename or duplicate a key, swap two keys' values, or add an unknown one."""
    objects = [p for p in _paths(doc) if isinstance(_get(doc, p), dict) and _get(doc, p)]
    if not objects:
        return json_value(rng, doc)
    path = rng.choice(objects)
    obj = _get(doc, path)
    keys = list(obj)
    key = rng.choice(keys)
    how = rng.randrange(5)
    if how == 0:
        del obj[key]
    elif how == 1:
        obj[key + rng.choice(["_", "X", " ", "\n"])] = obj.pop(key)
    elif how == 2:  # a duplicate key: JSON text allows it, the last one wins
        body = dumps(obj)[1:-1]
        return _with(doc, path, Raw("{" + body + ", " + json.dumps(key) + ": " + dumps(odd_value(rng, obj[key])) + "}"))
    elif how == 3 and len(keys) > 1:
        other = rng.choice(keys)
        obj[key], obj[other] = obj[other], obj[key]
    else:
        obj[rng.choice(["unknown", "_line", "extra", "t", "node"])] = odd_value(rng, None)
    return doc


def json_node_ref(rng: random.Random, doc: Any) -> Any:
    """A string that names a node, a transaction or a system becomes one that names nothing."""
    strings = [p for p in _paths(doc) if isinstance(_get(doc, p), str)]
    if not strings:
        return json_value(rng, doc)
    path = rng.choice(strings)
    old = _get(doc, path)
    return _with(doc, path, rng.choice(["Z", old + "2", old.lower(), old + "\n", old * 50, "A" if old != "A" else "B"]))


def json_time(rng: random.Random, doc: Any) -> Any:
    """A time or count at its extremes: times are what the simulator loops over."""
    ints = [p for p in _paths(doc) if isinstance(_get(doc, p), int) and not isinstance(_get(doc, p), bool)]
    if not ints:
        return json_value(rng, doc)
    return _with(doc, rng.choice(ints), rng.choice([0, -1, 1, 2**53, 2**62, 2**63 - 1, 2**64, 10**12, 3600 * US, 86400 * 365 * US]))


JSON_OPS = (json_value, json_key, json_node_ref, json_time)


def lines_op(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    how = rng.randrange(6)
    if how == 0:
        del lines[i]
    elif how == 1:
        lines.insert(i, lines[j])
    elif how == 2:
        lines[i], lines[j] = lines[j], lines[i]
    elif how == 3:
        lines.insert(i, rng.choice(["", " ", "\t", "null", "[]", "{}", "#"]))
    elif how == 4:  # the value of a `key = value` line, or the whole line
        key, eq, _ = lines[i].partition("=")
        lines[i] = (key + eq + " " if eq else "") + rng.choice(ODD_TOKENS)
    else:
        lines = lines[:i]
    return "\n".join(lines)


def bytes_op(rng: random.Random, data: bytes) -> bytes:
    how = rng.randrange(5)
    at = rng.randrange(len(data) + 1)
    if how == 0:
        return data[:at]
    if how == 1:
        return data[:at] + rng.choice(ODD_BYTES) + data[at:]
    if how == 2:
        return data.replace(b"\n", b"\r\n")
    if how == 3:
        return rng.choice([b"", b"\n", b"\n\n", b" ", b"\xef\xbb\xbf"]) + (data if rng.random() < 0.5 else b"")
    return data.rstrip(b"\n") if rng.random() < 0.5 else data + b"\n" * rng.randrange(1, 4)


def mutate_json_lines(rng: random.Random, text: str, ops: list[Callable]) -> bytes:
    """JSON Lines, one JSON value per line."""
    lines = text.rstrip("\n").split("\n")
    for op in ops:
        i = rng.randrange(len(lines))
        doc = _loads(lines[i])
        if op in JSON_OPS and doc is not None:
            lines[i] = dumps(op(rng, doc))
        elif op is not bytes_op:  # a JSON operator on a line no longer JSON works on the lines
            lines = lines_op(rng, "\n".join(lines)).split("\n")
    return _bytes_ops(rng, ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"), ops)


def mutate_json_document(rng: random.Random, text: str, ops: list[Callable]) -> bytes:
    """One JSON document over many lines: the JSON operators first, then the others on its lines."""
    doc = json.loads(text)
    for op in ops:
        if op in JSON_OPS:
            doc = op(rng, doc)
    return mutate_text(rng, dumps(doc, indent=1), [op for op in ops if op not in JSON_OPS])


def _loads(line: str) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # a Raw value (NaN, deep nesting, ...) or a mutated line
        return None


def mutate_text(rng: random.Random, text: str, ops: list[Callable]) -> bytes:
    for op in ops:
        if op is not bytes_op:  # no JSON here: a JSON operator works on the lines
            text = lines_op(rng, text)
    return _bytes_ops(rng, text.encode("utf-8", "surrogatepass"), ops)


def _bytes_ops(rng: random.Random, data: bytes, ops: list[Callable]) -> bytes:
    for op in ops:
        if op is bytes_op:
            data = op(rng, data)
    return data


OPERATORS = (*JSON_OPS, lines_op, bytes_op)


# -- the real inputs ------------------------------------------------------------------------------
RELAY_LOG_INFO = ["5\n./relay.000001\n4\nbin.000001\n4\n0\n", "7\n./relay.000002\n1234\nbin.000003\n5678\n3600\nextra\n",
                  "./relay.000003\n1234\nbin.000001\n5678\n", "./relay.000003\n1234\nbin.000001\n5678\n99999999\n",
                  "5\n./relay.000001\n4\nbin.000001\n4\n2147483647\n"]


@cache
def seeds() -> dict[str, list[str]]:
    """The valid inputs every target starts from (texts)."""
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
    verify_doc = {"schema": "replcheck.results/1", "seed": 0, "examples": 1, "systems": names,
                  "findings": results.findings, "mutants": {m: sorted(set(c)) for m, c in results.caught.items()},
                  "searches": [], "figures": results.figures, "rows": results.rows}
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


TARGETS: dict[str, FileTarget | ArgTarget] = {t.name: t for t in FILE_TARGETS} | {f"args:{c}": ArgTarget(c) for c in ARG_TEMPLATES}


def case_from(target: str, rng: random.Random) -> Case:
    """One case from a seeded random.Random alone (the bench)."""
    ops = [rng.choice(OPERATORS) for _ in range(rng.randint(1, 3))]
    return TARGETS[target].make(rng, rng.randrange(1000), ops)


def case_rng(seed: int, number: int) -> random.Random:
    """Case `number` of a run with `seed`: its own stream, whatever ran before it."""
    return random.Random(f"{seed}:{number}")
