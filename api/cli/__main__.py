"""``python -m api.cli``: the ``lineage`` command."""

from api.cli import main

main()
