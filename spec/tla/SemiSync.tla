------------------------------ MODULE SemiSync ------------------------------
(***************************************************************************)
(* Semi-synchronous replication: WL#1720 (seed 004), the wait point of     *)
(* WL#6355 (AFTER_SYNC), the count of WL#7169 (wait_for_slave_count) and   *)
(* MariaDB's shutdown rule (MDEV-11853).  One master, its replicas, NTx    *)
(* transactions, each from a session of its own; the master may crash or  *)
(* shut down, and failover then promotes the most advanced replica.  With *)
(* DBA, the DBA may SET GLOBAL rpl_semi_sync_master_enabled and            *)
(* wait_for_slave_count while the master runs.                             *)
(* Invariants are named after requirement IDs, dots as underscores         *)
(* (spec/tla/manifest.toml maps them back).                                *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, TLC

CONSTANTS Replicas,   \* the semi-sync replicas
          NTx,        \* transactions committed on the master
          WaitPoint,  \* rpl_semi_sync_master_wait_point
          DBA,        \* the DBA may change the settings on the fly (FALSE: the configurations' fixed count)
          Drops,      \* the replicas' connections may all drop, rpl_semi_sync_master_wait_no_slave OFF
          MUTANTS     \* names from model/mutants.py whose mechanism is here

ASSUME WaitPoint \in {"AFTER_SYNC", "AFTER_COMMIT"}
ASSUME MUTANTS \subseteq {"shutdown-acks-waiters", "switch-back-first-ack"}

Tx == 1..NTx

VARIABLES
    waitCount,  \* rpl_semi_sync_master_wait_for_slave_count, any of 1..|Replicas|
    binlog,     \* the master's binlog holds transactions 1..binlog, written in that order
    phase,      \* phase[t]: "none", "synced" (in the binlog), "committed" (in the engine: visible)
    outcome,    \* how t's wait ended: "none" (not yet), "ok" (acknowledged), "async", "error"
    relay,      \* relay[r]: r's relay log holds 1..relay[r]
    acked,      \* acked[r]: the highest position the master holds an ack of r for
    status,     \* Rpl_semi_sync_master_status
    onSince,    \* the binlog position when the status last turned ON
    master,     \* "up", "down" (crashed or shut down), or the promoted replica
    read,       \* transactions another session read while their commit waited, status ON
    atShutdown, \* transactions that were waiting when the master shut down
    enabled     \* rpl_semi_sync_master_enabled

vars == <<waitCount, binlog, phase, outcome, relay, acked, status, onSince, master, read, atShutdown, enabled>>

HeldBy(t) == Cardinality({r \in Replicas : relay[r] >= t})
AckedBy(t) == Cardinality({r \in Replicas : acked[r] >= t})

(* Where the session waits (WL#1720 "after_commit": after the engine commit; WL#6355: after the *)
(* binlog sync, before the engine commit).                                                     *)
Waiting(t) ==
    /\ outcome[t] = "none"
    /\ phase[t] = IF WaitPoint = "AFTER_SYNC" THEN "synced" ELSE "committed"

Init ==
    /\ waitCount \in 1..Cardinality(Replicas)
    /\ binlog = 0
    /\ phase = [t \in Tx |-> "none"]
    /\ outcome = [t \in Tx |-> "none"]
    /\ relay = [r \in Replicas |-> 0]
    /\ acked = [r \in Replicas |-> 0]
    /\ status = "ON"
    /\ onSince = 0
    /\ master = "up"
    /\ read = {}
    /\ atShutdown = {}
    /\ enabled = TRUE

(* after_flush: the transaction is in the binlog and recorded as waiting for an ack. *)
Write ==
    /\ master = "up" /\ binlog < NTx
    /\ binlog' = binlog + 1
    /\ phase' = [phase EXCEPT ![binlog + 1] = "synced"]
    /\ UNCHANGED <<waitCount, outcome, relay, acked, status, onSince, master, read, atShutdown, enabled>>

(* The engine commit: before the wait (AFTER_COMMIT), after it (AFTER_SYNC). *)
Commit(t) ==
    /\ master = "up" /\ phase[t] = "synced"
    /\ WaitPoint = "AFTER_COMMIT" \/ outcome[t] # "none"
    /\ phase' = [phase EXCEPT ![t] = "committed"]
    /\ UNCHANGED <<waitCount, binlog, outcome, relay, acked, status, onSince, master, read, atShutdown, enabled>>

(* commitTrx: released once waitCount replicas acked a position at or past t (status ON), at *)
(* once while the status is OFF (semi-sync disabled too: the commit does not wait).        *)
Release(t) ==
    /\ master = "up" /\ Waiting(t)
    /\ \/ status = "ON" /\ AckedBy(t) >= waitCount /\ outcome' = [outcome EXCEPT ![t] = "ok"]
       \/ status = "OFF" /\ outcome' = [outcome EXCEPT ![t] = "async"]
    /\ UNCHANGED <<waitCount, binlog, phase, relay, acked, status, onSince, master, read, atShutdown, enabled>>

(* rpl_semi_sync_timeout: no ack in time; the master switches to asynchronous replication. *)
Timeout(t) ==
    /\ master = "up" /\ Waiting(t) /\ status = "ON" /\ AckedBy(t) < waitCount
    /\ outcome' = [outcome EXCEPT ![t] = "async"]
    /\ status' = "OFF"
    /\ UNCHANGED <<waitCount, binlog, phase, relay, acked, onSince, master, read, atShutdown, enabled>>

(* The status turns ON again when the replicas caught up: waitCount of them acked the current *)
(* binlog position (WL#7169); the mutant of MDEV-37116 takes the first ack.                   *)
SwitchBack ==
    /\ master = "up" /\ status = "OFF" /\ enabled
    /\ AckedBy(binlog) >= IF "switch-back-first-ack" \in MUTANTS THEN 1 ELSE waitCount
    /\ status' = "ON" /\ onSince' = binlog
    /\ UNCHANGED <<waitCount, binlog, phase, outcome, relay, acked, master, read, atShutdown, enabled>>

(* The dump thread sends the next transaction; the IO thread queues it to the relay log. *)
Receive(r) ==
    /\ master = "up" /\ relay[r] < binlog
    /\ relay' = [relay EXCEPT ![r] = relay[r] + 1]
    /\ UNCHANGED <<waitCount, binlog, phase, outcome, acked, status, onSince, master, read, atShutdown, enabled>>

(* after_queue_event: the reply comes after the event is in the relay log, and reaches the    *)
(* master later: by then the replica may hold more (trace validation found the model's replies *)
(* to a batch arriving one by one).  An ack not taken is a lost or late one; the next covers it. *)
Ack(r) ==
    /\ master = "up" /\ acked[r] < relay[r]
    /\ \E p \in acked[r] + 1 .. relay[r] : acked' = [acked EXCEPT ![r] = p]
    /\ UNCHANGED <<waitCount, binlog, phase, outcome, relay, status, onSince, master, read, atShutdown, enabled>>

(* Another session reads a committed transaction whose commit still waits.  Only such reads   *)
(* matter: one of a released transaction adds nothing to what failover must keep.           *)
Read(t) ==
    /\ master = "up" /\ status = "ON" /\ phase[t] = "committed" /\ outcome[t] = "none"
    /\ t \notin read
    /\ read' = read \cup {t}
    /\ UNCHANGED <<waitCount, binlog, phase, outcome, relay, acked, status, onSince, master, atShutdown, enabled>>

Crash ==
    /\ master = "up" /\ master' = "down"
    /\ UNCHANGED <<waitCount, binlog, phase, outcome, relay, acked, status, onSince, read, atShutdown, enabled>>

(* MariaDB: a shutdown gives the waiting sessions an error; MDEV-11853 released them as acked. *)
Shutdown ==
    LET waiters == {t \in Tx : Waiting(t)}
    IN /\ master = "up" /\ master' = "down"
       /\ atShutdown' = waiters
       /\ outcome' = [t \in Tx |-> IF t \in waiters
                                   THEN IF "shutdown-acks-waiters" \in MUTANTS THEN "ok" ELSE "error"
                                   ELSE outcome[t]]
       /\ UNCHANGED <<waitCount, binlog, phase, relay, acked, status, onSince, read, enabled>>

(* SET GLOBAL rpl_semi_sync_master_enabled = OFF: the status turns OFF and the waiting commits are *)
(* released unacknowledged; = ON: the status turns ON at once, the replicas not waited for         *)
(* (model/semisync.py, SemiSyncMaster.set; MariaDB semisync_master.cc, disable_master and          *)
(* enable_master).  WL7169_SWITCH_BACK_N is about the switch back, not the DBA's.                  *)
Disable ==
    LET waiters == {t \in Tx : Waiting(t)}
    IN /\ DBA /\ master = "up" /\ enabled
       /\ enabled' = FALSE /\ status' = "OFF"
       /\ outcome' = [t \in Tx |-> IF t \in waiters THEN "async" ELSE outcome[t]]
       /\ UNCHANGED <<waitCount, binlog, phase, relay, acked, onSince, master, read, atShutdown>>

Enable ==
    /\ DBA /\ master = "up" /\ ~enabled
    /\ enabled' = TRUE /\ status' = "ON" /\ onSince' = binlog
    /\ UNCHANGED <<waitCount, binlog, phase, outcome, relay, acked, master, read, atShutdown>>

(* SET GLOBAL rpl_semi_sync_master_wait_for_slave_count = n: the acks received count against the *)
(* new n at once (a waiting commit it now covers is released: model/semisync.py, _release_ready).  *)
(* Any n above the replicas is one more than there are: no commit is acknowledged.               *)
SetWaitCount(n) ==
    /\ DBA /\ master = "up" /\ waitCount' = n
    /\ UNCHANGED <<binlog, phase, outcome, relay, acked, status, onSince, master, read, atShutdown, enabled>>

(* The last semi-sync replica's connection dropped (or its IO thread stopped) with              *)
(* rpl_semi_sync_master_wait_no_slave OFF: the status turns OFF and the waiting commits are      *)
(* released unacknowledged (model/semisync.py, SemiSyncMaster.disconnect; MariaDB                *)
(* semisync_master.cc, remove_slave).  The spec has no connections: it may happen at any time,   *)
(* and the replica catches up later by SwitchBack.                                               *)
NoSlave ==
    LET waiters == {t \in Tx : Waiting(t)}
    IN /\ Drops /\ master = "up" /\ enabled /\ status = "ON"
       /\ status' = "OFF"
       /\ outcome' = [t \in Tx |-> IF t \in waiters THEN "async" ELSE outcome[t]]
       /\ UNCHANGED <<waitCount, binlog, phase, relay, acked, onSince, master, read, atShutdown, enabled>>

Failover(r) ==
    /\ master = "down"
    /\ \A s \in Replicas : relay[s] <= relay[r]
    /\ master' = r
    /\ UNCHANGED <<waitCount, binlog, phase, outcome, relay, acked, status, onSince, read, atShutdown, enabled>>

Next ==
    \/ Write \/ SwitchBack \/ Crash \/ Shutdown \/ Disable \/ Enable \/ NoSlave \/ \E n \in 1..Cardinality(Replicas) + 1 : SetWaitCount(n)
    \/ \E t \in Tx : Commit(t) \/ Release(t) \/ Timeout(t) \/ Read(t)
    \/ \E r \in Replicas : Receive(r) \/ Ack(r) \/ Failover(r)

Spec == Init /\ [][Next]_vars

Symmetry == Permutations(Replicas)

TypeOK ==
    /\ waitCount \in 1..Cardinality(Replicas) + 1 /\ binlog \in 0..NTx
    /\ phase \in [Tx -> {"none", "synced", "committed"}]
    /\ outcome \in [Tx -> {"none", "ok", "async", "error"}]
    /\ relay \in [Replicas -> 0..NTx] /\ acked \in [Replicas -> 0..NTx]
    /\ status \in {"ON", "OFF"} /\ master \in {"up", "down"} \cup Replicas /\ enabled \in BOOLEAN
    /\ enabled \/ status = "OFF"

(* A commit is released as acknowledged only when waitCount replicas acked it. *)
WL1720_ACK_WAIT == \A t \in Tx : outcome[t] = "ok" => AckedBy(t) >= waitCount

(* A replica acknowledges only what is in its relay log. *)
WL1720_ACK_RELAY == \A r \in Replicas : acked[r] <= relay[r]

(* While the status is ON, nothing is visible on the master before waitCount replicas hold it. *)
WL6355_AFTER_SYNC_INVISIBLE ==
    master = "up" /\ status = "ON" => \A t \in Tx : phase[t] = "committed" => HeldBy(t) >= waitCount

(* The promoted replica holds every acknowledged transaction and every one another session read *)
(* while its commit waited.                                                                     *)
WL6355_FAILOVER_NO_LOSS ==
    master \in Replicas => \A t \in Tx : outcome[t] = "ok" \/ t \in read => t <= relay[master]

(* The status is ON only once waitCount replicas acked the position where it turned ON. *)
WL7169_SWITCH_BACK_N == status = "ON" => AckedBy(onSince) >= waitCount

(* A shutdown does not turn a waiting commit into an acknowledged one. *)
MARIADB_SEMISYNC_SHUTDOWN == \A t \in atShutdown : outcome[t] # "ok"
=============================================================================
