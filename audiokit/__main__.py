"""``python -m audiokit``: the same CLI as the ``audiokit`` command."""

import sys

from .errors import ExitStatus  # already imported with the package

try:
    from .cli.signals import install_for_process

    install_for_process()  # first: a signal while the CLI is imported prints its line (audiokit.cli.signals)
    from .cli.app import run
except KeyboardInterrupt:  # Ctrl-C in the few lines before the handlers exist
    sys.stderr.write("error: interrupted\n")
    sys.exit(ExitStatus.INTERRUPTED)

run()
