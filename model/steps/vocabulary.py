"""The operator vocabulary every family draws where it makes sense: a commit of any statement kind the
model has, a BINLOG statement, SET GLOBAL of the replication variables a DBA toggles (while the threads
run, which a server may refuse, or with them stopped), CHANGE MASTER TO MASTER_DELAY, FLUSH RELAY LOGS,
a clock step, what else a primary sees (reads, SHOW MASTER STATUS, incidents, FLUSH LOGS and PURGE
BINARY LOGS), a replica's connection dropping or its acks lost, and a clean or unclean stop of any server started again maybe with another configuration
(my.cnf edited while it was down). A module of shared steps, no family: each family takes the steps it
can run (`step`: one step drawing among them), after its own, so that its own steps draw as before.

The steps read the topology from the History's header: the primary is the family's (b.state's
"primary", which a failover moves) or the first server that replicates from none; a replica is a
server with a channel into it (one with several channels is stopped and started with STOP/START ALL
SLAVES)."""
from __future__ import annotations

from replcheck.spec.vocabulary import FILTER_VARIABLES

from ..filter import FILTER_ON_MASTER, FILTER_ON_SLAVE, REPLICATE
from . import MS, US, Builder, Draw, Step

# The statement kinds of a commit (a trx op's fields): several "innodb" so that plain commits stay common.
KINDS = ("innodb", "innodb", "myisam", "ddl", "statements", "cache_overflow", "write_error", "timestamp", "marked", "domain")
PORTABLE = KINDS[:-2]
# What a DBA sets at run time, with values the servers take or refuse (model/parallel.py's, model/semisync.py's,
# the filters' and gtid_strict_mode's checks): some only with the replica's threads stopped (the model refuses
# the others while they run, as the servers do: ER_SLAVE_MUST_STOP).
RUNTIME = (("slave_parallel_threads", (0, 2, 4)), ("replica_parallel_workers", (0, 4)),
           ("slave_parallel_mode", ("optimistic", "conservative")), ("replica_preserve_commit_order", (True, False)),
           ("rpl_semi_sync_slave_enabled", (True, False)), ("rpl_semi_sync_master_enabled", (True, False)),
           ("rpl_semi_sync_master_timeout", (500, 2000)), ("rpl_semi_sync_master_wait_point", ("AFTER_SYNC", "AFTER_COMMIT")),
           ("sql_slave_skip_counter", (1, 2)), ("gtid_strict_mode", (True, False)),
           ("replicate_events_marked_for_skip", (REPLICATE, FILTER_ON_SLAVE, FILTER_ON_MASTER)), ("replicate_ignore_table", ("rc.m", "")),
           ("replicate_do_db", ("rc", "")), ("replicate_wild_ignore_table", ("rc.r%", "")))
# A restart's configuration changes (the options of my.cnf a DBA edits while the server is down), among
# them those a server refuses to start with or handles at its start: a --rpl-hierarchical server without
# --log-slave-updates does not start (GGID.STARTUP.OPTIONS); workers changed with gaps left by a crash.
RESTART_OPTIONS = ({"slave_parallel_threads": 4, "replica_parallel_workers": 4}, {"slave_parallel_threads": 0, "replica_parallel_workers": 0},
                   {"replicate_ignore_table": "rc.m"}, {"replicate_do_db": "rc", "replicate_ignore_table": ""},
                   {"replicate_events_marked_for_skip": "FILTER_ON_SLAVE"}, {"gtid_strict_mode": True}, {"gtid_strict_mode": False},
                   {"rpl_semi_sync_slave_enabled": True}, {"rpl_semi_sync_slave_enabled": False},
                   {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": 500}, {"rpl_semi_sync_master_enabled": False})


def primary(b: Builder) -> str:
    topo = b.header["topology"]
    into = {c["replica"] for c in topo["channels"]}
    return b.state.get("primary") or next(n["id"] for n in topo["nodes"] if n["id"] not in into)


def replicas(b: Builder) -> list[str]:
    """The family's replicas (b.state's, which a failover changes), or every server with a channel into it."""
    into = [c["replica"] for c in b.header["topology"]["channels"]]
    return list(b.state.get("replicas") or sorted(set(into), key=into.index))


def _servers(b: Builder) -> list[str]:
    return [n["id"] for n in b.header["topology"]["nodes"]]


def _unfiltered(settings: tuple, b: Builder) -> tuple:
    """The settings, without the filters' where the topology configures none: a run's Trace says
    which table each commit wrote only where its servers filter from the start (the simulator
    decides it from the History it is built with), so a run extended step by step (a state
    machine's) could not tell a filter set later."""
    if any(k in FILTER_VARIABLES for n in b.header["topology"]["nodes"] for k in n.get("variables", {})):
        return settings
    return tuple(s for s in settings if not (set(s) if isinstance(s, dict) else {s[0]}) & set(FILTER_VARIABLES))


def _single(b: Builder) -> list[str]:
    """The replicas with one channel: what addresses the channel without naming a connection."""
    return [r for r in replicas(b) if sum(c["replica"] == r for c in b.header["topology"]["channels"]) == 1]


def _threads(b: Builder, node: str, start: bool) -> None:
    """STOP or START SLAVE on a replica: ALL SLAVES on one with several named connections."""
    several = sum(c["replica"] == node for c in b.header["topology"]["channels"]) > 1
    b.op(("start" if start else "stop") + ("_all_slaves" if several else "_slave"), node)


def commit_any_kind(b: Builder, d: Draw) -> None:
    """A client transaction on the primary of one of the statement kinds the model has."""
    _commit(b, d, KINDS)


def commit_portable(b: Builder, d: Draw) -> None:
    """A client transaction of a kind every server has: not in another GTID domain nor marked with
    @@skip_replication (MariaDB's session variables, which a 5.0 server of the hierarchical design lacks)."""
    _commit(b, d, PORTABLE)


def _commit(b: Builder, d: Draw, kinds: tuple[str, ...]) -> None:
    kind, cost = d.choice(kinds), d.choice([0, 0, 2 * US])
    kw: dict = {"trx": b.trx_name(), "statements": [{"duration_us": MS, "replica_cost_us": cost}]}
    if kind == "myisam":
        kw["engine"] = "myisam"
    elif kind == "ddl":
        kw["ddl"] = True
    elif kind == "statements":
        kw["statements"] = kw["statements"] * d.integer(2, 3)
    elif kind in ("cache_overflow", "write_error"):
        kw.update(engine=d.choice(["innodb", "myisam"]), binlog_failure=kind)
    elif kind == "timestamp":
        kw["timestamp"] = d.choice([1_700_000_000, 1_700_000_050])
    elif kind == "marked":
        kw["skip_replication"] = True
    elif kind == "domain":
        kw["domain"] = 1
    b.op("trx", primary(b), **kw)


# BINLOG statements (WL#344: only a format description and row events run; binlog-statement.jsonl)
BINLOG_EVENTS = (["FORMAT_DESCRIPTION_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT"], ["FORMAT_DESCRIPTION_EVENT", "QUERY_EVENT"],
                 ["TABLE_MAP_EVENT", "WRITE_ROWS_EVENT"], ["FORMAT_DESCRIPTION_EVENT", "PRE_GA_UPDATE_ROWS_EVENT"])


def binlog_statement(b: Builder, d: Draw) -> None:
    b.op("binlog_statement", primary(b), event_types=d.choice(BINLOG_EVENTS))


def set_runtime(b: Builder, d: Draw) -> None:
    """SET GLOBAL of a replication variable on a replica or the primary, a replica's threads running
    or stopped (STOP SLAVE first, START SLAVE after, when drawn)."""
    node = d.choice([primary(b), *replicas(b)])
    variable, values = d.choice(_unfiltered(RUNTIME, b))
    stopped = node in replicas(b) and d.boolean()
    if stopped:
        _threads(b, node, False)
    b.op("set_global", node, variable=variable, value=d.choice(values))
    if stopped:
        b.now += d.choice([1, 300_000])
        _threads(b, node, True)


def master_delay(b: Builder, d: Draw) -> None:
    """CHANGE MASTER TO MASTER_DELAY on a replica with one channel, its threads running (MariaDB and
    5.0 refuse it, MySQL 5.7.4+ takes it with the IO thread running) or stopped and started again."""
    single = _single(b)
    if not single:  # only a multi-source replica: CHANGE MASTER names a connection (the multisource family's)
        return
    node, stopped = d.choice(single), d.boolean()
    if stopped:
        _threads(b, node, False)
    b.op("change_master", node, delay=d.choice([0, 1, 3]))
    if stopped:
        _threads(b, node, True)


def flush_relay_logs(b: Builder, d: Draw) -> None:
    b.op("flush_relay_logs", d.choice(replicas(b)))


def clock_step(b: Builder, d: Draw) -> None:
    b.op("clock_step", d.choice(_servers(b)), delta_us=d.choice([-2 * US, US + 250_000, 3600 * US]))


def on_the_primary(b: Builder, d: Draw) -> None:
    """What else a primary sees: another session's read, SHOW MASTER STATUS, an incident recorded
    (a known code or one the replicas do not know), FLUSH LOGS maybe followed by PURGE BINARY LOGS
    of what came before (a binlog a connected replica still reads stops the purge there)."""
    node, what = primary(b), d.choice(["read", "show_master_status", "record_incident", "flush_logs", "purge"])
    if what == "record_incident":
        b.op("record_incident", node, code=d.choice([1, 9]), message="recorded by the test")
    elif what == "purge":
        b.op("flush_logs", node)
        b.now += 1
        b.op("purge_binary_logs", node, before_us=b.now)
    else:
        b.op(what, node)


def network(b: Builder, d: Draw) -> None:
    """A replica with one channel loses its connection after its next 1..4 events (maybe inside a
    group) and reconnects, or loses its next semi-sync acks (nothing where it is no semi-sync slave)."""
    single = _single(b)
    if not single:
        return
    node = d.choice(single)
    if d.boolean():
        b.op("cut_io", node, after_events=d.integer(1, 4))
    else:
        b.op("lose_acks", node, count=d.integer(1, 2))


def stop_server(b: Builder, d: Draw) -> None:
    """A clean shutdown or a kill of any server, then its start after a while, maybe with another
    configuration: options of RESTART_OPTIONS (after a clean shutdown maybe without its .state file), or --log-slave-updates off (a --rpl-hierarchical server
    refuses to start so, and a second start with it on brings it back)."""
    node, clean = d.choice(_servers(b)), d.boolean()
    b.op("shutdown" if clean else "crash", node)
    b.now += d.choice([300_000, 2 * US])
    if clean and d.integer(0, 3) == 0:  # MariaDB's <log-bin>.state deleted while it is down (MDEV-6391)
        b.op("remove_state_file", node)
    change = d.choice([None, None, "variables", "variables", "log_slave_updates"])
    if change == "variables":
        b.op("restart", node, variables=d.choice(_unfiltered(RESTART_OPTIONS, b)))
    elif change == "log_slave_updates":
        b.op("restart", node, log_slave_updates=False)
        if next(n for n in b.header["topology"]["nodes"] if n["id"] == node).get("rpl_hierarchical"):
            b.now += 300_000  # refused: the DBA puts the option back
            b.op("restart", node, log_slave_updates=True)
    else:
        b.op("restart", node)


def step(*names: str) -> Step:
    """These steps of the vocabulary as one step that draws which to take, with their weight together:
    the generator draws each as often as a step of weight 1, and a state machine runs them as one rule,
    so that they do not crowd out the family's own (Hypothesis chooses among rules evenly)."""
    fns = [_STEPS[n] for n in names]

    def vocabulary(b: Builder, d: Draw) -> None:
        d.choice(fns)(b, d)
    return Step("vocabulary", len(fns), vocabulary)


_STEPS = {f.__name__: f for f in (commit_any_kind, commit_portable, binlog_statement, set_runtime, master_delay, flush_relay_logs, clock_step,
                                   on_the_primary, network, stop_server)}
EVERY = tuple(n for n in _STEPS if n != "commit_portable")  # what a family that takes them all takes
