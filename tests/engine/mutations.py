"""The fuzzer's mutation operators (tests/engine/fuzzing.py says what each does and why): JSON
values, keys and node references, lines, bytes; each takes a `random.Random` and returns the input
mutated, so that a case is made again from its seed alone."""
from __future__ import annotations

import copy
import json
import random
import re
from typing import Any, Callable

US = 1_000_000


class Raw:
    """JSON text put in as it is: what json.dumps cannot write (NaN, 1e999, deep nesting, duplicate keys)."""

    def __init__(self, text: str):
        self.text = text


DEEP = 50_000
ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 1.5, -0.0, "", "x", "A\n", "\x1b[2J", "\u202e", "Z", "mutant:none", [], {}, [1], {"a": 1},
    2**31, 2**63, -(2**63) - 1, 10**30, 10**18, -10**18, 2**62, 10**400, -(10**400),  # past a float's range: still an int
    Raw("1e308"), Raw("-1e308"), Raw("1e999"), Raw("NaN"), Raw("-Infinity"), Raw("9" * 5000), Raw("1E400"),
    Raw('"\\ud800"'), Raw('"\\u0000"'), Raw("[" * DEEP + "]" * DEEP), Raw('{"a":' * 3000 + "1" + "}" * 3000),
]
# Text a user may pass through to an output: markup, terminal escapes (OSC, CSI in 7 and 8 bits, BEL), a NUL.
HOSTILE_TEXTS = ["<script>alert(1)</script>", "\x1b]0;pwned\x07", "\x1b[2J\x9b2J", "a|b`c`\n# h", "\x00", "x" * 5000]
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
        return rng.choice([old - 1, old + 1, -old, old * 10**6, old * 2 + 1 if abs(old) > 2**53 else old + 0.5, str(old)])
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
