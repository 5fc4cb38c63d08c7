"""Semi-synchronous replication (WL#1720, WL#6355, WL#7169, MDEV-11853, MDEV-21117): one check per requirement.

The checks rebuild from observations alone: where each client transaction ends in its master's
binlog, which replicas hold that position in their relay logs and when, the acks the master
received, the master's semi-sync status over time (server_status samples), and the settings in
force (trace header, SET GLOBAL statements). Order within one instant is the trace's line order.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from replcheck.spec import formats as F

from .core import Check, TraceView, checks, seconds
from .recovery import copies, promised, sources_at_end

STATUS = "Rpl_semi_sync_master_status"
NO_SLAVE = "no semi-sync slave connected"  # the model's switch-off reason when the last replica leaves
TIMEOUT_LOG = F.SEMISYNC_TIMEOUT_LOG
DUMP_LOG = re.compile(r"Start semi-sync binlog_dump to slave \(server_id: (\d+)\)")
VARIABLES = ("rpl_semi_sync_master_enabled", "rpl_semi_sync_master_timeout", "rpl_semi_sync_master_wait_no_slave",
             "rpl_semi_sync_master_wait_for_slave_count", "rpl_semi_sync_master_wait_point")


def _key(o: dict) -> tuple[int, int]:
    return o["t"], o["_line"]


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

    def changes(self):
        return list(zip(self.keys[1:], self.values[1:]))


class Reach:
    """One replica's observations of positions in one master's binlog, in trace order, with the
    running maximum: the first one at or past any position is a binary search, not a scan.
    `early_us`: how much earlier than its stamp each observation may have happened (a real
    server's relay log is read at each poll: an event is stamped up to the resolution late), or
    its own `since` where that is earlier (a read slowed by load: the read before it began then)."""

    def __init__(self, early_us: int = 0):
        self.early_us = early_us
        self.obs: list[dict] = []
        self.most: list[tuple[str, int]] = []

    def add(self, pos: tuple[str, int], o: dict) -> None:
        self.obs.append(o)
        self.most.append(max(pos, self.most[-1]) if self.most else pos)

    def first(self, pos: tuple[str, int], key) -> dict | None:
        """The first observation at or past pos, if it came before key."""
        i = bisect_left(self.most, pos)
        if i < len(self.obs):
            o = self.obs[i]
            if (min(o["t"] - self.early_us, o.get("since", o["t"])), o["_line"]) < key:
                return o
        return None


def _keys_before(keys: list, key) -> int:
    """How many of the sorted keys come before key."""
    return bisect_left(keys, key)


class SemiSyncIndex:
    def __init__(self, v: TraceView):
        self.v = v
        self.server_ids = {n: spec.get("server_id") for n, spec in v.nodes.items()}
        self.by_server_id = {sid: n for n, sid in self.server_ids.items()}
        # (node, gtid, trx) -> binlog obs of the group's last event. The transaction too: a server
        # restored from a backup that lacks a group issues that GTID again, to another transaction.
        self.ends: dict[tuple[str, str, str | None], dict] = {}
        for b in v.kind("binlog"):
            if b.get("last") and b.get("gtid"):
                self.ends.setdefault((b["node"], b["gtid"], b.get("trx")), b)
        self.vars = self._variables()
        self.status_obs: dict[tuple[int, int], dict] = {}
        self.status = self._status()
        # per master, per replica: its relay log's and its acks' positions in that master's binlog
        self.relayed: dict[str, dict[str, Reach]] = {}
        self.relayed_at: dict[tuple, list] = {}  # (master, replica, file, end) -> keys of the relay observations
        for r in v.kind("relay"):
            if r.get("master_end"):
                pos = (r["master_file"], r["master_end"])
                self.relayed.setdefault(r["source"], {}).setdefault(r["node"], Reach(v.resolution_us)).add(pos, r)
                self.relayed_at.setdefault((r["source"], r["node"], *pos), []).append(_key(r))
        self.acked: dict[str, dict[str, Reach]] = {}
        for a in v.kind("ack"):
            self.acked.setdefault(a["node"], {}).setdefault(a["replica"], Reach()).add((a["file"], a["pos"]), a)
        self.dumps: list[tuple[dict, int]] = [(o, int(m.group(1))) for o in v.kind("log") if (m := DUMP_LOG.search(o["message"]))]
        self.dump_keys: dict[tuple, list] = {}  # (master, replica named in the line) -> keys
        self.dump_keys_by_sid: dict[tuple, list] = {}  # (master, server_id in the message) -> keys
        for o, sid in self.dumps:
            self.dump_keys.setdefault((o["node"], o.get("replica")), []).append(_key(o))
            self.dump_keys_by_sid.setdefault((o["node"], sid), []).append(_key(o))
        self.samples: dict[str, list[dict]] = {}
        for o in v.kind("server_status"):
            self.samples.setdefault(o["node"], []).append(o)
        self.sample_keys = {n: [_key(o) for o in obs] for n, obs in self.samples.items()}
        self.dba: dict[str, list] = {}  # per node, keys of its restarts and SET GLOBAL statements
        for o in sorted(v.kind("restart") + [o for o in v.kind("stmt") if o["op"] == "set_global"], key=_key):
            self.dba.setdefault(o["node"], []).append(_key(o))
        self.downs: dict[str, list] = {}  # per node, keys of its crashes and shutdowns
        for o in sorted(v.kind("crash") + v.kind("shutdown"), key=_key):
            self.downs.setdefault(o["node"], []).append(_key(o))
        self.io_stops: dict[str, list] = {}  # per replica, keys of its IO thread's stops: STOP SLAVE [IO_THREAD], crash, shutdown
        for o in v.kind("stmt"):
            if o["op"] == "stop_slave" and o.get("errno") is None and o.get("thread") in (None, "io"):
                self.io_stops.setdefault(o["node"], []).append(_key(o))
        for node, keys in self.downs.items():
            self.io_stops[node] = sorted(self.io_stops.get(node, []) + keys)
        from .filter import unsent  # filter's checks read this module's timeout line
        every = [self._commit(c) for c in v.kind("commit") if c.get("gtid") and (c["node"], c["gtid"], c.get("trx")) in self.ends]
        # A commit sent to no semi-sync replica that did not wait while ON (nothing could come to wait
        # for) is outside the semi-sync commit path and its counters: FILTER.SEMISYNC.UNSENT judges it.
        quiet = [c for c in every if c["on_binlog"] and unsent(v, c["obs"]) and c["obs"]["t"] - c["binlog"]["t"] <= v.resolution_us]
        self.commits = [c for c in every if c not in quiet]
        # Of those, on a polled trace, one whose statement lasted longer than the resolution may have
        # waited after all: its binlog write is stamped up to the resolution late (a commit counter
        # may count it; flt-semisync-unsent at load 25: t2 waited out MariaDB's timeout, MDEV-38486).
        self.unsent_unsure = [c for c in quiet if v.resolution_us
                              and c["obs"]["t"] - c["obs"].get("start", c["binlog"]["t"]) > v.resolution_us]
        self.binlogged: dict[str, tuple[list, list]] = {}  # per master: its commits' binlog keys, sorted, and the furthest end so far
        for c in sorted(every, key=lambda c: c["bkey"]):
            keys, most = self.binlogged.setdefault(c["node"], ([], []))
            keys.append(c["bkey"])
            most.append(max(c["pos"], most[-1]) if most else c["pos"])

    def _variables(self) -> dict[str, dict[str, Timeline]]:
        """Per node, its semi-sync variables over the trace: one pass over restarts and SET GLOBALs."""
        initial = {n: spec.get("variables", {}) for n, spec in self.v.nodes.items()}
        lines = {n: {name: Timeline(initial[n].get(name)) for name in VARIABLES} for n in self.v.nodes}
        changes = self.v.kind("restart") + [o for o in self.v.kind("stmt") if o["op"] == "set_global"]
        for o in sorted(changes, key=lambda o: o["_line"]):
            if o["node"] not in lines:
                continue
            if o["kind"] == "restart":  # SET GLOBAL is lost; the configuration comes back
                for name, line in lines[o["node"]].items():
                    line.set(_key(o), initial[o["node"]].get(name))
            elif o.get("errno") is None and o.get("variable") in VARIABLES:
                lines[o["node"]][o["variable"]].set(_key(o), o.get("value"))
        return lines

    def _status(self) -> dict[str, Timeline]:
        lines = {n: Timeline("ON" if spec.get("variables", {}).get("rpl_semi_sync_master_enabled") else "OFF")
                 for n, spec in self.v.nodes.items()}
        for o in self.v.kind("server_status"):
            if STATUS in o["variables"] and o["node"] in lines:
                lines[o["node"]].set(_key(o), o["variables"][STATUS])
                self.status_obs[_key(o)] = o
        return lines

    def on_settled(self, node: str, key, tol: int) -> bool:
        """ON at key as a sampled trace can tell: a switch shows only at the next sample, so a
        sample within tol after key decides; else (and always for tol 0) the status at key."""
        if not self.on(node, key):
            return False
        keys = self.status[node].keys  # sorted, from the (-1, -1) of the initial value
        i = bisect_right(keys, key)
        after = self.status_obs[keys[i]] if i < len(keys) else None
        return not (tol and after is not None and after["t"] <= key[0] + tol and after["variables"][STATUS] != "ON")

    def unsettled(self, node: str, key, tol: int) -> bool:
        """A sampled trace cannot tell the status at key: the next sample, within tol after key,
        shows another one (the switch happened somewhere between the two samples)."""
        if not tol:
            return False
        keys = self.status[node].keys
        i = bisect_right(keys, key)
        after = self.status_obs[keys[i]] if i < len(keys) else None
        return (after is not None and after["t"] <= key[0] + tol
                and (after["variables"][STATUS] == "ON") != (self.status[node].at(key) == "ON"))

    def var(self, node: str, name: str, key: tuple[int, int]):
        return self.vars[node][name].at(key)

    def n(self, node: str, key) -> int:
        return int(self.var(node, "rpl_semi_sync_master_wait_for_slave_count", key) or 1)

    def on(self, node: str, key) -> bool:
        return self.status[node].at(key) == "ON" and bool(self.var(node, "rpl_semi_sync_master_enabled", key))

    def _commit(self, c: dict) -> dict:
        b = self.ends[(c["node"], c["gtid"], c.get("trx"))]
        node = c["node"]
        return {"obs": c, "node": node, "gtid": c["gtid"], "trx": c.get("trx"), "pos": (b["file"], b["end"]),
                "binlog": b, "bkey": _key(b), "rkey": _key(c),
                # a statement that failed after its change was binlogged waited like any other
                "ok": c.get("errno") not in F.SERVER_GONE,
                "enabled": bool(self.var(node, "rpl_semi_sync_master_enabled", _key(b))),
                "on_binlog": self.on(node, _key(b)), "on_return": self.on(node, _key(c))}

    def holders(self, node: str, pos: tuple[str, int], key) -> set[str]:
        """Replicas whose relay log held the event ending at pos (of node's binlog) before key."""
        return {replica for replica, reach in self.relayed.get(node, {}).items() if reach.first(pos, key)}

    def acked_by(self, node: str, pos, key) -> list[dict]:
        """Acks at or past pos received before key, the first one of each replica."""
        firsts = (reach.first(pos, key) for reach in self.acked.get(node, {}).values())
        return sorted((a for a in firsts if a is not None), key=_key)

    def samples_within(self, node: str, key, until: int) -> list[dict]:
        """node's server_status samples after key, up to time `until`."""
        keys = self.sample_keys.get(node, [])
        return self.samples.get(node, [])[bisect_right(keys, key):bisect_right(keys, (until, 2**62))]

    def next_sample(self, node: str, key) -> dict | None:
        """node's first server_status sample after key."""
        i = bisect_right(self.sample_keys.get(node, []), key)
        return self.samples[node][i] if i < len(self.samples.get(node, [])) else None

    def binlog_end(self, node: str, key) -> tuple[str, int]:
        """Where node's binlog ended just before key: the furthest end of a commit binlogged by then."""
        keys, most = self.binlogged.get(node, ([], []))
        i = _keys_before(keys, key)
        return most[i - 1] if i else ("", 0)

    def release_key(self, node: str, since, chances: list[tuple[tuple[int, int], str]]):
        """The first moment after `since` when the distinct replicas among `chances` (moment,
        replica) reach the wait_for_slave_count then in force; None if never."""
        changes = [k for k, _ in self.vars[node]["rpl_semi_sync_master_wait_for_slave_count"].changes() if k > since]
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


def _waited(c: dict) -> bool:
    """The commit was binlogged while semi-sync was ON: it had to wait."""
    return c["enabled"] and c["on_binlog"]


END = (2**62, 0)


@checks("WL1720.ACK.WAIT", needs=("relay",))
def commit_waits_for_ack(v: TraceView, check: Check) -> None:
    """While ON, a commit returns only once N replicas hold the transaction in their relay logs."""
    ix = index(v)
    for c in ix.commits:
        # A commit the timeout released returned as the status went OFF, which a real server's
        # next sample shows: TIMEOUT's to judge, not a return while ON.
        if c["ok"] and _waited(c) and c["on_return"] and not _timed_out(ix, c, v.resolution_us):
            held = ix.holders(c["node"], c["pos"], c["rkey"])
            n = ix.n(c["node"], c["rkey"])
            if len(held) < n and (ix.unsettled(c["node"], c["bkey"], v.resolution_us)
                                  or ix.unsettled(c["node"], c["rkey"], v.resolution_us)):
                # The status switched between two samples around it: a switch OFF (another commit's
                # timeout, the last semi-sync replica leaving) releases every waiting commit.
                check.undecidable(f"commit of {c['trx']} on {c['node']} returned at {seconds(c['obs']['t'])} held by {sorted(held)} "
                                  f"(need {n}), and the status switched within the resolution ({seconds(v.resolution_us)}): the "
                                  f"trace cannot tell whether it was ON", c["obs"])
                continue
            check.judge(len(held) >= n, f"commit of {c['trx']} on {c['node']} returned at {seconds(c['obs']['t'])} while ON, "
                        f"held by {sorted(held)} (need {n})", c["obs"])


@checks("WL1720.ACK.RELAY", needs=("ack", "relay"))
def ack_after_relay(v: TraceView, check: Check) -> None:
    """A replica acknowledges an event only once it is in its relay log."""
    ix = index(v)
    for a in v.kind("ack"):
        reach = ix.relayed.get(a["node"], {}).get(a["replica"])
        queued = reach is not None and reach.first((a["file"], a["pos"]), _key(a)) is not None
        check.judge(queued, f"{a['replica']} acknowledged ({a['file']}, {a['pos']}) before relaying it", a)


@checks("WL1720.ACK.IO_THREAD", needs=("ack", "relay"))
def ack_not_held_by_sql_thread(v: TraceView, check: Check) -> None:
    """The ack leaves when the event is queued: the SQL thread and its delay do not hold it back."""
    ix = index(v)
    for a in v.kind("ack"):
        queued = ix.relayed_at.get((a["node"], a["replica"], a["file"], a["pos"]), [])
        dumps = ix.dump_keys.get((a["node"], a["replica"]), [])
        n_queued, n_dumps = _keys_before(queued, _key(a)), _keys_before(dumps, _key(a))
        if not n_queued:
            continue
        # A reconnect acknowledges what the replica already held: measure from the reconnect then.
        since = max(queued[n_queued - 1], dumps[n_dumps - 1] if n_dumps else queued[n_queued - 1])
        check.judge(a["t"] - since[0] <= ix.latency(a["replica"]) + v.resolution_us,
                    f"{a['replica']} acknowledged ({a['file']}, {a['pos']}) {seconds(a['t'] - since[0])} after queueing it", a)


@checks("WL1720.ACK.LAST_EVENT", needs=("ack",))
def ack_only_last_event(v: TraceView, check: Check) -> None:
    """Acks are asked for, and given, only at the end of a transaction's last event."""
    ends = {(b["node"], b["file"], b["end"]) for b in v.kind("binlog") if b.get("last") and b.get("trx")}
    for a in v.kind("ack"):
        check.judge((a["node"], a["file"], a["pos"]) in ends,
                    f"{a['replica']} acknowledged ({a['file']}, {a['pos']}), which ends no transaction on {a['node']}", a)


@checks("WL1720.HEADER", needs=("relay",))
def header_stripped(v: TraceView, check: Check) -> None:
    """Each relayed event has the length it has in the master's binlog: the extra header is gone.
    The dump's own events (a fake Rotate or Gtid_list) are in no binlog: they carry timestamp 0,
    which is how a replica tells them apart (sql_repl.cc, fake_event_header)."""
    ix = index(v)
    last: dict[tuple[str, str], dict] = {}
    for r in v.kind("relay"):
        prev = last.get((r["node"], r["file"]))
        last[(r["node"], r["file"])] = r
        # Not after it: another relay log of that name (a purge starts the names again, MariaDB's
        # purge_relay_logs then a new relay log from .000001), whose events follow none of the old one's.
        if prev is None or not prev.get("master_end") or prev["when"] == 0 or r["pos"] <= prev["pos"]:
            continue
        enabled = ix.vars.get(prev["source"], {}).get("rpl_semi_sync_master_enabled")
        if enabled is None or not enabled.at(_key(prev)):  # the length is semi-sync's header's business only
            continue
        lengths = v.memo("semisync.binlog_len", lambda: {(b["node"], b["file"], b["end"]): b["end"] - b["pos"] for b in v.kind("binlog")})
        length = lengths.get((prev["source"], prev["master_file"], prev["master_end"]))
        if length is not None:
            check.judge(r["pos"] - prev["pos"] == length,
                        f"{r['node']} relay log holds {prev['type']} in {r['pos'] - prev['pos']} bytes, the binlog in {length}", prev, r)


def _sampled_with(v: TraceView, o: dict, node: str, kind: str = "server_status") -> dict | None:
    """node's sample of this kind taken together with sample o: same instant, nothing but samples
    in between (anything else, a STOP SLAVE say, may have changed what it would say)."""
    i = o["_line"] - 2  # observations start on line 2
    for step in (1, -1):
        j = i + step
        while 0 <= j < len(v.obs) and v.obs[j]["t"] == o["t"] and v.obs[j]["kind"] in ("status", "server_status"):
            if v.obs[j]["kind"] == kind and v.obs[j]["node"] == node:
                return v.obs[j]
            j += step
    return None


@checks("WL1720.SLAVE.STATUS")
def slave_status_follows_io_thread(v: TraceView, check: Check) -> None:
    """Rpl_semi_sync_slave_status is ON only while the IO thread runs, and OFF when it is stopped."""
    for o in v.kind("server_status"):
        st = _sampled_with(v, o, o["node"], "status")
        if st is None:
            continue
        slave_on = o["variables"].get("Rpl_semi_sync_slave_status") == "ON"
        check.judge(not (slave_on and st["Slave_IO_Running"] == "No"),
                    lambda: f"{o['node']}: Rpl_semi_sync_slave_status ON with the IO thread {st['Slave_IO_Running']}", o, st)


@checks("WL1720.DUMP.FLAG", needs=("ack",))
def only_requesting_replicas_ack(v: TraceView, check: Check) -> None:
    """Only a replica that asked for semi-sync when it connected acknowledges."""
    ix = index(v)
    for a in v.kind("ack"):
        dumps = ix.dump_keys_by_sid.get((a["node"], ix.server_ids.get(a["replica"])), [])
        check.judge(bool(dumps) and dumps[0] < _key(a), f"{a['replica']} acknowledged without having asked {a['node']} for semi-sync", a)


@checks("WL1720.TIMEOUT.ASYNC")
def timeout_bounds_the_wait(v: TraceView, check: Check) -> None:
    """No commit waits longer than the timeout; one that waited it out finds the master switched OFF."""
    ix = index(v)
    tol = v.resolution_us
    for c in ix.commits:
        if not _waited(c) or not c["ok"]:
            continue
        timeout = int(ix.var(c["node"], "rpl_semi_sync_master_timeout", c["bkey"]) or 0) * 1000
        waited = c["obs"]["t"] - c["binlog"]["t"]
        check.judge(waited <= timeout + tol, f"commit of {c['trx']} waited {seconds(waited)}, timeout {seconds(timeout)}", c["obs"])
        if 2 * tol > timeout and len(ix.holders(c["node"], c["pos"], c["rkey"])) < ix.n(c["node"], c["rkey"]):
            # The sampling resolution is past half the timeout: a prompt return and a timed-out one look alike.
            check.undecidable(f"commit of {c['trx']} waited {seconds(waited)}: with a resolution of {seconds(tol)} and a timeout of "
                              f"{seconds(timeout)} the trace cannot tell whether it timed out", c["obs"])
        elif waited >= timeout - tol and len(ix.holders(c["node"], c["pos"], c["rkey"])) < ix.n(c["node"], c["rkey"]):
            check.judge(not ix.on_settled(c["node"], c["rkey"], tol), f"commit of {c['trx']} timed out but the status is still ON",
                        c["obs"])


def _timed_out(ix: SemiSyncIndex, c: dict, tol: int, surely: bool = False) -> bool:
    """The commit may have waited out the timeout (surely: it did, as far as the trace can tell).
    A sampled trace stamps the binlog write up to tol late, so the wait may be tol longer than it
    shows; but never longer than the statement itself (its `start` is the server's clock)."""
    timeout = int(ix.var(c["node"], "rpl_semi_sync_master_timeout", c["bkey"]) or 0) * 1000
    waited = c["obs"]["t"] - c["binlog"]["t"]
    longest = c["obs"]["t"] - c["obs"].get("start", c["binlog"]["t"])
    could = waited >= timeout if surely or not tol else (waited >= timeout - tol and longest >= timeout)
    return (_waited(c) and c["ok"] and could
            and len(ix.acked_by(c["node"], c["pos"], c["rkey"])) < ix.n(c["node"], c["rkey"])
            and not _disabled_at_return(ix, c, tol) and not _switched_off_otherwise(ix, c, tol))


def _switched_off_otherwise(ix: SemiSyncIndex, c: dict, tol: int) -> bool:
    """The status switched OFF as the wait ended because the last semi-sync replica left with
    rpl_semi_sync_master_wait_no_slave OFF (the line says so): that released it, whatever the
    timeout would have done at the same moment (a switch_off wakes every waiting session)."""
    offs = ix.v.memo("semisync.no_slave_offs", lambda: _by_node(
        o for o in ix.v.kind("log") if o["message"].startswith("Semi-sync replication switched OFF") and NO_SLAVE in o["message"]))
    keys = offs.get(c["node"], [])
    i = bisect_left(keys, (c["obs"]["t"] - tol, -1))
    return i < len(keys) and keys[i] < c["rkey"]


def _disabled_at_return(ix: SemiSyncIndex, c: dict, tol: int) -> bool:
    """The DBA disabled semi-sync as the wait ended: that released it (disable_master switches off
    and wakes the waiting sessions), whatever the timeout would have done at the same moment."""
    disables = ix.v.memo("semisync.disables", lambda: _by_node([
        o for o in ix.v.kind("stmt") if o["op"] == "set_global" and o.get("variable") == "rpl_semi_sync_master_enabled"
        and not o.get("value") and o.get("errno") is None]))
    keys = disables.get(c["node"], [])
    i = bisect_left(keys, (c["obs"]["t"] - tol, -1))
    return i < len(keys) and keys[i] < c["rkey"]


def _by_node(obs: list[dict]) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for o in obs:
        out.setdefault(o["node"], []).append(_key(o))
    return out


@checks("WL1720.TIMEOUT.LOG")
def timeout_is_logged(v: TraceView, check: Check) -> None:
    """A switch to async on timeout logs the binlog file and position that went unacknowledged."""
    ix = index(v)
    ends = {(c["node"], c["pos"]) for c in ix.commits}
    logged: dict[str, list] = {}  # per node, keys of its timeout lines that name a commit's binlog position
    for o in v.kind("log"):
        if (m := TIMEOUT_LOG.search(o["message"])) and (o["node"], (m.group(1), int(m.group(2)))) in ends:
            logged.setdefault(o["node"], []).append(_key(o))
    for c in ix.commits:
        if not _timed_out(ix, c, v.resolution_us):
            continue
        # A real server's log line is seen at the next poll: up to the resolution after the return.
        until = max(c["rkey"], (c["obs"]["t"] + v.resolution_us, END[0])) if v.resolution_us else c["rkey"]
        keys = logged.get(c["node"], [])
        found = bisect_right(keys, until) > bisect_right(keys, c["bkey"])
        message = f"commit of {c['trx']} on {c['node']} timed out with no log naming a binlog position"
        if not found and not _timed_out(ix, c, v.resolution_us, surely=True):
            check.undecidable(message.replace("timed out", "may have timed out (the resolution cannot tell)"), c["obs"])
            continue
        check.judge(found, message, c["obs"])


@checks("WL1720.OFF.NO_WAIT")
def no_wait_while_off(v: TraceView, check: Check) -> None:
    """While semi-sync is OFF or disabled, a commit returns as soon as it is binlogged."""
    ix = index(v)
    for c in ix.commits:
        if c["ok"] and not _waited(c):
            # A polled trace dates binlog events by their whole-second timestamps: the write came
            # no earlier than the statement began.
            waited = c["obs"]["t"] - max(c["binlog"]["t"], c["obs"].get("start", c["binlog"]["t"]))
            check.judge(waited <= v.resolution_us, f"commit of {c['trx']} on {c['node']} waited {seconds(waited)} while OFF", c["obs"])


def _switches(ix: SemiSyncIndex, node: str):
    prev = ix.status[node].values[0]
    for key, value in ix.status[node].changes():
        if value != prev:
            yield key, value
        prev = value


def _dba_or_restart(v: TraceView, node: str, key) -> bool:
    """A switch the DBA (SET GLOBAL) or a restart caused: at that very instant, or for a sampled
    trace within its resolution before the sample that shows it."""
    keys = index(v).dba.get(node, [])
    return _keys_before(keys, key) > _keys_before(keys, (key[0] - v.resolution_us, -1))


@checks("WL1720.SWITCH_BACK", needs=("ack",))
def switches_back_on_catch_up(v: TraceView, check: Check) -> None:
    """Once the required replicas have caught up with the binlog, the status is ON again by itself."""
    ix = index(v)
    # Per master, each replica's furthest ack since the master last went down: a restarted master
    # starts its ack state afresh, so an ack from before its crash or shutdown catches nothing up.
    reached: dict[str, dict[str, tuple[str, int]]] = {}
    since: dict[str, int] = {}
    for a in v.kind("ack"):
        node, key = a["node"], _key(a)
        downs = ix.downs.get(node, [])
        down = bisect_right(downs, key)
        if since.get(node) != down:
            since[node], reached[node] = down, {}
        pos = (a["file"], a["pos"])
        reached[node][a["replica"]] = max(pos, reached[node].get(a["replica"], pos))
        if ix.on(node, key) or not ix.var(node, "rpl_semi_sync_master_enabled", key):
            continue
        end = ix.binlog_end(node, key)
        if sum(p >= end for p in reached[node].values()) >= ix.n(node, key) and end > ("", 0):
            # Any sample within the resolution: a polled server's relay sees the ack before the server
            # has taken it (its ack receiver thread), and a sample read meanwhile still shows OFF
            # (measured on 10.11 at load 20: flt-semisync-unsent, ON 7 ms after the ack, one sample later).
            after = ix.samples_within(node, key, a["t"] + v.resolution_us)
            check.judge(any(s["variables"][STATUS] == "ON" for s in after),
                        f"{node}: replicas caught up with {end} at {seconds(a['t'])} but the status stayed OFF", a)


@checks("WL7169.N_DISTINCT", needs=("ack",))
def released_at_n_distinct_acks(v: TraceView, check: Check) -> None:
    """Released exactly when N distinct replicas acknowledged at or past the commit: not before, not after."""
    ix = index(v)
    for c in ix.commits:
        if not (_waited(c) and c["ok"]):
            continue
        node = c["node"]
        acks = ix.acked_by(node, c["pos"], END)
        before = [a for a in acks if _key(a) < c["rkey"]]
        n = ix.n(node, c["rkey"])
        # A timeout's switch to OFF shows only at the next sample of a sampled trace (tol 0 for a model).
        if ix.on_settled(node, c["rkey"], v.resolution_us):
            check.judge(len(before) >= n, f"commit of {c['trx']} on {node} released while ON with acks from "
                        f"{sorted(a['replica'] for a in before)} (need {n} distinct)", c["obs"], *before)
        ready = ix.release_key(node, c["bkey"], [(_key(a), a["replica"]) for a in acks])
        if ready is not None and ix.on(node, ready):
            check.judge(c["obs"]["t"] <= ready[0] + v.resolution_us,
                        f"commit of {c['trx']} on {node} had its distinct acks at {seconds(ready[0])} but returned at {seconds(c['obs']['t'])}",
                        c["obs"])


@checks("WL7169.SWITCH_BACK_N", needs=("ack",))
def switch_back_needs_n(v: TraceView, check: Check) -> None:
    """Back to ON only when N distinct replicas acknowledged the current binlog position."""
    ix = index(v)
    for node in v.nodes:
        for key, value in _switches(ix, node):
            if value != "ON" or _dba_or_restart(v, node, key):
                continue
            end = ix.binlog_end(node, key)
            acked = ix.acked_by(node, end, key)
            n = ix.n(node, key)
            check.judge(len(acked) >= n, f"{node} switched ON at {seconds(key[0])} with acks of {end} from "
                        f"{sorted(a['replica'] for a in acked)} (need {n})", ix.status_obs[key], *acked)


@checks("WL1720.ONOFF.DBA")
def dba_switches_on_the_fly(v: TraceView, check: Check) -> None:
    """SET GLOBAL rpl_semi_sync_master_enabled turns the status ON or OFF at once."""
    ix = index(v)
    for s in v.kind("stmt"):
        if s["op"] == "set_global" and s.get("variable") == "rpl_semi_sync_master_enabled" and s.get("errno") is None:
            if bool(ix.var(s["node"], "rpl_semi_sync_master_enabled", _key(s))) == bool(s["value"]):
                continue  # setting the value it has changes nothing
            after = ix.next_sample(s["node"], _key(s))
            if after is not None and after["t"] <= s["t"] + v.resolution_us:
                want = "ON" if s["value"] else "OFF"
                check.judge(after["variables"][STATUS] == want,
                            f"{s['node']}: enabled := {s['value']} but the status is {after['variables'][STATUS]}", s, after)


@checks("WL1720.HOSTS")
def slave_hosts_mode(v: TraceView, check: Check) -> None:
    """SHOW SLAVE HOSTS says which replicas are semi-sync, and why the others are not."""
    for o in v.kind("server_status"):
        on = o["variables"].get(STATUS) == "ON"
        for h in o.get("slave_hosts", []):
            r_status = _sampled_with(v, o, h["replica"])
            if r_status is None:
                continue  # no sample of the replica taken together with this one
            requested = r_status["variables"].get("Rpl_semi_sync_slave_status") == "ON"
            if h["mode"] == "semi-sync":
                check.judge(on and requested, f"{o['node']} lists {h['replica']} as semi-sync (status {'ON' if on else 'OFF'}, "
                            f"requested {requested})", o)
            else:
                check.judge(bool(h.get("reason")) and not (on and requested),
                            f"{o['node']} lists {h['replica']} as async with reason {h.get('reason')!r}", o)


@checks("WL1720.COUNT.TX", needs=("ack",))
def yes_and_no_counted_exactly(v: TraceView, check: Check) -> None:
    """yes_tx and no_tx count binlogged transactions acknowledged in time, and the others."""
    ix = index(v)
    # the counters start again from 0 at a restart and at FLUSH STATUS
    resets: dict[str, list] = {}
    for o in v.kind("restart") + [s for s in v.kind("stmt") if s.get("op") == "flush_status" and s.get("errno") is None]:
        resets.setdefault(o["node"], []).append(_key(o))
    for keys in resets.values():
        keys.sort()
    # per node, the commits a counter counts, by return, and how many of them were acked (yes) or
    # not (no) up to each: a sample's counts are two binary searches
    # A commit binlogged while the status switched between two samples may have waited or not:
    # it counts as either (lo counts it as neither, hi as both).
    # A commit sent to no replica that may have waited (ix.unsent_unsure) is no_tx's or no counter's.
    counted: dict[str, tuple[list, list, list]] = {}
    unsure = {id(c) for c in ix.unsent_unsure}
    for c in sorted(ix.commits + ix.unsent_unsure, key=lambda c: c["rkey"]):
        if c["ok"] and c["enabled"]:
            acks = len(ix.acked_by(c["node"], c["pos"], c["rkey"])) >= ix.n(c["node"], c["rkey"])
            either = acks and ix.unsettled(c["node"], c["bkey"], v.resolution_us)
            acked = _waited(c) and acks
            keys, lows, highs = counted.setdefault(c["node"], ([], [(0, 0)], [(0, 0)]))
            keys.append(c["rkey"])
            if id(c) in unsure:
                lows.append(lows[-1])
                highs.append((highs[-1][0], highs[-1][1] + 1))
                continue
            lows.append((lows[-1][0] + (acked and not either), lows[-1][1] + (not acked and not either)))
            highs.append((highs[-1][0] + (acked or either), highs[-1][1] + (not acked or either)))
    for o in v.kind("server_status"):
        node, key = o["node"], _key(o)
        if "Rpl_semi_sync_master_yes_tx" not in o["variables"]:
            continue
        n_resets = _keys_before(resets.get(node, []), key)
        since = resets[node][n_resets - 1] if n_resets else (-1, -1)
        # A sampled trace: the server counts a commit when it releases it, a little before the
        # client sees it return, so commits returned within the resolution after may be counted;
        # and the sample is stamped after the counters were read, so those returned within the
        # resolution before may not be yet.
        soon = (key[0] + v.resolution_us, 2**62) if v.resolution_us else key
        sure = (key[0] - v.resolution_us, -1) if v.resolution_us else key
        keys, lows, highs = counted.get(node, ([], [(0, 0)], [(0, 0)]))
        lo, hi = ([a - b for a, b in zip(totals[max(bisect_left(keys, end), bisect_right(keys, since))],
                                         totals[bisect_right(keys, since)])]
                  for totals, end in ((lows, sure), (highs, soon)))
        got = (o["variables"]["Rpl_semi_sync_master_yes_tx"], o["variables"]["Rpl_semi_sync_master_no_tx"])
        shows = tuple(lo) if lo == hi else f"{tuple(lo)} to {tuple(hi)}"
        check.judge(lo[0] <= got[0] <= hi[0] and lo[1] <= got[1] <= hi[1],
                    lambda: f"{node} at {seconds(o['t'])}: yes_tx, no_tx = {got}, the trace shows {shows}", o)


@checks("WL1720.CLIENTS")
def clients_counted(v: TraceView, check: Check) -> None:
    """Rpl_semi_sync_master_clients counts the connected replicas that asked for semi-sync."""
    for o in v.kind("server_status"):
        hosts = o.get("slave_hosts")
        if hosts is None or "Rpl_semi_sync_master_clients" not in o["variables"]:
            continue
        asked = []
        for h in hosts:
            r = _sampled_with(v, o, h["replica"])
            if r is None:
                break
            asked.append(r["variables"].get("Rpl_semi_sync_slave_status") == "ON")
        else:
            check.judge(o["variables"]["Rpl_semi_sync_master_clients"] == sum(asked),
                        lambda: f"{o['node']}: clients {o['variables']['Rpl_semi_sync_master_clients']}, semi-sync replicas connected {sum(asked)}", o)


@checks("WL1720.LIVE.RELEASE")
def waiters_released(v: TraceView, check: Check) -> None:
    """Every waiting session is released; once its transaction is held by N connected semi-sync
    replicas (also after a reconnect), by acknowledgement rather than by the timeout."""
    ix = index(v)
    returned = {(c["node"], c.get("gtid"), c.get("trx")) for c in v.kind("commit")}
    # A GTID's origin is the server its server_id names: a polled trace reads the binlogs at the end,
    # where a truncated transaction its new primary sent back appears first on the new primary.
    by_id = ix.by_server_id
    origin: dict[str, str] = {}
    for x in v.kind("binlog"):
        if x.get("gtid"):
            sid = x["gtid"].split("-")
            origin.setdefault(x["gtid"], by_id.get(int(sid[1]) if len(sid) == 3 and sid[1].isdigit() else None, x["node"]))
    for (node, gtid, trx), b in ix.ends.items():
        if origin.get(gtid) == node:  # a client's transaction, not one relayed through this node
            check.judge((node, gtid, trx) in returned, f"the commit of {trx} on {node} never returned", b)
    for c in ix.commits:
        if not (_waited(c) and c["ok"]):
            continue
        node = c["node"]
        chances: dict[str, int] = {}
        for a in ix.acked_by(node, c["pos"], END):
            chances[a["replica"]] = a["t"]
        for replica, reach in ix.relayed.get(node, {}).items():
            # The first reconnect after the binlog write once the replica held the commit: it acks
            # at the reconnect (holding only grows, and later reconnects come no sooner).
            held = reach.first(c["pos"], END)
            keys = ix.dump_keys_by_sid.get((node, ix.server_ids.get(replica)), [])
            i = bisect_right(keys, max(c["bkey"], _key(held))) if held is not None else len(keys)
            while i < len(keys) and ix.dump_cut(replica, keys[i]):
                i += 1
            if i < len(keys):
                check.reached("a reconnect of a replica holding a waiting commit")
                chances[replica] = min(chances.get(replica, 2**62), keys[i][0] + 2 * ix.latency(replica))
        ready = ix.release_key(node, c["bkey"], [((t, 0), r) for r, t in chances.items()])
        if ready is None:
            continue
        deadline = max(ready[0], c["binlog"]["t"])
        still_on = all(ix.on(node, (t, 2**62)) for t in (c["binlog"]["t"], deadline))
        if still_on:
            check.judge(c["obs"]["t"] <= deadline + v.resolution_us,
                        f"commit of {c['trx']} on {node} could be released at {seconds(deadline)} but returned at {seconds(c['obs']['t'])}", c["obs"])


@checks("WL1720.NO_ROLLBACK")
def no_rollback_on_master(v: TraceView, check: Check) -> None:
    """A transaction that was never acknowledged still stays committed on the master."""
    ix = index(v)
    visible = {(o["node"], o["gtid"]) for o in v.kind("visible")}
    down_at_end = {}
    for o in v.obs:
        if o["kind"] in ("crash", "shutdown"):
            down_at_end[o["node"]] = True
        elif o["kind"] == "restart":
            down_at_end[o["node"]] = False
    for c in ix.commits:
        if _waited(c) and (c["ok"] or c["obs"].get("semisync") == "shutdown") and not down_at_end.get(c["node"]):
            check.judge((c["node"], c["gtid"]) in visible, f"{c['trx']} was rolled back on {c['node']}", c["obs"])


@checks("WL1720.WAIT_NO_SLAVE")
def wait_with_no_slave(v: TraceView, check: Check) -> None:
    """With no semi-sync replica: wait out the timeout if wait_no_slave is ON, go async at once if OFF."""
    ix = index(v)
    tol = v.resolution_us
    for c in ix.commits:
        node = c["node"]
        if not (c["ok"] and c["enabled"] and c["on_binlog"]):
            continue
        if _clients(v, node).at(c["bkey"]) or ix.acked_by(node, c["pos"], c["rkey"]):
            continue
        timeout = int(ix.var(node, "rpl_semi_sync_master_timeout", c["bkey"]) or 0) * 1000
        waited = c["obs"]["t"] - c["binlog"]["t"]
        if ix.var(node, "rpl_semi_sync_master_wait_no_slave", c["bkey"]) is False:
            check.judge(waited <= tol and not ix.on_settled(node, c["rkey"], tol), f"{c['trx']} waited {seconds(waited)} with no semi-sync replica "
                        "and wait_no_slave OFF", c["obs"])
        elif not ix.holders(node, c["pos"], c["rkey"]) and not _wait_cut_short(ix, c, tol):
            check.judge(waited >= timeout - tol, f"{c['trx']} returned after {seconds(waited)} with no semi-sync replica, "
                        f"timeout {seconds(timeout)}", c["obs"])


def _wait_cut_short(ix: SemiSyncIndex, c: dict, tol: int) -> bool:
    """c's wait ended before its own timeout for a reason of the master's: the DBA disabled
    semi-sync, or an earlier waiter timed out at that instant. The switch to async ends every wait
    (WL#1720: no waits while OFF; MariaDB's switch_off() signals all waiting sessions)."""
    if not ix.var(c["node"], "rpl_semi_sync_master_enabled", c["rkey"]):
        return True
    # the node's timed-out commits by return time: only those returned within tol of c's can count
    timed_out = ix.v.memo("semisync.timed_out", lambda: _by_return(c for c in ix.commits if _timed_out(ix, c, tol)))
    times, commits = timed_out.get(c["node"], ([], []))
    lo, hi = bisect_left(times, c["obs"]["t"] - tol), bisect_right(times, c["obs"]["t"] + tol)
    return any(o["bkey"] < c["bkey"] for o in commits[lo:hi])


def _by_return(commits) -> dict[str, tuple[list, list]]:
    """Per node, the commits sorted by the time they returned, and those times."""
    out: dict[str, tuple[list, list]] = {}
    for c in sorted(commits, key=lambda c: c["obs"]["t"]):
        times, same = out.setdefault(c["node"], ([], []))
        times.append(c["obs"]["t"])
        same.append(c)
    return out


def _clients(v: TraceView, node: str) -> Timeline:
    """The semi-sync replicas connected to node over the trace (a frozenset at each change): each
    dump it logged, until that replica's IO thread stops or either server goes down."""
    return v.memo("semisync.clients", lambda: _all_clients(v))[node]


def _all_clients(v: TraceView) -> dict[str, Timeline]:
    """_clients of every node, in one pass over the trace."""
    names = set(v.nodes) | {o["node"] for o in v.obs}
    lines = {n: Timeline(frozenset()) for n in names}
    connected: dict[str, set[str]] = {n: set() for n in names}

    def change(n: str, o: dict, new: set[str]) -> None:
        if new != connected[n]:
            connected[n] = new
            lines[n].set(_key(o), frozenset(new))

    for o in v.obs:
        node = o["node"]
        if o["kind"] == "log" and DUMP_LOG.search(o["message"]):
            change(node, o, connected[node] | {o.get("replica")})
        elif o["kind"] in ("crash", "shutdown", "restart"):
            change(node, o, set())
        if o["kind"] in ("crash", "shutdown") or (
                o["kind"] == "stmt" and o["op"] == "stop_slave" and o.get("thread") in (None, "io")):
            for n, now in list(connected.items()):
                if node in now:
                    change(n, o, now - {node})
    return lines


@checks("WL6355.AFTER_SYNC.INVISIBLE", needs=("relay",))
def invisible_until_acknowledged(v: TraceView, check: Check) -> None:
    """While ON, no session sees a transaction before N replicas hold it."""
    ix = index(v)
    waited = {(c["node"], c["gtid"]): c for c in ix.commits if _waited(c)}
    for o in v.kind("visible"):
        c = waited.get((o["node"], o.get("gtid")))
        # What binlog crash recovery commits at a restart is the recovery feature's to judge.
        downs = ix.downs.get(o["node"], [])
        recovered = c is not None and _keys_before(downs, _key(o)) > bisect_right(downs, c["bkey"])
        if c is not None and not recovered and ix.on(o["node"], _key(o)):
            held = ix.holders(o["node"], c["pos"], _key(o))
            check.judge(len(held) >= ix.n(o["node"], _key(o)),
                        f"{c['trx']} became visible on {o['node']} at {seconds(o['t'])} while ON, held by {sorted(held)}", o)
    by_trx = {(c["node"], c["trx"]): c for c in waited.values()}
    for r in v.kind("read"):
        if not ix.on(r["node"], _key(r)):
            continue
        for trx in r["seen"]:
            c = by_trx.get((r["node"], trx))
            # Only a read during the wait is this rule's: once the commit returned (acked under the
            # N then in force, or timed out to async) it stays visible whatever N or the status
            # become later; whether it returned rightly is WL1720.ACK.WAIT's and TIMEOUT's to judge.
            if c is not None and _key(r) < c["rkey"]:
                held = ix.holders(r["node"], c["pos"], _key(r))
                check.judge(len(held) >= ix.n(r["node"], _key(r)),
                            f"a session on {r['node']} read {trx} at {seconds(r['t'])} while ON; held by {sorted(held)}", r)


@checks("WL6355.FAILOVER.NO_LOSS")
def failover_loses_nothing(v: TraceView, check: Check) -> None:
    """After failover to the most advanced replica, nothing returned while ON, or read during its wait
    while ON, is lost."""
    ix = index(v)
    visible = {(o["node"], o.get("gtid")) for o in v.kind("visible")}
    for p in v.kind("promoted"):
        old, new = p["old"], p["node"]
        crash = max((_key(o) for o in v.obs if o["kind"] in ("crash", "shutdown") and o["node"] == old and _key(o) < _key(p)),
                    default=None)
        if crash is None:
            continue
        must: dict[str, tuple[str, dict]] = {}
        for c in ix.commits:
            if c["node"] == old and c["ok"] and c["on_return"] and c["rkey"] < crash:
                must[c["gtid"]] = ("returned", c["obs"])
        by_trx = {c["trx"]: c for c in ix.commits if c["node"] == old}
        for r in v.kind("read"):
            if r["node"] == old and _key(r) < crash and ix.on(old, _key(r)):
                for trx in r["seen"]:
                    # A read during the wait; a commit that returned while OFF (timeout, DBA) was
                    # async, and reading it once the status is ON again gives it no guarantee.
                    if trx in by_trx and _key(r) < by_trx[trx]["rkey"]:
                        must.setdefault(by_trx[trx]["gtid"], ("read", r))
        for gtid, (how, o) in must.items():
            check.judge((new, gtid) in visible, f"{gtid} ({how} on {old} while ON) is missing on the new primary {new}", o, p)


@checks("MARIADB.SEMISYNC.SHUTDOWN", needs=("ack",))
def shutdown_is_not_an_ack(v: TraceView, check: Check) -> None:
    """A shutdown gives waiting sessions an error, never a successful commit without the acks."""
    ix = index(v)
    returned_at: dict[tuple[str, int], list[dict]] = {}
    for c in ix.commits:
        returned_at.setdefault((c["node"], c["obs"]["t"]), []).append(c)
    for s in v.kind("shutdown"):
        for c in returned_at.get((s["node"], s["t"]), []):
            # Still waiting at the shutdown: not released as async just before it (DBA, timeout).
            if _waited(c) and c["on_return"] and c["rkey"] < _key(s):
                # The N in force at the release: lowering wait_for_slave_count releases waiters (WL#7169).
                acked = len(ix.acked_by(c["node"], c["pos"], c["rkey"])) >= ix.n(c["node"], c["rkey"])
                check.judge(acked or not c["ok"], f"shutdown of {s['node']} returned {c['trx']} as committed without acks", c["obs"], s)


# -- recovery of a semi-sync primary restarted as a replica (issue #16, mechanism 3) -------------
def _replica_restarts(v: TraceView) -> list[tuple[dict, dict, str]]:
    """(crash, restart, the source it replicates from at the end) for each crash of a node followed
    by its restart with --init-rpl-role=SLAVE, when it replicates again at the end."""
    sources = sources_at_end(v)
    out = []
    for r in v.kind("restart"):
        if r.get("init_rpl_role") != "SLAVE" or r["node"] not in sources:
            continue
        down = v.of_node(r["node"], "crash", "shutdown").last_before(r["_line"])
        if down is not None and down["kind"] == "crash":
            out.append((down, r, sources[r["node"]]))
    return out


def _visible_before(v: TraceView, node: str, line: int) -> set[str]:
    return {o["trx"] for o in v.of_node(node, "visible").before(line)}


@checks("MARIADB.SEMISYNC.RECOVERY.NO_ERRANT")
def no_errant_after_replica_recovery(v: TraceView, check: Check) -> None:
    """A transaction whose commit the crash cut off, not committed in the engine before it (in
    doubt), is held by the restarted replica at the end only if its new primary holds it too."""
    counts, witnesses = copies(v)
    for crash, r, source in _replica_restarts(v):
        node = r["node"]
        engine = _visible_before(v, node, crash["_line"])
        cut_off = [c for c in v.of_node(node, "commit") if c.get("errno") is not None
                   and c.get("start", c["t"]) <= crash["t"] and c["_line"] < r["_line"] and c["trx"] not in engine]
        for c in cut_off:
            w = [o for o in (witnesses.get(node), witnesses.get(source)) if o]
            check.judge(counts.get(node, {}).get(c["trx"], 0) == 0 or counts.get(source, {}).get(c["trx"], 0) >= 1,
                        f"{node} holds {c['trx']}, left in doubt by its crash, which its new primary {source} never had",
                        c, r, *w)


@checks("MARIADB.SEMISYNC.RECOVERY.KEEPS_COMMITTED")
def replica_recovery_keeps_committed(v: TraceView, check: Check) -> None:
    """What the engine committed before the crash survives a recovery as a replica, when the crash
    is one its settings promise to survive."""
    counts, witnesses = copies(v)
    for crash, r, _ in _replica_restarts(v):
        node = r["node"]
        if not promised(v, crash):
            continue
        for trx in sorted(_visible_before(v, node, crash["_line"])):
            check.judge(counts.get(node, {}).get(trx, 0) >= 1,
                        f"{node} lost {trx}, committed in its engine before its crash, when it recovered as a replica",
                        crash, r, *[o for o in (witnesses.get(node),) if o])
