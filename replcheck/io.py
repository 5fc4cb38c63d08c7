"""Reading and writing Histories and Traces (JSON Lines), with one-line errors for bad input.

Every problem in an input file becomes an InputError naming the file, the line and the field;
the CLI prints it as one line and exits 2. Outputs are written to a temporary file and renamed,
so a failed run never leaves a half-written file behind.
"""
from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

import jsonschema_rs
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

from replcheck.spec.vocabulary import last_sample
from replcheck.spec import ROOT as SPEC


class InputError(Exception):
    def __init__(self, file: str, line: int | None, field: str, problem: str):
        self.file, self.line, self.field, self.problem = str(file), line, field, problem
        where = f"{file}:{line}" if line else f"{file}"
        super().__init__(": ".join(p for p in (where, field, problem) if p))


class SpecError(Exception):
    """A file of replcheck's own spec/ is broken: the installation's fault, not the user's input (exit 3)."""


@lru_cache(maxsize=None)
def schema(name: str) -> dict:
    return json.loads(SPEC.joinpath("schemas", f"{name}.schema.json").read_text())


# JSON has one number type, and jsonschema's "integer" takes 5.0 and 1e8; the code behind the
# loaders indexes, shifts and formats with these values, so an integer must be a Python int.
Validator = validators.extend(Draft202012Validator, type_checker=Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)))


@lru_cache(maxsize=None)
def _registry() -> Registry:
    """Every schema by its $id, so that one refers to another's definitions (a Trace's nodes are a History's)."""
    return Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in _schemas() if "$id" in s)


def _schemas() -> list[dict]:
    return [schema(p.name.removesuffix(".schema.json")) for p in sorted(SPEC.joinpath("schemas").iterdir())]


@dataclass(frozen=True)
class Schema:
    """One schema, compiled twice: jsonschema-rs answers "valid?" in about a microsecond, and the
    Python jsonschema, about 300 times slower, finds and words the error. A Trace of 10^6 lines
    is checked by the first; only a value the two could judge differently goes to the second."""

    slow: Draft202012Validator
    fast: Any

    def valid(self, obj: Any, plain: bool | None = None) -> bool:
        return (_plain(obj) if plain is None else plain) and self.fast.is_valid(obj)


def _plain(obj: Any) -> bool:
    """No float (an integer here must be a Python int, which jsonschema-rs does not tell from 5.0)
    and no integer beyond 2^53 (which it compares with a bound as a double); iterative, as obj
    may be nested as deep as the parser allows."""
    stack = [obj]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float) or (isinstance(node, int) and not -2**53 < node < 2**53):
            return False
    return True


@lru_cache(maxsize=None)
def _rs_registry() -> jsonschema_rs.Registry:
    return jsonschema_rs.Registry([(s["$id"], s) for s in _schemas() if "$id" in s])


def _compile(root: dict, node: dict) -> Schema:
    doc = {**node, "$defs": root["$defs"]}
    return Schema(Validator(doc, registry=_registry()),
                  jsonschema_rs.validator_for(doc, registry=_rs_registry(), base_uri=root["$id"]))


@lru_cache(maxsize=None)
def _validator(name: str, *path: str) -> Schema:
    root = schema(name)
    node: Any = root
    for p in path:
        node = node[p]
    return _compile(root, node)


@lru_cache(maxsize=None)
def _op_validator(op: str) -> Schema:
    """The op's own fields plus the common ones, and nothing else."""
    root = schema("history")
    common, own = root["$defs"]["op"], root["$defs"]["ops"][op]
    merged = {k: v for k, v in own.items() if k not in ("properties", "required", "description")}
    merged.update(type="object", additionalProperties=False,
                  properties={**common["properties"], **own.get("properties", {})},
                  required=common["required"] + own.get("required", []))
    return _compile(root, merged)


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_$-]+")


def field_path(prefix: str, parts: Iterable) -> str:
    """rows[0].status; a key with other characters (a space, a dot, a colon) quoted, to stay one field."""
    out = prefix
    for p in parts:
        key = p if _PLAIN_KEY.fullmatch(str(p)) else json.dumps(p, ensure_ascii=False)
        out += f"[{p}]" if isinstance(p, int) else (f".{key}" if out else key)
    return out


def validate_document(name: str, doc: Any, file: str | os.PathLike) -> None:
    """A whole JSON document against spec/schemas/NAME.schema.json."""
    _validate(_validator(name), doc, file, None, "")


def _validate(validator: Schema, obj: Any, file: str | os.PathLike, line: int | None, prefix: str,
              plain: bool | None = None) -> None:
    """plain: _plain(obj), when the caller validates obj against more than one schema."""
    if validator.valid(obj, plain):
        return
    err = best_match(validator.slow.iter_errors(obj))
    if err is None:
        return
    field = field_path(prefix, err.absolute_path)
    problem = err.message
    alternatives = err.validator_value if err.validator in ("anyOf", "oneOf") else []
    if err.validator == "required" and isinstance(err.instance, dict):
        missing = [r for r in err.validator_value if r not in err.instance]
        field, problem = field_path(prefix, [*err.absolute_path, missing[0]]), "missing (required)"
    elif field.endswith("delay") and err.validator in ("minimum", "maximum", "type"):
        problem = f"MASTER_DELAY {err.instance!r} is not an integer in 0..2147483647 (to exercise the server's error, use delay_sql)"
    elif err.validator == "additionalProperties":
        problem = f"unknown field: {problem}"
    elif alternatives and all("required" in a for a in alternatives):  # name the fields, not the whole op
        field = field or " | ".join(" + ".join(a["required"]) for a in alternatives)
        problem = "needs one of these" if err.validator == "anyOf" else "needs exactly one of these"
    elif err.validator == "not" and len(err.validator_value.get("required", ())) > 1:
        field, problem = field or ", ".join(err.validator_value["required"]), "exclude each other"
    elif err.validator == "not" and isinstance(err.instance, dict) and (banned := [
            r for a in err.validator_value.get("anyOf", [err.validator_value]) for r in a.get("required", ())
            if r in err.instance]):  # a field this kind of op does not take (an expectation's `show` decides)
        shown = f" with show {err.instance['show']!r}" if isinstance(err.instance.get("show"), str) else ""
        field, problem = field_path(prefix, [*err.absolute_path, banned[0]]), f"not allowed{shown}"
    elif isinstance(err.instance, (dict, list)):
        problem = problem.replace(repr(err.instance), "an object" if isinstance(err.instance, dict) else "an array")
    raise InputError(file, line, field, problem)


def _name_problem(path: str | os.PathLike) -> None:
    """An InputError for a name no file can have (the OS would raise ValueError, or find the current directory)."""
    if not str(path):  # Path("") is ".", the current directory
        raise InputError("''", None, "", "an empty file name")
    if "\0" in str(path):
        raise InputError(path, None, "", "a file name with a NUL byte")


def lstat(path: str | os.PathLike) -> os.stat_result | None:
    """What is at path (not following a symbolic link), None when nothing is; an InputError when the
    name cannot be looked up (too long, a NUL byte, a file where a directory should be, no permission)."""
    _name_problem(path)
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ENOTDIR:  # a parent is a file: nothing can be there
            return None
        raise InputError(path, None, "", f"cannot look up: {e.strerror or e}") from None


def is_dir(path: str | os.PathLike) -> bool:
    st = lstat(path)
    if st is not None and stat.S_ISLNK(st.st_mode):
        return Path(path).is_dir()  # a link to a directory is one to read from
    return st is not None and stat.S_ISDIR(st.st_mode)


def read_text(path: str | os.PathLike) -> str:
    _name_problem(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(path, None, "", f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise InputError(path, None, "", f"not UTF-8 text: {e.reason} at byte {e.start}") from None


class _LongInt(str):
    """An integer literal with more digits than int() converts: kept as text so that the loader can name its field."""


def _parse_int(text: str) -> int | _LongInt:
    try:
        return int(text)
    except ValueError:
        return _LongInt(text)


_SURROGATE = re.compile("[\ud800-\udfff]")


@lru_cache(maxsize=2)
def _long_digits(limit: int) -> re.Pattern:
    return re.compile(rf"[0-9]{{{limit + 1}}}")


def _first_unusable(doc: Any) -> tuple[list, str] | None:
    """The path to the first value no loader can use, and why: a _LongInt, or a lone surrogate
    (JSON's \\ud800 escape is no character: no output can be encoded with it); iterative, as doc
    may be nested as deep as the parser allows."""
    stack: list[tuple[Any, list]] = [(doc, [])]
    while stack:
        node, parts = stack.pop()
        if isinstance(node, _LongInt):
            return parts, f"an integer of more than {sys.get_int_max_str_digits()} digits"
        if isinstance(node, str) and _SURROGATE.search(node):
            return parts, "a lone surrogate (\\ud800-\\udfff) is not a character"
        bad_key = next((k for k in node if _SURROGATE.search(k)), None) if isinstance(node, dict) else None
        if bad_key is not None:
            return parts + [ascii(bad_key)[1:-1]], "a lone surrogate (\\ud800-\\udfff) in a key is not a character"
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        stack += reversed([(v, parts + [k]) for k, v in items])
    return None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|(NaN|-?Infinity)')


def _constant_line(text: str) -> int:
    """The line of the first NaN or Infinity outside a string (json gives parse_constant no position)."""
    at = next((m.start() for m in _TOKEN.finditer(text) if m.group(1)), 0)
    return text.count("\n", 0, at) + 1


def parse_json(text: str, path: str | os.PathLike, line: int | None = None) -> Any:
    """json.loads whose every failure is an InputError: bad syntax, nesting deeper than the parser's
    recursion allows, integers too long for int(), and Python's NaN and Infinity, which are not JSON."""
    try:
        doc = json.loads(text, parse_int=_parse_int, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise InputError(path, line or e.lineno, f"column {e.colno}", f"not valid JSON: {e.msg}") from None
    except RecursionError:
        raise InputError(path, line, "", "not valid JSON: nested too deeply") from None
    except ValueError as e:  # from _no_constant
        raise InputError(path, (line or 1) + _constant_line(text) - 1, "", f"not valid JSON: {e}") from None
    # only a \u escape makes a lone surrogate, and only a long run of digits a _LongInt: the walk is
    # for the lines that have one
    unusable = _first_unusable(doc) if "\\u" in text or _long_digits(sys.get_int_max_str_digits()).search(text) else None
    if unusable is not None:
        parts, problem = unusable
        if not parts and line is None:  # the document is that one value: it has no field, but a line
            line = text.count("\n", 0, len(text) - len(text.lstrip())) + 1
        raise InputError(path, line, field_path("", parts), problem)
    return doc


def parse_toml(text: str, path: str | os.PathLike) -> dict:
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise InputError(path, None, "", "not valid TOML: nested too deeply") from None
    except tomllib.TOMLDecodeError as e:  # its message gives the line
        raise InputError(path, None, "", f"not valid TOML: {e}") from None
    except ValueError:  # int()'s refusal of a too long integer, which has no position: found here
        digits = sys.get_int_max_str_digits()
        at = re.search(rf"[0-9_]{{{digits + 1},}}", text)
        line = text.count("\n", 0, at.start()) + 1 if at else None
        raise InputError(path, line, "", f"not valid TOML: an integer of more than {digits} digits") from None


def _read_lines(path: str | os.PathLike, text: str | None = None) -> list[tuple[int, Any]]:
    text = read_text(path) if text is None else text
    rows = []
    for n, raw in enumerate(text.split("\n"), 1):  # only \n ends a line: JSON text may hold U+2028 and the like
        if raw.strip():
            rows.append((n, parse_json(raw, path, n)))
    if not rows:
        raise InputError(path, None, "", "empty file: expected a header line")
    return rows


def load_history(path: str | os.PathLike) -> dict:
    rows = _read_lines(path)
    (hline, header), ops = rows[0], rows[1:]
    if not isinstance(header, dict) or "schema" not in header:
        raise InputError(path, hline, "schema", "line 1 must be the header with schema 'replcheck.history/1'")
    _validate(_validator("history", "$defs", "header"), header, path, hline, "")
    if len(ops) > MAX_OPS:
        raise InputError(path, ops[MAX_OPS][0], "op", f"more than the {MAX_OPS} ops a History may hold (split it)")
    out = []
    for n, op in ops:
        plain = _plain(op)
        _validate(_validator("history", "$defs", "op"), op, path, n, "", plain)
        _validate(_op_validator(op["op"]), op, path, n, "", plain)
        if op["op"] == "expect":  # its verdict is named after its place: EXPECT <file>:<line>
            op["_where"] = f"{Path(path).name}:{n}"
        out.append((n, op))
    _check_topology(path, hline, header["topology"], out)
    from replcheck import budget  # what its Trace would take in memory, held whole while it runs and is judged
    if (over := budget.over(header["topology"], out)) is not None:
        raise InputError(path, over[0], "op", f"the ops up to here write {over[1]} binlog event copies on the servers "
                         f"they reach, more than the {budget.MAX_EVENT_COPIES} a History may (its Trace is held in "
                         "memory, about 3 KB a copy: split it)")
    history = {"header": header, "ops": [op for _, op in out]}
    _check_samples(path, hline, history, out)
    _check_reads(path, out)
    return history


# Besides the samples, what a History's size does not bound: a read sees every transaction
# committed before it (as SELECT * does on a server), so reads x transactions is the Trace's size.
MAX_OPS = 1_000_000
MAX_READ_ROWS = 10_000_000


def _check_reads(path, ops: list[tuple[int, dict]]) -> None:
    made, rows = 0, 0
    for n, op in sorted(ops, key=lambda line_op: (line_op[1]["at"], line_op[1]["op"] == "read")):
        if op["op"] == "read":
            rows += made
            if rows > MAX_READ_ROWS:
                raise InputError(path, n, "op", f"the reads up to here may see {rows} transactions in all, more than "
                                 f"the {MAX_READ_ROWS} a History may ask for (read less often)")
        made += 1 if op["op"] == "trx" else len(op.get("trxs", ()))


# What a History may ask for besides its ops: every node is sampled every sample_every_us until
# the last op or end_us, so a short file could otherwise ask for 10^9 samples (hours and GBs).
# 10^5 is an 8-hour run of 3 nodes sampled every second, and simulates and judges in under a
# minute; the generated and embedded Histories take at most a few hundred.
MAX_SAMPLES = 100_000


def _check_samples(path, hline: int, history: dict, ops: list[tuple[int, dict]]) -> None:
    every = history["header"].get("sample_every_us")
    if not every:
        return
    span = last_sample(history)
    samples = span // every * len(history["header"]["topology"]["nodes"])
    if samples > MAX_SAMPLES:
        # blame what sets the span: the op that comes last, or end_us
        line, field = next(((n, "at") for n, op in ops if op["at"] == span and span > history["header"].get("end_us", 0)),
                           (hline, "end_us"))
        raise InputError(path, line, field, f"{span} µs sampled every {every} µs on "
                         f"{len(history['header']['topology']['nodes'])} nodes is {samples} samples, more than the "
                         f"{MAX_SAMPLES} a History may ask for (sample less often, or run shorter)")


# ops of a replica's one source: a replica with named connections (multi-source) has none of them
MULTI_SOURCE_REFUSED = ("failover", "restore", "lose_acks")


def _check_acyclic(path, hline: int, sources: dict[str, list[str]]) -> None:
    """Circular replication (a server replicating, through others, from itself) is not modelled."""
    done: set[str] = set()

    def visit(n: str, trail: list[str]) -> None:
        if n in trail:
            ring = trail[trail.index(n):] + [n]
            raise InputError(path, hline, "topology.channels", f"circular replication {' -> '.join(reversed(ring))} is not modelled")
        if n in done:
            return
        for s in sources.get(n, ()):
            visit(s, trail + [n])
        done.add(n)

    for start in sources:
        visit(start, [])


NODE_FIELDS = {"restore": ("from", "source"), "change_master": ("master_host",), "restart": ("master",)}  # besides `node`, what names a node


def _check_topology(path, hline: int, topo: dict, ops: list[tuple[int, dict]]) -> None:
    ids, servers = set(), set()
    for i, node in enumerate(topo["nodes"]):
        if node["id"] in ids:
            raise InputError(path, hline, f"topology.nodes[{i}].id", f"duplicate node id {node['id']!r}")
        ids.add(node["id"])
        sid = node.get("server_id", i + 1)
        if sid in servers:
            raise InputError(path, hline, f"topology.nodes[{i}].server_id", f"duplicate server_id {sid}")
        servers.add(sid)
    sources: dict[str, list[str]] = {}
    connections: dict[str, dict[str | None, str]] = {}  # replica -> connection name (None: unnamed) -> source
    for i, c in enumerate(topo.get("channels", [])):
        for end in ("source", "replica"):
            if c[end] not in ids:
                raise InputError(path, hline, f"topology.channels[{i}].{end}", f"unknown node {c[end]!r}")
        named = connections.setdefault(c["replica"], {})
        name = c.get("connection")
        if name in named:
            raise InputError(path, hline, f"topology.channels[{i}].connection", f"{c['replica']!r} already has a connection "
                             f"named {name!r}" if name is not None else f"{c['replica']!r} already has a source (name each "
                             f"of a multi-source replica's connections)")
        if named and (name is None or None in named):
            raise InputError(path, hline, f"topology.channels[{i}].connection", f"{c['replica']!r} has several sources: name "
                             f"each of its connections")
        if c["source"] in named.values():
            raise InputError(path, hline, f"topology.channels[{i}].source", f"{c['replica']!r} already replicates from {c['source']!r}")
        named[name] = c["source"]
        sources.setdefault(c["replica"], []).append(c["source"])
    _check_acyclic(path, hline, sources)
    trx_names = set()
    for n, op in ops:
        for field in ("node", *NODE_FIELDS.get(op["op"], ())):
            if field in op and op[field] not in ids:
                raise InputError(path, n, field, f"unknown node {op[field]!r}")
        if "connection" in op and op["connection"] not in connections.get(op["node"], {}):
            raise InputError(path, n, "connection", f"{op['node']!r} has no connection named {op['connection']!r}")
        if op["op"] in MULTI_SOURCE_REFUSED and None not in connections.get(op["node"], {None: ""}):
            raise InputError(path, n, "op", f"op {op['op']} of a multi-source replica is not modelled")
        if op["op"] in ("start_all_slaves", "stop_all_slaves") and op["node"] not in connections:
            raise InputError(path, n, "op", f"op {op['op']}: {op['node']!r} has no connection")
        if op["op"] == "trx" and "trx" in op:
            if op["trx"] in trx_names:
                raise InputError(path, n, "trx", f"duplicate transaction name {op['trx']!r}")
            trx_names.add(op["trx"])


def load_trace(path: str | os.PathLike, text: str | None = None) -> tuple[dict, list[dict]]:
    """`text`: the Trace's lines already read (a campaign table's), `path` naming where in errors."""
    rows = _read_lines(path, text)
    (hline, header), obs = rows[0], rows[1:]
    if not isinstance(header, dict) or header.get("schema") != "replcheck.trace/1":
        raise InputError(path, hline, "schema", "line 1 must be the header with schema 'replcheck.trace/1'")
    _validate(_validator("trace", "$defs", "header"), header, path, hline, "")
    ids = {node["id"] for node in header["topology"]["nodes"]}
    out, last_t = [], 0
    for n, o in obs:
        plain = _plain(o)
        _validate(_validator("trace", "$defs", "observation"), o, path, n, "", plain)
        _validate(_kind_validator(o["kind"]), o, path, n, "", plain)
        for field in ("node", "source"):  # what the properties index their per-node state by
            if isinstance(o.get(field), str) and o[field] not in ids:
                raise InputError(path, n, field, f"unknown node {o[field]!r} (not in the header's topology)")
        if o["t"] < last_t:
            raise InputError(path, n, "t", f"{o['t']} is earlier than the previous observation's {last_t}")
        last_t = o["t"]
        o["_line"] = n
        out.append(o)
    return header, out


@lru_cache(maxsize=None)
def _kind_validator(kind: str) -> Schema:
    return _validator("trace", "$defs", "kinds", kind)


def dumps_lines(header: dict, rows: Iterable[dict]) -> str:
    """JSON Lines, one object per line, keys in their insertion order: byte-identical for equal input."""
    return _joined([_LINE.encode(header)]) + dumps_rows(rows)


def dumps_rows(rows: Iterable[dict]) -> str:
    """What dumps_lines writes after the header line: the same for equal rows whatever the header."""
    line = _LINE.encode
    out = [line({k: v for k, v in r.items() if not k.startswith("_")}) for r in rows]
    return _joined(out) if out else ""


def _joined(lines: list[str]) -> str:
    # json.dumps leaves C1 controls raw; as \\u escapes the text stays the same JSON and passes a CleanStream as it is
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", "\n".join(lines)) + "\n"


def dumps_history(history: dict) -> str:
    return dumps_lines(history["header"], history["ops"])


# json.dumps(x, ensure_ascii=False) is this encoder's encode(x), but makes the encoder anew at each
# call: a third of a Trace's digest
_LINE = json.JSONEncoder(ensure_ascii=False)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_C1 = re.compile(r"[\x7f-\x9f]")  # DEL and C1: what json.dumps(ensure_ascii=False) leaves raw
_CONTROL_NOT_NEWLINE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # what XML 1.0 forbids or discourages
MAX_ERROR_LINE = 300


def _hex(m: re.Match) -> str:
    return f"\\x{ord(m.group()):02x}"


def printable(text: str) -> str:
    """Text from input with its terminal controls (C0 with newline and ESC, DEL, C1) shown as \\xNN:
    echoed on a terminal, it can neither move the cursor nor forge a line of ours."""
    return _CONTROL.sub(_hex, text)


def markup(text: str) -> str:
    """Text for HTML or XML: the controls a document may not hold shown as \\xNN (tab and line ends kept)."""
    return _NOT_XML.sub(_hex, text)


class CleanStream:
    """stdout or stderr with every terminal control but newline and tab shown as \\xNN, so nothing a
    History or a file says (a name, a message) can reach the terminal as an escape sequence."""

    def __init__(self, inner):
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(_CONTROL_NOT_NEWLINE.sub(_hex, text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


def error_line(message: str) -> str:
    """The one line a bad input gets on stderr, at most MAX_ERROR_LINE characters: the problem, last, is cut."""
    line = f"replcheck: error: {printable(message)}"
    return line if len(line) <= MAX_ERROR_LINE else line[:MAX_ERROR_LINE - 1] + "\u2026"


def progress(command: str) -> Callable[[str], None]:
    """How long work shows progress: one line on stderr per step, `[command] what`."""
    return lambda msg: print(f"[{command}] {msg}", file=sys.stderr, flush=True)


# The mode a new file gets, for the temporary file (mkstemp makes it 0600). Read once, at import,
# before any thread starts: os.umask can only be read by setting it.
UMASK = os.umask(0o022)
os.umask(UMASK)


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """A regular file, or a new one, is replaced whole by renaming a temporary file over it, so a failed
    run never leaves it half-written; a FIFO or character device (/dev/stdout) is written straight, as
    the rename would replace it with a file; anything else (a symbolic link, a directory) is refused."""
    path = Path(path)
    st = lstat(path)
    mode = st.st_mode if st is not None else None
    try:
        _write(path, mode, text)
    except OSError as e:  # a parent that is a file, no permission, a full disk
        raise InputError(path, None, "", f"cannot write: {e.strerror or e}") from None


def check_output(path: str | os.PathLike) -> None:
    """What write_atomic would refuse at PATH, refused before any work starts."""
    st = lstat(path)
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
        raise InputError(path, None, "", "not a regular file, FIFO or character device: refused as an output")


def _write(path: Path, mode: int | None, text: str) -> None:
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    check_output(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, stat.S_IMODE(mode) if mode is not None else 0o666 & ~UMASK)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
