"""The History's operations in one table, the vocabulary the model and the harness share: one
entry per op of spec/schemas/history.schema.json (`$defs.ops`), saying which of its fields are
times (and in what unit, so that a real-server run can scale them), whether it runs on a node that
is down, and whether a client checks SHOW SLAVE STATUS right after it.

What carries an op out is each runner's own table: the simulator's in model/ops.py, a real
server's in replcheck/harness/ops.py. tests/model/test_ops.py checks that the tables, the schema
and the code agree.
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
class Op:
    """One op."""

    name: str
    times: tuple[Time, ...] = ()
    while_down: bool = False  # runs on a node that is down (others fail as a lost connection)
    shows_status: bool = False  # SHOW SLAVE STATUS right after it, as a client checking would


AT = Time(("at",))


def _op(name: str, *times: Time, **how) -> Op:
    return Op(name, (AT, *times), **how)


TABLE = (
    _op("trx", Time(("statements", "duration_us")), Time(("statements", "replica_cost_us")),
        Time(("timestamp",), UNIX_S)),
    _op("change_master", Time(("delay",), SECONDS), shows_status=True),
    _op("stop_slave", shows_status=True),
    _op("start_slave", shows_status=True),
    _op("reset_slave", shows_status=True),
    _op("flush_logs"),
    _op("flush_relay_logs"),
    _op("flush_status"),
    _op("crash"),
    _op("restart", while_down=True),
    _op("clock_step", Time(("delta_us",))),
    _op("disk_full", Time(("duration_us",))),
    _op("show_slave_status"),
    _op("binlog_statement"),
    _op("set_global",
        Time(("value",), MS, lambda op: op["variable"] == SEMI_SYNC_TIMEOUT and isinstance(op["value"], int))),
    _op("read"),
    _op("lose_acks"),
    _op("shutdown"),
    _op("failover"),
    _op("record_incident"),
    _op("cluster_gap"),
    _op("show_master_status"),
    _op("show_binlog_info"),
    _op("set_binlog_group_id"),
    _op("restore", Time(("latency_us",)), while_down=True),
    _op("purge_binary_logs", Time(("before_us",))),
    _op("cut_io"),
    _op("remove_state_file", while_down=True),
    _op("expect", while_down=True),
    _op("start_all_slaves"),
    _op("stop_all_slaves"),
    _op("reset_master"),
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
