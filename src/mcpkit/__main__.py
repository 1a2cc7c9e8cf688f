"""``python -m mcpkit``: the ``mcpkit`` command."""

from mcpkit.cli import main

if __name__ == "__main__":
    main()
