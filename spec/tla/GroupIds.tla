------------------------------ MODULE GroupIds ------------------------------
(***************************************************************************)
(* Global group IDs of the hierarchical-replication design (seed 002):     *)
(* the root master issues each group the next ID under the binlog lock; a  *)
(* slave's SQL thread writes the master's ID unchanged to its own binlog.  *)
(* The last consumed ID is persisted in the binlog index: a new binlog's   *)
(* entry holds the ID so far, a closed one's the ID of its last group.     *)
(* At start a clean server takes the last index entry; a crashed one       *)
(* recovers only its most recent binlog: its last group's ID, or, when it  *)
(* holds only its FDE, that file's index entry ("Bin Log Processing at     *)
(* Server Start", "ID Generation").  A slave's COMMIT is binlog write,     *)
(* engine commit, relay-log.info flush; a crash may fall between any two,  *)
(* and recovery commits what the binlog holds, so the SQL thread gets the  *)
(* group again: it halts on an ID not above its binlog's last              *)
(* ("Interaction with rpl_transaction_enabled"), until the DBA places it   *)
(* after that group by CHANGE MASTER.  At failover the most                *)
(* advanced slave by SHOW MASTER STATUS becomes root and continues the     *)
(* sequence; every other slave is placed after its last group by SHOW      *)
(* BINLOG INFO FOR, or refused (1236) when the new master lacks it.  The   *)
(* Python model's rules are model/groupid.py and model/recovery.py.        *)
(* The relay log is the master's binlog: a slave plays what its master    *)
(* binlogged, also once the master is down (its relay log may hold all of  *)
(* it; trace validation showed the model's slaves do).  A failed master    *)
(* and a slave refused at failover                                          *)
(* leave the system (their binlogs are a lost branch, as properties/       *)
(* groupid.py's out_of_system); a restore is not modelled, but a server   *)
(* out of the system may come back by CONNECT_USING_GROUP_ID, placed after *)
(* the master's group with its last ID only when that group came from the  *)
(* same server (its origin), refused otherwise (1236: not found, or an     *)
(* alternate future).  PURGE BINARY LOGS on the root removes the head of   *)
(* its binlog, never what a running slave still reads; a slave that needs  *)
(* a purged group is refused (1236) and applies nothing more from it.      *)
(* SET BINLOG_GROUP_ID raises the root's ID (SetIds), and the DBA may move *)
(* a slave to CONNECT_USING_GROUP_ID (ById).                               *)
(* Invariants are named after requirement IDs, dots as underscores.        *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS Server,    \* the servers; Root is the root master at first
          Root,
          NGroups,   \* client transactions committed on root masters
          NCrashes,  \* crashes and shutdowns, in all
          NPurges,   \* PURGE BINARY LOGS on the root master, in all
          NRejoins,  \* servers out of the system that reconnect by group ID, in all
          NRotations, \* FLUSH LOGS, in all
          SetIds,    \* the IDs SET BINLOG_GROUP_ID may give the root master ({}: none)
          ById,      \* the DBA may CHANGE MASTER TO CONNECT_USING_GROUP_ID a slave of the root (FALSE: never)
          MUTANTS    \* names from model/mutants.py whose mechanism is here

ASSUME Root \in Server
ASSUME MUTANTS \subseteq {"no-halt-on-lower-id", "halt-strictly-lower", "recovery-ignores-index", "stop-event",
                          "purge-silent-skip", "connect-ignores-server-id", "group-id-before-binlog-lock"}

VARIABLES
    binlog,    \* binlog[s]: <<[id, trx, file, origin]>>: origin, the server that issued the ID (its
               \* Server_ID); trx 0 is a Stop event (the stop-event mutant); trx SetMark the ID a SET
               \* BINLOG_GROUP_ID gave a new binlog (its FDE: SHOW BINLOG INFO FOR finds it, no slave plays it)
    purged,    \* purged[s]: the groups at the head of s's binlog that PURGE BINARY LOGS removed
    index,     \* index[s][f]: the group ID of binlog file f's index entry
    dirty,     \* dirty[s]: the open binlog's FDE still flags it in use (no clean close)
    gid,       \* gid[s]: the in-memory last consumed group ID
    up,        \* up[s]: running
    applied,   \* applied[s]: the transactions committed in s's engine, in order
    prepared,  \* prepared[s]: a transaction binlogged but not committed in the engine (0: none)
    rli,       \* rli[s]: relay-log.info: the groups of master's binlog the SQL thread is done with
    placed,    \* placed[s]: the slave points at the current master (FALSE after a failover until repointed)
    halted,    \* halted[s]: the SQL thread stopped with error 1643 (an ID not above the binlog's last)
    inSystem,  \* inSystem[s]: not a failed master nor a slave refused at failover
    master,    \* the root master
    made,      \* transactions 1..made were committed by clients
    crashes,   \* crashes and shutdowns so far
    purges,    \* purges so far
    rejoins,   \* reconnects by group ID of servers out of the system so far
    rotations, \* FLUSH LOGS so far
    pending    \* pending[s]: an ID a session took at BEGIN and has not written (group-id-before-binlog-lock)

vars == <<binlog, purged, index, dirty, gid, up, applied, prepared, rli, placed, halted, inSystem, master, made, crashes,
          purges, rejoins, rotations, pending>>
(* The variables the purge and rejoin actions leave alone in the others *)
extra == <<purged, purges, rejoins, rotations, pending>>

Init ==
    /\ binlog = [s \in Server |-> <<>>] /\ index = [s \in Server |-> <<0>>] /\ dirty = [s \in Server |-> TRUE]
    /\ gid = [s \in Server |-> 0] /\ up = [s \in Server |-> TRUE] /\ applied = [s \in Server |-> <<>>]
    /\ prepared = [s \in Server |-> 0] /\ rli = [s \in Server |-> 0] /\ placed = [s \in Server |-> TRUE]
    /\ halted = [s \in Server |-> FALSE] /\ inSystem = [s \in Server |-> TRUE] /\ master = Root
    /\ made = 0 /\ crashes = 0 /\ purged = [s \in Server |-> 0] /\ purges = 0 /\ rejoins = 0 /\ rotations = 0
    /\ pending = [s \in Server |-> 0]

SetMark == -1
File(s) == Len(index[s])  \* the open binlog
Write(s, id, trx, origin) ==
    binlog' = [binlog EXCEPT ![s] = Append(@, [id |-> id, trx |-> trx, file |-> File(s), origin |-> origin])]
Commit(s, trx) == applied' = [applied EXCEPT ![s] = Append(@, trx)]
Down(s) == /\ up' = [up EXCEPT ![s] = FALSE] /\ crashes' = crashes + 1
Slave(s) == s # master /\ inSystem[s] /\ up[s] /\ placed[s]
Groups(s) == {i \in 1..Len(binlog[s]) : binlog[s][i].trx # 0}
Issued(s) == \E i \in Groups(s) : binlog[s][i].origin = s  \* it was a root master

(* The root master's client commit: the next ID under the binlog lock, then the engine commit.  *)
(* group-id-before-binlog-lock takes the ID at BEGIN: a session that began before another and    *)
(* commits after it writes the ID it took, lower than the other's (the in-memory ID follows the  *)
(* binlog's last write, as model/groupid.py's).                                                   *)
NextId == IF pending[master] # 0 THEN pending[master] ELSE gid[master] + 1
ClientCommit ==
    /\ up[master] /\ made < NGroups
    /\ Write(master, NextId, made + 1, master) /\ gid' = [gid EXCEPT ![master] = NextId]
    /\ pending' = [pending EXCEPT ![master] = 0]
    /\ Commit(master, made + 1) /\ made' = made + 1
    /\ UNCHANGED <<index, dirty, up, prepared, rli, placed, halted, inSystem, master, crashes, purged, purges, rejoins,
                   rotations>>

(* group-id-before-binlog-lock: the session that began second commits first, with the ID after the *)
(* one the first session took.                                                                    *)
ClientCommitOvertaking ==
    /\ "group-id-before-binlog-lock" \in MUTANTS /\ pending[master] = 0 /\ up[master] /\ made < NGroups
    /\ Write(master, gid[master] + 2, made + 1, master) /\ gid' = [gid EXCEPT ![master] = @ + 2]
    /\ pending' = [pending EXCEPT ![master] = gid[master] + 1]
    /\ Commit(master, made + 1) /\ made' = made + 1
    /\ UNCHANGED <<index, dirty, up, prepared, rli, placed, halted, inSystem, master, crashes, purged, purges, rejoins,
                   rotations>>

(* A crash between the root's binlog write and its engine commit: the XID is in the binlog. *)
ClientCommitCrash ==
    /\ up[master] /\ made < NGroups /\ crashes < NCrashes
    /\ Write(master, gid[master] + 1, made + 1, master) /\ gid' = [gid EXCEPT ![master] = @ + 1]
    /\ prepared' = [prepared EXCEPT ![master] = made + 1] /\ made' = made + 1 /\ Down(master)
    /\ UNCHANGED <<index, dirty, applied, rli, placed, halted, inSystem, master, extra>>

(* The halt rule: "not above" catches the replay, whose ID equals the binlog's last; the design's *)
(* wording "a lower group_id" (halt-strictly-lower) does not.                                    *)
MustHalt(incoming, last) ==
    IF "no-halt-on-lower-id" \in MUTANTS THEN FALSE
    ELSE IF "halt-strictly-lower" \in MUTANTS THEN incoming < last ELSE incoming <= last

(* Where the slave reads on: after its last group; purge-silent-skip's dump thread starts at the *)
(* oldest group left when the next one was purged.                                              *)
From(s) == IF "purge-silent-skip" \in MUTANTS /\ rli[s] < purged[master] THEN purged[master] ELSE rli[s]
(* What the SQL thread reads next: a SET's FDE is no group, the slave passes it. *)
Unread(s) == {i \in From(s) + 1 .. Len(binlog[master]) : binlog[master][i].trx # SetMark}
NextAt(s) == CHOOSE i \in Unread(s) : \A j \in Unread(s) : i <= j
Next1(s) == binlog[master][NextAt(s)]
Readable(s) == Slave(s) /\ ~halted[s] /\ purged[master] <= From(s) /\ Unread(s) # {}
Playable(s) == Readable(s) /\ Next1(s).trx # 0 /\ ~MustHalt(Next1(s).id, gid[s])
Done(s) == rli' = [rli EXCEPT ![s] = NextAt(s)]

(* The SQL thread plays the next group: binlog write (the master's ID), engine commit, relay-log.info. *)
Play(s) ==
    /\ Playable(s)
    /\ Write(s, Next1(s).id, Next1(s).trx, Next1(s).origin) /\ gid' = [gid EXCEPT ![s] = Next1(s).id]
    /\ Commit(s, Next1(s).trx) /\ Done(s)
    /\ UNCHANGED <<index, dirty, up, prepared, placed, halted, inSystem, master, made, crashes, extra>>

(* ... or crashes after its binlog write (the seed's hazard), or after the engine commit before *)
(* relay-log.info is flushed (Bug #26540).                                                        *)
PlayCrash(s) ==
    /\ Playable(s) /\ crashes < NCrashes
    /\ Write(s, Next1(s).id, Next1(s).trx, Next1(s).origin) /\ gid' = [gid EXCEPT ![s] = Next1(s).id]
    /\ \/ prepared' = [prepared EXCEPT ![s] = Next1(s).trx] /\ UNCHANGED applied
       \/ Commit(s, Next1(s).trx) /\ UNCHANGED prepared
    /\ Down(s)
    /\ UNCHANGED <<index, dirty, rli, placed, halted, inSystem, master, made, extra>>

(* A Stop event (the stop-event mutant's) does nothing on the slave and is not binlogged there. *)
PassStop(s) ==
    /\ Readable(s) /\ Next1(s).trx = 0 /\ Done(s)
    /\ UNCHANGED <<binlog, index, dirty, gid, up, applied, prepared, placed, halted, inSystem, master, made, crashes, extra>>

Halt(s) ==
    /\ Readable(s) /\ Next1(s).trx # 0 /\ MustHalt(Next1(s).id, gid[s])
    /\ halted' = [halted EXCEPT ![s] = TRUE]
    /\ UNCHANGED <<binlog, index, dirty, gid, up, applied, prepared, rli, placed, inSystem, master, made, crashes, extra>>

Crash(s) ==
    /\ up[s] /\ crashes < NCrashes /\ Down(s)
    /\ UNCHANGED <<binlog, index, dirty, gid, applied, prepared, rli, placed, halted, inSystem, master, made, extra>>

FileIds(s) == [i \in 1..Len(binlog[s]) |-> binlog[s][i].id]
InFile(s, f) == {i \in 1..Len(binlog[s]) : binlog[s][i].file = f}
LastIn(s, f) == binlog[s][CHOOSE i \in InFile(s, f) : \A j \in InFile(s, f) : j <= i].id

(* MYSQL_LOG::close fixes the closed file's entry to its last group's ID (an empty file keeps   *)
(* the entry it was created with).                                                                *)
Closed(s) == [index[s] EXCEPT ![File(s)] = IF InFile(s, File(s)) = {} THEN @ ELSE LastIn(s, File(s))]

(* A clean shutdown closes the open binlog; the design stops                                     *)
(* writing the Stop event, which would consume an ID (the stop-event mutant writes it).         *)
Shutdown(s) ==
    /\ up[s] /\ crashes < NCrashes
    /\ IF "stop-event" \in MUTANTS
       THEN Write(s, gid[s] + 1, 0, s) /\ gid' = [gid EXCEPT ![s] = @ + 1]
            /\ index' = [index EXCEPT ![s][File(s)] = gid[s] + 1]
       ELSE /\ index' = [index EXCEPT ![s] = Closed(s)]
            /\ UNCHANGED <<binlog, gid>>
    /\ dirty' = [dirty EXCEPT ![s] = FALSE] /\ Down(s)
    /\ UNCHANGED <<applied, prepared, rli, placed, halted, inSystem, master, made, extra>>

(* The last consumed ID at start: clean, the last index entry; crashed, the most recent binlog's *)
(* last group, or its index entry when it holds only its FDE, a SET's too (recovery-ignores-index: *)
(* 0).                                                                                           *)
Recovered(s) ==
    IF ~dirty[s] THEN index[s][File(s)]
    ELSE IF \E i \in InFile(s, File(s)) : binlog[s][i].trx # SetMark THEN LastIn(s, File(s))
    ELSE IF "recovery-ignores-index" \in MUTANTS THEN 0 ELSE index[s][File(s)]

(* Start-up: recovery (TC_LOG_BINLOG::recover commits the binlogged XID), the recovered binlog   *)
(* closed (its entry fixed, as model/sim/source.py open_binlog does; trace validation of generated    *)
(* Histories showed the spec left it), then a new binlog whose index entry holds the recovered   *)
(* ID; the start may crash right after creating it.                                              *)
Restart(s) ==
    /\ ~up[s] /\ (inSystem[s] \/ (rejoins < NRejoins /\ ~Issued(s)))  \* a slave out of the system, to come back
    /\ gid' = [gid EXCEPT ![s] = Recovered(s)]
    /\ applied' = [applied EXCEPT ![s] = IF prepared[s] = 0 THEN @ ELSE Append(@, prepared[s])]
    /\ prepared' = [prepared EXCEPT ![s] = 0]
    /\ index' = [index EXCEPT ![s] = Append(Closed(s), Recovered(s))] /\ dirty' = [dirty EXCEPT ![s] = TRUE]
    /\ \/ up' = [up EXCEPT ![s] = TRUE] /\ UNCHANGED crashes
       \/ crashes < NCrashes /\ crashes' = crashes + 1 /\ UNCHANGED up
    /\ UNCHANGED <<binlog, rli, placed, halted, inSystem, master, made, extra>>

Holding(m, id) == {i \in Groups(m) : i > purged[m] /\ binlog[m][i].id = id}  \* SHOW BINLOG INFO FOR
LastGroup(s) == binlog[s][CHOOSE i \in Groups(s) : \A j \in Groups(s) : j <= i]

(* A server whose last group the new master lacks (down at the failover, so not in the pool the *)
(* new master was picked from): SHOW BINLOG INFO FOR refuses it, and its binlog is a lost       *)
(* branch like the failed master's (properties/groupid.py, left_ahead).                         *)
Ahead(s, c) == Groups(s) # {} /\ Holding(c, LastGroup(s).id) = {}

(* The master is down: the most advanced running slave by SHOW MASTER STATUS is promoted; the *)
(* others are to be repointed; the failed master, and any server ahead of the new one, leave.  *)
Failover ==
    /\ ~up[master] /\ inSystem[master]
    /\ \E c \in Server :
        /\ Slave(c) /\ \A s \in Server : Slave(s) => gid[s] <= gid[c]
        /\ master' = c
        /\ placed' = [s \in Server |-> s = c]
        /\ inSystem' = [s \in Server |-> inSystem[s] /\ s # master /\ (s = c \/ ~Ahead(s, c))]
        /\ halted' = [halted EXCEPT ![c] = FALSE]
    /\ UNCHANGED <<binlog, index, dirty, gid, up, applied, prepared, rli, made, crashes, extra>>

(* SHOW SLAVE STATUS's last group on the slave, SHOW BINLOG INFO FOR it on the new master, CHANGE *)
(* MASTER to the end of that group (or to the start, having played nothing); the slave whose      *)
(* group the new master lacks is refused (1236) and leaves the system.                            *)
Repoint(s) ==
    /\ s # master /\ inSystem[s] /\ up[s] /\ ~placed[s]
    /\ IF gid[s] = 0 \/ Holding(master, gid[s]) # {}
       THEN /\ rli' = [rli EXCEPT ![s] = IF gid[s] = 0 THEN 0 ELSE CHOOSE i \in Holding(master, gid[s]) : TRUE]
            /\ placed' = [placed EXCEPT ![s] = TRUE] /\ halted' = [halted EXCEPT ![s] = FALSE]
            /\ UNCHANGED inSystem
       ELSE /\ inSystem' = [inSystem EXCEPT ![s] = FALSE] /\ UNCHANGED <<rli, placed, halted>>
    /\ UNCHANGED <<binlog, index, dirty, gid, up, applied, prepared, master, made, crashes, extra>>

(* PURGE BINARY LOGS on the root master: the dump thread of a running slave keeps its file in use, *)
(* so a purge stops before what such a slave has yet to play; a slave down meanwhile may lose it.  *)
Purge ==
    /\ up[master] /\ purges < NPurges /\ purges' = purges + 1
    /\ \E n \in purged[master] + 1 .. Len(binlog[master]) :
        /\ \A s \in Server : Slave(s) => rli[s] >= n
        /\ purged' = [purged EXCEPT ![master] = n]
    /\ UNCHANGED <<binlog, index, dirty, gid, up, applied, prepared, rli, placed, halted, inSystem, master, made,
                   crashes, rejoins, rotations, pending>>

(* A slave refused at failover asks by its last group ID at every connect (model/groupid.py,     *)
(* repoint): the master places it after its group with that ID when that group came from the     *)
(* same server (connect-ignores-server-id: the ID alone); otherwise it refuses it (1236) and the  *)
(* slave stays out. A failed master, which issued IDs itself, comes back only by a restore.      *)
Match(s) == {i \in Holding(master, LastGroup(s).id) :
                "connect-ignores-server-id" \in MUTANTS \/ binlog[master][i].origin = LastGroup(s).origin}
Rejoin(s) ==
    /\ ~inSystem[s] /\ ~Issued(s) /\ up[s] /\ Groups(s) # {} /\ Match(s) # {}
    /\ rejoins < NRejoins /\ rejoins' = rejoins + 1
    /\ rli' = [rli EXCEPT ![s] = CHOOSE i \in Match(s) : TRUE]
    /\ inSystem' = [inSystem EXCEPT ![s] = TRUE] /\ placed' = [placed EXCEPT ![s] = TRUE]
    /\ halted' = [halted EXCEPT ![s] = FALSE]
    /\ UNCHANGED <<binlog, index, dirty, gid, up, applied, prepared, master, made, crashes, purged, purges, rotations,
                   pending>>

(* The DBA's repair of a halted slave ("Interaction with rpl_transaction_enabled": "Replication  *)
(* can be repaired by issuing an appropriate CHANGE MASTER command to restart replication at the *)
(* correct pos"): CHANGE MASTER to the end of the group SHOW BINLOG INFO FOR its last ID names.  *)
Place(s) ==
    /\ Slave(s) /\ gid[s] # 0 /\ Holding(master, gid[s]) # {}
    /\ rli' = [rli EXCEPT ![s] = CHOOSE i \in Holding(master, gid[s]) : TRUE]
    /\ halted' = [halted EXCEPT ![s] = FALSE]
    /\ UNCHANGED <<binlog, index, dirty, gid, up, applied, prepared, placed, inSystem, master, made, crashes, extra>>

(* The DBA's STOP SLAVE; CHANGE MASTER TO CONNECT_USING_GROUP_ID (the relay logs purged); START  *)
(* SLAVE: the slave asks by its last group's ID and Server_ID (model/groupid.py, dump_request) and *)
(* the master places it after that group when it holds it from that server, else refuses it      *)
(* (1236: not found, an alternate future, or no group played: ID 0 is never found), and the slave *)
(* plays nothing more from it (connect_by_id_error, place_dump).  A server out of the system      *)
(* comes back as by Rejoin; a failed master never does.                                          *)
ConnectById(s) ==
    /\ ById /\ s # master /\ up[s]
    /\ IF Groups(s) # {} /\ Match(s) # {} /\ (inSystem[s] \/ ~Issued(s))
       THEN /\ rli' = [rli EXCEPT ![s] = CHOOSE i \in Match(s) : TRUE]
            /\ inSystem' = [inSystem EXCEPT ![s] = TRUE] /\ placed' = [placed EXCEPT ![s] = TRUE]
            /\ halted' = [halted EXCEPT ![s] = FALSE]
       ELSE /\ inSystem' = [inSystem EXCEPT ![s] = FALSE] /\ UNCHANGED <<rli, placed, halted>>
    /\ UNCHANGED <<binlog, index, dirty, gid, up, applied, prepared, master, made, crashes, extra>>

(* FLUSH LOGS: the open binlog closed (its entry fixed), a new one whose entry holds the ID so far. *)
Rotate(s) ==
    /\ up[s] /\ rotations < NRotations /\ rotations' = rotations + 1
    /\ index' = [index EXCEPT ![s] = Append(Closed(s), gid[s])]
    /\ UNCHANGED <<binlog, dirty, gid, up, applied, prepared, rli, placed, halted, inSystem, master, made, crashes,
                   purged, purges, rejoins, pending>>

(* SET BINLOG_GROUP_ID = n on the root master (model/groupid.py, set_binlog_group_id): persisted *)
(* at once, as FLUSH LOGS with a new binlog whose index entry, and whose FDE for SHOW BINLOG INFO  *)
(* FOR, hold n; the next group takes n + 1.  An n equal to the last ID is FLUSH LOGS (Rotate); a  *)
(* lower one needs WITH RESET, for a restore, which the spec does not model.                      *)
SetGroupId(n) ==
    /\ up[master] /\ n > gid[master]
    /\ index' = [index EXCEPT ![master] = Append(Closed(master), n)]
    /\ binlog' = [binlog EXCEPT ![master] = Append(@, [id |-> n, trx |-> SetMark, file |-> File(master) + 1,
                                                        origin |-> master])]
    /\ gid' = [gid EXCEPT ![master] = n]
    /\ UNCHANGED <<dirty, up, applied, prepared, rli, placed, halted, inSystem, master, made, crashes, extra>>

Next ==
    \/ \E n \in SetIds : SetGroupId(n)
    \/ ClientCommit \/ ClientCommitOvertaking \/ ClientCommitCrash \/ Failover \/ Purge
    \/ \E s \in Server : Play(s) \/ PlayCrash(s) \/ PassStop(s) \/ Halt(s) \/ Crash(s) \/ Shutdown(s)
                         \/ Restart(s) \/ Repoint(s) \/ Rejoin(s) \/ Rotate(s) \/ Place(s) \/ ConnectById(s)

Spec == Init /\ [][Next]_vars

TypeOK ==
    /\ master \in Server /\ made \in 0..NGroups /\ crashes \in 0..NCrashes
    /\ \A s \in Server : gid[s] \in Nat /\ rli[s] \in Nat /\ prepared[s] \in 0..NGroups

Trx(s) == SelectSeq([i \in 1..Len(binlog[s]) |-> binlog[s][i].trx], LAMBDA t : t > 0)
NoDup(q) == \A i, j \in 1..Len(q) : i < j => q[i] # q[j]
IsPrefix(p, q) == Len(p) <= Len(q) /\ SubSeq(q, 1, Len(p)) = p

(* No ID names two different groups in the binlogs of the system. *)
GGID_UNIQUE ==
    \A s, t \in {x \in Server : inSystem[x]} : \A i \in Groups(s), j \in Groups(t) :
        binlog[s][i].id = binlog[t][j].id => binlog[s][i].trx = binlog[t][j].trx

(* A slave of the system holds only groups its master holds, by ID and origin: a connect by group *)
(* ID never places a server after another server's group with its ID (an alternate future).       *)
GGID_CONNECT_BY_ID ==
    \A s \in Server : Slave(s) => \A i \in Groups(s) : \E j \in Groups(master) :
        binlog[master][j].id = binlog[s][i].id /\ binlog[master][j].origin = binlog[s][i].origin

(* No slave of the system skips a group: its binlog's groups are the first of its master's (a    *)
(* slave that needs a purged group is refused and plays nothing more).                           *)
GGID_PURGE_NO_SKIP == \A s \in Server : Slave(s) => IsPrefix(Trx(s), Trx(master))

(* IDs strictly increase along every binlog. *)
GGID_MONOTONIC == \A s \in Server : \A i \in 1..Len(binlog[s]) - 1 : binlog[s][i].id < binlog[s][i + 1].id

(* No Stop event in any binlog: it would consume an ID. *)
GGID_NO_STOP_EVENT == \A s \in Server : \A i \in 1..Len(binlog[s]) : binlog[s][i].trx # 0

(* A running server knows the last ID it issued or played: its binlog's last. *)
GGID_RECOVERY_LAST_ID ==
    \A s \in Server : up[s] => gid[s] = IF binlog[s] = <<>> THEN 0 ELSE binlog[s][Len(binlog[s])].id

(* No server commits a group twice; a running slave of the system has committed a prefix of   *)
(* its master's groups (none lost), unless it stopped with the halt error instead.            *)
GGID_RECOVERY_EXACTLY_ONCE ==
    \A s \in Server :
        /\ NoDup(applied[s])
        /\ Slave(s) /\ ~halted[s] => IsPrefix(applied[s], Trx(master))

(* Every group written to a binlog has an ID above the binlog's last: the SQL thread halts      *)
(* rather than write a group again.                                                             *)
GGID_RECOVERY_HALT ==
    [][\A s \in Server : Len(binlog'[s]) > Len(binlog[s]) => binlog'[s][Len(binlog'[s])].id > gid[s]]_vars
=============================================================================
