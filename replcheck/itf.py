"""A Trace in ITF JSON, the Informal Trace Format of Apalache and Quint (ADR-015), so that other
TLA+ tools can read what a system did: one ITF state per observation, written with itf-py.

Each state has the variables `t` (µs of true time), `kind` and `observation` (the observation's
other fields, a record); its `#meta` names the observation's index and its line in the JSON
Lines Trace. The Trace's header is the ITF trace's `#meta.replcheck`. JSON values map to ITF's:
integers to `#bigint`, arrays to sequences, an object to a record when its keys can be record
fields (identifiers, no keyword, no leading underscore) and to a `#map` otherwise; a null (SQL's
NULL, as Seconds_Behind_Master shows it) is the tagged union `NULL` with the empty record as
its value, since ITF has no null.
"""
from __future__ import annotations

import json
import keyword
from collections import namedtuple
from types import SimpleNamespace
from typing import Any

import itf_py

ADR = "https://apalache-mc.org/docs/adr/015adr-trace.html"
VARS = ["t", "kind", "observation"]
# {"tag": "NULL", "value": {}}: the empty record as the unit value (itf-py reads a variant whose
# value is an object as a record, so not Quint's {"#tup": []})
NULL = itf_py.itf_variant(namedtuple("NULL", ["value"]))(SimpleNamespace())


def _field(key: str) -> bool:
    """A key that itf-py can read back as a record field (it builds a namedtuple)."""
    return key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("_")


def _value(v: Any) -> Any:
    if v is None:
        return NULL
    if isinstance(v, dict):
        values = {k: _value(x) for k, x in v.items()}
        return SimpleNamespace(**values) if all(map(_field, values)) else values
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


def trace(header: dict, obs: list[dict]) -> dict:
    """The ITF document of a Trace (its header and observations)."""
    states = [itf_py.State(meta={"index": i, "line": i + 2},
                           values={"t": o["t"], "kind": o["kind"],
                                   "observation": _value({k: v for k, v in o.items() if k not in ("t", "kind")})})
              for i, o in enumerate(obs)]
    meta = {"format": "ITF", "format-description": ADR, "source": "replcheck",
            "description": f"Trace of {header['system']} on History {header.get('history', '?')}", "replcheck": header}
    doc = itf_py.trace_to_json(itf_py.Trace(meta=meta, params=[], vars=VARS, states=states, loop=None))
    del doc["loop"]  # a finite trace: ADR-015's loop is an optional integer, never null
    return doc


def dumps(header: dict, obs: list[dict]) -> str:
    return json.dumps(trace(header, obs), ensure_ascii=False) + "\n"
