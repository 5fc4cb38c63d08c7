"""When a replica's apply is placed: a row first seen after its SQL thread stopped was applied before the stop."""
from __future__ import annotations

from replcheck.harness.collect import Collector, applied_by
from replcheck.harness.errors import HarnessError


def test_a_row_first_seen_after_a_stop_was_applied_before_it():
    # a domains History on 10.11: t2..t4 relayed at 0.61 s, STOP SLAVE returned at 0.66 s, the rows first seen at 0.68 s
    assert applied_by([(656_548, True)], 682_978) == 656_547


def test_a_row_seen_while_the_thread_runs_keeps_the_poll_that_saw_it():
    assert applied_by([], 682_978) == 682_978
    assert applied_by([(600_000, True), (650_000, False)], 682_978) == 682_978  # started again since the stop
    assert applied_by([(700_000, True)], 682_978) == 682_978  # the stop came after the poll that saw it


class _Run:
    """What Collector._emit_applies reads of a run: one poll found C's rows of t4 and t5 together."""

    def __init__(self):
        import threading
        self.lock, self.obs, self.emitted = threading.Lock(), [], []
        self.trx_names = ["t4", "t5"]
        self.gtid_of = {0: "0-1-5", 1: "0-1-4"}  # t5 committed first on the master
        self.seen = {("C", 0): 5_770_091, ("C", 1): 5_770_091}
        self.seen_src = {("C", 0): "B", ("C", 1): "B"}
        self.seen_pos = {("C", 0): ("relay.000002", 4), ("C", 1): ("relay.000002", 4)}
        self.named, self.sources, self.returned = set(), {}, {}
        self.origin_of, self.commits, self.downs = {0: "A", 1: "A"}, {}, {}  # A's transactions, C never went down
        self.cluster = self  # its rows cannot be read back: whole groups

    def sql(self, node, query):
        raise HarnessError("down")

    def emit(self, kind, node, t, **fields):
        self.emitted.append((kind, node, t, fields.get("gtid")))


def test_rows_one_poll_found_together_are_visible_in_their_commit_order():
    run = _Run()
    Collector(run)._emit_applies()
    assert [g for kind, _, _, g in run.emitted if kind == "visible"] == ["0-1-4", "0-1-5"]
