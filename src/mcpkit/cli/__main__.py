"""``python -m mcpkit.cli``: the ``mcpkit`` command."""

from mcpkit.cli import main

if __name__ == "__main__":
    main()
