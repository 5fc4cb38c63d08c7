"""What carries out each op of a History in the simulator: an attribute path from the Simulator
to a component's method. The ops themselves (their times, whether they run on a node that is down)
are the History's vocabulary, spec/ops.py; tests/model/test_ops.py holds the two tables to one set.
"""
from __future__ import annotations

METHODS: dict[str, str] = {
    "trx": "source.op_trx",
    "change_master": "admin.op_change_master",
    "stop_slave": "admin.op_stop_slave",
    "start_slave": "admin.op_start_slave",
    "reset_slave": "admin.op_reset_slave",
    "flush_logs": "source.op_flush_logs",
    "flush_relay_logs": "receiver.op_flush_relay_logs",
    "flush_status": "admin.op_flush_status",
    "crash": "lifecycle.op_crash",
    "restart": "lifecycle.op_restart",
    "clock_step": "lifecycle.op_clock_step",
    "disk_full": "diskfull.op_disk_full",
    "show_slave_status": "status.op_show_slave_status",
    "binlog_statement": "admin.op_binlog_statement",
    "set_global": "admin.op_set_global",
    "read": "admin.op_read",
    "lose_acks": "semisync.op_lose_acks",
    "shutdown": "lifecycle.op_shutdown",
    "failover": "lifecycle.op_failover",
    "record_incident": "source.op_record_incident",
    "cluster_gap": "source.op_cluster_gap",
    "show_master_status": "status.op_show_master_status",
    "show_binlog_info": "hierarchy.show_binlog_info",
    "set_binlog_group_id": "hierarchy.set_binlog_group_id",
    "restore": "hierarchy.restore",
    "purge_binary_logs": "hierarchy.purge_binary_logs",
    "cut_io": "receiver.op_cut_io",
    "remove_state_file": "lifecycle.op_remove_state_file",
    "expect": "status.op_expect",
    "start_all_slaves": "admin.op_start_all_slaves",
    "stop_all_slaves": "admin.op_stop_all_slaves",
    "reset_master": "admin.op_reset_master",
}
