"""A short run of the bad-input fuzzer (tests/engine/fuzzing.py; the long one is bench/fuzz.py):
no mutated input or argument of any target gets a traceback, a hang, a bad message or a
half-written output; and the classification itself tells those apart."""
from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fuzzing
from fuzzing import Case, run_case

# Few cases per target (about 400 in all): bench/fuzz.py runs 100,000.
EXAMPLES = 20


@st.composite
def cases(draw, target: str) -> Case:
    ops = draw(st.lists(st.sampled_from(fuzzing.OPERATORS), min_size=1, max_size=3))
    return fuzzing.TARGETS[target].make(draw(st.randoms(use_true_random=False)), draw(st.integers(0, 99)), ops)


@pytest.mark.parametrize("target", sorted(fuzzing.TARGETS))
def test_no_bad_input_is_mishandled(target):
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(cases(target))
    def check(case):
        outcome = run_case(case, timeout=60)  # a guard against a stuck test, far above any case's time
        assert outcome.kind not in fuzzing.DEFECTS, (outcome.signature, case.argv, outcome.stderr[-2000:])
    check()


# Through the real executable: what the in-process runs cannot show (the process's own streams,
# signal handlers, argv decoding, exit codes). 0.3 CPU-s a case: bench/fuzz.py --executable runs more.
# Those are a command's, not an input's: 80 cases put each target that can run as a process through
# it at least twice (200 gave 5-10 a target, for 40 CPU-s more).
EXEC_CASES = 80


@pytest.mark.slow
def test_cases_through_the_real_executable():
    targets, ran, n = sorted(fuzzing.TARGETS), 0, 0
    while ran < EXEC_CASES:
        case = fuzzing.case_from(targets[n % len(targets)], fuzzing.case_rng(0, n))
        n += 1
        if fuzzing.runs_as_a_process(case):
            outcome = fuzzing.run_case_exec(case, timeout=120)  # a guard against a stuck test, far above any case's time
            assert outcome.kind not in fuzzing.DEFECTS, (outcome.signature, case.argv, outcome.stderr[-2000:])
            ran += 1


def test_a_case_through_the_executable_is_classified_as_in_process():
    refused = Case("outputs:report", ["report", "{dir}/missing.json", "--out", "{dir}/out"], names=("{dir}/missing.json",))
    assert fuzzing.run_case_exec(refused).kind == fuzzing.FINE
    taken = Case("outputs:report", ["systems"], dirs=["out"], refuse=True)  # exit 0 where a refusal was due
    assert fuzzing.run_case_exec(taken).kind == fuzzing.CLOBBERED


def test_a_command_that_raises_is_a_traceback():
    def boom(argv):
        raise KeyError("x")
    outcome = run_case(Case("fake", ["x"]), main=boom)
    assert outcome.kind == fuzzing.TRACEBACK and outcome.signature.startswith("KeyError at test_fuzz.py:")


def test_exit_3_is_a_traceback_and_a_hang_is_a_hang():
    assert run_case(Case("fake", ["x"]), main=lambda argv: 3).kind == fuzzing.TRACEBACK

    def forever(argv):
        while True:
            pass
    assert run_case(Case("fake", ["x"]), timeout=0.2, main=forever).kind == fuzzing.HANG


@pytest.mark.parametrize("stderr,kind", [
    ("replcheck: error: DIR/h.jsonl:3: at: not an integer", fuzzing.FINE),
    ("replcheck: error: DIR/h.jsonl: rows[0].status: 3 is not of type 'string'", fuzzing.FINE),
    ("replcheck: error: DIR/h.jsonl: not UTF-8 text: invalid start byte at byte 7", fuzzing.FINE),
    ("replcheck: error: DIR/h.jsonl: something is wrong somewhere", fuzzing.BAD_MESSAGE),  # no line or field
    ("replcheck: error: at: not an integer", fuzzing.BAD_MESSAGE),  # no file
    ("replcheck: error: DIR/h.jsonl:3: at: not an integer\nmore", fuzzing.BAD_MESSAGE),
    ("replcheck: error: DIR/h.jsonl:3: at: " + "x" * 300, fuzzing.BAD_MESSAGE),
    ("Traceback (most recent call last):", fuzzing.BAD_MESSAGE),
])
def test_an_exit_2_message_names_the_file_and_where(stderr, kind):
    def says(argv):
        print(stderr.replace("DIR", argv[0]), file=sys.stderr)
        return 2
    assert run_case(Case("fake", ["{dir}"], names=("{dir}/h.jsonl",), located=True), main=says).kind == kind


def test_a_failed_run_that_changes_its_output_is_half_written():
    def writes(argv):
        with open(argv[0], "a") as f:
            f.write("half")
        return 2
    case = Case("fake", ["{dir}/out"], {"out": b"before"}, outputs=("out",))
    assert run_case(case, main=writes).kind == fuzzing.HALF_WRITTEN


def test_a_case_is_saved_and_replayed_as_it_was():
    case = fuzzing.case_from("history", fuzzing.case_rng(7, 3))
    assert Case.from_json(case.to_json()) == case == fuzzing.case_from("history", fuzzing.case_rng(7, 3))
