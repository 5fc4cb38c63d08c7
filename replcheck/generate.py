"""Deterministic History generator: History number `index` of campaign seed `seed`.

A campaign needs millions of Histories that anyone can regenerate from two integers, on any
machine, in any process, in any order. So each History has its own random stream, SplitMix64
seeded from SHA-256 of (seed, index): no global random state, no `hash()` (salted per process),
no dependence on Python's `random` algorithms, and History i never depends on History i-1.

The vocabulary is the state machines' because it is the same code: each family of
replcheck.model.steps (its topology and weighted steps) drawing from Rng instead of Hypothesis.
The families are found there (model.steps.families); the order a History draws its family in is
part of the stream, so it is written here (DRAW_ORDER), and a new family joins it at its end with
a new GENERATOR version (tests/engine/test_generate.py says when one is missing).
"""
from __future__ import annotations

import copy
import hashlib

from replcheck import targets
from replcheck.model.steps import Builder, Family, Step, composed, families

# Named in every campaign: bump it when a change makes (seed, index) name another History.
# Version 4 takes the steps the state machines take (replcheck.model.steps): the delay family
# opens with a commit and its tail is 20 s, the incident family's skip waits for the replica's
# error stop, groupid's failover and restore may be drawn when they do nothing, and several steps
# draw their arguments in the machines' order. Version 5 adds the cut_io step (a replica's connection
# dropping between two events, maybe inside a group) to the delay, semisync and incident families,
# and delay_change (CHANGE MASTER TO MASTER_DELAY on a stopped replica with unapplied events) to delay;
# semisync's failover picks the replica with most whole groups and starts the others' IO threads.
# Version 6 steers the families to every requirement (replcheck/coverage.py): delay's
# channels may have no MASTER_DELAY, its servers no GTIDs, its replica a relay-log.info at start,
# START SLAVE SQL_THREAD UNTIL and BINLOG statements; semisync's timeout_then_catch_up; groupid's
# purge_while_down and a slave without --log-slave-updates.
# Version 7 also gives the groupid family durability settings (sync_binlog, innodb_flush_log_at_trx_commit)
# and crashes inside a binlog write or before its sync, machine crashes where the settings survive
# them: its Histories changed from version 6, the other families' did not.
# Version 8 adds the filter family (replication filters, #17 item 1) and the domains family (MariaDB
# GTID domains, gtid_strict_mode, a failover whose replica connects by GTID position; #17 item 2): a
# campaign's History draws among six families, so every (seed, index) names another History; a
# History drawn from named families (generate(seed, index, families)) is the one version 7 drew, but for the
# semisync and groupid families, which changed (steps the state machines reach their mutants
# by): a semisync commit's client may wait for its COMMIT to return, io_thread may STOP and START (a
# reconnect); a groupid commit's statements may last 2 s, overlapping the next commits; and the groupid
# family gains state_file_lost (a clean shutdown, the .state file deleted while down, a start: #16
# mechanism 5) and failing_statement (a statement that fails part-way, #16 mechanism 4).
# The semisync family's primary is also configured as a semi-sync slave, with a step
# restart_as_replica (the crashed primary back with --init-rpl-role=SLAVE, #16 mechanism 3).
# Version 9 adds the parallel family (the parallel applier, #17 item 3): a campaign's History draws
# among seven families, so every (seed, index) names another History; a History drawn from named
# families is the one version 8 drew.
# Version 10 gives four families operator actions of several operations in order, by which the
# state machines reach the last mutants none reached: semisync's SET of
# wait_for_slave_count past the replicas may hang a commit that the DBA releases by lowering it, its
# crash may cut a commit off in flight, and its failover gives the new primary semi-sync; incident's
# skip may come after the primary committed meanwhile, then reconnect by GTID; groupid's failover
# may go on with a restore of the failed master from the new root, reconnected by group ID;
# domains' failover, its replica stopped, has the new primary write and rotate its binlog before
# the replica asks, and waits for the primary's first write. Those families' Histories changed;
# delay's, filter's and parallel's did not.
# Version 11 adds the multisource family (a replica with two named connections, #17 item 2): a
# campaign's History draws among eight families, so every (seed, index) names another History; a
# History drawn from named families is the one version 10 drew, but the parallel family's: its
# bursts draw a GTID domain (0 or 1: MariaDB's workers run domains as streams of their own) and a
# spacing per transaction (10 ms, or 0.5 s: the next second's group has a MASTER_DELAY wait of its
# own while the first holds its worker), and a crash's restart may leave the threads stopped for
# START SLAVE SQL_THREAD UNTIL SQL_AFTER_MTS_GAPS, then START SLAVE.
# Version 12 closes the last gaps of verify's state-machine searches: semisync's
# shutdown may come while a client's COMMIT waits for its ack, and its crash may follow a partition
# that cut one replica off inside a group; delay's kill -9 of the source may come once its commits
# returned, a commit following the restart; groupid's purge_while_down rotates once the commit is
# in the master's binlog (it rotated first, and purged nothing the slave lacked); delay's set_delays
# delays every hop of a running topology in turn and a client commits, maybe under SET TIMESTAMP
# ahead of the master's clock; parallel's kill_out_of_order kills the replica while its workers hold
# groups out of order. The delay, semisync, groupid and parallel families' Histories changed; the
# others' did not.
# Version 14 gives every family the operator vocabulary where it makes sense (replcheck.model.steps.vocabulary,
# after the family's own steps): commits of every statement kind, BINLOG statements, SET GLOBAL of the
# replication variables a DBA toggles (while the threads run, or with them stopped), CHANGE MASTER TO
# MASTER_DELAY, FLUSH RELAY LOGS, clock steps, and clean or unclean stops whose restart may change the
# server's configuration (restart variables, --log-slave-updates); multisource also FLUSH LOGS. Every
# family's Histories changed (a step's share of the draw changed with the steps added).
# Version 15 draws the mixed family (replcheck.model.steps.mixed: the families' steps composed on one
# delayed, filtered, multi-threaded, semi-sync replica in a chain) in every campaign, after the
# families (DRAW); and semisync's failover lets clients write to the new primary once it took over
# (its relay log applied). Every History's family draw changed.
# Version 16: the domains family's failover, as semisync's, lets clients write to (and crash) the new
# primary only past its promotion (Builder.wait_for_promotion); semisync's waits a µs past it.
# Version 17: the filter family's commits include a DDL statement (rc.d), which the filters decide on
# by its own name; the filter family's Histories changed.
# Version 18: a step a target refuses is undone without copying the Builder into a family's state,
# so groupid's later steps draw at the History's time, not at the refused step's; only Histories
# drawn for a server changed (their ops were out of time order, some on a node that was down).
# The random stream is still the one version 2 seeded.
GENERATOR = "replcheck.generate/18"
STREAM = "replcheck.generate/2"
MASK64 = (1 << 64) - 1
MAX_STEPS = 20  # as `verify` runs the state machines (stateful_step_count)
TOPOLOGY_DRAWS = 20  # a target's topology: drawn again at most this often while its server refuses it
# The families in the order a History's first draw picks among: each joined at the end, in the version
# that added it (8: filter and domains, 9: parallel, 11: multisource).
DRAW_ORDER = ("delay", "semisync", "incident", "groupid", "filter", "domains", "parallel", "multisource")
FAMILIES: dict[str, Family] = {name: families()[name] for name in DRAW_ORDER}
# Families composed of the others' steps (no requirement file of their own): drawn in a campaign after
# the families, each joined at the end in the version that added it (15: mixed).
COMPOSED: dict[str, Family] = composed()
COMPOSED_ORDER = ("mixed",)
DRAW = (*DRAW_ORDER, *COMPOSED_ORDER)
# The longest tail any family simulates after its last step: shorter, a pending wait may not resolve.
TAIL_US = max(f.tail_us for f in (*FAMILIES.values(), *COMPOSED.values()))


class Rng:
    """SplitMix64 (Steele, Lea, Flood 2014): tiny, fully specified, the same on every platform."""

    def __init__(self, seed: int, index: int):
        digest = hashlib.sha256(f"{STREAM}:{seed}:{index}".encode()).digest()
        self.state = int.from_bytes(digest[:8], "little")

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        return self.next64() % n  # the modulo bias is below 2^-50 for the small n used here

    def integer(self, lo: int, hi: int) -> int:
        return lo + self.below(hi - lo + 1)

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def boolean(self) -> bool:
        return self.next64() >> 63 == 1


def families_for(feature: str) -> tuple[str, ...]:
    """The family of a feature (a mutant's search draws from it), or if it has none of its own the
    families whose Histories exercise it (lag's is delay's; partial groups' are three)."""
    if feature in FAMILIES:
        return (feature,)
    return tuple(name for name, f in FAMILIES.items() if feature in f.features)


def generate(seed: int, index: int, families: tuple[str, ...] | None = None, target: str | None = None) -> dict:
    """History `index` of campaign `seed`: a family, its topology, then 1..MAX_STEPS steps, each
    drawn by weight among those whose precondition holds. `target` (replcheck.targets, e.g.
    server:mariadb-10.11): only what that server can run (_for_target); None: what the models run."""
    rng = Rng(seed, index)
    name = rng.choice(families or DRAW)
    family = FAMILIES.get(name) or COMPOSED[name]
    if target is not None:
        return _for_target(targets.get(target), family, rng, seed, index)
    b = Builder(f"gen-{family.name}-{seed}-{index}", family.tail_us)
    family.topology(b, rng)
    b.header["seed"] = seed
    for _ in range(rng.integer(1, MAX_STEPS)):
        allowed = [s for s in family.steps if s.precondition is None or s.precondition(b)]
        _pick(allowed, rng.below(sum(s.weight for s in allowed))).fn(b, rng)
    return b.history()


def _for_target(target: targets.Target, family: Family, rng: Rng, seed: int, index: int) -> dict:
    """The family's History for a server: its topology without the variables the server lacks (the
    other server's names, which a server reads none of) and the settings of another design it has
    none of (Target.drops), drawn again while the server refuses it;
    each step drawn again, among those left, while the server refuses what it added (the History
    as it was before the step is kept). Named after its target: another History than the models'."""
    b = Builder(f"gen-{family.name}-{seed}-{index}-{target.name.partition(':')[2]}", family.tail_us)
    for _ in range(TOPOLOGY_DRAWS):
        b.state.clear()
        b.ops.clear()
        b.now = 0
        family.topology(b, rng)
        for n in b.header["topology"]["nodes"]:
            for key in target.drops:
                n.pop(key, None)
            if n.get("variables"):
                n["variables"] = {k: v for k, v in n["variables"].items() if k not in target.lacks}
        if target.refusal(b.history()) is None:
            break
    b.header["seed"] = seed
    for _ in range(rng.integer(1, MAX_STEPS)):
        allowed = [s for s in family.steps if s.precondition is None or s.precondition(b)]
        while allowed:
            step = _pick(allowed, rng.below(sum(s.weight for s in allowed)))
            # b itself is not copied: a family's state (groupid's GroupIds) holds the Builder, and a
            # copy of it there would go on drawing at the time it was copied after a refusal
            kept = copy.deepcopy((b.now, b.ops, b.n, b.state), memo={id(b): b})
            step.fn(b, rng)
            if target.refusal(b.history()) is None:
                break
            b.now, b.ops, b.n, b.state = kept
            allowed.remove(step)
    return b.history()


def _pick(steps: list[Step], at: int) -> Step:
    """The step whose share of the total weight holds `at`."""
    for s in steps:
        if at < s.weight:
            return s
        at -= s.weight
    raise ValueError(at)
