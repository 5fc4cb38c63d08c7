"""relay-log.info (the delay survives a restart; old and new formats), the IO thread and the master
unaffected by a delay, START SLAVE UNTIL under a delay."""
from __future__ import annotations

from bisect import bisect_left
from replcheck.spec.formats import ER_SLAVE_WAS_RUNNING

from .core import Check, Seq, TraceView, checks, seconds
from .delay_timing import index, read_relay_log_info, repositions, status_samples, stmts
from .recovery import source_at
from .semisync_timeline import index as semisync_index, line_key

# A real server's replica reconnects to a restarted source at its next MASTER_CONNECT_RETRY (the
# harness's CHANGE MASTER sets 1 s, replcheck/harness/mariadb.py); a model's reconnects at once.
CONNECT_RETRY_US = 1_000_000


# -- relay-log.info ---------------------------------------------------------------------------
def _reads(v: TraceView):
    """relay-log.info contents a server read, with whether the server wrote them itself."""
    boot = {n: c.get("relay_log_info") for n, c in v.nodes.items()}
    for r in v.kind("relay_log_info"):
        yield r, not (r["t"] == 0 and boot.get(r["node"]) == r["content"])


def _first_sample_after(v: TraceView, o: dict) -> dict | None:
    return next(status_samples(v, o["node"]).after(o["_line"]), None)


@checks("WL344.RLI.DURABLE", kinds=("crash",))
def delay_survives_restart(v: TraceView, check: Check) -> None:
    """After a restart the previous delay is restored."""
    ix = index(v)
    for r in v.kind("restart"):
        node = r["node"]
        if node not in v.channels:
            continue
        crash = v.of_node(node, "crash").last_before(r["_line"])
        s = _first_sample_after(v, r)
        if crash is None or s is None:
            continue
        want = ix.delay_at(node, crash["t"], crash["_line"])
        if ix.delay_at(node, s["t"], s["_line"]) != want:
            continue  # changed again after the restart, before anything showed it
        check.judge(s["SQL_Delay"] == want, f"{node} had delay {want} before its crash at {seconds(crash['t'])}, {s['SQL_Delay']} after restart", r, s)


@checks("WL344.RLI.FORMAT", kinds=("relay_log_info",))
def relay_log_info_new_format(v: TraceView, check: Check) -> None:
    """relay-log.info is written as number_of_fields (>= 5), the four positions, the delay."""
    ix = index(v)
    for r, own in _reads(v):
        if not own:
            continue
        info = read_relay_log_info(r["content"])
        want = ix.delay_at(r["node"], r["t"], r["_line"])
        check.judge(info.get("format") == "new" and "error" not in info and info["fields"] >= 5
                    and "." in info["relay_log_name"] and (want is None or info["delay"] == want),
                    f"{r['node']} wrote relay-log.info {r['content']!r}: {info}, delay should be {want}", r)


def _boot_reads(v: TraceView, pick) -> list[tuple[dict, dict, dict | None]]:
    """relay-log.info reads at start-up, with the first SHOW SLAVE STATUS after; a read the server
    went down right after (crash, shutdown), whose SQL thread stopped (an error: an incident it read,
    an UNTIL reached), or whose replication a DBA changed (STOP SLAVE, CHANGE MASTER, RESET SLAVE),
    before any sample is not judged: nothing showed what it read."""
    def downs(node: str) -> Seq:
        return v.memo(("delay.downs", node), lambda: Seq((o for o in v.of_node(node, "crash", "shutdown", "sql_stop", "stmt") if o["kind"] != "stmt" or (
            o["op"] in ("stop_slave", "change_master", "reset_slave"))), lambda o: o["_line"]))
    out = []
    for r, own in _reads(v):
        info = read_relay_log_info(r["content"])
        s = _first_sample_after(v, r)
        end = s["_line"] if s is not None else 2**62
        if pick(info, own) and not downs(r["node"]).between(r["_line"], end):
            out.append((r, info, s))
    return out


@checks("WL344.RLI.FIELDS_MIN", kinds=("relay_log_info",))
def too_few_fields_is_an_error(v: TraceView, check: Check) -> None:
    """A first line that is an integer below 5 is an error; the slave does not start on it."""
    for r, info, s in _boot_reads(v, lambda i, own: i.get("format") == "new" and "< 5" in i.get("error", "")):
        err = next((e for e in v.of_node(r["node"], "error") if e["t"] == r["t"]), None)
        check.judge(err is not None and (s is None or s["Slave_SQL_Running"] == "No"),
                    f"{r['node']} read {r['content']!r} without an error", r, *([s] if s else []))


@checks("WL344.RLI.OLD_FORMAT", kinds=("relay_log_info",))
def old_format_read(v: TraceView, check: Check) -> None:
    """A first line that is not a number is read as the old format, with delay 0."""
    for r, info, s in _boot_reads(v, lambda i, own: i.get("format") == "old" and "error" not in i):
        check.judge(s is not None and s["SQL_Delay"] == 0 and s["Slave_SQL_Running"] == "Yes",
                    f"{r['node']} read old-format {r['content']!r}, then {s and (s['SQL_Delay'], s['Slave_SQL_Running'])}",
                    r, *([s] if s else []))


@checks("WL344.RLI.GARBAGE", kinds=("relay_log_info",))
def garbage_tail_tolerated(v: TraceView, check: Check) -> None:
    """Garbage after the last field is ignored, in both formats."""
    for r, info, s in _boot_reads(v, lambda i, own: i.get("garbage") and "error" not in i):
        check.judge(s is not None and s["SQL_Delay"] == info["delay"],
                    f"{r['node']} read {r['content']!r} (delay {info['delay']}), then SQL_Delay {s and s['SQL_Delay']}",
                    r, *([s] if s else []))


# -- the IO thread and the master -------------------------------------------------------------
@checks("WL344.IO.UNAFFECTED", needs=("relay",))
def io_thread_unaffected(v: TraceView, check: Check) -> None:
    """The IO thread relays events as they come, whatever the delay. What stops or restarts it
    (a crash, STOP/START/RESET SLAVE, a dropped connection and its reconnect) delays what it
    relays for its own reasons, not the delay's; so does a failover that repointed it to the source
    after the event was binlogged there (it could not fetch from a server that was not its source)."""
    ix = index(v)
    disturb: dict[str, list[int]] = {}
    for o in (*v.kind("crash"), *v.kind("restart"), *v.kind("io_cut"), *v.kind("stmt")):
        if o["kind"] != "stmt" or o["op"] in ("stop_slave", "start_slave", "reset_slave"):
            disturb.setdefault(o["node"], []).append(o["t"])
    for times in disturb.values():
        times.sort()

    def disturbed(node: str, lo: int, hi: int) -> bool:
        times = disturb.get(node, [])
        i = bisect_left(times, lo)
        return i < len(times) and times[i] <= hi

    retry = int(CONNECT_RETRY_US / min(1.0, v.header.get("time_scale", 1.0))) if v.resolution_us else 0
    for r in v.kind("relay"):
        c = v.channels.get(r["node"])
        b = ix.binlog.get((r["source"], r.get("gtid"), r.get("idx")))
        if b is None or c is None or ix.delay_at(r["node"], r["t"]) in (None, 0):
            continue
        # A source that came back up just before: its replicas' IO threads reconnect at their next
        # retry (MASTER_CONNECT_RETRY; a real server's harness sets 1 s, of its own clock)
        if disturbed(r["node"], b["t"], r["t"]) or disturbed(r["source"], b["t"] - retry, r["t"]):
            continue
        if source_at(v, r["node"], b["_line"]) != r["source"]:
            continue
        # replcheck's own relay holding the stream (a real server's run on a loaded machine) is time
        # the IO thread never had
        limit = c.get("latency_us", 0) + v.resolution_us + v.relay_held_us(r["node"], b["t"], r["t"])
        check.judge(r["t"] - b["t"] <= limit, lambda: f"{r['node']} relayed {r['type']} of {r['trx']} {seconds(r['t'] - b['t'])} after it was binlogged", b, r)


@checks("WL344.MASTER.UNAFFECTED")
def master_unaffected(v: TraceView, check: Check) -> None:
    """A commit on the master returns when it is binlogged, whatever its replicas' delays."""
    ix = index(v)
    delayed = {c["source"] for c in v.channels.values() if c.get("delay") or ix.delays.get(c["replica"], [(0, 0, 0)])[-1][2]}
    for c in v.kind("commit"):
        if c["node"] not in delayed or c.get("gtid") is None or c.get("semisync") is not None or c.get("errno") is not None:
            continue  # a semi-sync wait is judged by the semi-sync properties; a failed commit never returned
        if any(semisync_index(v).var(c["node"], "rpl_semi_sync_master_enabled", key) for key in ((c.get("start", c["t"]), -1), line_key(c))):
            # a semi-sync master (configured so or enabled by SET GLOBAL) whose commit may have waited:
            # a real server's commit does not say how when commits in flight together moved its
            # counters (a campaign's t1 and t2 timed out)
            continue
        b = ix.binlog.get((c["node"], c["gtid"], 0))
        if b is not None and b.get("trx") != c["trx"]:  # a GTID issued again (a crash cut the first away): its own group
            firsts = v.memo(("delay.group_starts", c["node"]), lambda: {
                x.get("trx"): x for x in reversed(v.of_node(c["node"], "binlog")) if x.get("idx") == 0})
            b = firsts.get(c["trx"])
        if b is not None:
            check.judge(b["t"] <= c["t"] <= b["t"] + v.resolution_us, lambda: f"commit of {c['trx']} returned at {seconds(c['t'])}, binlogged at {seconds(b['t'])}", b, c)


# -- START SLAVE UNTIL (use case P1) ----------------------------------------------------------
@checks("WL344.P1.UNTIL", needs=("relay",))
def until_stops_at_position(v: TraceView, check: Check) -> None:
    """START SLAVE SQL_THREAD UNTIL stops the SQL thread at the position, executing nothing beyond it."""
    ix = index(v)
    for s in stmts(v, "start_slave"):
        u = s.get("until")
        # With the SQL thread already running, START SLAVE only notes it and sets no UNTIL
        # (start_slave, sql/sql_repl.cc: the until condition is taken only for threads it starts).
        if not u or "master_log_file" not in u or s.get("errno") is not None or s.get("warning") == ER_SLAVE_WAS_RUNNING:
            continue  # (UNTIL SQL_AFTER_MTS_GAPS names no position: PARALLEL.UNTIL.GAPS)
        target = (u["master_log_file"], u["master_log_pos"])
        stopped = next(v.of_node(s["node"], "sql_stop").after(s["_line"]), None)
        stop = stopped["t"] if stopped is not None else None
        group_start = None
        # By trace line: a START SLAVE without UNTIL in the stop's microsecond runs what follows.
        for a in v.of_node(s["node"], "apply").between(s["_line"], stopped["_line"] if stopped is not None else 2**62):
            r = ix.relay.get((a["node"], a["relay_file"], a["relay_pos"]))
            if r is None or not r["master_end"]:
                continue
            if group_start is not None:
                check.judge(group_start < target, lambda: f"{a['node']} executed {a['trx']} beyond UNTIL {target}", s, a)
            if a["last"]:
                group_start = (r["master_file"], r["master_end"])
        # Only a stop the condition made says where UNTIL left the thread: STOP SLAVE, an error or a
        # crash may come first, and after a restart the thread runs without the condition.
        if stop is None or stopped["reason"] != "until":
            continue
        final = _first_sample_after(v, stopped)
        if final is None:
            continue
        at = (final["Relay_Master_Log_File"], final["Exec_Master_Log_Pos"])
        # Short only if the relay log the thread read held an event between its stop and the position:
        # a GTID connect that skipped another domain's groups leaves a hole there (the next event
        # starts past the position, and the servers stop before it).
        kept = max((d["_line"] for d in v.of_node(s["node"]) if d["_line"] < stopped["_line"] and (
            d["kind"] == "relay_log_recovery" or repositions(d) or (d["kind"] == "stmt" and d["op"] == "reset_slave"))), default=0)
        # A group the replica had committed before the start does not count: read again after a
        # rewinding parallel stop, it is passed over by GTID and deleted without update_pos
        # (rpl_parallel::do_event, process_gtid_for_restart_pos, sql/rpl_parallel.cc), so the place
        # shown stays before it while the condition, met at the next group's start, stops the thread
        # (a campaign's History: Exec_Master_Log_Pos 780 for UNTIL 896, every group up to 1151 committed).
        done = {a["trx"] for a in v.of_node(s["node"], "apply").before(s["_line"]) if a.get("last") and a.get("trx") is not None}
        short = any(r["node"] == s["node"] and kept < r["_line"] and r["t"] <= stop and r["master_end"]
                    and at < (r["master_file"], r["master_end"]) <= target and r.get("trx") not in done for r in v.kind("relay"))
        relayed_beyond = any(r["node"] == s["node"] and (r["master_file"], r["master_end"]) > target and r["t"] <= stop
                             for r in v.kind("relay"))
        if relayed_beyond:
            check.judge(at >= target or not short,
                        f"{s['node']} stopped at {final['Exec_Master_Log_Pos']} before reaching UNTIL {target}", s, final)
