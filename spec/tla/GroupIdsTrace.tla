---------------------------- MODULE GroupIdsTrace ----------------------------
(***************************************************************************)
(* Trace validation of GroupIds (replcheck/tla/groupid.py writes the       *)
(* module TraceLog: the constants; Traces, a batch of traces, each a       *)
(* sequence of records, one per step, naming its action in field a, its    *)
(* server s and what was observed after it: the ID and transaction a       *)
(* binlog write carries, the binlog index a start read (one ID per file),  *)
(* whether a crash point left the group prepared, whether a repoint placed *)
(* the slave).  A behaviour picks trace k and takes step i + 1 only as the *)
(* action Trace[i + 1] names: trace k is accepted when a behaviour reaches *)
(* i = Len(Trace); replcheck reads each k's greatest i from TLC's state    *)
(* dump.                                                                   *)
(***************************************************************************)
EXTENDS GroupIds, Sequences, TraceLog

VARIABLES i,  \* the steps of Trace taken so far
          k   \* which trace of the batch TraceLog holds (one TLC run checks them all)

Trace == Traces[k]

TraceInit ==
    /\ k \in 1..Len(Traces) /\ Init /\ i = 0

Wrote(e) == binlog'[e.s] # <<>> /\ binlog'[e.s][Len(binlog'[e.s])].id = e.id
                                /\ binlog'[e.s][Len(binlog'[e.s])].trx = e.trx

Step(e) ==
    CASE e.a = "ClientCommit"      -> master = e.s /\ ClientCommit /\ Wrote(e)
      [] e.a = "ClientCommitCrash" -> master = e.s /\ ClientCommitCrash /\ Wrote(e)
      [] e.a = "Play"              -> Play(e.s) /\ Wrote(e)
      [] e.a = "PlayCrash"         -> PlayCrash(e.s) /\ Wrote(e) /\ (prepared'[e.s] # 0) = e.prepared
      [] e.a = "Halt"              -> Halt(e.s)
      [] e.a = "Crash"             -> Crash(e.s)
      [] e.a = "Shutdown"          -> Shutdown(e.s)
      [] e.a = "Restart"           -> index[e.s] = e.index /\ Restart(e.s) /\ up'[e.s] = e.up
      [] e.a = "Failover"          -> Failover /\ master' = e.s
      [] e.a = "Repoint"           -> Repoint(e.s) /\ placed'[e.s] = e.placed
      [] e.a = "Rotate"            -> Rotate(e.s)
      [] e.a = "Place"             -> Place(e.s) /\ rli'[e.s] = e.rli
      [] e.a = "ConnectById"       -> ConnectById(e.s) /\ inSystem'[e.s] = e.placed
      [] e.a = "SetGroupId"        -> master = e.s /\ e.id \in SetIds /\ SetGroupId(e.id)

TraceNext == i < Len(Trace) /\ i' = i + 1 /\ UNCHANGED k /\ Step(Trace[i + 1])

TraceSpec == TraceInit /\ [][TraceNext]_<<vars, i, k>>
=============================================================================
