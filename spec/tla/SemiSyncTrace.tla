--------------------------- MODULE SemiSyncTrace ---------------------------
(***************************************************************************)
(* Trace validation of SemiSync (replcheck/tla/semisync.py writes the      *)
(* module TraceLog: the constants; Givens, the initial values Init leaves  *)
(* open per trace; Traces, a batch of traces, each a sequence of records,  *)
(* one per step, naming its action in field a, its parameters and what was *)
(* observed after it).  A behaviour picks trace k and takes step i + 1     *)
(* only as the action Trace[i + 1] names: trace k is accepted when a       *)
(* behaviour reaches i = Len(Trace); replcheck reads each k's greatest i   *)
(* from TLC's state dump.                                                  *)
(***************************************************************************)
EXTENDS SemiSync, Sequences, TraceLog

VARIABLES i,  \* the steps of Trace taken so far
          k   \* which trace of the batch TraceLog holds (one TLC run checks them all)

Trace == Traces[k]

TraceInit ==
    /\ k \in 1..Len(Traces) /\ Init /\ i = 0
    /\ waitCount = Givens[k].waitCount  \* Init leaves it open: the trace's configuration fixes it

Step(e) ==
    CASE e.a = "Write"      -> Write /\ binlog' = e.t
      [] e.a = "Commit"     -> Commit(e.t)
      [] e.a = "Release"    -> Release(e.t) /\ outcome'[e.t] = e.outcome
      [] e.a = "Timeout"    -> Timeout(e.t)
      [] e.a = "SwitchBack" -> SwitchBack
      [] e.a = "Receive"    -> Receive(e.r) /\ relay'[e.r] = e.upto
      [] e.a = "Ack"        -> Ack(e.r) /\ acked'[e.r] = e.upto
      [] e.a = "Read"       -> Read(e.t)
      [] e.a = "Crash"      -> Crash
      [] e.a = "Shutdown"   -> Shutdown /\ \A t \in Tx : outcome'[t] = "error" <=> t \in e.errors
      [] e.a = "Failover"   -> Failover(e.r)
      [] e.a = "Disable"    -> Disable
      [] e.a = "NoSlave"    -> NoSlave
      [] e.a = "Enable"     -> Enable
      [] e.a = "SetWaitCount" -> SetWaitCount(e.n)

TraceNext == i < Len(Trace) /\ i' = i + 1 /\ UNCHANGED k /\ Step(Trace[i + 1])

TraceSpec == TraceInit /\ [][TraceNext]_<<vars, i, k>>
=============================================================================
