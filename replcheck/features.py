"""The features replcheck knows, and the layers each has. Importing a layer's module registers
its checks (properties, z3 proofs, state machines) with properties.core."""
from __future__ import annotations

FEATURES = ("delay", "lag", "semisync", "incident", "groupid", "recovery", "partial", "filter", "domains", "srcerr", "parallel", "multisource")


def load_features() -> None:
    """Every layer of every feature: the trace properties (properties.judge imports them all),
    the state machines and the z3 proofs."""
    import replcheck.properties.judge  # noqa: F401
    import replcheck.properties.machines.delay  # noqa: F401
    import replcheck.properties.machines.domains  # noqa: F401
    import replcheck.properties.machines.filter  # noqa: F401
    import replcheck.properties.machines.parallel  # noqa: F401
    import replcheck.properties.machines.groupid  # noqa: F401
    import replcheck.properties.machines.incident  # noqa: F401
    import replcheck.properties.machines.multisource  # noqa: F401
    import replcheck.properties.machines.semisync  # noqa: F401
    import replcheck.properties.proofs.delay  # noqa: F401
    import replcheck.properties.proofs.groupid  # noqa: F401
    import replcheck.properties.proofs.semisync  # noqa: F401
