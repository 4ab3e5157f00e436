"""``python -m kiln`` (and the ``kiln-py`` script): see :mod:`kiln.cli`."""

from __future__ import annotations

import os
import sys
from typing import Optional, Sequence

from .cli import MODULE_PROG
from .cli import main as _main


def main(argv: Optional[Sequence[str]] = None, prog: Optional[str] = None) -> int:
    """Runs one command and returns its exit status; the command calls
    itself prog, by default the name it was started by (``kiln-py``)."""
    return _main(argv, prog or os.path.basename(sys.argv[0]) or "kiln-py")


if __name__ == "__main__":
    sys.exit(main(prog=MODULE_PROG))
