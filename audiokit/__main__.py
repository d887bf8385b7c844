"""``python -m audiokit``: the same CLI as the ``audiokit`` command."""

import sys

from .errors import ExitStatus  # already imported with the package

try:
    from .cli.app import run
except KeyboardInterrupt:  # Ctrl-C while the interpreter is still importing the CLI
    sys.stderr.write("error: interrupted\n")
    sys.exit(ExitStatus.INTERRUPTED)

run()
