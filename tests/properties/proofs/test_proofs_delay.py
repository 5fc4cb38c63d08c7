"""The delayed-replication proofs reach their expected outcomes, and every counterexample they
report really violates its claim when re-evaluated in plain Python (not just in z3's eyes)."""
from __future__ import annotations

import json
import re
from functools import cache

import pytest

import replcheck.properties.proofs.delay as delay
from replcheck.properties.core import COUNTEREXAMPLE, PROOFS, PROVED

SEC = 1_000_000
NAMES = {
    "promise_broken_by_whole_seconds": ("WL344.DOC.GUARANTEE",),
    "one_second_slack_holds": ("WL344.WAIT.RULE", "WL7318.F2"),
    "clock_compensation_offset_independent": ("WL344.CLOCK.COMPENSATE",),
    "relay_log_info_formats_unambiguous": ("WL344.RLI.UNAMBIGUOUS",),
    "delay_range_fits": ("WL344.CM.RANGE",),
}


@cache
def run(name):
    [p] = [p for p in PROOFS if p.name == name and p.fn.__module__ == delay.__name__]
    return p.run()


def due(t, o_m, o_s, n, compensate=True):
    """Plain-Python twin of the rule: floor division as in z3, on the replica's clock."""
    local = (t + o_m) // SEC * SEC + n * SEC + ((o_s - o_m) if compensate else 0)
    return local - o_s


@pytest.mark.parametrize("name", sorted(NAMES))
def test_outcome_as_expected(name):
    result = run(name)
    assert result.requirements == NAMES[name]
    assert result.outcome == result.expected
    assert json.loads(json.dumps(result.detail)) == result.detail
    assert run.__wrapped__(name).detail == result.detail  # deterministic


def test_whole_seconds_break_the_promise_by_under_a_second():
    result = run("promise_broken_by_whole_seconds")
    assert result.expected == COUNTEREXAMPLE
    for rule in ("WL344", "WL7318"):
        d = result.detail[rule]
        assert d["max_earliness_us"] == SEC - 1
        c = d["counterexample"]
        apply = max(due(c["t"], c["o_m"], c["o_s"], c["n"]), c["ready"])
        assert c["ready"] >= c["t"] and 0 <= c["n"] < 2**31
        assert apply == c["apply"] < c["t"] + c["n"] * SEC
        assert c["t"] + c["n"] * SEC - apply == c["earliness_us"]


def test_slack_mutant_applies_too_early():
    result = run("one_second_slack_holds")
    assert result.detail["WL344"] == result.detail["WL7318"] == PROVED
    c = result.detail["mutant_counterexample"]
    bound = c["t"] + c["n"] * SEC - SEC
    assert max(due(c["t"], c["o_m"], c["o_s"], c["n"], compensate=False), c["ready"]) <= bound
    assert max(due(c["t"], c["o_m"], c["o_s"], c["n"]), c["ready"]) > bound  # the real rule holds there


def test_uncompensated_due_depends_on_offsets():
    result = run("clock_compensation_offset_independent")
    c = result.detail["mutant_counterexample"]
    d1 = due(c["t"], c["o_m_1"], c["o_s_1"], c["n"], compensate=False)
    d2 = due(c["t"], c["o_m_2"], c["o_s_2"], c["n"], compensate=False)
    assert (d1, d2) == (c["due_1"], c["due_2"]) and abs(d1 - d2) > SEC
    real = [due(c["t"], c[f"o_m_{i}"], c[f"o_s_{i}"], c["n"]) for i in (1, 2)]
    assert abs(real[0] - real[1]) < SEC


def test_appended_delay_format_is_ambiguous():
    result = run("relay_log_info_formats_unambiguous")
    c = result.detail["mutant_counterexample"]
    lines = c["file"].split("\n")
    assert lines[5:] == [""] and len(lines) == 6
    # The old reader sees a relay log name first, then four fields and garbage...
    assert "." in lines[0] and not re.fullmatch("[0-9]+", lines[0])
    assert all(re.fullmatch("[0-9]+", lines[i]) for i in (1, 3, 4))
    assert c["file"].endswith(c["garbage"]) and c["garbage"] == lines[4] + "\n"
    # ...and the appended-delay reader takes that garbage as an acceptable delay.
    assert int(lines[4]) == c["delay_s"] and 0 <= c["delay_s"] < 2**31


def test_int32_due_overflows():
    result = run("delay_range_fits")
    c = result.detail["mutant_counterexample"]
    assert 0 <= c["when"] < 2**32 and 0 <= c["n"] < 2**31 and abs(c["clock_diff"]) < 2**31
    exact = c["when"] + c["clock_diff"] + c["n"]
    assert exact == c["due_int64"] and -(2**63) <= exact < 2**63
    wrapped = (exact + 2**31) % 2**32 - 2**31
    assert wrapped == c["due_int32"] != exact
