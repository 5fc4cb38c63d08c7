"""The mixed family: several families' steps on one topology (A -> B -> C, B delayed, filtered,
multi-threaded, semi-sync in any combination), drawn in campaigns and by name: its Histories are schema-valid, draw
the vocabulary no single family drew, and run on every model."""
from __future__ import annotations

from collections import Counter

import pytest

from replcheck import io, systems
from replcheck.generate import COMPOSED, COMPOSED_ORDER, DRAW, FAMILIES, generate
from replcheck.model.steps import families

MIXED = ("mixed",)


def test_a_composed_family_is_drawn_in_campaigns_after_the_families_and_by_name():
    assert set(COMPOSED) == {"mixed"} and not set(COMPOSED) & set(FAMILIES) and "mixed" not in families()
    assert DRAW == (*FAMILIES, *COMPOSED_ORDER) and set(COMPOSED_ORDER) == set(COMPOSED)
    drawn = Counter(generate(5, i)["header"]["name"].split("-")[1] for i in range(180))
    assert set(drawn) == set(DRAW) and drawn["mixed"] >= 180 // len(DRAW) // 2
    assert generate(5, 0, MIXED)["header"]["name"] == "gen-mixed-5-0"


def test_mixed_histories_validate_and_draw_the_whole_vocabulary(tmp_path):
    ops, kinds = Counter(), Counter()
    path = tmp_path / "h.jsonl"
    for i in range(150):
        h = generate(2, i, MIXED)
        path.write_text(io.dumps_history(h))
        io.load_history(path)  # raises InputError on anything the schema refuses
        ops.update(o["op"] for o in h["ops"])
        kinds.update(k for o in h["ops"] if o["op"] == "trx" for k in ("engine", "ddl", "binlog_failure", "timestamp",
                                                                         "skip_replication", "domain") if k in o)
    assert {"flush_relay_logs", "set_global", "shutdown", "crash", "restart", "cut_io", "record_incident",
            "lose_acks", "change_master", "clock_step", "flush_logs"} <= set(ops)
    assert {"engine", "ddl", "binlog_failure", "timestamp", "skip_replication", "domain"} <= set(kinds)


@pytest.mark.parametrize("system", sorted(n for n in systems.systems() if n.startswith("model:")))
def test_mixed_histories_run_on_every_model(system):
    for i in range(6):
        header, obs = systems.get(system).run(generate(0, i, MIXED))
        assert obs and {"B", "C"} <= {o["node"] for o in obs if o["kind"] == "status"}, (system, i)
