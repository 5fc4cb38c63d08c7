"""Where each client transaction ends in its master's binlog, which replicas hold that position and
when, the acks, and the master's semi-sync status and settings over time (SemiSyncIndex), built
once per Trace; and whether a commit waited out the timeout."""
from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from functools import cached_property
from operator import itemgetter
from typing import Iterable
from replcheck.spec import formats as F

from .configuration import configured
from .core import TraceView
from .groupid_shared import starts_new_binlog


STATUS = "Rpl_semi_sync_master_status"
NO_SLAVE = "no semi-sync slave connected"  # the model's switch-off reason when the last replica leaves
TIMEOUT_LOG = F.SEMISYNC_TIMEOUT_LOG
DUMP_LOG = re.compile(r"Start semi-sync binlog_dump to slave \(server_id: (\d+)\)")
VARIABLES = ("rpl_semi_sync_master_enabled", "rpl_semi_sync_master_timeout", "rpl_semi_sync_master_wait_no_slave",
             "rpl_semi_sync_master_wait_for_slave_count", "rpl_semi_sync_master_wait_point")


# (time, line) of an observation: its place in trace order (itemgetter: made in C, it is called for every observation)
line_key = itemgetter("t", "_line")
line_no = itemgetter("_line")


class Timeline:
    """A value over trace order: the last one set strictly before a point."""

    def __init__(self, initial):
        self.keys: list[tuple[int, int]] = [(-1, -1)]
        self.values = [initial]

    def set(self, key: tuple[int, int], value) -> None:
        self.keys.append(key)
        self.values.append(value)

    def at(self, key: tuple[int, int]):
        return self.values[bisect_left(self.keys, key) - 1]


class Reach:
    """One replica's observations of positions in one master's binlog, in trace order, with the
    running maximum: the first one at or past any position is a binary search, not a scan.
    `early_us`: how much earlier than its stamp each observation may have happened (a real
    server's relay log is read at each poll: an event is stamped up to the resolution late), or
    its own `since` where that is earlier (a read slowed by load: the read before it began then)."""

    def __init__(self, early_us: int = 0):
        self.early_us = early_us
        self.obs: list[dict] = []
        self.places: list[tuple[str, int]] = []  # each observation's
        self.most: list[tuple[str, int]] = []

    def add(self, pos: tuple[str, int], o: dict) -> None:
        self.obs.append(o)
        self.places.append(pos)
        self.most.append(max(pos, self.most[-1]) if self.most else pos)

    def first(self, pos: tuple[str, int], key) -> dict | None:
        """The first observation at or past pos, if it came before key."""
        i = bisect_left(self.most, pos)
        if i < len(self.obs):
            o = self.obs[i]
            if (min(o["t"] - self.early_us, o.get("since", o["t"])), o["_line"]) < key:
                return o
        return None


def _reach(reaches: dict[str, dict[str, Reach]], master: str, replica: str, early_us: int = 0) -> Reach:
    """The master's Reach of the replica, made at its first observation (not one per observation)."""
    of_master = reaches.get(master)
    if of_master is None:
        of_master = reaches[master] = {}
    reach = of_master.get(replica)
    if reach is None:
        reach = of_master[replica] = Reach(early_us)
    return reach


def _with_named(v: TraceView, kind: str) -> list[dict]:
    """The observations of a kind, a named connection's (a multi-source replica's) too, in trace order."""
    return sorted(v.kind(kind) + [o for o in v.connected if o["kind"] == kind], key=line_key)


def _keys_by_node(obs: Iterable[dict]) -> dict[str, list[tuple[int, int]]]:
    """Per node, the keys of its observations, sorted."""
    out: dict[str, list[tuple[int, int]]] = {}
    for o in sorted(obs, key=line_key):
        out.setdefault(o["node"], []).append((o["t"], o["_line"]))
    return out


def keys_before(keys: list, key) -> int:
    """How many of the sorted keys come before key."""
    return bisect_left(keys, key)


class SemiSyncIndex:
    def __init__(self, v: TraceView):
        self.v = v
        res = v.resolution_us
        self.server_ids = {n: spec.get("server_id") for n, spec in v.nodes.items()}
        self.by_server_id = {sid: n for n, sid in self.server_ids.items()}
        # (node, gtid, trx) -> binlog obs of the group's last event. The transaction too: a server
        # restored from a backup that lacks a group issues that GTID again, to another transaction.
        self.ends: dict[tuple[str, str, str | None], dict] = {}
        for b in v.kind("binlog"):
            if b.get("last") and b.get("gtid"):
                group = (b["node"], b["gtid"], b.get("trx"))
                if group not in self.ends:
                    self.ends[group] = b
        # the statements each part below reads, in one pass (in trace order, as v.kind gives them)
        set_globals, new_binlogs, dba_stmts, io_stop_stmts = [], [], [], []
        for o in v.kind("stmt"):
            op = o["op"]
            if op == "set_global":
                set_globals.append(o)
                dba_stmts.append(o)
            elif op == "reset_master":
                dba_stmts.append(o)
            elif op == "stop_slave" and o.get("errno") is None and o.get("thread") in (None, "io"):
                io_stop_stmts.append(o)
            if starts_new_binlog(o):
                new_binlogs.append(o)
        starts = v.kind("restart") + v.kind("restore")
        downs = v.kind("crash") + v.kind("shutdown")
        self.vars = self._variables(starts, set_globals)
        self.shown: dict[str, list[dict]] = {}  # per node, the samples that show its status: status[node]'s changes
        self.status = self._status()
        # RESET MASTER starts a master's binlog names and positions over: a place is qualified by
        # how many resets came before it, so that an ack of the old binlog acknowledges nothing new
        self.resets: dict[str, list] = _keys_by_node(new_binlogs)
        self.io_stops: dict[str, list] = {}  # per replica, keys of its IO thread's stops: STOP SLAVE [IO_THREAD], crash, shutdown
        spans: dict[str, list] = {}  # per replica, (begin, end) of those stops
        for o in io_stop_stmts:
            self.io_stops.setdefault(o["node"], []).append((o["t"], o["_line"]))
            spans.setdefault(o["node"], []).append((o["t"] - o.get("duration_us", 0), o["t"]))
        for o in downs:
            self.io_stops.setdefault(o["node"], []).append((o["t"], o["_line"]))
            spans.setdefault(o["node"], []).append((o["t"], o["t"]))
        for keys in self.io_stops.values():
            keys.sort()
        # An ack the replica's relay passed on as its IO thread stopped (from the resolution before
        # the stop began to its end) may never count: the master's dump thread, finding the
        # connection gone, ends and takes the replica off the ack receiver's list, and what that
        # receiver had not read yet is never read (Repl_semi_sync_master::dump_end,
        # Ack_receiver::remove_slave, sql/semisync_master_ack_receiver.cc). On 10.11.19 an ack of
        # (bin.000002, 845) passed on 4 ms into B's STOP SLAVE was not: A timed out on 845,
        # "semi-sync up to ... position 609". Such acks are in `acked` but not in `surely_acked`.
        # Per master, per replica: its acks' positions in that master's binlog (`relayed`: its relay log's).
        self.dumps: list[tuple[dict, int]] = [(o, int(m.group(1))) for o in v.kind("log") if (m := DUMP_LOG.search(o["message"]))]
        self.dump_keys: dict[tuple, list] = {}  # (master, replica named in the line) -> keys
        self.dump_keys_by_sid: dict[tuple, list] = {}  # (master, server_id in the message) -> keys
        for o, sid in self.dumps:
            self.dump_keys.setdefault((o["node"], o.get("replica")), []).append((o["t"], o["_line"]))
            self.dump_keys_by_sid.setdefault((o["node"], sid), []).append((o["t"], o["_line"]))
        if res:
            # A polled server's relay, stalled, may pass an ack on after the connection is gone (its
            # IO thread stopped): up to the replica's next dump no master reads it.
            for replica, stops in spans.items():
                again = sorted(t for (_, r), keys in self.dump_keys.items() if r == replica for t, _ in keys)
                spans[replica] = [(b, next((t for t in again if t > e), math.inf)) for b, e in stops]
        self.acked: dict[str, dict[str, Reach]] = {}
        self.surely_acked: dict[str, dict[str, Reach]] = {}
        for a in _with_named(v, "ack"):
            place = self.place(a["node"], a["file"], a["pos"], (a["t"], a["_line"]))
            _reach(self.acked, a["node"], a["replica"]).add(place, a)
            if not any(b - res <= a["t"] <= e for b, e in spans.get(a["replica"], ())):
                _reach(self.surely_acked, a["node"], a["replica"]).add(place, a)
        # per node, keys of its restarts (a restore from a backup starts the server too), SET GLOBAL
        # statements and RESET MASTERs (after_reset_master in MariaDB's semisync_master.cc sets the
        # status to rpl_semi_sync_master_enabled)
        self.dba: dict[str, list] = _keys_by_node(starts + dba_stmts)
        # per node, keys where semi-sync became enabled: its status is ON from there, before any
        # sample shows it (enable_master sets m_state, sql/semisync_master.cc; a restart enables
        # it so from its configuration)
        self.enables: dict[str, list] = {}
        for o in sorted(starts + set_globals, key=line_key):
            key, name = (o["t"], o["_line"]), "rpl_semi_sync_master_enabled"
            if o["node"] in self.vars and self.var(o["node"], name, (key[0], key[1] + 1)) and (
                    o["kind"] != "stmt" or not self.var(o["node"], name, key)):
                self.enables.setdefault(o["node"], []).append(key)
        self.downs: dict[str, list] = _keys_by_node(downs)  # per node, keys of its crashes and shutdowns
        from .filter import unsent  # filter's checks read this module's timeout line
        every = [self._commit(c) for c in v.kind("commit") if c.get("gtid") and (c["node"], c["gtid"], c.get("trx")) in self.ends]
        # A commit sent to no semi-sync replica that did not wait while ON (nothing could come to wait
        # for) is outside the semi-sync commit path and its counters: FILTER.SEMISYNC.UNSENT judges it.
        quiet = [c for c in every if c["on_binlog"] and unsent(v, c["obs"], c["binlog"]) and c["obs"]["t"] - c["binlog"]["t"] <= res]
        # A statement's own group in a non-transactional transaction does not wait (its COMMIT does,
        # for the last group: wait_after_commit's is_real_trans, sql/semisync_master.cc).
        # A statement that failed after its change was binlogged (a MyISAM write cut by a duplicate
        # key) answers its error at once: MariaDB registers its group for an ack but waits for it
        # only when the session ends its transaction (the rollback at its next commit or its
        # disconnect, sql/handler.cc ha_rollback_trans -> wait_after_rollback), counted then, at a
        # time the Trace does not show (seed 10's History 190: t3 failed at 1.38 s, its wait timed out
        # at 11.4 s, no_tx 1 from then; measured again on 10.11.19).
        detached = [c for c in every if c["ok"] and c["obs"].get("errno") is not None]
        self.detached = detached
        aside = {id(c) for c in quiet + detached}  # each commit is a dict of its own: by identity
        self.commits = [c for c in every if id(c) not in aside and c["obs"].get("semisync") != "statement"]
        # Of those, on a polled trace, one may have waited after all (MariaDB registers it for an ack,
        # MDEV-38486; its binlog write is stamped up to the resolution late), and commit_trx
        # (sql/semisync_master.cc) counts every commit in one counter at its end, by the status then:
        # released by an ack of its place, in yes_tx, if one came before it returned (a campaign's
        # History 194: t1 and t2, with t3's ack); else in no_tx, out by the timeout or committed
        # while OFF, which a polled trace may not see at all: the status can go OFF and back ON
        # between two samples (seed 8's History 182: t5 timed out, t6 committed while OFF and an ack
        # switched A back ON, all between two samples). Its client's semisync, when known, says which.
        # A failed statement's group is counted too, in yes_tx if an ack reached it.
        self.maybe_no = [c for c in quiet if v.resolution_us and c["obs"].get("semisync") != "yes"] + detached
        self.maybe_yes = [c for c in quiet if v.resolution_us and c["obs"].get("semisync") != "no"
                          and self.acked_by(c["node"], c["pos"], c["rkey"])] + [
                          c for c in detached if self.acked_by(c["node"], c["pos"], END)]
        self.binlogged: dict[str, tuple[list, list]] = {}  # per master: its commits' binlog keys, sorted, and the furthest end so far
        for c in sorted(every, key=lambda c: c["bkey"]):
            keys, most = self.binlogged.setdefault(c["node"], ([], []))
            keys.append(c["bkey"])
            most.append(max(c["pos"], most[-1]) if most else c["pos"])

    def _variables(self, starts: list[dict], set_globals: list[dict]) -> dict[str, dict[str, Timeline]]:
        """Per node, its semi-sync variables over the trace: one pass over restarts and SET GLOBALs."""
        # a server Trace's topology names only the History's variables: the timeout's default is the
        # server's (the others' absence reads as their default already)
        defaults = {"rpl_semi_sync_master_timeout": F.SEMISYNC_TIMEOUT_DEFAULT_MS}
        initial = {n: {**defaults, **spec.get("variables", {})} for n, spec in self.v.nodes.items()}
        lines = {n: {name: Timeline(initial[n].get(name)) for name in VARIABLES} for n in self.v.nodes}
        for o in sorted(starts + set_globals, key=line_no):
            if o["node"] not in lines:
                continue
            if o["kind"] != "stmt":  # a (re)start: SET GLOBAL is lost; the configuration comes back, maybe changed
                now = {**defaults, **configured(self.v, o["node"], o["_line"])}
                for name, line in lines[o["node"]].items():
                    line.set(line_key(o), now.get(name))
            elif o.get("errno") is None and o.get("variable") in VARIABLES:
                lines[o["node"]][o["variable"]].set(line_key(o), o.get("value"))
        return lines

    def _status(self) -> dict[str, Timeline]:
        """The status as sampled, per node (and in self.shown, the samples that show it)."""
        lines = {n: Timeline("ON" if spec.get("variables", {}).get("rpl_semi_sync_master_enabled") else "OFF")
                 for n, spec in self.v.nodes.items()}
        self.shown = {n: [] for n in lines}
        for o in self.v.kind("server_status"):
            if STATUS in o["variables"] and o["node"] in lines:
                line = lines[o["node"]]
                line.keys.append((o["t"], o["_line"]))
                line.values.append(o["variables"][STATUS])
                self.shown[o["node"]].append(o)
        return lines

    @cached_property
    def ever_enabled(self) -> frozenset[str]:
        """The nodes whose semi-sync master is enabled at some point of the Trace (by their
        configuration, a restart's or a SET GLOBAL): on no other does anything wait for an ack."""
        return frozenset(n for n, lines in self.vars.items() if any(lines["rpl_semi_sync_master_enabled"].values))

    @cached_property
    def relayed(self) -> dict[str, dict[str, Reach]]:
        """Per master, per replica: its relay log's positions in that master's binlog. Found at the
        first ask: only a commit that had to wait, or an ack, asks (most Traces have none)."""
        out: dict[str, dict[str, Reach]] = {}
        # a master sees its replicas alike, whatever name the replica gives the connection to it
        for r in _with_named(self.v, "relay"):
            if end := r.get("master_end"):
                source = r["source"]
                pos = self.place(source, r["master_file"], end, (r["t"], r["_line"])) if source in self.resets else (r["master_file"], end)
                _reach(out, source, r["node"], self.v.resolution_us).add(pos, r)
        return out

    def relayed_at(self, master: str, replica: str, pos: tuple[str, int]) -> list[tuple[int, int]]:
        """Keys of the replica's relay observations of that place in master's binlog, in trace order."""
        return self.v.memo("semisync.relayed_at", self._relayed_at).get((master, replica, *pos), [])

    def _relayed_at(self) -> dict[tuple, list[tuple[int, int]]]:
        out: dict[tuple, list[tuple[int, int]]] = {}
        for master, reaches in self.relayed.items():
            for replica, reach in reaches.items():
                for pos, o in zip(reach.places, reach.obs):
                    out.setdefault((master, replica, *pos), []).append((o["t"], o["_line"]))
        return out

    def on_settled(self, node: str, key, tol: int) -> bool:
        """ON at key as a sampled trace can tell: a switch shows only at the next sample, so a
        sample within tol after key decides; else (and always for tol 0) the status at key."""
        if not self.on(node, key):
            return False
        keys = self.status[node].keys  # sorted, from the (-1, -1) of the initial value
        i = bisect_right(keys, key)
        after = self.shown[node][i - 1] if i < len(keys) else None
        return not (tol and after is not None and after["t"] <= key[0] + tol and after["variables"][STATUS] != "ON")

    def unsettled(self, node: str, key, tol: int) -> bool:
        """A sampled trace cannot tell the status at key: the next sample, within tol after key,
        shows another one (the switch happened somewhere between the two samples)."""
        if not tol:
            return False
        keys = self.status[node].keys
        i = bisect_right(keys, key)
        after = self.shown[node][i - 1] if i < len(keys) else None
        return (after is not None and after["t"] <= key[0] + tol
                and (after["variables"][STATUS] == "ON") != self._status_on(node, key))

    def var(self, node: str, name: str, key: tuple[int, int]):
        return self.vars[node][name].at(key)

    def timeout_us(self, node: str, key) -> int:
        """rpl_semi_sync_master_timeout (milliseconds, the server's default where unset) in microseconds."""
        return int(self.var(node, "rpl_semi_sync_master_timeout", key) or 0) * 1000

    def n(self, node: str, key) -> int:
        return int(self.var(node, "rpl_semi_sync_master_wait_for_slave_count", key) or 1)

    def on(self, node: str, key) -> bool:
        return self._status_on(node, key) and bool(self.var(node, "rpl_semi_sync_master_enabled", key))

    def _status_on(self, node: str, key) -> bool:
        """The status at key: the last sample's, or ON if semi-sync became enabled since."""
        keys, enables = self.status[node].keys, self.enables.get(node, [])
        i = bisect_left(enables, key)
        return (i > 0 and enables[i - 1] > keys[bisect_left(keys, key) - 1]) or self.status[node].at(key) == "ON"

    def _commit(self, c: dict) -> dict:
        b = self.ends[(c["node"], c["gtid"], c.get("trx"))]
        node = c["node"]
        return {"obs": c, "node": node, "gtid": c["gtid"], "trx": c.get("trx"), "pos": self.place(node, b["file"], b["end"], line_key(b)),
                "binlog": b, "bkey": line_key(b), "rkey": line_key(c),
                # a statement that failed after its change was binlogged waited like any other
                "ok": c.get("errno") not in F.SERVER_GONE,
                "enabled": bool(self.var(node, "rpl_semi_sync_master_enabled", line_key(b))),
                "on_binlog": self.on(node, line_key(b)), "on_return": self.on(node, line_key(c))}

    def place(self, node: str, file: str, pos: int, key) -> tuple[str, int]:
        """A place in node's binlog as of key: the binlogs of a later RESET MASTER sort after the
        earlier ones (their names are qualified by the resets before them)."""
        n = bisect_right(self.resets.get(node, []), key)
        return (f"~{n}:{file}" if n else file, pos)

    def holders(self, node: str, pos: tuple[str, int], key) -> set[str]:
        """Replicas whose relay log held the event ending at pos (of node's binlog) before key."""
        return {replica for replica, reach in self.relayed.get(node, {}).items() if reach.first(pos, key)}

    def acked_by(self, node: str, pos, key, surely: bool = False) -> list[dict]:
        """Acks at or past pos received before key, the first one of each replica (surely: of the
        acks the master surely read)."""
        firsts = (reach.first(pos, key) for reach in (self.surely_acked if surely else self.acked).get(node, {}).values())
        return sorted((a for a in firsts if a is not None), key=line_key)

    def _samples(self, node: str) -> tuple[list[dict], list[tuple[int, int]]]:
        """node's server_status samples and their keys (found when a check first asks: few do)."""
        def build():
            samples = [o for o in self.v.kind("server_status") if o["node"] == node]
            return samples, [(o["t"], o["_line"]) for o in samples]
        return self.v.memo(("semisync.samples", node), build)

    def samples_within(self, node: str, key, until: int) -> list[dict]:
        """node's server_status samples after key, up to time `until`."""
        samples, keys = self._samples(node)
        return samples[bisect_right(keys, key):bisect_right(keys, (until, 2**62))]

    def next_sample(self, node: str, key) -> dict | None:
        """node's first server_status sample after key."""
        samples, keys = self._samples(node)
        i = bisect_right(keys, key)
        return samples[i] if i < len(samples) else None

    def binlog_end(self, node: str, key) -> tuple[str, int]:
        """Where node's binlog ended just before key: the furthest end of a commit binlogged by then."""
        keys, most = self.binlogged.get(node, ([], []))
        i = keys_before(keys, key)
        return most[i - 1] if i else ("", 0)

    def release_key(self, node: str, since, chances: list[tuple[tuple[int, int], str]]):
        """The first moment after `since` when the distinct replicas among `chances` (moment,
        replica) reach the wait_for_slave_count then in force; None if never."""
        changes = [k for k in self.vars[node]["rpl_semi_sync_master_wait_for_slave_count"].keys[1:] if k > since]
        moments = sorted([(k, r) for k, r in chances] + [(k, None) for k in changes])
        seen: set[str] = set()
        for key, replica in moments:
            if replica is not None:
                seen.add(replica)
            if seen and len(seen) >= self.n(node, (key[0], key[1] + 1)):
                return key
        return None

    def dump_cut(self, replica: str, connect: tuple[int, int]) -> bool:
        """The replica's IO thread stopped after connecting at `connect` and before its dump
        request reached the master (the latency later): that reconnect acknowledged nothing."""
        keys = self.io_stops.get(replica, [])
        i = bisect_right(keys, connect)
        return i < len(keys) and keys[i][0] <= connect[0] + self.latency(replica)

    def latency(self, replica: str) -> int:
        """Its topology channel's; a replica the topology gives none (a crashed primary rejoining its
        new primary) has the latency of the channels it was the source of."""
        if replica in self.v.channels:
            return self.v.channels[replica].get("latency_us", 0)
        return max((c.get("latency_us", 0) for c in self.v.channels.values() if c.get("source") == replica), default=0)


def index(v: TraceView) -> SemiSyncIndex:
    return v.memo("semisync.index", lambda: SemiSyncIndex(v))


def had_to_wait(c: dict) -> bool:
    """The commit was binlogged while semi-sync was ON: it had to wait."""
    return c["enabled"] and c["on_binlog"]


END = (2**62, 0)


def may_have_timed_out(ix: SemiSyncIndex, c: dict, tol: int, surely: bool = False) -> bool:
    """The commit may have waited out the timeout (surely: it did, as far as the trace can tell).
    A sampled trace stamps the binlog write up to tol late, so the wait may be tol longer than it
    shows; but never longer than the statement itself (its `start` is the server's clock)."""
    timeout = ix.timeout_us(c["node"], c["bkey"])
    waited = c["obs"]["t"] - c["binlog"]["t"]
    longest = c["obs"]["t"] - c["obs"].get("start", c["binlog"]["t"])
    could = waited >= timeout if surely or not tol else (waited >= timeout - tol and longest >= timeout)
    return (had_to_wait(c) and c["ok"] and could
            and len(ix.acked_by(c["node"], c["pos"], c["rkey"], surely=True)) < ix.n(c["node"], c["rkey"])
            and not _disabled_at_return(ix, c, tol) and not _switched_off_otherwise(ix, c, tol))


def _switched_off_otherwise(ix: SemiSyncIndex, c: dict, tol: int) -> bool:
    """The status switched OFF as the wait ended because the last semi-sync replica left with
    rpl_semi_sync_master_wait_no_slave OFF (the line says so): that released it, whatever the
    timeout would have done at the same moment (a switch_off wakes every waiting session)."""
    offs = ix.v.memo("semisync.no_slave_offs", lambda: _keys_by_node(
        o for o in ix.v.kind("log") if o["message"].startswith("Semi-sync replication switched OFF") and NO_SLAVE in o["message"]))
    keys = offs.get(c["node"], [])
    i = bisect_left(keys, (c["obs"]["t"] - tol, -1))
    return i < len(keys) and keys[i] < c["rkey"]


def _disabled_at_return(ix: SemiSyncIndex, c: dict, tol: int) -> bool:
    """The DBA disabled semi-sync as the wait ended: that released it (disable_master switches off
    and wakes the waiting sessions), whatever the timeout would have done at the same moment."""
    disables = ix.v.memo("semisync.disables", lambda: _keys_by_node([
        o for o in ix.v.kind("stmt") if o["op"] == "set_global" and o.get("variable") == "rpl_semi_sync_master_enabled"
        and not o.get("value") and o.get("errno") is None]))
    keys = disables.get(c["node"], [])
    i = bisect_left(keys, (c["obs"]["t"] - tol, -1))
    return i < len(keys) and keys[i] < c["rkey"]
