"""Injection into tool, resource and prompt functions: ``Header``, ``State``, ``Depends``
markers and the per-function plan that fills them on each call."""
