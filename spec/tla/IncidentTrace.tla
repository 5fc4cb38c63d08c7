---------------------------- MODULE IncidentTrace ----------------------------
(***************************************************************************)
(* Trace validation of Incident (replcheck/tla/incident.py writes the      *)
(* module TraceLog: the constants; Traces, a batch of traces, each a       *)
(* sequence of records, one per step, naming its action in field a, its    *)
(* parameters).  A behaviour picks trace k and takes step i + 1 only as    *)
(* the action Trace[i + 1] names: trace k is accepted when a behaviour     *)
(* reaches i = Len(Trace); replcheck reads each k's greatest i from TLC's  *)
(* state dump.                                                             *)
(***************************************************************************)
EXTENDS Incident, Sequences, TraceLog

VARIABLES i,  \* the steps of Trace taken so far
          k   \* which trace of the batch TraceLog holds (one TLC run checks them all)

Trace == Traces[k]

TraceInit ==
    /\ k \in 1..Len(Traces) /\ Init /\ i = 0

Step(e) ==
    CASE e.a = "Binlog"        -> Binlog /\ made' = e.c
      [] e.a = "Lose"          -> Lose /\ made' = e.c
      [] e.a = "RollBack"      -> RollBack /\ made' = e.c
      [] e.a = "WriteIncident" -> WriteIncident
      [] e.a = "Apply"         -> Apply /\ applied' = applied \cup {e.c} /\ pos' = pos + 1 /\ log[pos + 1].kind = "tx"
      [] e.a = "Halt"          -> Apply /\ sql' = "stopped"
      [] e.a = "Skip"          -> Apply /\ log[pos + 1].kind = "incident" /\ sql' = "running"
      [] e.a = "SkipAndStart"  -> e.n \in Skips /\ SkipAndStart(e.n)
      [] e.a = "SkipGroup"     -> Apply /\ log[pos + 1].kind = "tx" /\ log[pos + 1].c = e.c /\ applied' = applied
      [] e.a = "Stop"          -> Stop
      [] e.a = "Start"         -> Start

TraceNext == i < Len(Trace) /\ i' = i + 1 /\ UNCHANGED k /\ Step(Trace[i + 1])

TraceSpec == TraceInit /\ [][TraceNext]_<<vars, i, k>>
=============================================================================
