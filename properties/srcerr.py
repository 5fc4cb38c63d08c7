"""Trace properties of errors on the source: a statement that returned
an error is in its server's binlog exactly when it left a change there, with the error it got.

They read the statement's commit (its `errno`), what the server's engine committed (`visible`),
its binlog (`binlog`, a Query event's `error_code`) and its incidents, as a real server's trace
read from its binlog and tables has them.
"""
from __future__ import annotations

from replcheck.spec import formats as F

from .core import Check, TraceView, checks
from .groupid import lost_lines, of_node


def _groups(v: TraceView, node: str) -> dict[str, list[dict]]:
    """Each client transaction's events in the node's binlog, recovery's cuts left out: its first
    group only (a copy the node applied later, restored or replicated back to it, is another's)."""
    def build() -> dict[str, list[dict]]:
        lost, out = lost_lines(v), {}
        for o in of_node(v, node):
            if o["kind"] == "binlog" and o.get("trx") is not None and o["_line"] not in lost:
                group = out.setdefault(o["trx"], [])
                if not (group and group[-1].get("last")):
                    group.append(o)
        return out
    return v.memo(f"srcerr.groups.{node}", build)


@checks("SRCERR.BINLOG.CHANGES", needs=("binlog", "visible"))
def failed_statement_logged_as_left(v: TraceView, check: Check) -> None:
    """A statement that returned an error left a change on its server (the engine committed it) if
    and only if the binlog holds its group, or an incident after it marks the gap (WL3464); a
    statement logged in statement format that changed rows before failing carries the error it got
    in its Query event, so that a replica expects it (in row format its rows events carry the
    change; a DDL's part done carries none: two events, its one Query last)."""
    for c in v.kind("commit"):
        errno = c.get("errno")
        if errno is None or errno in F.SERVER_GONE:  # crash recovery decides what is left (DURABLE.*)
            continue
        node, trx = c["node"], c["trx"]
        changed = trx in v.memo(("srcerr.visible", node), lambda: {o.get("trx") for o in v.of_node(node, "visible")})
        group = _groups(v, node).get(trx, [])
        logged = bool(group) and bool(group[-1].get("last"))
        # an incident written after the statement began (a polled trace may list it before the commit)
        incidents = v.memo(("srcerr.incidents", node), lambda: [
            o for o in v.of_node(node, "binlog") if o.get("type") == "INCIDENT_EVENT"])
        begun = c.get("start", c["t"])
        gap = any(o["t"] >= begun for o in incidents)
        if changed and not logged:
            check.judge(gap, f"{node}: {trx} failed with {errno} after changing data, which its binlog does not hold", c)
            continue
        check.judge(changed or not logged, f"{node}: {trx} failed with {errno} and changed nothing, yet its binlog holds it", c, *group[-1:])
        # An incident the statement wrote is something it left in the binlog too: only for a change
        # the binlog lacks (MariaDB log.cc, binlog_commit_flush_stmt_cache / write_incident: the
        # statement cache's loss of a non-transactional change; MDEV-21443: none for a rollback).
        # Its own: written as it returned, before the node's next statement began (an incident listed
        # before the commit may be another's in the same instant, a cluster gap's say: not judged);
        # one a real server wrote only after the statement returned is another statement's (a
        # campaign's record_incident right after a failed transaction: its `written` interval).
        # An incident after a record_incident statement that followed the commit is that statement's
        # (both a model and the harness list the statement before the incident it wrote), in the same
        # instant as the commit or not.
        nxt = next(v.of_node(node, "commit").after(c["_line"]), None)
        until = nxt["_line"] if nxt else 2**62
        recorded = [s["_line"] for s in v.of_node(node, "stmt").between(c["_line"], until) if s.get("op") == "record_incident"]
        own = [o for o in incidents if c["_line"] < o["_line"] < until
               and o["t"] <= c["t"] + v.resolution_us and (nxt is None or o["t"] < nxt.get("start", nxt["t"]))
               and o.get("written", (c["t"],))[0] <= c["t"] and not any(line < o["_line"] for line in recorded)]
        check.judge(changed or not own, f"{node}: {trx} failed with {errno} and changed nothing, yet an incident in its "
                                        f"binlog marks a gap", c, *own[:1])
        ddl = len(group) == 2 and group[-1].get("type") == "QUERY_EVENT"
        rows = any(o.get("type", "").endswith("ROWS_EVENT") for o in group)  # row format: the rows carry it, no error code
        if logged and changed and not ddl and not rows:
            codes = {o.get("error_code", 0) for o in group if o.get("type") == "QUERY_EVENT"}
            check.judge(errno in codes, f"{node}: {trx} failed with {errno}, its Query event carries error code "
                        f"{max(codes, default=0)}: a replica does not expect the error", c, *group)
