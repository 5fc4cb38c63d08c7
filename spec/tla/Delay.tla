------------------------------- MODULE Delay -------------------------------
(***************************************************************************)
(* Time-delayed replication: WL#344 (seed 000) and WL#7318 (seed 001) in a *)
(* chain master_1 -> master_2 -> master_3 with MASTER_DELAY per hop, clock *)
(* offsets per node and a global clock of whole seconds.  Each node        *)
(* executes the transactions in order; a replica's SQL thread reads the    *)
(* next one, waits until it is due, executes it, or is stopped; stopped,   *)
(* its MASTER_DELAY may be changed.  The skip counter may make a replica's *)
(* SQL thread pass a transaction without executing it (nor relaying it     *)
(* down the chain); master_2 may commit transactions of its own, which     *)
(* master_3 applies in master_2's binlog order.  No fairness: a replica    *)
(* may lag behind what is due, as a loaded one does.                       *)
(* Properties are named after requirement IDs, dots as underscores.        *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, Sequences

CONSTANTS NTx,          \* transactions committed on master_1
          MaxTime,      \* the clock runs 0..MaxTime
          Delay2, Delay3,  \* master_2's and master_3's MASTER_DELAY
          Skew2, Skew3,    \* master_2's and master_3's clock minus master_1's (the true time)
          Rule,         \* "WL344": the originating master's timestamp; "WL7318": the immediate master's
          NewDelays,    \* the MASTER_DELAY values CHANGE MASTER may set ({} in the configurations)
          NSkips,       \* transactions sql_slave_skip_counter may skip, in all (0: the skip counter is never set)
          NLocal,       \* transactions master_2's own clients commit (0: none), numbered -1, -2, ...
          Compensated,  \* WL#344's clock compensation (FALSE: MySQL 8.0's WL#7318, the immediate commit
                        \* timestamp against the replica's own clock, rpl_replica.cc sql_delay_event)
          MUTANTS       \* names from model/mutants.py whose mechanism is here

ASSUME Rule \in {"WL344", "WL7318"}
ASSUME MUTANTS \subseteq {"stop-applies-waited-event", "origin-timestamp", "no-clock-compensation"}

Nodes == 1..3
Replicas == 2..3
Tx == 1..NTx \cup -NLocal..-1
Origin(t) == IF t < 0 THEN 2 ELSE 1  \* the node whose client committed t
Offset == <<0, Skew2, Skew3>>
Skipped == -2

VARIABLES now,   \* the true time
          done,  \* done[n]: node n is done with that many of its master's binlog (master_1: its commits)
          at,    \* at[n][t]: the true time node n executed t (-1: not yet; Skipped: the skip counter passed it)
          sql,   \* sql[n]: replica n's SQL thread: "idle", "waiting" (for done[n] + 1), "stopped"
          delay, \* delay[n]: node n's MASTER_DELAY (Delay2, Delay3 until a CHANGE MASTER)
          log2   \* master_2's binlog: the transactions it executed (not those it skipped) and its own

vars == <<now, done, at, sql, delay, log2>>

(* The node whose commit an event's timestamp records: WL#344 as the seed implements it until *)
(* BUG#52308 is fixed, the originating master; WL#7318 F1, the immediate master.             *)
Stamper(n, t) == IF Rule = "WL344" \/ "origin-timestamp" \in MUTANTS THEN Origin(t) ELSE n - 1

(* The timestamp, in the stamping node's clock. *)
Timestamp(n, t) == at[Stamper(n, t)][t] + Offset[Stamper(n, t)]

(* The replica's clock minus its difference with its master's (WL#344 "Chained replication and *)
(* time differences": the delay is independent of unsynchronized clocks).                      *)
MasterTime(n) == now + Offset[n] - IF "no-clock-compensation" \in MUTANTS \/ ~Compensated THEN 0 ELSE Offset[n] - Offset[n - 1]

(* WL#344 "Semantics": not executed while the timestamp is greater than the time minus the delay. *)
Due(n, t) == Timestamp(n, t) <= MasterTime(n) - delay[n]

Init ==
    /\ now = 0
    /\ done = [n \in Nodes |-> 0]
    /\ at = [n \in Nodes |-> [t \in Tx |-> -1]]
    /\ sql = [n \in Replicas |-> "idle"]
    /\ delay = <<0, Delay2, Delay3>>
    /\ log2 = <<>>

Tick == now < MaxTime /\ now' = now + 1 /\ UNCHANGED <<done, at, sql, delay, log2>>

(* Node n's relay log holds its master's binlog: master_1's commits for master_2, log2 for      *)
(* master_3 (a transaction master_2 skipped is in no binlog of its, so master_3 never sees it).  *)
NextTx(n) == IF n = 3 THEN log2[done[3] + 1] ELSE done[n] + 1
Relayed(n) == done[n] < IF n = 3 THEN Len(log2) ELSE done[n - 1]

Execute(n) ==
    /\ done' = [done EXCEPT ![n] = done[n] + 1]
    /\ at' = [at EXCEPT ![n][NextTx(n)] = now]
    /\ log2' = IF n = 2 THEN Append(log2, NextTx(2)) ELSE log2

Commit ==
    /\ done[1] < NTx /\ Execute(1)
    /\ UNCHANGED <<now, sql, delay>>

(* The IO thread is not affected by the delay: what the master executed is in the relay log. *)
ReadEvent(n) ==
    /\ sql[n] = "idle" /\ Relayed(n)
    /\ sql' = [sql EXCEPT ![n] = "waiting"]
    /\ UNCHANGED <<now, done, at, delay, log2>>

Apply(n) ==
    /\ sql[n] = "waiting" /\ Due(n, NextTx(n)) /\ Execute(n)
    /\ sql' = [sql EXCEPT ![n] = "idle"]
    /\ UNCHANGED <<now, delay>>

(* STOP SLAVE interrupts the sleep; the event waited for is not executed.  BUG#56442 executed it. *)
Stop(n) ==
    /\ sql[n] # "stopped"
    /\ sql' = [sql EXCEPT ![n] = "stopped"]
    /\ IF sql[n] = "waiting" /\ "stop-applies-waited-event" \in MUTANTS
       THEN Execute(n) ELSE UNCHANGED <<done, at, log2>>
    /\ UNCHANGED <<now, delay>>

Start(n) ==
    /\ sql[n] = "stopped" /\ sql' = [sql EXCEPT ![n] = "idle"]
    /\ UNCHANGED <<now, done, at, delay, log2>>

(* CHANGE MASTER TO MASTER_DELAY = d, refused while the SQL thread runs (MySQL rpl_replica.cc and *)
(* MariaDB sql_repl.cc, change_master); the next wait is by the new delay.                      *)
ChangeDelay(n, d) ==
    /\ sql[n] = "stopped" /\ delay' = [delay EXCEPT ![n] = d]
    /\ UNCHANGED <<now, done, at, sql, log2>>

(* SET GLOBAL sql_slave_skip_counter = N; START SLAVE: the SQL thread skips the next transaction *)
(* without executing it, and without a MASTER_DELAY wait: MySQL's apply_event_and_update_pos     *)
(* (rpl_replica.cc) calls sql_delay_event only when shall_skip says EVENT_SKIP_NOT; model/sim/     *)
(* applier.py _apply_relay skips ahead of the due check.  A skipped transaction is not binlogged, *)
(* so no node below sees it.                                                                       *)
SkipTx(n) ==
    /\ sql[n] = "idle" /\ Relayed(n)
    /\ Cardinality({<<m, t>> \in Replicas \X Tx : at[m][t] = Skipped}) < NSkips
    /\ done' = [done EXCEPT ![n] = done[n] + 1]
    /\ at' = [at EXCEPT ![n][NextTx(n)] = Skipped]
    /\ UNCHANGED <<now, sql, delay, log2>>

(* A client of master_2 commits a transaction of its own: in master_2's binlog, stamped with     *)
(* master_2's commit (its originating and immediate master both), applied by master_3 only.      *)
LocalCommit ==
    LET l == -1 - Cardinality({t \in -NLocal..-1 : at[2][t] # -1})
    IN /\ l >= -NLocal
       /\ at' = [at EXCEPT ![2][l] = now] /\ log2' = Append(log2, l)
       /\ UNCHANGED <<now, done, sql, delay>>

Next ==
    \/ Tick \/ Commit \/ LocalCommit
    \/ \E n \in Replicas : ReadEvent(n) \/ Apply(n) \/ Stop(n) \/ Start(n) \/ SkipTx(n) \/ \E d \in NewDelays : ChangeDelay(n, d)

Spec == Init /\ [][Next]_vars

TypeOK ==
    /\ now \in 0..MaxTime /\ done \in [Nodes -> 0..NTx + NLocal]
    /\ at \in [Nodes -> [Tx -> Skipped..MaxTime]] /\ sql \in [Replicas -> {"idle", "waiting", "stopped"}]
    /\ delay \in [Nodes -> {0, Delay2, Delay3} \cup NewDelays]

Executed(n) == {t \in Tx : at[n][t] >= 0}

(* No event executes before the true time of its timestamp's commit plus the delay: the wait rule *)
(* with the clocks compensated (by the delay in force: the configurations change none).            *)
WL344_WAIT_RULE ==
    \A n \in Replicas : \A t \in Executed(n) : Origin(t) < n => at[n][t] >= at[Stamper(n, t)][t] + delay[n]

(* An interrupted wait executes nothing: STOP SLAVE leaves the position where it was. *)
WL344_STOP_NO_EXEC ==
    [][\A n \in Replicas : sql[n] = "waiting" /\ sql'[n] = "stopped" => done'[n] = done[n]]_vars

(* master_3 waits from master_2's execution of the event, not master_1's. *)
ImmediateMaster == \A t \in Executed(3) : at[3][t] >= at[2][t] + delay[3]
WL344_CHAIN_IMMEDIATE == ImmediateMaster
WL7318_F1 == ImmediateMaster
=============================================================================
