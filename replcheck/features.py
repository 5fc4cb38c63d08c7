"""The features replcheck knows, and the layers each has: importing a module registers its checks."""
from __future__ import annotations

import importlib

ALL = ("properties", "proofs", "machines")
FEATURES = {"delay": ALL, "semisync": ALL, "incident": ("properties", "machines"), "groupid": ALL,
            "recovery": ("properties",)}
MODULES = {"properties": "replcheck.properties.{}", "proofs": "replcheck.properties.proofs.{}",
           "machines": "replcheck.properties.machines.{}"}


def load_features() -> None:
    for feature, layers in FEATURES.items():
        for layer in layers:
            importlib.import_module(MODULES[layer].format(feature))
