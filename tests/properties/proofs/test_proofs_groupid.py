"""The group-ID proofs reach their outcomes, each could fail (a broken rule gives a
counterexample), and the counterexamples really break the claim when replayed in Python."""
from __future__ import annotations

import json

import pytest

from replcheck.properties.core import COUNTEREXAMPLE, PROOFS, PROVED
from replcheck.properties.proofs import groupid as P
from replcheck.spec import formats as F

NAMES = {
    "group_ids_unique": ("GGID.UNIQUE",),
    "index_line_parse_unique": ("GGID.INDEX.GRAMMAR",),
    "old_index_lines_read_as_paths": ("GGID.INDEX.OLD_FORMAT",),
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_registered_proofs_are_proved(name):
    [p] = [p for p in PROOFS if p.name == name and p.fn.__module__ == P.__name__]
    result = p.run()
    assert result.requirements == NAMES[name] and result.expected == result.outcome == PROVED, result.detail
    assert json.loads(json.dumps(result.detail)) == result.detail


def test_uniqueness_proved_for_each_topology_size():
    outcome, detail = P.ids_unique()
    assert outcome == PROVED and detail == {f"{n} servers": PROVED for n in range(2, P.MAX_SERVERS + 1)}


@pytest.mark.parametrize("broken,step", [
    ({"filtering": False}, "issue@"),  # a slave issuing IDs for its own writes
    ({"continuation": "zero"}, "failover@"),  # a new root starting again from 0
    ({"election": "any"}, "failover@"),  # promoting a slave that is not the most advanced
    ({"recovery": "index-ignored"}, "crash@"),  # recovery trusting a stale summary (Bug #113489)
])
def test_uniqueness_fails_with_a_broken_rule(broken, step):
    outcome, detail = P.ids_unique(**broken)
    assert outcome == COUNTEREXAMPLE
    cex = [d for d in detail.values() if isinstance(d, dict)]
    assert cex and all(d["step"].startswith(step) for d in cex)
    for d in cex:  # replayed: after the step the invariant is broken, or the issued ID is not fresh
        before, after = d["before"], d["after"]
        roots = [s for s in after if s["alive"] and s["root"]]
        changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
        fresh = all(after[i]["last"] > s["last"] for i in changed for j, s in enumerate(before) if j != i and s["alive"])
        assert len(roots) != 1 or any(s["alive"] and s["last"] > roots[0]["last"] for s in after) or not fresh


def test_naive_split_counterexample_really_misparses():
    outcome, detail = P.index_parse_unique("first")
    assert outcome == COUNTEREXAMPLE
    line = detail["line"].encode("latin-1")
    path = line[:detail["path_length"]]
    naive_path = line[:-1].split(b"|", 1)[0]
    assert naive_path != path  # the naive reader gets another path ...
    assert F.parse_index_line(line).path == path  # ... the shared reader the right one


def test_naive_old_format_test_counterexample_really_misreads():
    outcome, detail = P.old_format_recognised("contains")
    assert outcome == COUNTEREXAMPLE
    line = detail["line"].encode("latin-1")
    assert b"|" in line and line[-7:-6] == b"."
    assert F.parse_index_line(line) == F.IndexEntry(line, 0, True)
