----------------------------- MODULE DelayTrace -----------------------------
(***************************************************************************)
(* Trace validation of Delay (replcheck/tla/delay.py writes the module     *)
(* TraceLog: the constants; Traces, a batch of traces, each a sequence of  *)
(* records, one per step, naming its action in field a, its parameters).   *)
(* A behaviour picks trace k and takes step i + 1 only as the action       *)
(* Trace[i + 1] names: trace k is accepted when a behaviour reaches i =    *)
(* Len(Trace); replcheck reads each k's greatest i from TLC's state dump.  *)
(***************************************************************************)
EXTENDS Delay, Sequences, TraceLog

VARIABLES i,  \* the steps of Trace taken so far
          k   \* which trace of the batch TraceLog holds (one TLC run checks them all)

Trace == Traces[k]

TraceInit ==
    /\ k \in 1..Len(Traces) /\ Init /\ i = 0

Step(e) ==
    CASE e.a = "Tick"      -> Tick
      [] e.a = "Commit"    -> Commit /\ done'[1] = e.t
      [] e.a = "ReadEvent" -> ReadEvent(e.n) /\ NextTx(e.n) = e.t
      [] e.a = "Apply"     -> NextTx(e.n) = e.t /\ Apply(e.n)
      [] e.a = "Stop"      -> Stop(e.n)
      [] e.a = "Start"     -> Start(e.n)
      [] e.a = "ChangeDelay" -> e.d \in NewDelays /\ ChangeDelay(e.n, e.d)
      [] e.a = "SkipTx"    -> NextTx(e.n) = e.t /\ SkipTx(e.n)
      [] e.a = "LocalCommit" -> LocalCommit /\ log2'[Len(log2')] = e.t

TraceNext == i < Len(Trace) /\ i' = i + 1 /\ UNCHANGED k /\ Step(Trace[i + 1])

TraceSpec == TraceInit /\ [][TraceNext]_<<vars, i, k>>
=============================================================================
