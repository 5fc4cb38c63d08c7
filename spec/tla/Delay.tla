------------------------------- MODULE Delay -------------------------------
(***************************************************************************)
(* Time-delayed replication: WL#344 (seed 000) and WL#7318 (seed 001) in a *)
(* chain master_1 -> master_2 -> master_3 with MASTER_DELAY per hop, clock *)
(* offsets per node and a global clock of whole seconds.  Each node        *)
(* executes the transactions in order; a replica's SQL thread reads the    *)
(* next one, waits until it is due, executes it, or is stopped; stopped,   *)
(* its MASTER_DELAY may be changed.  The skip counter may make a replica's *)
(* SQL thread pass a transaction without executing it (nor relaying it     *)
(* down the chain).  No fairness: a replica may lag behind what is due, as *)
(* a loaded one does.                                                      *)
(* Properties are named after requirement IDs, dots as underscores.        *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

CONSTANTS NTx,          \* transactions committed on master_1
          MaxTime,      \* the clock runs 0..MaxTime
          Delay2, Delay3,  \* master_2's and master_3's MASTER_DELAY
          Skew2, Skew3,    \* master_2's and master_3's clock minus master_1's (the true time)
          Rule,         \* "WL344": the originating master's timestamp; "WL7318": the immediate master's
          NewDelays,    \* the MASTER_DELAY values CHANGE MASTER may set ({} in the configurations)
          NSkips,       \* transactions sql_slave_skip_counter may skip, in all (0: the skip counter is never set)
          MUTANTS       \* names from model/mutants.py whose mechanism is here

ASSUME Rule \in {"WL344", "WL7318"}
ASSUME MUTANTS \subseteq {"stop-applies-waited-event", "origin-timestamp", "no-clock-compensation"}

Nodes == 1..3
Replicas == 2..3
Tx == 1..NTx
Offset == <<0, Skew2, Skew3>>
Skipped == -2

VARIABLES now,   \* the true time
          done,  \* done[n]: node n executed transactions 1..done[n]
          at,    \* at[n][t]: the true time node n executed t (-1: not yet; Skipped: the skip counter passed it)
          sql,   \* sql[n]: replica n's SQL thread: "idle", "waiting" (for done[n] + 1), "stopped"
          delay  \* delay[n]: node n's MASTER_DELAY (Delay2, Delay3 until a CHANGE MASTER)

vars == <<now, done, at, sql, delay>>

(* The node whose commit an event's timestamp records: WL#344 as the seed implements it until *)
(* BUG#52308 is fixed, the originating master; WL#7318 F1, the immediate master.             *)
Stamper(n) == IF Rule = "WL344" \/ "origin-timestamp" \in MUTANTS THEN 1 ELSE n - 1

(* The timestamp, in the stamping node's clock. *)
Timestamp(n, t) == at[Stamper(n)][t] + Offset[Stamper(n)]

(* The replica's clock minus its difference with its master's (WL#344 "Chained replication and *)
(* time differences": the delay is independent of unsynchronized clocks).                      *)
MasterTime(n) == now + Offset[n] - IF "no-clock-compensation" \in MUTANTS THEN 0 ELSE Offset[n] - Offset[n - 1]

(* WL#344 "Semantics": not executed while the timestamp is greater than the time minus the delay. *)
Due(n, t) == Timestamp(n, t) <= MasterTime(n) - delay[n]

Init ==
    /\ now = 0
    /\ done = [n \in Nodes |-> 0]
    /\ at = [n \in Nodes |-> [t \in Tx |-> -1]]
    /\ sql = [n \in Replicas |-> "idle"]
    /\ delay = <<0, Delay2, Delay3>>

Tick == now < MaxTime /\ now' = now + 1 /\ UNCHANGED <<done, at, sql, delay>>

(* Node n's relay log holds what node n - 1 executed: a transaction node n - 1 skipped is in no  *)
(* binlog of node n - 1, so node n never sees it.  NextTx(n): the next one node n reads.         *)
Relayed(n) == {t \in Tx : t > done[n] /\ t <= done[n - 1] /\ at[n - 1][t] # Skipped}
NextTx(n) == IF n = 1 THEN done[1] + 1 ELSE CHOOSE t \in Relayed(n) : \A u \in Relayed(n) : t <= u

Execute(n) ==
    /\ done' = [done EXCEPT ![n] = NextTx(n)]
    /\ at' = [at EXCEPT ![n][NextTx(n)] = now]

Commit ==
    /\ done[1] < NTx /\ Execute(1)
    /\ UNCHANGED <<now, sql, delay>>

(* The IO thread is not affected by the delay: what the master executed is in the relay log. *)
ReadEvent(n) ==
    /\ sql[n] = "idle" /\ Relayed(n) # {}
    /\ sql' = [sql EXCEPT ![n] = "waiting"]
    /\ UNCHANGED <<now, done, at, delay>>

Apply(n) ==
    /\ sql[n] = "waiting" /\ Due(n, NextTx(n)) /\ Execute(n)
    /\ sql' = [sql EXCEPT ![n] = "idle"]
    /\ UNCHANGED <<now, delay>>

(* STOP SLAVE interrupts the sleep; the event waited for is not executed.  BUG#56442 executed it. *)
Stop(n) ==
    /\ sql[n] # "stopped"
    /\ sql' = [sql EXCEPT ![n] = "stopped"]
    /\ IF sql[n] = "waiting" /\ "stop-applies-waited-event" \in MUTANTS
       THEN Execute(n) ELSE UNCHANGED <<done, at>>
    /\ UNCHANGED <<now, delay>>

Start(n) ==
    /\ sql[n] = "stopped" /\ sql' = [sql EXCEPT ![n] = "idle"]
    /\ UNCHANGED <<now, done, at, delay>>

(* CHANGE MASTER TO MASTER_DELAY = d, refused while the SQL thread runs (MySQL rpl_replica.cc and *)
(* MariaDB sql_repl.cc, change_master); the next wait is by the new delay.                      *)
ChangeDelay(n, d) ==
    /\ sql[n] = "stopped" /\ delay' = [delay EXCEPT ![n] = d]
    /\ UNCHANGED <<now, done, at, sql>>

(* SET GLOBAL sql_slave_skip_counter = N; START SLAVE: the SQL thread skips the next transaction *)
(* without executing it, and without a MASTER_DELAY wait: MySQL's apply_event_and_update_pos     *)
(* (rpl_replica.cc) calls sql_delay_event only when shall_skip says EVENT_SKIP_NOT; model/sim.py   *)
(* _apply_relay skips ahead of the due check.  A skipped transaction is not binlogged, so no node *)
(* below sees it.                                                                                  *)
SkipTx(n) ==
    /\ sql[n] = "idle" /\ Relayed(n) # {}
    /\ Cardinality({<<m, t>> \in Replicas \X Tx : at[m][t] = Skipped}) < NSkips
    /\ done' = [done EXCEPT ![n] = NextTx(n)]
    /\ at' = [at EXCEPT ![n][NextTx(n)] = Skipped]
    /\ UNCHANGED <<now, sql, delay>>

Next ==
    \/ Tick \/ Commit
    \/ \E n \in Replicas : ReadEvent(n) \/ Apply(n) \/ Stop(n) \/ Start(n) \/ SkipTx(n) \/ \E d \in NewDelays : ChangeDelay(n, d)

Spec == Init /\ [][Next]_vars

TypeOK ==
    /\ now \in 0..MaxTime /\ done \in [Nodes -> 0..NTx]
    /\ at \in [Nodes -> [Tx -> Skipped..MaxTime]] /\ sql \in [Replicas -> {"idle", "waiting", "stopped"}]
    /\ delay \in [Nodes -> {0, Delay2, Delay3} \cup NewDelays]

Executed(n) == {t \in Tx : at[n][t] >= 0}

(* No event executes before the true time of its timestamp's commit plus the delay: the wait rule *)
(* with the clocks compensated (by the delay in force: the configurations change none).            *)
WL344_WAIT_RULE ==
    \A n \in Replicas : \A t \in Executed(n) : at[n][t] >= at[Stamper(n)][t] + delay[n]

(* An interrupted wait executes nothing: STOP SLAVE leaves the position where it was. *)
WL344_STOP_NO_EXEC ==
    [][\A n \in Replicas : sql[n] = "waiting" /\ sql'[n] = "stopped" => done'[n] = done[n]]_vars

(* master_3 waits from master_2's execution of the event, not master_1's. *)
ImmediateMaster == \A t \in Executed(3) : at[3][t] >= at[2][t] + delay[3]
WL344_CHAIN_IMMEDIATE == ImmediateMaster
WL7318_F1 == ImmediateMaster
=============================================================================
