"""A statement the server did not answer within its bound (NoAnswer): the run records it and ends
there instead of failing. A server stuck in a statement is the server's behaviour (MariaDB's STOP
SLAVE 'name' of a connection waiting for another connection's GTID, docs/server-bugs.md), so it is
observed; but a loaded machine is slow too, so the bound decides nothing by itself: what the node
showed then (SHOW FULL PROCESSLIST, read with a short bound of its own) is the evidence the
properties judge. No later op runs, the header's `cut_short` says where and why, and the servers
are torn down as always (SIGKILL after the grace when a shutdown hangs too)."""
from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from replcheck.harness.errors import HarnessError, NoAnswer
from replcheck.spec.formats import US

if TYPE_CHECKING:
    from replcheck.harness.mariadb import Cluster
    from replcheck.harness.runner import Runner

EVIDENCE_S = 10.0  # the evidence's own bound: SHOW PROCESSLIST waits for no replication lock


class Cut(Exception):
    """Ends the run's ops at a statement not answered; `record` is the header's cut_short."""

    def __init__(self, record: dict):
        super().__init__(record["reason"])
        self.record = record


def processlist(cluster: "Cluster", node: str) -> list[dict] | None:
    """The node's threads (passwords hidden), None when it does not answer this either."""
    try:
        columns, rows = cluster.query(node, "SHOW FULL PROCESSLIST", timeout=EVIDENCE_S)
    except HarnessError:
        return None
    out = []
    for row in rows:
        r = dict(zip(columns, row))
        out.append({"id": int(r["Id"]), "user": r["User"] or "", "command": r["Command"] or "",
                    "time": int(r["Time"] or 0), "state": r["State"] or "",
                    "info": None if r["Info"] is None else cluster.redact(r["Info"])})
    return out


def not_answered(run: "Runner", node: str, kind: str, start: int, fields: dict, e: NoAnswer) -> NoReturn:
    """Records the op's statement as not returned (its bound as duration_us; `statement` in `fields`:
    the harness's own, sent for an op that is not itself one), then the node's threads, and ends the
    run's ops (Cut)."""
    run.emit("stmt", node, op=kind, errno=None, warning=None, message="", returned=False,
             duration_us=round(e.timeout_s * US), **fields)
    rows = processlist(run.cluster, node)
    if rows is not None:
        run.emit("processlist", node, rows=rows)
    raise Cut({"t": start, "node": node, "op": kind,
               "reason": f"{kind} on {node} did not return within {e.timeout_s:g} s"
                         + (f" ({fields['statement']})" if "statement" in fields else "")
                         + ("" if rows is not None else "; its SHOW PROCESSLIST did not answer either")})
