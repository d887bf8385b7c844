"""``python -m audiokit``: the same CLI as the ``audiokit`` command."""

import sys

try:
    from .cli.app import run
except KeyboardInterrupt:  # Ctrl-C while the interpreter is still importing the CLI
    sys.stderr.write("error: interrupted\n")
    sys.exit(130)

run()
