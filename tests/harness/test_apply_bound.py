"""When a replica's apply is placed: a row first seen after its SQL thread stopped was applied before the stop."""
from __future__ import annotations

from replcheck.harness.collect import applied_by


def test_a_row_first_seen_after_a_stop_was_applied_before_it():
    # a domains History on 10.11: t2..t4 relayed at 0.61 s, STOP SLAVE returned at 0.66 s, the rows first seen at 0.68 s
    assert applied_by([(656_548, True)], 682_978) == 656_547


def test_a_row_seen_while_the_thread_runs_keeps_the_poll_that_saw_it():
    assert applied_by([], 682_978) == 682_978
    assert applied_by([(600_000, True), (650_000, False)], 682_978) == 682_978  # started again since the stop
    assert applied_by([(700_000, True)], 682_978) == 682_978  # the stop came after the poll that saw it
