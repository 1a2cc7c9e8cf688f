"""The one place mcpkit's version is written: the package metadata, ``mcpkit.__version__``
and the version servers report by default all read it."""

__version__ = "0.1.0"
