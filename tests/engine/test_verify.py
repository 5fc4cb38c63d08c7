"""verify's runs of the embedded Histories: a mutant whose seam a History does not reach shares
its base model's run, and is judged exactly as its own run would be."""
from __future__ import annotations

import pytest

from replcheck import io, systems
from replcheck.properties.judge import judge
from replcheck.verify import Judged, embedded_histories

MUTANTS = [n for n, s in systems.systems().items() if s.kind == "mutant"]


@pytest.mark.parametrize("path", embedded_histories()[::30], ids=lambda p: p.stem)
def test_a_mutant_judged_on_its_bases_run_is_judged_as_on_its_own(path):
    history = io.load_history(path)
    judged, shared = Judged(history), []
    for name in MUTANTS:
        j, own = judged[name], judge(systems.get(name), history)
        assert io.dumps_lines(*j.trace) == io.dumps_lines(*own.trace), name
        assert (j.system, j.verdicts, j.expectations, j.declares) == (own.system, own.verdicts, own.expectations, own.declares), name
        base = systems.get(name).declares.base
        if j.trace.observations is judged[base].trace.observations:
            shared.append(name)
    # both kinds on every History: some mutants ran on their own (their seam reached), most did not
    assert 0 < len(shared) < len(MUTANTS), shared
