"""The simulation's state: a log entry, a replica's channel, a node, and a model system's Config;
with the error numbers the components share.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import lru_cache

from replcheck.spec import formats as F
from replcheck.spec.formats import BINLOG_START

from .. import delay as D
from .. import mechanics as X
from .. import multisource as MS
from .. import mutants as M
from .. import parallel as PA
from .. import recovery as R
from .. import semisync as SS
from ..delay import US, Event


ER_SLAVE_MUST_STOP = 1198
ER_FLUSH_MASTER_BINLOG_CLOSED = 1186  # RESET MASTER on a server without a binlog
CR_CONN_HOST_ERROR = 2003  # the IO thread cannot connect to its master (Last_IO_Errno while the master is down)
ER_MASTER_INFO = 1201
ER_SLAVE_WAS_RUNNING = F.ER_SLAVE_WAS_RUNNING
ER_SLAVE_WAS_NOT_RUNNING = 1255
ER_WARN_SQL_AFTER_MTS_GAPS_GAP_NOT_CALCULATED = 4047  # MySQL 8.0.26+
ER_RELAY_LOG_INIT = 1380
ER_WARN_USING_GTID_CHANGED = 4190  # MariaDB's note (measured on 10.11: the failover's CHANGE MASTER)
CR_SERVER_LOST = 2013
ER_NO_FORMAT_DESCRIPTION_EVENT_BEFORE_BINLOG_STATEMENT = 1609
ER_ONLY_FD_AND_RBR_EVENTS_ALLOWED_IN_BINLOG_STATEMENT = 1730

# WL#344: after it, BINLOG can execute only these (WL#5404 later adds ROWS_QUERY_LOG_EVENT).
BINLOG_STATEMENT_EVENTS = frozenset({
    "FORMAT_DESCRIPTION_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "UPDATE_ROWS_EVENT",
    "DELETE_ROWS_EVENT", "PRE_GA_WRITE_ROWS_EVENT", "PRE_GA_UPDATE_ROWS_EVENT",
    "PRE_GA_DELETE_ROWS_EVENT",
})

NO_GROUP_ID = frozenset({"FORMAT_DESCRIPTION_EVENT", "ROTATE_EVENT"})
SKIP_EXEMPT = D.EXEMPT | {"GTID_LIST_EVENT"}
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_GLOBAL_VARIABLE = 1229  # SET SESSION of a global-only variable
DEFAULT_EPOCH_US = 1_700_000_000 * US
MAX_RELAY_LOG_SIZE = "max_relay_log_size"



@dataclass(slots=True)  # slots: a long History's logs hold millions
class Entry:
    """An event at a place in a log: a binlog file, or a relay log file."""

    ev: Event
    file: str
    pos: int
    end: int
    master_file: str = ""  # relay log only: where the event stands in the source's binlog
    master_end: int = 0
    source: str = ""  # relay log only: the server it came from
    group_id: int | None = None  # --rpl-hierarchical: the group's ID (0: mixed mode); None: none written
    at: int = 0  # binlog only: when it was written (what a machine crash keeps: model/recovery.py)
    torn: bool = False  # binlog only: partly written, a crash inside the write cut it


# A channel's and a node's state, split by the component that owns each part; Channel and Node put
# the parts together, so that every component reads one object.
@dataclass
class Link:
    """The replica side of source -> node, as the topology and CHANGE MASTER name it."""

    node: "Node"
    source: "Node"
    latency_us: int
    # MariaDB's connection_name (multi-source, model/multisource.py); None: the topology names none
    connection: str | None = None
    # the topology's clock_reply: "next_second", the answer to the IO thread's clock query arrives
    # in the second after the one the master answered in (a slow network at the connect)
    clock_reply: str = ""


@dataclass
class ReceiverState:
    """The IO thread and the relay log (receiver.py)."""

    io_running: bool = False
    connected: bool = False
    dumping: int | None = None  # the io_gen whose dump thread runs on the source (from its dump_start)
    io_gen: int = 0
    fetch: int | None = None  # next index into source.binlog; None: compute by GTID auto-position
    relay: list[Entry] = field(default_factory=list)
    relay_file_no: int = 1
    relay_pos: int = BINLOG_START
    read_master_file: str = ""
    read_master_pos: int = 0
    io_gtids: dict = field(default_factory=dict)  # Gtid_IO_Pos: per domain, the last group received whole
    # Last_IO_Errno / Last_IO_Error: the error that stopped the IO thread, cleared when it starts
    # (slave.cc handle_slave_io: mi->clear_error()) and by RESET SLAVE
    last_io_errno: int = 0
    last_io_error: str = ""
    connect_by_id: bool = False  # Connect_Using_Group_ID: the next connect asks for the slave's last group ID
    by_position: bool = False  # CHANGE MASTER TO a binlog position: MASTER_USE_GTID=no from then on
    current_pos: bool = False  # MASTER_USE_GTID=current_pos (else slave_pos): shown as Using_Gtid only
    # CHANGE MASTER TO DO_DOMAIN_IDS / IGNORE_DOMAIN_IDS (MariaDB), sorted; and whether the IO thread
    # is dropping the group it is receiving (domainfilter.py)
    do_domains: tuple = ()
    ignore_domains: tuple = ()
    dropping_group: bool = False
    # per source, the relay indexes of the transactions' last events, in order: what a reconnect
    # acknowledges without rescanning the relay log
    held: dict[str, list[int]] = field(default_factory=dict)
    # (source binlog, executed set, index): every group of that binlog before the index is in that
    # set. Executed only grows, so a GTID request scans on from here, not from the binlog's head.
    gtid_floor: tuple[list, set, int] | None = None
    # cut_io: the connection drops after this many more events arrive, then reconnects or stops
    cut_after: int = 0
    cut_then: str = ""
    # MariaDB's gtid_reconnect_event_skip_count: events of a partial group already queued, which
    # the GTID reconnect sends again and the IO thread does not queue twice
    reconnect_skip: int = 0
    # clock_diff_with_master as the IO thread measured it at its last connect (whole seconds); None
    # where the model compensates the exact difference (clockdiff.py)
    clock_diff_s: int | None = None

    @property
    def dump_running(self) -> bool:
        """The source's dump thread for this connection has started (its request arrived): what
        the source sees of the replica (dump threads, semi-sync clients, SHOW SLAVE HOSTS)."""
        return self.connected and self.dumping == self.io_gen


@dataclass
class DumpState:
    """The source's dump thread for this replica (dump.py)."""

    # A GTID dump's slave connection state (MariaDB, send_event_to_slave): per domain, the GTID the
    # groups are skipped up to; and whether the group being sent is skipped
    dump_state: dict = field(default_factory=dict)
    dump_empty: set = field(default_factory=set)  # domains the master had nothing of at the request
    # domains whose requested GTID is the master's own gtid_slave_pos (START_OWN_SLAVE_POS): no hole error
    dump_own: set = field(default_factory=set)
    dump_skipping: bool = False
    gtid_request: str = ""  # the GTID position the last GTID connect asked by (MariaDB)


@dataclass
class ApplierState:
    """The SQL thread (applier.py), its workers (workers.py) and relay-log.info (rli.py)."""

    delay: int = 0
    sql_running: bool = False
    sql_gen: int = 0
    sql_pos: int = 0  # index into relay of the next event to read
    group_start: int = 0  # index into relay where the current group began
    group_master_file: str = ""
    group_master_pos: int = 0
    state: str = "stopped"  # stopped | idle | waiting | executing | acking
    held_end: object = None  # the group whose commit waits for a semi-sync ack (applier.py HeldCommit)
    worker_waits: list = field(default_factory=list)  # workers' groups registered for an ack (HeldCommit)
    cur_due: int | None = None
    # the replica's clock offset when the wait began: a server shows SQL_Remaining_Delay as its deadline
    # less time(0) (sql_delay_end, sql/slave.cc), so a clock step during the wait moves what it shows
    cur_due_offset: int = 0
    cur_read: int = 0
    # Seconds_Behind_Master's inputs (rpl_rli.h): (when, when_off) of the last event read that carries a
    # master timestamp, kept across STOP/START (handle_slave_sql); and whether the SQL thread is waiting
    # at the end of the relay log for more events.
    last_master_timestamp: tuple[int, int] | None = None
    sql_thread_caught_up: bool = True
    applied_in_group: int = 0
    until: dict | None = None
    until_io: dict | None = None  # UNTIL master_gtid_pos: the domains the dump still sends, to their GTIDs
    until_sent: str | None = None  # ... and the group it sends that reached its domain's GTID
    rli_content: str = ""
    rli_before: str = ""  # relay-log.info before its last write (what a crash leaves when that write is lost)
    skip_counter: int = 0  # SET GLOBAL sql_slave_skip_counter (only while the SQL thread is stopped)
    skipping_group: bool = False  # the counter ran out inside a group: skip to its end
    last_sql_errno: int = 0
    last_sql_error: str = ""
    promote: bool = False  # failover: become the primary once the relay log is applied
    # relay_log_recovery waiting for the startup run that fills the MTS gaps: whether the threads
    # start after it (None: no such run)
    fill_then_start: bool | None = None
    par: PA.Applier | None = None  # a parallel applier's workers (model/parallel.py); None: serial
    # MTS recovery (MySQL): relay indexes of the groups a worker committed past the low-water mark
    # before a crash. The channel keeps them, not its workers: a start without workers goes through
    # them too (slave_start_workers ends the recovery only once mts_recovery_group_cnt is 0).
    mts_gaps: set = field(default_factory=set)
    mts_gaps_skipped: set = field(default_factory=set)  # of those, the ones the SQL thread skipped in this run


@dataclass
class SemiSyncChannel:
    """What semi-sync keeps of a channel (semisync.py)."""

    semi_sync: bool = False  # this connection asked for semi-sync (BINLOG_DUMP flag)
    lost_acks: int = 0  # acks still to be lost on the way to the master


@dataclass
class HierarchyChannel:
    """What global group IDs keep of a channel (hierarchy.py)."""

    exec_group_id: int = 0  # SHOW SLAVE STATUS Exec_Master_Group_ID: the last group the SQL thread played
    engine_pos: int | None = None  # rpl_transaction_enabled: InnoDB's copy of the group position (relay index)
    engine_master: tuple[str, int] = ("", 0)


@dataclass
class Channel(HierarchyChannel, SemiSyncChannel, ApplierState, DumpState, ReceiverState, Link):
    """The replica side of source -> node: IO thread, relay log, SQL thread, relay-log.info."""

    @property
    def relay_file(self) -> str:
        """The relay log file the IO thread writes."""
        return _relay_file(self.connection, self.relay_file_no)


@dataclass
class Server:
    """A server's identity, configuration and whether it runs (lifecycle.py, admin.py)."""

    id: str
    server_id: int
    offset: int
    gtid_mode: bool
    log_slave_updates: bool
    commit_timestamps: bool
    up: bool = True
    incarnation: int = 0
    variables: dict = field(default_factory=dict)  # configuration (my.cnf): what a restart starts with
    runtime: dict = field(default_factory=dict)  # SET GLOBAL changes, lost at a restart
    log_bin: bool = True
    rpl_hierarchical: bool = False
    rpl_transaction_enabled: bool = True
    dirty: bool = False  # crashed: the last binlog's FDE still says "in use"
    crash_point: str | None = None  # an armed crash point (model/recovery.py)
    crash_kind: str = R.PROCESS  # of the armed crash point
    state_file: bool = False  # MariaDB's <log-bin>.state: written at a clean shutdown, deleted at the next start
    failed_over: bool = False  # a failover replaced it: no slave replicates from it again (until a restore)


@dataclass
class BinlogState:
    """The binlog and its durability (source.py)."""

    binlog: list[Entry] = field(default_factory=list)
    binlog_file_no: int = 0
    binlog_pos: int = BINLOG_START
    gtid_seq: dict = field(default_factory=dict)  # per domain, the last sequence number this server issued
    binlog_gtids: dict = field(default_factory=dict)  # gtid_binlog_pos: per domain, the last GTID logged
    base_gtids: list = field(default_factory=list)  # SET GLOBAL gtid_binlog_state: the state the first binlog starts with
    purged: set = field(default_factory=set)  # binlog files PURGE BINARY LOGS removed (their entries stay for indexing)
    mtimes: dict = field(default_factory=dict)  # binlog file -> when it was last written (PURGE ... BEFORE)
    file_start: dict = field(default_factory=dict)  # binlog file -> index of its first event, its FDE, where a dump starts
    dropped: dict = field(default_factory=dict)  # binlog index -> domains DELETE_DOMAIN_ID took from the state there
    # binlog durability (model/recovery.py): how many binlog entries are synced, the writes since
    # the last sync, how many the dump threads may read, what the last crash kept of the binlog
    synced: int = 0
    writes_since_sync: int = 0
    published: int = 0
    durable_end: int | None = None

    @property
    def binlog_file(self) -> str:
        return _binlog_file(self.binlog_file_no)


# A log file's name, made once: one string per file, not per event, and no formatting per event.
@lru_cache(maxsize=None)
def _binlog_file(number: int) -> str:
    return sys.intern(f"bin.{number:06d}")


@lru_cache(maxsize=None)
def _relay_file(connection: str | None, number: int) -> str:
    return sys.intern(f"{MS.relay_base(connection)}.{number:06d}")


@dataclass
class EngineState:
    """What the storage engine holds: commits, prepared transactions and the GTID positions."""

    executed: set[str] = field(default_factory=set)
    visible: list[str] = field(default_factory=list)  # committed in the engine, in commit order
    visible_at: list[int] = field(default_factory=list)  # when each `visible` entry was committed
    prepared: list[tuple[str, str]] = field(default_factory=list)  # binlogged, not yet committed: (trx, gtid)
    prepared_at: dict = field(default_factory=dict)  # trx -> when the engine prepared it
    prepared_slave: dict = field(default_factory=dict)  # trx -> GTID: a replicated group prepared with its gtid_slave_pos row
    engine_lost: list[str] = field(default_factory=list)  # engine commits a crash lost, until recovery says so
    slave_gtids: dict = field(default_factory=dict)  # gtid_slave_pos: per domain, the last GTID replicated
    filter_recorded: dict = field(default_factory=dict)  # per domain, the GTID a filtered group put in gtid_slave_pos
    # rpl_slave_state's sub_ids (sql/rpl_gtid.cc): gtid_slave_pos shows, per domain, the GTID recorded
    # with the highest (iterate); a group takes its own when its GTID is read (event_group_new_gtid,
    # sql/rpl_rli.cc), a connect by position's load when it loads (load: next_sub_id)
    sub_id: int = 0
    read_sub: dict = field(default_factory=dict)  # GTID -> the sub_id its group took when read
    loaded_sub: dict = field(default_factory=dict)  # domain -> the sub_id of the last load there

    def take_sub_id(self) -> int:
        self.sub_id += 1
        return self.sub_id

    def loaded_since_read(self, domain: int, gtid: str) -> bool:
        """A connect's load in the domain took a higher sub_id than the group's: its commit, recorded
        later, does not show."""
        return self.loaded_sub.get(domain, 0) > self.read_sub.get(gtid, self.sub_id + 1)


@dataclass
class ReplicationState:
    """The node's channels as a replica and its replicas as a source (admin.py, multi-source)."""

    channel: Channel | None = None  # the default connection (''), or the one an op addresses
    connections: dict[str, Channel] = field(default_factory=dict)  # multi-source: by connection_name
    domain_owner: dict = field(default_factory=dict)  # gtid_ignore_duplicates: per domain, [the applying connection, its groups holding it]
    replicas: list[Channel] = field(default_factory=list)


@dataclass
class SemiSyncNode:
    """The server's semi-sync master (semisync.py; its rules are model/semisync.py's)."""

    semisync: SS.SemiSyncMaster | None = None


@dataclass
class HierarchyNode:
    """What global group IDs keep of a server (hierarchy.py)."""

    group_id: int = 0  # the in-memory group_id: the last one consumed (root) or played (slave)
    index: list[list] = field(default_factory=list)  # binlog index: [file, group_id, server_id] per binlog
    set_ids: dict = field(default_factory=dict)  # binlog file -> (ID, master_server_id) SET BINLOG_GROUP_ID gave it


@dataclass
class DiskNode:
    """A full disk under the binlog (diskfull.py)."""

    disk_full: tuple[int, int] | None = None  # (since, freed at): the last disk_full op's window
    binlog_waits_until: int = 0  # a binlog write waiting for space is done then; writes behind it wait for it


@dataclass
class Node(DiskNode, HierarchyNode, SemiSyncNode, ReplicationState, EngineState, BinlogState, Server):
    """A server: the parts above, together."""

    def follow_seq(self, gtid: str) -> None:
        """A GTID recorded without being binlogged here still bumps its domain's counter when the
        binlog is on: the server's own next GTIDs there follow it (MariaDB sql/rpl_gtid.cc,
        rpl_slave_state::record_gtid calls bump_seq_no_counter_if_needed: "a new GTID that will not
        be binlogged"), which check_slave_start_position relies on when a replica asks a new master
        for that master's own gtid_slave_pos."""
        if self.log_bin:
            domain, _, seq = F.parse_gtid(gtid)
            self.gtid_seq[domain] = max(self.gtid_seq.get(domain, 0), seq)

    def record_slave_gtid(self, gtid: str, follows: bool) -> None:
        """gtid_slave_pos takes the GTID of a group that ends unbinlogged (skipped, filtered);
        `follows`: the mechanics number a server's own GTIDs after its domain's (follow_seq)."""
        self.slave_gtids[F.parse_gtid(gtid)[0]] = gtid
        if follows:
            self.follow_seq(gtid)


@dataclass(frozen=True)
class Config:
    """What makes one model system: its delay rule, the mutants it carries (model/mutants.py), the
    settings it forces on every node, its server version's defaults, and the mechanics it follows
    where the seeds say nothing or its server departs from them (model/mechanics.py). The Trace
    header records all of it, so a Trace says which system made it."""

    rule: str = D.WL344
    mutants: frozenset[M.Mutant] = frozenset()
    variables: dict = field(default_factory=dict)  # forced on every node, whatever the History says
    defaults: dict = field(default_factory=dict)  # the server version's defaults
    mechanics: X.Mechanics = X.Mechanics()

    def as_dict(self) -> dict:
        return {"rule": self.rule, "mutants": sorted(m.name for m in self.mutants),
                "variables": dict(self.variables), "defaults": dict(self.defaults), "mechanics": self.mechanics.as_dict()}



def event_fields(ev: Event, group_id: int | None = None) -> dict:
    fields = {
        "type": ev.type, "trx": ev.trx, "idx": ev.idx, "last": ev.last, "gtid": ev.gtid,
        "server_id": ev.server_id, "when": ev.when, "ict": ev.ict,
    }
    if group_id is not None:
        fields["group_id"] = group_id
    if ev.incident is not None:
        fields.update(incident=ev.incident, message=ev.message)
    if ev.skip:
        fields["skip_replication"] = True
    if ev.error_code:
        fields["error_code"] = ev.error_code
    if ev.relay_log:
        fields["relay_log"] = True
    return fields


def logged_again(entries: list[Entry], ict: int | None, offset: int) -> list[Event]:
    """A replicated group's events as this server binlogs them (log_slave_updates), with its own
    immediate commit timestamp: an event already carrying it is logged as it is, the same immutable
    object, where a copy would cost a frozen dataclass's call per field."""
    return [e.ev if e.ev.ict == ict and e.ev.ict_off == offset else e.ev.restamped(ict, offset) for e in entries]


def binlog_index(source: Node, file: str, pos: int) -> int:
    """The index in the source's binlog of the first event at or after (file, pos): where a dump asked
    for by that position starts."""
    return next((i for i, e in enumerate(source.binlog) if (e.file, e.pos) >= (file, pos)), len(source.binlog))
