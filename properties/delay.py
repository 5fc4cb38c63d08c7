"""Time-delayed replication (WL#344, WL#7318): one check per requirement, judging a Trace alone.

The checks recompute, from observations only, when each event was due on each replica: the
event's timestamp as the immediate master's binlog shows it, that server's clock offset at the
time (topology plus clock steps), and the delay in force on the replica (topology, CHANGE
MASTER, RESET SLAVE). A real server's trace has a sampling resolution; every timing comparison
allows it (header resolution_us), and instances within it of a boundary are not judged.
"""
from __future__ import annotations

# Importing each module registers its properties, in this order (the order of a Judgement's verdicts).
from . import delay_timing, delay_wait, delay_status, delay_rli, delay_commit_ts  # noqa: F401
from .delay_timing import EXEMPT, STATE_WAITING, TRX_START, DelayIndex, begin_of, index, read_relay_log_info, repositions, skipped_places  # noqa: F401
