"""The campaign's History generator: deterministic from (seed, index) alone, schema-valid, and
speaking the state machines' vocabulary (tests/test_steps.py: it is the same code)."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from collections import Counter

from replcheck import io, systems
from replcheck.generate import DRAW, FAMILIES, MAX_STEPS, Rng, generate
from replcheck.model.recovery import CRASH_POINTS, WRITE_POINTS


def test_same_seed_and_index_give_the_same_bytes_in_any_order_and_process(tmp_path):
    forward = [io.dumps_history(generate(7, i)) for i in range(30)]
    backward = [io.dumps_history(generate(7, i)) for i in reversed(range(30))][::-1]
    assert forward == backward
    # another interpreter, with another str hash salt: nothing may depend on hash()
    digest = hashlib.sha256("".join(forward).encode()).hexdigest()
    code = ("import hashlib; from replcheck import io; from replcheck.generate import generate; "
            "print(hashlib.sha256(''.join(io.dumps_history(generate(7, i)) for i in range(30)).encode()).hexdigest())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == digest


def test_seeds_and_indices_give_different_histories():
    texts = {io.dumps_history(generate(s, i)) for s in (0, 1) for i in range(50)}
    assert len(texts) == 100


def test_the_random_stream_is_splitmix64_as_published():
    # SplitMix64 from state 0: the reference implementation's first outputs
    r = Rng(0, 0)
    r.state = 0
    assert [r.next64() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_every_history_validates_against_the_schema_and_names_its_seed(tmp_path):
    path = tmp_path / "h.jsonl"
    for i in range(120):
        history = generate(3, i)
        path.write_text(io.dumps_history(history))
        loaded = io.load_history(path)  # raises InputError on anything the schema refuses
        assert loaded["header"]["seed"] == 3 and loaded["header"]["name"].endswith(f"-3-{i}")
        assert len(loaded["ops"]) <= 4 * MAX_STEPS  # a step is at most four operations (a crash during recovery)
        assert [o["at"] for o in loaded["ops"]] == sorted(o["at"] for o in loaded["ops"])


def test_the_vocabulary_is_the_state_machines():
    ops, families = Counter(), Counter()
    for i in range(400):
        h = generate(11, i)
        families[h["header"]["name"].split("-")[1]] += 1
        ops.update(o["op"] for o in h["ops"])
    assert set(families) == set(DRAW)  # the families and the mixed one composed of their steps
    # every operation the four state machines emit shows up
    assert set(ops) == {"trx", "stop_slave", "start_slave", "change_master", "reset_slave", "crash", "restart",
                        "clock_step", "flush_logs", "read", "lose_acks", "set_global", "shutdown", "failover",
                        "record_incident", "cluster_gap", "disk_full", "show_master_status", "set_binlog_group_id", "restore",
                        "purge_binary_logs", "cut_io", "binlog_statement", "remove_state_file", "start_all_slaves",
                        "stop_all_slaves", "flush_relay_logs"}


def test_the_groupid_family_takes_the_machines_steps_everywhere():
    points, channels, elected, restored, kinds, settings = Counter(), Counter(), 0, 0, Counter(), Counter()
    for i in range(300):
        h = generate(5, i, ("groupid",))
        assert all(n["rpl_hierarchical"] for n in h["header"]["topology"]["nodes"])
        channels[tuple((c["source"], c["replica"]) for c in h["header"]["topology"]["channels"])] += 1
        points.update(o["point"] for o in h["ops"] if o["op"] == "crash" and "point" in o)
        kinds.update(o.get("kind", "process") for o in h["ops"] if o["op"] == "crash")
        settings[tuple(sorted(h["header"]["topology"]["nodes"][0]["variables"].items()))] += 1
        elected += any(o["op"] == "failover" and o.get("elect") for o in h["ops"])
        restored += any(o["op"] == "restore" for o in h["ops"])
        # a commit goes to the root: after a failover, to the server the model promoted
        header, obs = systems.get("model:groupid").run(h)
        promoted = [o for o in obs if o["kind"] == "promoted"]
        if promoted and not any(o["op"] == "restore" for o in h["ops"]):
            roots = [o["node"] for o in h["ops"] if o["op"] == "trx" and o["at"] > promoted[-1]["t"] and "statements" in o]
            assert set(roots) <= {promoted[-1]["node"]}, (i, roots)
    assert set(points) == set(CRASH_POINTS + WRITE_POINTS)
    assert kinds["machine"] > 20 and len(settings) == 5  # durability settings (#16 mechanism 2)
    assert set(channels) == {(("A", "B"), ("B", "C")), (("A", "B"), ("A", "C"))}  # a chain and fan-out
    assert elected > 20 and restored > 5


# The first Histories of seed 0 under each version: a change that draws other Histories (a family
# found in another order, a step changed) must say so with a new GENERATOR.
PINNED = {"replcheck.generate/18": "20f7c9c7499f2712ff38f7376137d008a00370f126bc8d85998bbc757d18add6"}


def test_the_families_are_drawn_in_the_versions_order_and_the_histories_are_the_versions():
    from replcheck.generate import DRAW_ORDER, GENERATOR
    from replcheck.model.steps import families

    assert sorted(DRAW_ORDER) == sorted(families()), "a family joins DRAW_ORDER at its end, with a new GENERATOR"
    assert list(FAMILIES) == list(DRAW_ORDER)
    drawn = hashlib.sha256("".join(io.dumps_history(generate(0, i)) for i in range(40)).encode()).hexdigest()
    assert drawn == PINNED.get(GENERATOR), f"{GENERATOR} draws other Histories than it did: bump GENERATOR and pin {drawn}"
