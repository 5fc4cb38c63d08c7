"""The view every property judges a Trace through (properties/core.py TraceView): its lines, its
per-node indexes and what judge_trace leaves of the Trace after judging it."""
from __future__ import annotations

import pytest

from replcheck import systems
from replcheck.generate import generate
from replcheck.properties.core import Seq, TraceView, seconds
from replcheck.properties.judge import judge_trace
from replcheck.spec.contract import Trace

HEADER = {"schema": "replcheck.trace/1", "system": "test", "topology": {"nodes": [{"id": "m"}, {"id": "r"}], "channels": []}}


def _obs() -> list[dict]:
    return [{"t": 0, "node": "m", "kind": "commit", "trx": "T1"},
            {"t": 1, "node": "r", "kind": "apply", "trx": "T1"},
            {"t": 2, "node": "m", "kind": "stmt", "op": "stop_slave", "returned": False},
            {"t": 3, "node": "m", "kind": "binlog", "trx": "T2"},
            {"t": 4, "node": "r", "kind": "stmt", "op": "start_slave", "connection": "a"},
            {"t": 5, "node": "m", "kind": "commit", "trx": "T2"}]


def test_a_view_numbers_copies_unless_given_a_list_to_number_in_place():
    obs = _obs()
    view = TraceView(HEADER, obs)
    assert [o["_line"] for o in view.obs] == [2, 3, 5, 7] and not any("_line" in o for o in obs)
    numbered: list[dict] = []
    view = TraceView(HEADER, obs, numbered)
    assert view.obs == [obs[0], obs[1], obs[3], obs[5]] and view.obs[0] is obs[0]
    assert numbered == obs and [o["_line"] for o in obs] == [2, 3, 4, 5, 6, 7]
    assert [o["_line"] for o in view.unanswered] == [4] and [o["_line"] for o in view.connected] == [6]
    assert view.present == {"commit", "apply", "binlog", "stmt", "stmt:start_slave"}


def test_judging_leaves_the_trace_as_the_system_wrote_it_even_when_it_fails():
    def trace() -> Trace:
        return Trace(*systems.get("model:wl344").run(generate(3, 0)))

    judged, written = trace(), trace()
    assert judge_trace(judged).verdicts and judged == written
    broken = trace()
    del broken.observations[len(broken.observations) // 2]["kind"]
    with pytest.raises(KeyError):
        judge_trace(broken)
    assert not any("_line" in o for o in broken.observations)


def test_of_node_gives_a_nodes_observations_of_its_kinds_in_trace_order():
    view = TraceView(HEADER, _obs())
    assert [o["_line"] for o in view.of_node("m")] == [2, 5, 7]
    assert [o["_line"] for o in view.of_node("m", "commit")] == [2, 7]
    assert [o["_line"] for o in view.of_node("m", "commit", "binlog")] == [2, 5, 7]
    assert view.of_node("m", "commit") is view.of_node("m", "commit")  # built once per Trace
    assert view.of_node("x") == [] and view.of_node("m", "read") == [] and view.kind("read") == []
    commits = view.of_node("m", "commit")
    assert commits.keys == [2, 7] and [o["trx"] for o in commits.after(2)] == ["T2"]
    assert commits.last_before(7)["trx"] == "T1" and commits.between(1, 8) == list(commits)
    assert view.timed(None, "commit", "apply").keys == [(0, 2), (1, 3), (5, 7)]


def test_a_seqs_keys_are_its_observations_keys_in_order():
    seq = Seq(({"t": t} for t in (1, 3, 3, 8)), lambda o: o["t"])
    assert seq.keys == [1, 3, 3, 8] and seq.count_before(3) == 1 and next(seq.after(3))["t"] == 8
    assert list(seq.after(8)) == [] and seq.before(3) == [{"t": 1}]


@pytest.mark.parametrize("t_us, shown", [(0, "0 s"), (2_000_000, "2 s"), (2_500_000, "2.5 s"), (2_000_001, "2.000001 s"),
                                         (-1_500_000, "-1.5 s"), (2_000_000.4, "2 s")])
def test_seconds_shows_a_time_to_the_microsecond_however_often_asked(t_us, shown):
    assert seconds(t_us) == seconds(t_us) == shown
