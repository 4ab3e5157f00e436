"""The package's client side, imported lazily: the DSL compiles and runs
locally without it, and uses the Client, Run and KilnError when present."""

from __future__ import annotations

from typing import Any, List, Optional

try:  # the package's own error type, shared with the client
    from ..errors import KilnError
except ImportError:  # pragma: no cover - only before the client is part of the package

    class KilnError(Exception):  # type: ignore[no-redef]
        """An error with a kiln code (the package's errors module is absent)."""

        def __init__(self, code: str, message: str, *, field: str = "", file: str = "",
                     object: str = "", hint: str = "", status: Optional[int] = None,  # noqa: A002
                     errors: Optional[List[Any]] = None) -> None:
            self.code, self.message, self.field, self.file = code, message, field, file
            self.object, self.hint, self.status = object, hint, status
            self.errors = errors if errors else [self]
            where = "".join(p + ": " for p in (file, object, field) if p)
            text = code + (" " if where else ": ") + where + message
            super().__init__(text + (f" (hint: {hint})" if hint else ""))


def client_class() -> Any:
    """The package's Client class (an ImportError that says so when absent)."""
    from ..client import Client  # noqa: PLC0415 - lazy on purpose

    return Client


def run_from_json(data: dict) -> Any:
    """A Run built from the API's JSON of a run (``kiln get runs ID -o json``)."""
    try:
        from ..models import Run  # noqa: PLC0415
    except ImportError:
        return data
    for name in ("from_json", "from_dict"):
        build = getattr(Run, name, None)
        if build is not None:
            return build(data)
    return Run(**data)  # pragma: no cover
