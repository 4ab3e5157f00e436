"""What every document built in Python can do: print, save, check and run."""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Union

from . import _yaml

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..models import Run


def origin_of(fn: Optional[Callable[..., Any]], fallback_file: str = "", name: str = "") -> str:
    """Where a document was defined, as ``FILE.py:FUNCTION``: the file
    relative to the current directory when it lies beneath it."""
    path = ""
    if fn is not None:
        try:
            path = inspect.getsourcefile(fn) or ""
        except TypeError:
            path = ""
        name = getattr(fn, "__qualname__", name)
    path = path or fallback_file
    if not path:
        return ""
    rel = os.path.relpath(os.path.abspath(path))
    if not rel.startswith(os.pardir + os.sep) and rel != os.pardir:
        path = rel
    return f"{path}:{name}" if name else path


class Document:
    """A kiln document built in Python; subclasses give ``to_dict()`` and
    set ``origin``, where it was defined (``FILE.py:FUNCTION``), which runs
    and errors name instead of a file that does not exist."""

    origin: str = ""

    def to_dict(self) -> Dict[str, Any]:
        """The document as the dict its YAML holds."""
        raise NotImplementedError

    def documents(self) -> "list[Dict[str, Any]]":
        """Every document this one needs, itself first (a workflow adds those it runs as subworkflows)."""
        return [self.to_dict()]

    def to_yaml(self) -> str:
        """The document as YAML text (with the documents it needs after it,
        separated by ``---``), the same for the same definition."""
        return "---\n".join(_yaml.dump(d) for d in self.documents())

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes to_yaml() to path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_yaml())

    def validate(self, *, kiln_bin: Optional[str] = None) -> None:
        """Checks the YAML with ``kiln validate``; a KilnError listing every problem."""
        from .runner import validate  # noqa: PLC0415 - the runner imports the documents

        validate(self.to_yaml(), kiln_bin=kiln_bin, origin=self.origin)

    def run(self, params: Optional[Mapping[str, Any]] = None, *, client: Optional["Client"] = None,
            wait: bool = True, project: Optional[str] = None, check: bool = True,
            workdir: Union[str, "os.PathLike[str]", None] = None, timeout: Optional[float] = None,
            kiln_bin: Optional[str] = None, cache: Optional[str] = None, progress: bool = True,
            logs: bool = False) -> "Run":
        """Runs the document and returns its Run: see ``kiln.run``. It prints
        the run's ID, its page in the web UI (on a server) and each node's
        phase as it changes (``progress=False``: nothing); ``logs=True``
        adds the tasks' log lines as they are written."""
        from .runner import run  # noqa: PLC0415

        return run(self, params, client=client, wait=wait, project=project, check=check,
                   workdir=None if workdir is None else os.fspath(workdir), timeout=timeout, kiln_bin=kiln_bin,
                   cache=cache, progress=progress, logs=logs)
