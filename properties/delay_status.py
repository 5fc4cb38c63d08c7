"""The delay's statements (CHANGE MASTER TO MASTER_DELAY, RESET SLAVE, BINLOG) and what SHOW SLAVE
STATUS shows of a delay."""
from __future__ import annotations

from bisect import bisect_left
from replcheck.spec.formats import MAX_MASTER_DELAY, US

from .core import Check, TraceView, checks, seconds
from .delay_timing import BINLOG_STATEMENT_EVENTS, STATE_WAITING, index, running_samples, status_samples, stmts
from .delay_waiting import left_text, seconds_left, waiting_for


# -- statements -------------------------------------------------------------------------------
def _sample_after(v: TraceView, stmt: dict) -> dict | None:
    """The node's first sample after the statement, if it shows the statement's effect alone: within
    the resolution, and before the node's next statement began (a slow run can sample only after
    it, when a later CHANGE MASTER may have set another delay)."""
    s = next((s for s in status_samples(v, stmt["node"]).after(stmt["_line"]) if s["t"] >= stmt["t"]), None)
    if s is None or s["t"] > stmt["t"] + v.resolution_us:
        return None
    nxt = next(v.of_node(stmt["node"], "stmt").after(stmt["_line"]), None)
    if nxt is not None and (nxt["_line"] < s["_line"] or (v.resolution_us and s["t"] >= nxt["t"] - nxt.get("duration_us", 0))):
        return None
    return s


@checks("WL344.CM.SET", kinds=("stmt:change_master",))
def change_master_sets_delay(v: TraceView, check: Check) -> None:
    """CHANGE MASTER TO MASTER_DELAY = N sets the delay to N seconds (SQL_Delay shows N)."""
    for s in stmts(v, "change_master"):
        if s.get("errno") is None and s.get("delay") is not None and (after := _sample_after(v, s)):
            check.judge(after["SQL_Delay"] == s["delay"], f"MASTER_DELAY = {s['delay']} but SQL_Delay shows {after['SQL_Delay']}", s, after)


def _expected_error(text: str) -> int | None:
    token = str(text).strip()
    if not token.isascii() or not token.isdigit():
        return 1064  # negative or not an integer: a syntax error
    return 1729 if int(token) > MAX_MASTER_DELAY else None


def _judge_delay_stmt(v: TraceView, check: Check, s: dict, want: int | None) -> None:
    ix = index(v)
    errno = s.get("errno")
    if errno == 1198:  # refused because the slave runs: not a verdict on the value
        return
    if want is None:
        check.judge(errno is None, f"MASTER_DELAY = {s['delay_sql']} is valid but failed with {errno}", s)
        return
    before = ix.delay_at(s["node"], s["t"], s["_line"])
    after = _sample_after(v, s)
    check.judge(errno == want and (after is None or after["SQL_Delay"] == before),
                f"MASTER_DELAY = {s['delay_sql']}: want error {want} and SQL_Delay {before} unchanged, got error {errno}"
                + (f" and SQL_Delay {after['SQL_Delay']}" if after else ""), s, *([after] if after else []))


@checks("WL344.CM.INVALID", kinds=("stmt:change_master",))
def invalid_delay_rejected(v: TraceView, check: Check) -> None:
    """A negative or non-integer MASTER_DELAY is an error and the statement does not execute."""
    for s in stmts(v, "change_master"):
        if "delay_sql" in s and _expected_error(s["delay_sql"]) == 1064:
            _judge_delay_stmt(v, check, s, 1064)


@checks("WL344.CM.RANGE", kinds=("stmt:change_master",))
def delay_range(v: TraceView, check: Check) -> None:
    """0 <= N < 2^31 is accepted; a larger integer fails with ER_MASTER_DELAY_VALUE_OUT_OF_RANGE."""
    for s in stmts(v, "change_master"):
        if "delay_sql" in s and _expected_error(s["delay_sql"]) != 1064:
            _judge_delay_stmt(v, check, s, _expected_error(s["delay_sql"]))


@checks("WL344.CM.DEFAULT")
def default_delay_zero(v: TraceView, check: Check) -> None:
    """A channel configured without MASTER_DELAY has SQL_Delay 0 until it is changed."""
    ix = index(v)
    for c in v.channels.values():
        node = c["replica"]
        if "delay" in c or "relay_log_info" in v.nodes.get(node, {}):
            continue
        changes = [t for t, _, _ in ix.delays.get(node, [])[1:]]
        first_change = min(changes, default=None)
        for s in status_samples(v, node):
            if first_change is None or s["t"] < first_change:
                check.judge(s["SQL_Delay"] == 0, lambda: f"{node} never set MASTER_DELAY but SQL_Delay is {s['SQL_Delay']}", s)


@checks("WL344.RESET.DELAY0", kinds=("stmt:reset_slave",))
def reset_slave_clears_delay(v: TraceView, check: Check) -> None:
    """RESET SLAVE sets the delay to 0."""
    for s in stmts(v, "reset_slave"):
        if s.get("errno") is None and (after := _sample_after(v, s)):
            check.judge(after["SQL_Delay"] == 0, f"after RESET SLAVE {s['node']} shows SQL_Delay {after['SQL_Delay']}", s, after)


@checks("WL344.BINLOG.RESTRICT", kinds=("stmt:binlog_statement",))
def binlog_statement_restricted(v: TraceView, check: Check) -> None:
    """BINLOG executes only format description and row events."""
    for s in stmts(v, "binlog_statement"):
        types = s["event_types"]
        allowed = bool(types) and types[0] == "FORMAT_DESCRIPTION_EVENT" and all(t in BINLOG_STATEMENT_EVENTS for t in types)
        check.judge((s.get("errno") is None) == allowed,
                    lambda: f"BINLOG with {types} {'failed' if s.get('errno') else 'succeeded'} (errno {s.get('errno')})", s)


@checks("WL344.STATE.WAITING", needs=("relay",))
def waiting_state_string(v: TraceView, check: Check) -> None:
    """While delaying, the SQL thread's state is exactly 'Waiting until MASTER_DELAY seconds after master executed event'."""
    for s in running_samples(v):
        w = waiting_for(v, s)
        if w is None:
            continue
        shown = s["Slave_SQL_Running_State"] == STATE_WAITING
        check.judge(shown == (w[0] == "yes"),
                    lambda: f"{s['node']} at {seconds(s['t'])} shows state {s['Slave_SQL_Running_State']!r} but it "
                    f"{'is' if w[0] == 'yes' else 'is not'} delaying" + (f" (due {seconds(w[1] if w[0] == 'yes' else w[2])})" if w[1] is not None else ""), s)


@checks("WL344.SSS.REMAINING", needs=("relay",))
def remaining_delay(v: TraceView, check: Check) -> None:
    """SQL_Remaining_Delay: the whole seconds left while waiting, NULL in every other state."""
    for s in v.kind("status"):
        rem = s["SQL_Remaining_Delay"]
        if s["Slave_SQL_Running_State"] != STATE_WAITING:
            check.judge(rem is None, lambda: f"{s['node']} state {s['Slave_SQL_Running_State']!r} but SQL_Remaining_Delay {rem}", s)
            continue
        w = waiting_for(v, s) if s["Slave_SQL_Running"] == "Yes" else None
        if not isinstance(rem, int) or rem < 0:
            check.judge(False, f"{s['node']} is waiting but SQL_Remaining_Delay is {rem!r}", s)
        elif w is not None and w[1] is not None:
            left = seconds_left(w, s["t"])
            # Whole seconds, read at some instant of the sample's read (not within the resolution:
            # a loaded machine's coarse polls would hide the whole-second error it is there to see).
            slack = 1 + v.whole_second_slack_us(s) / US
            check.judge(left[0] - slack < rem < left[1] + slack,
                        f"{s['node']} at {seconds(s['t'])}: SQL_Remaining_Delay {rem} but {left_text(left)} s are left", s)


@checks("WL344.SSS.SQL_DELAY")
def sql_delay_field(v: TraceView, check: Check) -> None:
    """SQL_Delay is the configured delay, a nonnegative integer, at every sample."""
    ix = index(v)
    for s in v.kind("status"):
        want = ix.delay_at(s["node"], s["t"], s["_line"])
        got = s["SQL_Delay"]
        check.judge(isinstance(got, int) and got >= 0 and (want is None or got == want),
                    lambda: f"{s['node']} at {seconds(s['t'])} shows SQL_Delay {got!r}, configured {want}", s)


@checks("WL344.SSS.RUNNING_STATE")
def running_state_is_processlist_state(v: TraceView, check: Check) -> None:
    """Slave_SQL_Running_State is identical to the SQL thread's State in SHOW PROCESSLIST."""
    for s in v.kind("status"):
        if "processlist_state" in s and (not v.resolution_us or _quiet_around(v, s)):
            pl = s["processlist_state"]
            check.judge(s["Slave_SQL_Running_State"] == (pl if pl is not None else ""),
                        lambda: f"{s['node']}: Slave_SQL_Running_State {s['Slave_SQL_Running_State']!r}, processlist {pl!r}", s)


def _quiet_around(v: TraceView, s: dict) -> bool:
    """A polled sample reads the processlist and SHOW SLAVE STATUS one after the other: their
    states are compared where nothing woke the SQL thread meanwhile, i.e. the IO thread read
    nothing and no statement ran on the replica from the sample before to the one after. A
    relay-log write wakes the thread waiting for more updates (wait_for_update_relay_log,
    sql/log.cc); it may find nothing to read and wait again, so its state goes and comes back
    with no event applied (mdb-purge-statement at load 13, over a master's FLUSH LOGS)."""
    samples = status_samples(v, s["node"])
    i = bisect_left(samples.keys, s["_line"])
    if not 0 < i < len(samples) - 1:
        return False
    before, after = samples[i - 1], samples[i + 1]
    read = lambda x: (x["Master_Log_File"], x["Read_Master_Log_Pos"])  # noqa: E731
    return read(before) == read(s) == read(after) and not v.of_node(s["node"], "stmt").between(before["_line"], after["_line"])
