"""SBM.VALUE and SBM.PENDING count from a Query event's timestamp plus its exec_time, as MariaDB's
SQL thread does (exec_relay_log_event, sql/slave.cc: last_master_timestamp = ev->when + exec_time).
corpus/server/sbm-from-a-statement-s-exec-time: a statement under SET TIMESTAMP 10000 s back, its
exec_time 10001; B showed 0 to 2 while executing it."""
from __future__ import annotations

from replcheck import io
from replcheck.properties.core import PASS, VIOLATED
from conftest import REPO, Trace

KEPT = REPO / "corpus" / "server" / "sbm-from-a-statement-s-exec-time.trace.jsonl"


def _trace(keep_exec_time: bool) -> Trace:
    head, obs = io.load_trace(KEPT)
    drop = {"_line"} if keep_exec_time else {"_line", "exec_time"}
    return Trace(head, [{k: x for k, x in o.items() if k not in drop} for o in obs])


def test_the_lag_counts_from_the_timestamp_plus_the_exec_time(kit):
    tr = _trace(keep_exec_time=True)
    assert [r["exec_time"] for r in tr.all("relay", node="B") if "exec_time" in r] == [10001]
    for requirement in ("SBM.VALUE", "SBM.PENDING"):
        assert kit.verdict(requirement, tr).status == PASS


def test_counted_from_the_timestamp_alone_the_lag_shown_is_wrong(kit):
    tr = _trace(keep_exec_time=False)
    for requirement in ("SBM.VALUE", "SBM.PENDING"):
        v = kit.verdict(requirement, tr)
        assert v.status == VIOLATED and any("10001." in w.message for w in v.witnesses)
