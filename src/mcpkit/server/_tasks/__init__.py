"""The tasks extension (SEP-2663) and the experimental tasks of 2025-11-25: the manager,
the runner, the records kept in a task store, and each era's wire form."""
