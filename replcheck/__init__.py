"""replcheck: checks MySQL-family replication features against their specifications."""
__version__ = "0.2.0"
