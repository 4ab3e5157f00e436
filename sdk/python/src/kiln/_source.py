"""Reading what a caller submits: text, bytes, a path, a dict, or a pipeline object."""

from __future__ import annotations

import json
import os
import pathlib
import re
from typing import Any, List, Mapping, Optional, Tuple

from .errors import READ, USAGE, KilnError

#: What submit and apply take as a document: str (YAML or JSON text, or a
#: file's path), bytes, os.PathLike, a Mapping (sent as JSON), or an object
#: with a ``to_yaml() -> str`` method.
Spec = Any

_READ_HINT = "check the path and that the file is readable"
_FILE_SUFFIX = re.compile(r"\.(ya?ml|json)$", re.IGNORECASE)


def read_specs(spec: Spec, filename: Optional[str] = None) -> List[Tuple[str, bytes]]:
    """The documents of spec: one, or one per item of a list or tuple."""
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise KilnError(USAGE, "nothing to submit: the list of documents is empty")
        return [read_spec(s, f"{filename or 'request'}[{i}]" if _inline(s) else None) for i, s in enumerate(spec)]
    return [read_spec(spec, filename)]


def read_spec(spec: Spec, filename: Optional[str] = None) -> Tuple[str, bytes]:
    """The (file name, contents) of spec; the name is what the server's
    errors name the file by ("request" when the text came inline).

    A one-line str that names a file (it ends in .yaml, .yml or .json, or
    holds no ':') is read as one: KLN-1020 when it cannot be, and nothing
    is sent."""
    if hasattr(spec, "to_yaml"):
        return filename or _name_of(spec), str(spec.to_yaml()).encode("utf-8")
    if isinstance(spec, Mapping):
        return filename or "request", _json(spec)
    if isinstance(spec, os.PathLike):
        return _read(pathlib.Path(spec), filename)
    if isinstance(spec, bytes):
        return filename or "request", spec
    if isinstance(spec, str):
        if not spec.strip():
            raise KilnError(USAGE, "nothing to submit: the text is empty")
        if _looks_like_path(spec):
            return _read(pathlib.Path(spec.strip()), filename)
        return filename or "request", spec.encode("utf-8")
    raise KilnError(USAGE, f"cannot submit a {type(spec).__name__}: give YAML or JSON text, bytes, a path, "
                    "a dict, or an object with a to_yaml() method")


def _inline(spec: Spec) -> bool:
    return isinstance(spec, (Mapping, bytes)) or (isinstance(spec, str) and not _looks_like_path(spec))


def _looks_like_path(text: str) -> bool:
    text = text.strip()
    return "\n" not in text and len(text) < 4096 and (bool(_FILE_SUFFIX.search(text)) or ":" not in text)


def _json(doc: Mapping[str, Any]) -> bytes:
    try:
        return json.dumps(doc).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise KilnError(USAGE, f"cannot submit the dict as JSON: {e}",
                        hint="give values JSON can hold: str, int, float, bool, None, lists and dicts") from e


def _read(path: pathlib.Path, filename: Optional[str]) -> Tuple[str, bytes]:
    try:
        return filename or str(path), path.read_bytes()
    except OSError as e:
        why = (e.strerror or str(e)).lower()
        raise KilnError(READ, f"cannot read the file: {why}", file=str(path), hint=_READ_HINT) from e


def _name_of(obj: Any) -> str:
    name = getattr(obj, "name", "")
    return f"{name}.yaml" if isinstance(name, str) and name else "request"
