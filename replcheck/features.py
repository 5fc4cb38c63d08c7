"""The features replcheck knows: importing a feature's modules registers its checks."""
from __future__ import annotations

import importlib

FEATURES = ("delay", "semisync")
LAYERS = ("replcheck.properties.{}", "replcheck.properties.proofs.{}", "replcheck.properties.machines.{}")


def load_features() -> None:
    for feature in FEATURES:
        for layer in LAYERS:
            importlib.import_module(layer.format(feature))
