"""``python -m audiokit``: the same CLI as the ``audiokit`` command."""

from .cli.app import run

run()
