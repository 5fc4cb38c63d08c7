"""The incident checks' index of a Trace: incidents, lost changes, relayed events, stops, applies
and skips, by node and by relay place, in (time, line) order, built once per Trace."""
from __future__ import annotations

from functools import cached_property
from itertools import takewhile
from typing import Any, Callable, Iterable, Iterator

from . import delay as delay_properties
from .core import Seq, TraceView
from .filter import unlogged
from .groupid_shared import hierarchical

ER_SLAVE_INCIDENT, ER_REPLICA_INCIDENT = 1590, 13119  # MySQL 8.0.26+ renamed and renumbered it


def key(o: dict) -> tuple[int, int]:
    return o["t"], o["_line"]


def has_master(v: TraceView, o: dict) -> bool:
    """Whether o's server replicated from a master then: the History's channels as it began, then
    each restore (as a slave) and promotion. A slave's own clients' changes are not its masters'
    to mark (an --rpl-hierarchical slave does not binlog them, GGID.FILTER)."""
    last = v.timed(o["node"], "restore", "promoted").last_before(key(o))
    return o["node"] in v.channels if last is None else last["kind"] == "restore"


def place(o: dict) -> tuple:
    """Where an apply, skip or stop stands in the replica's relay log."""
    return o["node"], o.get("relay_file"), o.get("relay_pos")


def index_by(items: Iterable[dict], key: Callable[[dict], Any]) -> dict[Any, list[dict]]:
    out: dict[Any, list[dict]] = {}
    for o in items:
        out.setdefault(key(o), []).append(o)
    return out


def timed(items: Iterable[dict]) -> Seq:
    return Seq(sorted(items, key=key), key)


def discards_relay_log(d: dict) -> bool:
    """relay_log_recovery, RESET SLAVE, or a CHANGE MASTER to a new place (its relay logs are purged:
    MariaDB sql_repl.cc change_master, need_relay_log_purge): what was relayed before is never read."""
    return d["kind"] == "relay_log_recovery" or delay_properties.repositions(d) or (
        d["kind"] == "stmt" and d["op"] == "reset_slave" and d.get("errno") is None)


def resumes(o: dict) -> bool:
    """What ends an incident stop: a restart or restore, the DBA's move of the replica elsewhere,
    RESET SLAVE, START SLAVE of the SQL thread."""
    return o["kind"] in ("restart", "restore") or delay_properties.repositions(o) or (o["kind"] == "stmt" and o.get("errno") is None and (
        o["op"] == "reset_slave" or (o["op"] == "start_slave" and o.get("thread") in (None, "sql"))))


def ends_io(o: dict) -> bool:
    """A crash, STOP SLAVE, a cut that stops the IO thread, or an error the IO thread stops at (a
    fatal error from its master, 1236: its binlog purged; MariaDB sql/slave.cc handle_slave_io)."""
    return o["kind"] == "crash" or (o["kind"] == "stmt" and o["op"] == "stop_slave") or (o["kind"] == "io_cut" and o.get("then") == "stop") \
        or (o["kind"] == "error" and o.get("thread") == "io")


def requested_at(b: dict) -> int:
    """The instant an incident was asked for, if a statement asked: where its `written` interval begins."""
    return b["written"][0] if b.get("written") else b["t"]


class IncidentIndex:
    """What the incident checks look up per incident, indexed once: by node, by relay place, in
    (time, line) order, so each look-up is a dict access or a bisect. Most Traces hold no incident:
    what only an incident's checks read is built when first read."""

    def __init__(self, v: TraceView):
        self.v = v
        self.incidents = [b for b in v.kind("binlog") if b["type"] == "INCIDENT_EVENT"]
        # binlog-do/ignore-db leave a change out of the binlog by design: no gap (FILTER.BINLOG.DB)
        # a replica's own client's change is its to mark as any server's, but on an --rpl-hierarchical
        # slave, which does not binlog it (GGID.FILTER); a failed-over replica not yet promoted too
        unmarked = [o for o in v.kind("visible") if o.get("gtid") is None]
        hier = hierarchical(v) if unmarked else set()
        self.lost = [o for o in unmarked if not (o["node"] in hier and has_master(v, o)) and o.get("trx") not in unlogged(v)]
        self.stops = [o for o in v.kind("sql_stop") if o.get("errno") in (ER_SLAVE_INCIDENT, ER_REPLICA_INCIDENT)]
        self._stop_of: dict[int, dict | None] = {}  # stop_after, by the relayed incident's line

    @cached_property
    def binlog(self) -> dict[str, Seq]:
        return {n: self.v.of_node(n, "binlog") for n in {b["node"] for b in self.v.kind("binlog")}}

    @cached_property
    def incidents_of(self) -> dict[str, Seq]:
        return {n: timed(bs) for n, bs in index_by(self.incidents, lambda b: b["node"]).items()}

    @cached_property
    def incident_at(self) -> dict[tuple, list[dict]]:
        # A requested incident by the instant its statement began: a real server's incident carries the
        # statement's `written` interval, and the collector may place it later in it (after a
        # Binlog_checkpoint stamped with a later second, corpus requested-incident-placed-at-its-own-second)
        return index_by(self.incidents, lambda b: (b["node"], requested_at(b)))

    @cached_property
    def earliest_of(self) -> dict[str, list]:
        # The earliest each incident may have been written: a real server's `written` interval ([lo, hi)
        # of trace time) when it gives one, else its own place; per node, sorted, for counting by bisect.
        return {n: sorted(min(key(b), (b["written"][0], -1)) if b.get("written") else key(b) for b in bs)
                for n, bs in index_by(self.incidents, lambda b: b["node"]).items()}

    @cached_property
    def lost_of(self) -> dict[str, Seq]:
        return {n: timed(ls) for n, ls in index_by(self.lost, lambda o: o["node"]).items()}

    @cached_property
    def own_incident(self) -> dict[int, dict]:
        # A real server's incident written by a failing statement carries that statement's [start,
        # return) (`written`): it marks the change the statement lost, wherever the polls placed the two
        # (a commit of another session returning meanwhile puts the incident before the lost change).
        if not self.lost:
            return {}
        failed = {(c["node"], c["trx"]): (c["start"], c["t"]) for c in self.v.kind("commit")
                  if c.get("gtid") is None and c.get("errno") is not None and "start" in c}
        by_written = {(b["node"], tuple(b["written"])): b for b in self.incidents if b.get("written")}
        return {id(o): b for o in self.lost
                if (b := by_written.get((o["node"], failed.get((o["node"], o.get("trx")))))) is not None}

    @cached_property
    def relays(self) -> dict[str, list[dict]]:
        return index_by(self.v.kind("relay"), lambda r: r["node"])

    @cached_property
    def _relays_by_place(self) -> dict[tuple, list[dict]]:
        return index_by(self.v.kind("relay"), lambda x: (x["node"], x["file"], x["pos"]))

    @cached_property
    def relayed_incidents(self) -> list[dict]:
        """The relayed incidents, replica by replica (in the order of each one's first relayed event)."""
        if not any(r["type"] == "INCIDENT_EVENT" for r in self.v.kind("relay")):
            return []
        return [r for rs in self.relays.values() for r in rs if r["type"] == "INCIDENT_EVENT"]

    @cached_property
    def stops_of(self) -> dict[str, Seq]:
        return {n: timed(ss) for n, ss in index_by(self.stops, lambda s: s["node"]).items()}

    @cached_property
    def stops_at(self) -> dict[tuple, Seq]:
        # a stop that names its relay place is found by it; one that does not (a real server's) may be any incident's
        placed = [s for s in self.stops if "relay_pos" in s and "relay_file" in s]
        return {p: timed(ss) for p, ss in index_by(placed, place).items()}

    @cached_property
    def loose_stops(self) -> dict[str, Seq]:
        loose = [s for s in self.stops if "relay_pos" not in s or "relay_file" not in s]
        return {n: timed(ss) for n, ss in index_by(loose, lambda s: s["node"]).items()}

    @cached_property
    def executed_at(self) -> dict[tuple, list[dict]]:
        return index_by(self.v.kind("apply") + self.v.kind("skip"), place)  # in trace order within each place

    @cached_property
    def skips_at(self) -> dict[tuple, list[dict]]:
        return index_by(self.v.kind("skip"), place)

    @cached_property
    def by_gtid(self) -> dict[tuple[str, str], Seq]:
        return {k: timed(os) for k, os in index_by(
            (o for o in self.v.kind("apply") + self.v.kind("skip") if o.get("gtid")), lambda o: (o["node"], o["gtid"])).items()}

    @cached_property
    def by_origin(self) -> dict[tuple, list[dict]]:
        return index_by(self.incidents, lambda b: (b["server_id"], b["when"], b.get("message")))

    def stop_after(self, r: dict) -> dict | None:
        """The stop a relayed incident caused: on that replica, after it, at its relay position
        (a trace that does not say where its SQL thread stopped: the first stop after it). A real
        server's relay log is read at each poll: the incident is stamped up to the resolution late,
        so a stop that early is after it too. Found once per incident: most of its checks ask."""
        if r["_line"] not in self._stop_of:
            self._stop_of[r["_line"]] = self._stop_after(r)
        return self._stop_of[r["_line"]]

    def _stop_after(self, r: dict) -> dict | None:
        slack = self.v.resolution_us
        # Written after the read before the one that found it began (`since`): no stop before that
        # is its own, whatever the resolution (a copy fetched again comes long after the first stop).
        early = max(r["t"] - slack, r.get("since", 0))
        bound = key(r) if not slack else (early, -1)  # keys above (early, -1): stamped at early or later
        # a polled stop (seen_until) may have come as late as the end of the poll that saw it
        def after(stops: Iterable[dict]) -> Iterator[dict]:
            return (s for s in stops if key(s) > bound or ("seen_until" in s and (s["seen_until"], s["_line"]) > bound))
        found = [next(after(self.stops_at.get((r["node"], r["file"], r["pos"]), ())), None),
                 next((s for s in after(self.loose_stops.get(r["node"], ()))
                       if s.get("relay_pos", r["pos"]) == r["pos"] and s.get("relay_file", r["file"]) == r["file"]), None)]
        stop = min((s for s in found if s is not None), key=key, default=None)
        if stop is not None and "relay_pos" not in stop and any(
                r["t"] - slack <= k["t"] <= stop["t"] for k in self.skips_at.get((r["node"], r["file"], r["pos"]), ())):
            return None  # skipped before that stop (which names no place: a real server's): another incident's
        if stop is not None and "relay_pos" not in stop and any(
                x["type"] == "INCIDENT_EVENT" and x["file"] == r["file"] and x["pos"] < r["pos"]
                and not any(k["t"] <= stop["t"] for k in self.skips_at.get((x["node"], x["file"], x["pos"]), ()))
                for x in self.relays.get(r["node"], ())):
            # an earlier incident of the same relay log, not skipped by then: the SQL thread reached it
            # first, and the stop is its own (a campaign's server relayed two incidents back to back)
            return None
        return stop

    def _discards(self, node: str):
        return self.v.memo(("incident.discards", node), lambda: timed(
            d for d in self.v.of_node(node, "relay_log_recovery", "stmt") if discards_relay_log(d)))

    def relay_log_end(self, r: dict) -> tuple[int, int]:
        """When the relay log holding r was thrown away (RESET SLAVE, relay_log_recovery), or the end.
        A GTID start that throws away nothing unapplied is in no Trace, but another event relayed to
        r's very place shows r's relay log gone by then (a campaign's B: a restart by GTID after a
        skip of the incident, and a Gtid_list relayed to its place and applied)."""
        end = next(self._discards(r["node"]).after(key(r)), None)
        at = (r["node"], r["file"], r["pos"])
        again = self.v.memo(("incident.relays_at", at), lambda: timed(self._relays_by_place[at]))
        later = next(again.after(key(r)), None)
        return min(key(end) if end else (2**62, 0), key(later) if later else (2**62, 0))

    def relay_log_start(self, r: dict) -> tuple[int, int]:
        """When the relay logs were last thrown away before r was relayed (or the start), or when r
        was written, if later: what ran at r's place before then ran in a relay log of the same name,
        numbered again. A GTID start that throws nothing away is in no Trace (only the models' way),
        and a real server's relay read stamps r after `since`, the read before the one that found
        it: nothing before that was r (a campaign's B applied an earlier relay.000003's Rotate)."""
        start = self._discards(r["node"]).last_before(key(r))
        return max(key(start) if start else (-1, 0), (r.get("since", -1), 0))

    def after(self, r: dict) -> Iterator[dict]:
        """What was relayed to the same replica after r, in order, until the relay log holding r
        was thrown away."""
        end = self.relay_log_end(r)
        return takewhile(lambda x: key(x) < end, self.v.timed(r["node"], "relay").after(key(r)))

    def origin(self, node: str, file: str, pos: int) -> tuple | None:
        """Where the event relayed to `node` at relay file:pos stands in its source's binlog."""
        by_place = self.v.memo("incident.relay_by_place", lambda: {(r["node"], r["file"], r["pos"]): r for r in self.v.kind("relay")})
        r = by_place.get((node, file, pos))
        return None if r is None else (r["source"], r["master_file"], r["master_end"])

    def source_binlog(self, r: dict) -> dict | None:
        by_end = self.v.memo("incident.binlog_by_end", lambda: {(b["node"], b["file"], b["end"]): b for b in reversed(self.v.kind("binlog"))})
        return by_end.get((r["source"], r["master_file"], r["master_end"]))


def index(v: TraceView) -> IncidentIndex:
    return v.memo("incident.index", lambda: IncidentIndex(v))
