"""A run extended op by op and forked gives, at every fork, the Trace of the History's prefix run
from scratch, and at its end the Trace of the whole History: what lets a state machine add a step
and judge it without simulating the prefix again."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from replcheck import io, systems
from replcheck.generate import FAMILIES, generate
from replcheck.model.sim import Simulator, simulate

MODELS = sorted(n for n in systems.systems() if n.startswith("model:"))
MUTANTS = sorted(n for n in systems.systems() if n.startswith("mutant:"))


def _trace(system, history: dict) -> str:
    return io.dumps_lines(*simulate(history, system.config, system.name))


def _extended(system, history: dict, cuts: list[int]) -> tuple[list[str], str]:
    """The forks' Traces at each cut, and the whole run's, extending one run."""
    run = Simulator({**history, "ops": []}, system.config, system.name)
    ops, done, forks = history["ops"], 0, []
    for cut in cuts:
        run.extend(ops[done:cut])
        run.advance()
        done = cut
        forks.append(io.dumps_lines(*run.fork().finish()))
    run.extend(ops[done:])
    return forks, io.dumps_lines(*run.finish())


@settings(max_examples=80, deadline=None, derandomize=True)
@given(index=st.integers(0, 10**6), family=st.sampled_from(sorted(FAMILIES)),
       name=st.sampled_from(MODELS + MUTANTS), open_end=st.booleans(), data=st.data())
def test_a_fork_gives_the_trace_of_the_prefix_run_from_scratch(index, family, name, open_end, data):
    history = generate(11, index, (family,))
    if open_end:  # sampled up to the last op only: each extension samples further
        del history["header"]["end_us"]
    system = systems.get(name)
    n = len(history["ops"])
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=4)))
    forks, whole = _extended(system, history, cuts)
    for cut, trace in zip(cuts, forks):
        assert trace == _trace(system, {**history, "ops": history["ops"][:cut]}), f"fork after {cut} of {n} ops"
    assert whole == _trace(system, history)


def test_extending_after_the_last_sample_samples_on():
    # the sampling chain has ended at the last sample before the fourth op (generator 14's History 1:
    # at 0 s, sampled every 0.7 s); the ops after it take it past 8.4 s
    history = generate(11, 1, ("semisync",))
    del history["header"]["end_us"]
    system = systems.get("model:mariadb-10.11")
    run = Simulator({**history, "ops": []}, system.config, system.name)
    run.extend(history["ops"][:4])
    run.advance()
    _, prefix = run.fork().finish()
    run.extend(history["ops"][4:])
    header, obs = run.finish()
    twelfth = 12 * 700_000  # the first sample past the fourth op
    assert any(o["t"] == twelfth for o in obs if o["kind"] == "status")
    assert not any(o["t"] == twelfth for o in prefix if o["kind"] == "status")
    assert io.dumps_lines(header, obs) == _trace(system, history)


def test_a_fork_leaves_its_run_untouched():
    history = generate(11, 5, ("delay",))
    system = systems.get("model:wl344")
    run = Simulator({**history, "ops": []}, system.config, system.name)
    run.extend(history["ops"][:2])
    run.advance()
    run.fork().finish()
    run.fork().finish()
    run.extend(history["ops"][2:])
    assert io.dumps_lines(*run.finish()) == _trace(system, history)


def test_a_forks_components_call_the_copy_not_the_original():
    """The copy's components are bound again to the copy (component.Component.__setstate__): its
    kernel's emit and at, its hooks, each hook a method of the copy's own part."""
    history = generate(11, 2, ("semisync",))
    system = systems.get("model:mariadb-10.11")
    run = Simulator({**history, "ops": []}, system.config, system.name)
    run.extend(history["ops"][:3])
    run.advance()
    fork = run.fork()
    parts = [fork.source, fork.semisync, fork.applier]
    assert all(p.sim is fork and p.emit.__self__ is fork and p.at.__self__ is fork and p.hooks is fork.hooks for p in parts)
    hooked = [m.__self__ for name in vars(fork.hooks) for m in getattr(fork.hooks, name) if hasattr(m, "__self__")]
    assert hooked and all(h.sim is fork for h in hooked)
    assert vars(fork.hooks).keys() == vars(run.hooks).keys()
