"""relay-log.info: the applier's group position, written as it moves and read at a start.
"""
from __future__ import annotations



from .. import multisource as MS
from .. import mutants as M
from .. import relayinfo

from .component import Component
from .state import (ER_MASTER_INFO, Channel)


class Rli(Component):
    """The applier's recorded position (relay-log.info) and what SHOW SLAVE STATUS derives from it."""

    def group_position(self, ch: Channel) -> tuple[str, int]:
        low = self.workers.low_water(ch)
        start = low.first if low else ch.group_start
        if start < len(ch.relay):
            e = ch.relay[start]
            return e.file, e.pos
        return ch.relay_file, ch.relay_pos

    def exec_master(self, ch: Channel) -> tuple[str, int]:
        """Relay_Master_Log_File/Exec_Master_Log_Pos: the end of the last group committed, or on a
        parallel replica the low-water mark (model/parallel.py)."""
        low = self.workers.low_water(ch)
        if low:
            return low.before
        return ch.group_master_file, ch.group_master_pos

    def write_relay_log_info(self, ch: Channel) -> None:
        file, pos = self.group_position(ch)
        info = relayinfo.RelayLogInfo(f"./{file}", pos, *self.exec_master(ch), ch.delay)
        ch.rli_before, ch.rli_content = ch.rli_content, relayinfo.overwrite(ch.rli_content, info)

    def crash(self, ch: Channel) -> None:
        """The server died. relay-log.info is written in the transaction that commits the group
        (crash-safe replication, MySQL 5.6+ relay_log_info_repository=TABLE): nothing to lose. Bug
        #26540: written as a file after the engine commit, the crash loses the last write."""
        if M.RLI_WRITTEN_AFTER_COMMIT in self.mutants:
            ch.rli_content = ch.rli_before

    def read_relay_log_info(self, ch: Channel, boot: bool = False) -> bool:
        node = ch.node
        if not ch.rli_content and not boot:
            # none written yet (the server never started replication: its first start was refused):
            # the file does not exist, and the start creates a fresh one (MariaDB sql/rpl_rli.cc,
            # init_relay_log_info: access(fname) fails, the file is created), as a first start does
            self.write_relay_log_info(ch)
            return True
        self.emit("relay_log_info", node.id, content=ch.rli_content, **MS.tagged(ch.connection))
        try:
            info = relayinfo.parse(ch.rli_content)
        except relayinfo.RelayLogInfoError as e:
            self.emit("error", node.id, errno=ER_MASTER_INFO, thread="sql", **MS.tagged(ch.connection),
                      message=f"Could not initialize master info structure; relay-log.info {e}")
            return False
        ch.delay = info.delay
        if not boot and self.workers.running(ch):  # a parallel run's position is the low-water mark, behind the coordinator's
            ch.group_master_file, ch.group_master_pos = info.master_log_name, info.master_log_pos
        if not boot:
            # Everything relayed is durable; the SQL thread resumes at the recorded group.
            ch.sql_pos = ch.group_start = next(
                (i for i, e in enumerate(ch.relay) if f"./{e.file}" == info.relay_log_name and e.pos == info.relay_log_pos),
                len(ch.relay))
        return True
