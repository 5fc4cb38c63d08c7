"""The faults a History injects on a real server: crashes (kill -9), clean shutdowns, restarts, a
lost state file, a replica's connection cut and its acks lost on the way to the source, clock
steps, a full disk under the binlog."""
from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from replcheck.harness.errors import HarnessError, SqlError
from replcheck.harness.sqlclient import connection_clause
from replcheck.harness.observe import Link, gtid_start_purges, links_of
from replcheck.harness.proxy import Cut
from replcheck.spec import formats as F
from replcheck.spec.formats import US
from replcheck.spec import vocabulary as V

if TYPE_CHECKING:
    from replcheck.harness.runner import Runner


class Faults:
    """Injects the faults of a History."""

    def __init__(self, run: "Runner"):
        self.run = run
        self.full: set[str] = set()  # nodes whose binlog's disk is full now
        # node -> (from, to): while its disk was full, or a write's retry after it was still due
        self.unwritten: dict[str, list[tuple[int, int]]] = {}
        self._freeing: list[threading.Thread] = []

    def freed_at(self, node: str) -> int | None:
        """When the node's disk is (was) last freed, in trace time: its last window's end, less the retry."""
        windows = self.unwritten.get(node)
        return windows[-1][1] - F.DISK_FULL_RETRY_US if windows else None

    def crash(self, op: dict) -> None:
        node = op["node"]
        self.run.observer.poll(node, force=True)  # what it showed just before (a waiting session recovery may truncate)
        self.run.busy.add(node)
        running = self._sql_running(node)
        self.run.cluster.kill9(node)
        self.run.until.difference_update(links_of(self.run.sources, node))  # in memory only: a restart starts the threads without it
        self.run.downs.setdefault(node, []).append(self.run.emit("crash", node)["t"])
        self._sql_stopped(running, self.run.downs[node][-1])

    def shutdown(self, op: dict) -> None:
        node = op["node"]
        # What it showed just before, as for a crash: a state reached since the last poll (a semi-sync
        # switch back ON at an ack) has no other sample (seed 1's History 4: WL1720.SWITCH_BACK)
        self.run.observer.poll(node, force=True)
        self.run.busy.add(node)
        running = self._sql_running(node)
        self.run.cluster.stop(node)
        self.run.until.difference_update(links_of(self.run.sources, node))
        self.run.downs.setdefault(node, []).append(self.run.emit("shutdown", node)["t"])
        self._sql_stopped(running, self.run.downs[node][-1])

    def _sql_running(self, node: str) -> list[Link]:
        """The node's channels whose SQL thread runs: it showed running at the last sample, or a START
        SLAVE started it since."""
        return [link for link in links_of(self.run.sources, node)
                if self.run.observer.last_status(link).get("Slave_SQL_Running") == "Yes" or link in self.run.sql_started]

    def _sql_stopped(self, links: list[Link], t: int) -> None:
        """The SQL threads the server took down with it, as the models record them (sql_stop reason
        crash, for a clean shutdown too): an UNTIL or a wait of theirs ends there."""
        for node, connection in links:
            self.run.emit("sql_stop", node, t, reason="crash", **V.tagged(connection))

    def remove_state_file(self, op: dict) -> None:
        """Delete the node's `bin.state` (--log-bin=<dir>/bin), which a clean shutdown wrote."""
        node = op["node"]
        path = os.path.join(self.run.cluster.binlog_dir(node), "bin.state")
        removed = os.path.exists(path)
        if removed:
            os.remove(path)
        self.run.emit("state_file", node, removed=removed)

    def restart(self, op: dict) -> None:
        node, c = op["node"], self.run.cluster
        self.run.busy.add(node)
        # What its first sample sees changed after the start began (it was down): the gap's bound.
        self.run.last_poll[node] = self.run.now()
        self.run.observer.read_relay(node, settled=True)  # down: whole, before relay_log_recovery or a GTID start purges them
        role = op.get("init_rpl_role", "MASTER")
        # --init-rpl-role=SLAVE: recovery truncates what the crash left in doubt (MDEV-21117, log.cc
        # Recovery_context); the role is validated by the History schema (MASTER or SLAVE).
        # relay_log_recovery: the relay logs are thrown away at start and the IO thread fetches again
        # from the SQL thread's place (MariaDB init_recovery, sql/rpl_rli.cc; by GTID, gtid_slave_pos).
        # What was not applied is what lay past the SQL thread's place at its last sample (the crash
        # polls the node just before it).
        recovery = bool(op.get("relay_log_recovery"))
        befores = {link: self.run.observer.last_status(link) for link in links_of(self.run.sources, node)}
        # A restart that starts no slave thread is started with --skip-slave-start: a STOP SLAVE after
        # the start came too late, the threads had run (seed 2's History 123: its SQL thread stopped at
        # an incident the Trace gave to no start, and its IO thread connected and stopped unseen).
        quiet = op.get("start_slave") is False and bool(links_of(self.run.sources, node))
        self.run.collector.note_start(node, self.run.now())
        c.restart(node, ([f"--init-rpl-role={role}"] if role != "MASTER" else [])
                  + (["--relay-log-recovery=1"] if recovery else []) + (["--skip-slave-start"] if quiet else []))
        if not recovery:
            # Without it, the slave threads the start starts by GTID throw the relay logs away all the
            # same (init_slave -> start_slave_threads, both threads stopped), as START SLAVE does:
            # MASTER_USE_GTID, as master.info keeps it, says whether they did.
            starts = op.get("start_slave") is not False
            befores = {link: before for link, before in befores.items() if starts and gtid_start_purges(
                {"Using_Gtid": c.show_slave_status(node, link[1]).get("Using_Gtid"), "Slave_IO_Running": "No",
                 "Slave_SQL_Running": "No"})}
        path = c.error_log(node)
        self.run.log_offsets[node] = min(self.run.log_offsets.get(node, 0), os.path.getsize(path))
        for link in links_of(self.run.sources, node):
            self.run.io_error.pop(link, None)
        self.run.emit("restart", node, **({"init_rpl_role": role} if role != "MASTER" else {}))
        for link, before in befores.items():
            self.run.observer.relay_purged(link, self.run.now(), before, reason="relay_log_recovery" if recovery else "gtid")
        if op.get("master"):
            self.run.sources[(node, None)] = op["master"]
            self.run.source_since[(node, None)] = self.run.now()
            self.run.add_relay((node, None))  # its channel runs through a relay too: cut_io, lose_acks, acks seen
            pos = c.rejoin(node, op["master"])
            self.run.emit("stmt", node, op="set_global", variable="gtid_slave_pos", value=pos, errno=None, message="")
            self.run.emit("stmt", node, op="change_master", master_host=op["master"], master_use_gtid="slave_pos", errno=None, message="")
        self.run.busy.discard(node)

    def clock_step(self, op: dict) -> None:
        """The node's clock steps by delta_us (scaled) from now on, as an NTP step or an operator's
        `date -s` would: its offset file is rewritten (clock.py), under the node's lock so that no
        sample reads the clock across the step."""
        node = op["node"]
        with self.run.node_locks[node]:
            offset = self.run.clock_offsets[node] + op["delta_us"]
            self.run.cluster.set_clock(node, offset)
            self.run.clock_offsets[node] = offset
            self.run.clock_steps.setdefault(node, []).append((self.run.now(), offset))
        self.run.emit("clock_step", node, delta_us=op["delta_us"])

    def disk_full(self, op: dict) -> None:
        """The filesystem of the node's binlog fills up now and is freed duration_us (scaled) later,
        by a thread of its own: the ops after it run meanwhile, as they would in production."""
        node = op["node"]
        until = op["at"] + op["duration_us"]
        self.run.cluster.fill_disk(node)
        self.full.add(node)
        full = self.run.emit("disk_full", node, until=until)
        self.unwritten.setdefault(node, []).append((full["t"], until + F.DISK_FULL_RETRY_US))
        thread = threading.Thread(target=self._free_at, args=(node, until), name=f"replcheck-free-{node}", daemon=True)
        thread.start()
        self._freeing.append(thread)

    def _free_at(self, node: str, until: int) -> None:
        if self.run.stop.wait(max(0.0, (until + self.run.slip_us - self.run.now()) / US)):
            return  # the run ends first: free_disks frees it
        self._free(node)

    def _free(self, node: str) -> None:
        if node in self.full:
            self.full.discard(node)
            self.run.cluster.free_disk(node)
            self.run.emit("disk_freed", node)

    def free_disks(self) -> None:
        """At the History's end: every full disk is freed at its time (a commit waiting on it can end)."""
        for thread in self._freeing:
            thread.join()

    def lose_acks(self, op: dict) -> None:
        if (op["node"], None) in self.run.sources:  # else not a replica (now): nothing to lose, as in the models
            self.run.proxies[(op["node"], None)].lose(op["count"])

    def cut_io(self, op: dict) -> None:
        """Arms the replica's relay: it cuts the connection after the next `after_events` events of
        groups (replcheck/harness/proxy.py); `_io_cut` records it when it falls."""
        node = op["node"]
        link = (node, op.get("connection") or None)
        if link not in self.run.sources:  # not a replica (now): a promoted one keeps its relay, unused
            self.run.emit("error", node, op="cut_io", errno=F.ER_BAD_SLAVE, message="not a replica")
            return
        self.run.proxies[link].cut(op["after_events"], op.get("then", "reconnect"))

    def io_cut(self, source: str, link: Link, cut: Cut) -> None:
        """The relay cut the connection (in its thread). What it knows is what the model's io_cut
        says: the source's binlog place after the last event passed. `stop`: the stream is held
        mid-transfer and STOP SLAVE IO_THREAD stops the IO thread waiting on it; the cut is recorded
        when the statement returned, the IO thread stopped (no statement of the History's: none is
        recorded)."""
        replica = link[0]
        fields = {"source": source, "then": cut.then, "master_log_file": cut.master_log_file,
                  "master_log_pos": cut.master_log_pos}
        if cut.then == "reconnect":
            self.run.emit("io_cut", replica, **fields)
            return
        try:
            with self.run.node_locks[replica]:
                self.run.observer.read_relay(replica)
                self.run.cluster.sql(replica, f"STOP SLAVE{connection_clause(link[1])} IO_THREAD")
                self.run.emit("io_cut", replica, **fields)
        except (HarnessError, SqlError) as e:  # down meanwhile: the connection is gone with it
            self.run.notes.append(f"cut_io: STOP SLAVE IO_THREAD on {replica} after the cut failed: {e}")
            return
        self.run.observer.poll(replica, force=True)
