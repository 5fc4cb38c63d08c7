"""Acks: a commit waits for one, sent by the IO thread after the relay-log write, for the last event
only; the semi-sync header is stripped; a replica shows its status."""
from __future__ import annotations

from bisect import bisect_left

from .core import Check, TraceView, checks, seconds
from .semisync_timeline import had_to_wait, index, keys_before, line_key, line_no, may_have_timed_out


@checks("WL1720.ACK.WAIT", needs=("relay",))
def commit_waits_for_ack(v: TraceView, check: Check) -> None:
    """While ON, a commit returns only once N replicas hold the transaction in their relay logs."""
    ix = index(v)
    for c in ix.commits:
        # A commit the timeout released returned as the status went OFF, which a real server's
        # next sample shows: TIMEOUT's to judge, not a return while ON.
        if c["ok"] and had_to_wait(c) and c["on_return"] and not may_have_timed_out(ix, c, v.resolution_us):
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


@checks("WL1720.ACK.RELAY", needs=("ack", "relay"), kinds=("ack",))
def ack_after_relay(v: TraceView, check: Check) -> None:
    """A replica acknowledges an event only once it is in its relay log."""
    ix = index(v)
    for a in v.kind("ack"):
        reach = ix.relayed.get(a["node"], {}).get(a["replica"])
        queued = reach is not None and reach.first(ix.place(a["node"], a["file"], a["pos"], line_key(a)), line_key(a)) is not None
        check.judge(queued, f"{a['replica']} acknowledged ({a['file']}, {a['pos']}) before relaying it", a)


@checks("WL1720.ACK.IO_THREAD", needs=("ack", "relay"), kinds=("ack",))
def ack_not_held_by_sql_thread(v: TraceView, check: Check) -> None:
    """The ack leaves when the event is queued: the SQL thread and its delay do not hold it back."""
    ix = index(v)
    for a in v.kind("ack"):
        queued = ix.relayed_at(a["node"], a["replica"], ix.place(a["node"], a["file"], a["pos"], line_key(a)))
        dumps = ix.dump_keys.get((a["node"], a["replica"]), [])
        n_queued, n_dumps = keys_before(queued, line_key(a)), keys_before(dumps, line_key(a))
        if not n_queued:
            continue
        # A reconnect acknowledges what the replica already held: measure from the reconnect then.
        since = max(queued[n_queued - 1], dumps[n_dumps - 1] if n_dumps else queued[n_queued - 1])
        # replcheck's own relay holding the ack (a real server's run on a loaded machine) is no time of the IO thread's
        check.judge(a["t"] - since[0] <= ix.latency(a["replica"]) + v.resolution_us + v.relay_held_us(a["replica"], since[0], a["t"]),
                    f"{a['replica']} acknowledged ({a['file']}, {a['pos']}) {seconds(a['t'] - since[0])} after queueing it", a)


@checks("WL1720.ACK.LAST_EVENT", needs=("ack",), kinds=("ack",))
def ack_only_last_event(v: TraceView, check: Check) -> None:
    """While ON, acks are asked for, and given, only at the end of a transaction's last event."""
    ix = index(v)
    ends = {(b["node"], b["file"], b["end"]) for b in v.kind("binlog") if b.get("last") and b.get("trx")}
    # A polled server's binlogs are read at the end: what a crash recovery cut (MDEV-21117) is gone
    # from them, and an ack past what the Trace holds of a file cannot be placed in it
    held: dict[tuple[str, str], int] = {}
    if "recovery" in v.unobserved:
        for b in v.kind("binlog"):
            held[(b["node"], b["file"])] = max(held.get((b["node"], b["file"]), 0), b["end"])
    for a in v.kind("ack"):
        if held and a["pos"] > held.get((a["node"], a["file"]), 0):
            continue
        # While OFF the master asks for a reply to every event at or past its last commit's end, to
        # learn when a replica has caught up and switch back ON (update_sync_header, then
        # report_reply_binlog's try_switch_on, sql/semisync_master.cc): a burst sent while OFF is
        # acknowledged event by event, also after its first ack switched the master ON. The status
        # as sampled says OFF there, or a sample within the resolution may show the switch.
        if not ix.on(a["node"], line_key(a)) or ix.unsettled(a["node"], line_key(a), v.resolution_us):
            continue
        check.judge((a["node"], a["file"], a["pos"]) in ends,
                    f"{a['replica']} acknowledged ({a['file']}, {a['pos']}), which ends no transaction on {a['node']}", a)


@checks("WL1720.HEADER", needs=("relay",))
def header_stripped(v: TraceView, check: Check) -> None:
    """Each relayed event has the length it has in the master's binlog: the extra header is gone.
    The dump's own events (a fake Rotate or Gtid_list) are in no binlog: they carry timestamp 0,
    which is how a replica tells them apart (sql_repl.cc, fake_event_header)."""
    ix = index(v)
    if not ix.ever_enabled:  # the length is semi-sync's header's business only
        return
    last: dict[tuple[str, str], dict] = {}
    for r in v.kind("relay"):
        log = (r["node"], r["file"])
        prev = last.get(log)
        last[log] = r
        # Not after it: another relay log of that name (a purge starts the names again, MariaDB's
        # purge_relay_logs then a new relay log from .000001), whose events follow none of the old one's.
        if prev is None or not prev.get("master_end") or prev["when"] == 0 or r["pos"] <= prev["pos"]:
            continue
        enabled = ix.vars.get(prev["source"], {}).get("rpl_semi_sync_master_enabled")
        if enabled is None or not enabled.at(line_key(prev)):  # the length is semi-sync's header's business only
            continue
        # A place may name an event of each binlog a RESET MASTER started again from .000001
        lengths = v.memo("semisync.binlog_len", lambda: _binlog_lengths(v))
        length = lengths.get((prev["source"], prev["master_file"], prev["master_end"]))
        if length is not None:
            check.judge(r["pos"] - prev["pos"] in length,
                        f"{r['node']} relay log holds {prev['type']} in {r['pos'] - prev['pos']} bytes, the binlog in "
                        f"{' or '.join(map(str, sorted(length)))}", prev, r)


def _binlog_lengths(v: TraceView) -> dict[tuple, set[int]]:
    out: dict[tuple, set[int]] = {}
    for b in v.kind("binlog"):
        out.setdefault((b["node"], b["file"], b["end"]), set()).add(b["end"] - b["pos"])
    return out


def sampled_with(v: TraceView, o: dict, node: str, kind: str = "server_status") -> dict | None:
    """node's sample of this kind taken together with sample o: same instant, nothing but samples
    in between (anything else, a STOP SLAVE say, may have changed what it would say)."""
    # v.obs, in line order, leaves out a named connection's observations (multi-source): a line is
    # no index there, but a binary search finds it
    i = bisect_left(v.obs, o["_line"], key=line_no)
    obs, t = v.obs, o["t"]
    for step in (1, -1):
        j = i + step
        while 0 <= j < len(obs) and obs[j]["t"] == t and obs[j]["kind"] in ("status", "server_status"):
            if obs[j]["kind"] == kind and obs[j]["node"] == node:
                return obs[j]
            j += step
    return None


def hosts_asked(v: TraceView, o: dict) -> list[bool | None]:
    """asked_semi_sync of each replica master sample o lists (slave_hosts), in its order: found once
    per sample, for the checks that read it."""
    asked = v.memo("semisync_ack.hosts_asked", dict)
    found = asked.get(o["_line"])
    if found is None:
        found = asked[o["_line"]] = [asked_semi_sync(v, o, h["replica"]) for h in o.get("slave_hosts", ())]
    return found


def asked_semi_sync(v: TraceView, o: dict, replica: str) -> bool | None:
    """Whether a replica that master sample o lists asked for semi-sync, as its own sample taken
    together with o shows; None where none says: no such sample, or a replica with named connections
    (multi-source), whose one global Rpl_semi_sync_slave_status any connection's start sets and any
    connection's stop clears (Repl_semi_sync_slave::slave_start, slave_stop; sql/semisync_slave.cc)."""
    r = None if any(r == replica for r, _ in v.connections) else sampled_with(v, o, replica)
    return None if r is None else r["variables"].get("Rpl_semi_sync_slave_status") == "ON"


@checks("WL1720.SLAVE.STATUS", kinds=("server_status",))
def slave_status_follows_io_thread(v: TraceView, check: Check) -> None:
    """Rpl_semi_sync_slave_status is ON only while the IO thread runs, and OFF when it is stopped."""
    for o in v.kind("server_status"):
        st = sampled_with(v, o, o["node"], "status")
        if st is None:
            continue
        ok = not (o["variables"].get("Rpl_semi_sync_slave_status") == "ON" and st["Slave_IO_Running"] == "No")
        check.judge(ok, "" if ok else f"{o['node']}: Rpl_semi_sync_slave_status ON with the IO thread {st['Slave_IO_Running']}", o, st)


@checks("WL1720.DUMP.FLAG", needs=("ack",), kinds=("ack",))
def only_requesting_replicas_ack(v: TraceView, check: Check) -> None:
    """Only a replica that asked for semi-sync when it connected acknowledges."""
    ix = index(v)
    for a in v.kind("ack"):
        dumps = ix.dump_keys_by_sid.get((a["node"], ix.server_ids.get(a["replica"])), [])
        check.judge(bool(dumps) and dumps[0] < line_key(a), f"{a['replica']} acknowledged without having asked {a['node']} for semi-sync", a)
