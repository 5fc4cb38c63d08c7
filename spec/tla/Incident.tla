------------------------------ MODULE Incident ------------------------------
(***************************************************************************)
(* Incident events for gaps, WL#3464 (seed 003): the master's changes are  *)
(* binlogged in order; a change the binlog lost (a gap) is marked by an    *)
(* incident event written before anything later is binlogged.  A replica's *)
(* SQL thread applies the binlog in order, stops at an incident, and goes  *)
(* on past it only when the DBA sets SQL_SLAVE_SKIP_COUNTER = 1 and starts *)
(* it again (R4); STOP SLAVE and START SLAVE pause it where it is.  A      *)
(* transactional change that cannot be binlogged is rolled back: nothing   *)
(* is lost, so no incident (known bugs I3).                                *)
(* Invariants are named after requirement IDs, dots as underscores.        *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANTS NChanges,  \* changes made on the master (binlogged, lost or rolled back)
          Skips,     \* the SQL_SLAVE_SKIP_COUNTER values the DBA sets ({1}: R4's)
          IdleSkips, \* the DBA may also set it after STOP SLAVE, not at an incident (FALSE: R4's use only)
          MUTANTS    \* names from model/mutants.py whose mechanism is here

ASSUME MUTANTS \subseteq {"no-incident", "incident-ignored", "incident-on-rollback"}

VARIABLES made,      \* changes 1..made were made on the master
          log,       \* the binlog: <<[kind |-> "tx", c |-> change]>> or [kind |-> "incident", marks |-> lost changes]
          lost,      \* changes that committed but are not in the binlog
          unmarked,  \* lost changes no incident marks yet
          due,       \* an incident must be written before anything else is binlogged
          pos,       \* the replica's SQL thread processed log[1..pos]
          sql,       \* "running", "stopped" (at an incident) or "idle" (by STOP SLAVE)
          skip,      \* SQL_SLAVE_SKIP_COUNTER
          applied,   \* changes the replica applied
          halted,    \* positions of incidents the SQL thread stopped at
          passed     \* positions of incidents a skip counter set beforehand consumed, no stop at them first

vars == <<made, log, lost, unmarked, due, pos, sql, skip, applied, halted, passed>>

Init ==
    /\ made = 0 /\ log = <<>> /\ lost = {} /\ unmarked = {} /\ due = FALSE
    /\ pos = 0 /\ sql = "running" /\ skip = 0 /\ applied = {} /\ halted = {} /\ passed = {}

replica == <<pos, sql, skip, applied, halted, passed>>

Binlog ==
    /\ made < NChanges /\ ~due
    /\ made' = made + 1
    /\ log' = Append(log, [kind |-> "tx", c |-> made + 1])
    /\ UNCHANGED <<lost, unmarked, due>> /\ UNCHANGED replica

(* Bug scenarios 1-3: the change committed but the binlog missed it (a cluster gap, a crash   *)
(* that lost the event queue, an outage).  BUG#21494: nothing marks the gap.                  *)
Lose ==
    /\ made < NChanges
    /\ made' = made + 1
    /\ lost' = lost \cup {made + 1}
    /\ unmarked' = unmarked \cup {made + 1}
    /\ due' = ("no-incident" \notin MUTANTS)
    /\ UNCHANGED log /\ UNCHANGED replica

(* A transactional change whose binlog cache overflowed is rolled back: nothing to mark.   *)
(* MDEV-21443 wrote an incident anyway.                                                    *)
RollBack ==
    /\ made < NChanges
    /\ made' = made + 1
    /\ due' = (due \/ "incident-on-rollback" \in MUTANTS)
    /\ UNCHANGED <<log, lost, unmarked>> /\ UNCHANGED replica

WriteIncident ==
    /\ due
    /\ log' = Append(log, [kind |-> "incident", marks |-> unmarked])
    /\ unmarked' = {} /\ due' = FALSE
    /\ UNCHANGED <<made, lost>> /\ UNCHANGED replica

(* R3.1, R3.2: the SQL thread stops at an incident unless the skip counter consumes it;   *)
(* the replica of BUG#21494 read it as a no-op.                                           *)
Apply ==
    /\ sql = "running" /\ pos < Len(log)
    /\ LET e == log[pos + 1] IN
       IF e.kind = "tx" /\ skip = 0
       THEN /\ applied' = applied \cup {e.c} /\ pos' = pos + 1
            /\ UNCHANGED <<sql, skip, halted, passed>>
       \* a counter that runs out inside a group skips the rest of it (BUG#28618): the group
       \* takes one or more of it, as many as it has events
       ELSE IF e.kind = "tx"
       THEN /\ pos' = pos + 1 /\ skip' \in 0..skip - 1
            /\ UNCHANGED <<sql, applied, halted, passed>>
       ELSE IF skip > 0 \/ "incident-ignored" \in MUTANTS
       THEN /\ pos' = pos + 1 /\ skip' = IF skip > 0 THEN skip - 1 ELSE 0
            /\ passed' = IF skip > 0 /\ pos + 1 \notin halted THEN passed \cup {pos + 1} ELSE passed
            /\ UNCHANGED <<sql, applied, halted>>
       ELSE /\ sql' = "stopped" /\ halted' = halted \cup {pos + 1}
            /\ UNCHANGED <<pos, skip, applied, passed>>
    /\ UNCHANGED <<made, log, lost, unmarked, due>>

(* R4: SET GLOBAL SQL_SLAVE_SKIP_COUNTER = 1; START SLAVE (a greater counter skips what follows *)
(* the incident too).  With IdleSkips the counter is also set after STOP SLAVE (it is refused     *)
(* only while the SQL thread runs: model/sim/admin.py op_set_global, ER_SLAVE_MUST_STOP): it then      *)
(* skips the next events, whatever they are, an incident not stopped at too (passed).           *)
SkipAndStart(n) ==
    /\ sql = "stopped" \/ (IdleSkips /\ sql = "idle")
    /\ sql' = "running" /\ skip' = n
    /\ UNCHANGED <<made, log, lost, unmarked, due, pos, applied, halted, passed>>

(* STOP SLAVE stops the SQL thread where it is; START SLAVE without the skip counter set starts *)
(* it there, and one stopped at an incident stops at it again (R3.1).                           *)
Stop ==
    /\ sql = "running" /\ sql' = "idle"
    /\ UNCHANGED <<made, log, lost, unmarked, due, pos, skip, applied, halted, passed>>

Start ==
    /\ sql \in {"idle", "stopped"} /\ sql' = "running"
    /\ UNCHANGED <<made, log, lost, unmarked, due, pos, skip, applied, halted, passed>>

Next == Binlog \/ Lose \/ RollBack \/ WriteIncident \/ Apply \/ Stop \/ Start \/ \E n \in Skips : SkipAndStart(n)

Spec == Init /\ [][Next]_vars

TypeOK ==
    /\ made \in 0..NChanges /\ lost \subseteq 1..made /\ unmarked \subseteq lost
    /\ pos \in 0..Len(log) /\ sql \in {"running", "stopped", "idle"} /\ skip \in Nat

Incidents == {i \in 1..Len(log) : log[i].kind = "incident"}

(* No replica applies a change made after a lost one without first stopping at the incident *)
(* that marks the loss (or the DBA's skip counter, set beforehand, consumed that incident).  *)
WL3464_GAP ==
    \A c \in lost : (\E d \in applied : d > c) => \E i \in halted \cup passed : c \in log[i].marks

(* Every incident the SQL thread went past, it stopped at first (or a skip counter set before *)
(* it arrived consumed it: the DBA's choice, not the server's).                              *)
WL3464_R3_1 == \A i \in Incidents : i <= pos => i \in halted \cup passed

(* A stopped replica's position is just before the incident it stopped at. *)
WL3464_HOLD == sql = "stopped" => pos + 1 \in halted

(* Every incident marks a change that was lost. *)
WL3464_NO_FALSE == \A i \in Incidents : log[i].marks # {}
=============================================================================
