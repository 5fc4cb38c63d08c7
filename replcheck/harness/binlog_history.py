"""A GTID names a group only within one binlog history of its origin. RESET MASTER deletes every
binlog and empties gtid_binlog_state (MYSQL_BIN_LOG::reset_logs, sql/log.cc: rpl_global_gtid_binlog_state
.reset_nolock), so the next transaction is 0-1-1 again: a CREATE TABLE before it and an insert after
it share a GTID. While the collector pairs events by GTID, a GTID of a later history carries its
history's number (0-1-1#1), and the Trace gets the real GTID back at the end (`restore`)."""
from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from replcheck.harness.runner import Runner

SEP = "#"


def named(gtid: str | None, history: int) -> str | None:
    """The collector's name of a GTID of the origin's `history`-th binlog history (0: before any reset)."""
    return gtid if not gtid or not history else f"{gtid}{SEP}{history}"


def real(gtid: str | None) -> str | None:
    return gtid.split(SEP, 1)[0] if gtid else gtid


def history(gtid: str | None) -> int:
    return int(gtid.split(SEP, 1)[1]) if gtid and SEP in gtid else 0


def history_at(resets: list[int], t: int | None) -> int:
    """The node's binlog history at trace time t: how many RESET MASTERs began by then. A commit that
    began after one began waits for it (reset_logs holds LOCK_log) and takes the new history's GTIDs."""
    return len(resets) if t is None else bisect_right(resets, t)


def name_groups(events: list[dict], own: int | None, k_history: dict[int, int], known: dict[str, list[int]]) -> None:
    """Names each group of one binlog (events in file order, `_k` on the events whose text is a
    statement the runner built): by its own history `own` if the node wrote it (its files' history),
    else by the history of the transaction its text names, else, as a copy, the j-th copy of a GTID
    in this binlog the j-th history that wrote that GTID (`known`: the histories, by real GTID)."""
    copies: dict[str, int] = {}
    start = 0
    while start < len(events):
        end = start + 1
        gtid = events[start]["gtid"]
        while end < len(events) and gtid and events[end]["gtid"] == gtid and events[end]["idx"]:
            end += 1
        if gtid:
            ks = [ev["_k"] for ev in events[start:end] if ev.get("_k") in k_history]
            if own is not None:
                h = own
            elif ks:
                h = k_history[ks[0]]
            else:
                seen = known.get(gtid, [0])
                h = seen[min(copies.get(gtid, 0), len(seen) - 1)]
                copies[gtid] = copies.get(gtid, 0) + 1
            for ev in events[start:end]:
                ev["gtid"] = named(gtid, h)
        start = end


def relay_history(gtid: str, t: int, resets: list[int], groups: set[str]) -> str:
    """A relay copy seen at t: the origin's latest history by then that wrote the GTID (a copy fetched
    before a reset may be seen after it)."""
    for h in range(history_at(resets, t), 0, -1):
        if named(gtid, h) in groups:
            return named(gtid, h)
    return gtid


def name_histories(run: "Runner", logs: dict[str, list[dict]]) -> None:
    """Gives each GTID of a later binlog history (after a RESET MASTER on its origin) its own name
    (`named`) in the binlogs, the relay copies, the commits and gtid_of."""
    resets = run.binlog_resets
    k_history = {k: history_at(resets.get(run.origin_of[k], []), c["start"]) for k, c in run.commits.items()}
    known: dict[str, list[int]] = {}
    for node, events in logs.items():
        for ev in events:
            ev.setdefault("_h", len(resets.get(node, [])))
            if ev["gtid"] and ev["server_id"] == run.server_ids[node]:
                known.setdefault(ev["gtid"], []).append(ev["_h"])
    known = {g: sorted(set(hs)) for g, hs in known.items()}
    for node, events in logs.items():
        own = [ev for ev in events if ev["server_id"] == run.server_ids[node]]
        for h in sorted({ev["_h"] for ev in own}):
            name_groups([ev for ev in own if ev["_h"] == h], h, k_history, known)
        name_groups([ev for ev in events if ev["server_id"] != run.server_ids[node]], None, k_history, known)
        for ev in events:
            del ev["_h"]
    for k, g in run.gtid_of.items():
        run.gtid_of[k] = named(g, k_history.get(k, 0))
        if k in run.commits and run.commits[k].get("gtid") == g:
            run.commits[k]["gtid"] = run.gtid_of[k]
    if not resets:
        return
    groups = {ev["gtid"] for events in logs.values() for ev in events if ev["gtid"]}
    with run.lock:
        for _, _, o in run.obs:
            if o["kind"] == "relay" and o["gtid"] and (origin := run.by_server_id.get(o["server_id"])):
                o["gtid"] = relay_history(o["gtid"], o["t"], resets.get(origin, []), groups)


def restore(rows: list[dict]) -> None:
    """The real GTIDs back in the Trace's rows."""
    for o in rows:
        if SEP in (o.get("gtid") or ""):
            o["gtid"] = real(o["gtid"])
