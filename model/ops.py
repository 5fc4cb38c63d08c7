"""The History's operations in one table: one entry per op of spec/schemas/history.schema.json
(`$defs.ops`), saying what the simulator does with it, which of its fields are times, and whether
and how a real server runs it.

A new op is one entry here plus its simulator method (and, if a real server can run it, its
runner function or statement builder in replcheck/harness/runner.py); tests/test_ops.py checks
that the table, the schema and the code agree. The table only names the harness's functions:
the SQL text is built there, from validated fields only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

# What a time field measures, so that a real-server run can scale it with its time scale.
US = "us"  # µs of History time
MS = "ms"  # milliseconds (the semi-sync timeout)
SECONDS = "s"  # MASTER_DELAY: whole seconds
UNIX_S = "unix_s"  # SET TIMESTAMP: seconds since 1970, a distance from the History's epoch

SEMI_SYNC_TIMEOUT = "rpl_semi_sync_master_timeout"
SEMI_SYNC_MASTER = "rpl_semi_sync_master_enabled"


@dataclass(frozen=True)
class Time:
    """A time field of an op: `path` names it (through a list, each item's field), `applies` says
    whether the op's value there is a time at all."""

    path: tuple[str, ...]
    unit: str = US
    applies: Callable[[dict], bool] = lambda op: True


@dataclass(frozen=True)
class Limit:
    """A use of a runnable op that a real server cannot do: `applies(op, ops)` with the History's
    ops, and the message that says why."""

    applies: Callable[[dict, list[dict]], bool]
    message: str


@dataclass(frozen=True)
class Op:
    """One op. On a real server exactly one of: `statement`, the harness function that builds the
    one administrative statement it is; `runner`, the Runner method that carries it out otherwise;
    `refused`, why a real server cannot run it."""

    name: str
    method: str  # what carries it out in the simulator: an attribute path from the Simulator
    times: tuple[Time, ...] = ()
    statement: str = ""
    runner: str = ""
    refused: str = ""
    limits: tuple[Limit, ...] = ()
    while_down: bool = False  # runs on a node that is down (others fail as a lost connection)
    shows_status: bool = False  # SHOW SLAVE STATUS right after it, as a client checking would

    def __post_init__(self) -> None:
        if sum(map(bool, (self.statement, self.runner, self.refused))) != 1:
            raise ValueError(f"op {self.name}: exactly one of statement, runner and refused")


AT = Time(("at",))


def _op(name: str, method: str, *times: Time, **how) -> Op:
    return Op(name, method, (AT, *times), **how)


def _relay_after_failover(name: str, does: str) -> Limit:
    """An op of the channel's relay (replcheck/harness/proxy.py) after a failover repointed it."""
    return Limit(lambda op, ops: any(o["op"] == "failover" and o["at"] <= op["at"] for o in ops),
                 f"op {name} after a failover is not supported: the relay that {does} sits on the replica's first channel")


TABLE = (
    _op("trx", "source.op_trx", Time(("statements", "duration_us")), Time(("statements", "replica_cost_us")),
        Time(("timestamp",), UNIX_S), runner="_start_trx",
        limits=(Limit(lambda op, ops: op.get("binlog_failure") == "write_error",
                      "op trx with binlog_failure write_error: a real binlog write error cannot be caused"),
                Limit(lambda op, ops: "error" in op and (op["error"]["errno"] != 1048 or op.get("ddl") or len(op.get("statements") or [{}]) > 1),
                      "op trx with error: the harness makes only a one-statement INSERT fail, with ER_BAD_NULL_ERROR (1048)"))),
    _op("change_master", "admin.op_change_master", Time(("delay",), SECONDS), statement="change_master_statement",
        shows_status=True,
        limits=(Limit(lambda op, ops: any(k in op for k in ("master_host", "master_log_file", "connect_using_group_id",
                                                            "master_user", "master_use_gtid")),
                      "op change_master to a new source, place or user is not supported by the harness yet: it "
                      "changes MASTER_DELAY only"),)),
    _op("stop_slave", "admin.op_stop_slave", statement="stop_slave_statement", shows_status=True),
    _op("start_slave", "admin.op_start_slave", statement="start_slave_statement", shows_status=True),
    _op("reset_slave", "admin.op_reset_slave", statement="reset_slave_statement", shows_status=True),
    _op("flush_logs", "source.op_flush_logs", statement="flush_logs_statement"),
    _op("flush_relay_logs", "receiver.op_flush_relay_logs", statement="flush_relay_logs_statement"),
    _op("flush_status", "admin.op_flush_status", statement="flush_status_statement"),
    _op("crash", "lifecycle.op_crash", runner="_crash",
        limits=(Limit(lambda op, ops: bool(op.get("point")),
                      "op crash with a crash point is not supported: a release server has none to arm"),
                Limit(lambda op, ops: op.get("kind") == "machine",
                      "op crash of kind machine is not supported: the harness can kill the server process (kill -9), "
                      "not the machine under it"))),
    _op("restart", "lifecycle.op_restart", runner="_restart", while_down=True,
        limits=(Limit(lambda op, ops: bool(op.get("relay_log_recovery")),
                      "op restart with relay_log_recovery is not supported by the harness yet"),)),
    _op("clock_step", "lifecycle.op_clock_step", Time(("delta_us",)),
        refused="a real server's clock cannot be stepped by the harness"),
    _op("show_slave_status", "status.op_show_slave_status", runner="_show_slave_status"),
    _op("binlog_statement", "admin.op_binlog_statement",
        refused="BINLOG statements would be SQL text taken from the History"),
    _op("set_global", "admin.op_set_global",
        Time(("value",), MS, lambda op: op["variable"] == SEMI_SYNC_TIMEOUT and isinstance(op["value"], int)),
        statement="set_global_statement"),
    _op("read", "admin.op_read", runner="_read"),
    _op("lose_acks", "semisync.op_lose_acks", runner="_lose_acks", limits=(_relay_after_failover("lose_acks", "loses acks"),)),
    _op("shutdown", "lifecycle.op_shutdown", runner="_shutdown"),
    _op("failover", "lifecycle.op_failover", runner="_failover"),
    _op("record_incident", "source.op_record_incident",
        refused="MariaDB has no statement that records an incident (only debug builds)"),
    _op("cluster_gap", "source.op_cluster_gap", refused="there is no cluster behind the server to lose changes"),
    _op("show_master_status", "status.op_show_master_status",
        refused="the harness reads SHOW MASTER STATUS only to elect a failover's replica"),
    _op("show_binlog_info", "hierarchy.show_binlog_info",
        refused="SHOW BINLOG INFO FOR is a statement of the --rpl-hierarchical patch, not of MariaDB"),
    _op("set_binlog_group_id", "hierarchy.set_binlog_group_id",
        refused="SET BINLOG_GROUP_ID is a statement of the --rpl-hierarchical patch, not of MariaDB"),
    _op("restore", "hierarchy.restore", Time(("latency_us",)), while_down=True,
        refused="a server rebuilt from a backup needs SET BINLOG_GROUP_ID (the --rpl-hierarchical patch)"),
    _op("purge_binary_logs", "hierarchy.purge_binary_logs", Time(("before_us",)), statement="purge_statement"),
    _op("cut_io", "receiver.op_cut_io", runner="_cut_io", limits=(_relay_after_failover("cut_io", "cuts the connection"),)),
    _op("remove_state_file", "lifecycle.op_remove_state_file", runner="_remove_state_file", while_down=True),
    _op("expect", "status.op_expect", runner="_expect", while_down=True),
    _op("start_all_slaves", "admin.op_start_all_slaves", statement="start_all_slaves_statement"),
    _op("stop_all_slaves", "admin.op_stop_all_slaves", statement="stop_all_slaves_statement"),
)

OPS: dict[str, Op] = {op.name: op for op in TABLE}


def op_times(op: dict, unit: str) -> list[tuple[dict, str]]:
    """(container, key) of each of the op's times of this unit, as the table declares them."""
    out = []
    for t in OPS[op["op"]].times:
        if t.unit != unit or not t.applies(op):
            continue
        places = [op]
        for key in t.path[:-1]:
            places = [item for p in places for item in p.get(key, [])]
        out += [(p, t.path[-1]) for p in places if p.get(t.path[-1]) is not None]
    return out
