"""Data: the requirement catalogue, the History and Trace schemas, embedded histories."""
from importlib.resources import files

ROOT = files(__name__)
