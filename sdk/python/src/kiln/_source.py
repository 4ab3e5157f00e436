"""Reading what a caller submits: text, bytes, a path, or a pipeline object."""

from __future__ import annotations

import os
import pathlib
from typing import Any, Optional, Tuple

from .errors import USAGE, KilnError

#: What submit and apply take as a document.
#: str (YAML or JSON text, or the path of an existing file), bytes,
#: os.PathLike, or an object with a ``to_yaml() -> str`` method.
Spec = Any


def read_spec(spec: Spec, filename: Optional[str] = None) -> Tuple[str, bytes]:
    """The (file name, contents) of spec; the name is what the server's
    errors name the file by ("request" when the text came inline)."""
    if hasattr(spec, "to_yaml"):
        return filename or _name_of(spec), str(spec.to_yaml()).encode("utf-8")
    if isinstance(spec, os.PathLike):
        return _read(pathlib.Path(spec), filename)
    if isinstance(spec, bytes):
        return filename or "request", spec
    if isinstance(spec, str):
        if "\n" not in spec and len(spec) < 4096 and _is_file(spec):
            return _read(pathlib.Path(spec), filename)
        return filename or "request", spec.encode("utf-8")
    raise KilnError(USAGE, f"cannot submit a {type(spec).__name__}: give YAML or JSON text, bytes, a path, "
                    "or an object with a to_yaml() method")


def _is_file(text: str) -> bool:
    try:
        return pathlib.Path(text).is_file()
    except (OSError, ValueError):
        return False


def _read(path: pathlib.Path, filename: Optional[str]) -> Tuple[str, bytes]:
    try:
        return filename or str(path), path.read_bytes()
    except OSError as e:
        raise KilnError(USAGE, f"cannot read {path}: {e.strerror or e}", file=str(path)) from e


def _name_of(obj: Any) -> str:
    name = getattr(obj, "name", "")
    return f"{name}.yaml" if isinstance(name, str) and name else "request"
