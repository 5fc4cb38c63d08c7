"""replcheck: checks MySQL-family replication features against their specifications."""
__version__ = "0.1.0"
