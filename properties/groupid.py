"""Trace properties of global group IDs (the hierarchical-replication design) and of their
MariaDB-GTID view (domain-server_id-sequence, gtid_binlog_pos / gtid_slave_pos / gtid_current_pos,
Gtid_IO_Pos).

They read `binlog`, `commit`, `stmt`, `master_status`, `status`, `server_status`, `binlog_index`,
`failover`/`promoted`/`restore` and `crash`/`shutdown`/`restart` observations only, so a real
server's trace is judged the same way.
A server's binlog history starts again when it is restored from a backup, and a failed master that
was failed over is outside the system until it is restored: the groups it lost are gone with it.
So is the binlog of a slave that was down at a failover and is ahead of the new master (it played
groups the new master lacks): a lost branch, refused when it connects by group ID.
"""
from __future__ import annotations

# Importing each module registers its properties, in this order (the order of a Judgement's verdicts).
from . import groupid_shared, groupid_ids, groupid_commands, groupid_gtid, groupid_purge  # noqa: F401
from .groupid_shared import current_id, hierarchical, left_ahead, lost_lines, of_node, out_of_system, played_id, server_id  # noqa: F401
from .groupid_commands import GroupEnd, binlog_info, last_group_end  # noqa: F401
from .groupid_gtid import domain_of, positions, sampled_positions  # noqa: F401
