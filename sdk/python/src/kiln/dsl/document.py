"""What every document built in Python can do: print, save, check and run."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Union

from . import _yaml


class Document:
    """A kiln document built in Python; subclasses give ``to_dict()``."""

    def to_dict(self) -> Dict[str, Any]:
        """The document as the dict its YAML holds."""
        raise NotImplementedError

    def to_yaml(self) -> str:
        """The document as YAML text, the same for the same definition."""
        return _yaml.dump(self.to_dict())

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes to_yaml() to path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_yaml())

    def validate(self, *, kiln_bin: Optional[str] = None) -> None:
        """Checks the YAML with ``kiln validate``; a KilnError listing every problem."""
        from .runner import validate  # noqa: PLC0415 - the runner imports the documents

        validate(self.to_yaml(), kiln_bin=kiln_bin)

    def run(self, params: Optional[Dict[str, Any]] = None, **kwargs: Any) -> Any:
        """Runs the document and returns its Run: see ``kiln.run``."""
        from .runner import run  # noqa: PLC0415

        return run(self, params, **kwargs)
