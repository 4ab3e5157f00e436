"""``python -m kiln`` (and the ``kiln-py`` script): see :mod:`kiln.cli`."""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from .cli import main as _main


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs one command of ``python -m kiln``; returns its exit status."""
    return _main(argv)


if __name__ == "__main__":
    sys.exit(main())
