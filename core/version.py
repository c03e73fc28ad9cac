"""The one place the version is written; packaging and `--version` read it from here."""

__version__ = "0.1.0"
