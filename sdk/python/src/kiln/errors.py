"""Errors of the kiln API, carrying the stable ``KLN-xxxx`` codes."""

from __future__ import annotations

from typing import Any, List, Mapping, Optional

#: The codes this package raises itself; the registry is api/v1alpha1/codes.go.
PARSE = "KLN-1001"
READ = "KLN-1020"
BARE_VALUE = "KLN-1021"
DUPLICATE_KEY = "KLN-1022"
RUN_NOT_FOUND = "KLN-4001"
USAGE = "KLN-4002"
UNAUTHENTICATED = "KLN-4003"
BAD_REQUEST = "KLN-4006"
INTERNAL = "KLN-4009"
NO_CONTEXT = "KLN-4052"
CONFIG_EXPOSED = "KLN-4056"
SERVER_UNREACHABLE = "KLN-5060"

#: Hints for codes whose server-side hint speaks of HTTP rather than of
#: this package: they replace the server's.
CLIENT_HINTS = {
    UNAUTHENTICATED: "give the server's token as token=, in KILN_TOKEN, or as token: in the current context",
    "KLN-4004": "Client().whoami() shows the token's role and projects",
}

UNREACHABLE_HINT = (
    "check the URL given as server=, in KILN_SERVER or in the current context of "
    "KILN_HOME/config.yaml, and that kiln serve runs there"
)

NO_SERVER_HINT = (
    "set KILN_SERVER (and KILN_TOKEN), pass server= (and token=), or make a context with a server "
    "current in KILN_HOME/config.yaml (kiln config use-context NAME)"
)

#: The same hints as the command line gives them: its flags, not Python's
#: arguments ({prog} is the command's name).
CLI_HINTS = {
    CLIENT_HINTS[UNAUTHENTICATED]: "give the server's token with --token, in KILN_TOKEN, or as token: in the "
                                   "current context",
    CLIENT_HINTS["KLN-4004"]: "{prog} whoami shows the token's role and projects",
    UNREACHABLE_HINT: "check the URL given with --server, in KILN_SERVER or in the current context of "
                      "KILN_HOME/config.yaml, and that kiln serve runs there",
    NO_SERVER_HINT: "give --server (and --token), set KILN_SERVER (and KILN_TOKEN), or make a context with a "
                    "server current in KILN_HOME/config.yaml (kiln config use-context NAME)",
}


class KilnError(Exception):
    """An error with a kiln code, as the server or the kiln CLI reports it.

    ``str()`` reads like the CLI: ``KLN-1002 request Workflow/x spec.tasks[0].comand:
    unknown field (hint: ...)``. ``errors`` holds every error when the server
    sent several; the attributes are those of the first. The server lists
    at most 50 errors of one kind (one code at one field pattern): after the
    50th comes a KLN-1086 error whose ``omitted`` counts the rest, and whose
    ``omitted_code`` is their code.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str = "",
        file: str = "",
        object: str = "",  # noqa: A002 - the API's name
        hint: str = "",
        status: Optional[int] = None,
        errors: Optional[List["KilnError"]] = None,
        line: int = 0,
        column: int = 0,
        omitted: int = 0,
        omitted_code: str = "",
    ) -> None:
        self.code = code
        self.omitted = omitted
        self.omitted_code = omitted_code
        self.line = line
        self.column = column
        self.message = message
        self.field = field
        self.file = file
        self.object = object
        self.hint = hint
        self.status = status
        self.errors: List[KilnError] = errors if errors else [self]
        super().__init__(self._line())

    @classmethod
    def from_json(cls, data: Mapping[str, Any], status: Optional[int] = None) -> "KilnError":
        """One error of a response's ``{"errors": [...]}`` list."""
        return cls(
            str(data.get("code") or INTERNAL),
            str(data.get("message") or ""),
            field=str(data.get("field") or ""),
            file=str(data.get("file") or ""),
            object=str(data.get("object") or ""),
            line=int(data.get("line") or 0),
            column=int(data.get("column") or 0),
            omitted=int(data.get("omitted") or 0),
            omitted_code=str(data.get("omittedCode") or ""),
            hint=CLIENT_HINTS.get(str(data.get("code")), str(data.get("hint") or "")),
            status=status,
        )

    @classmethod
    def from_list(cls, items: List[Mapping[str, Any]], status: Optional[int] = None) -> "KilnError":
        """The first error of items, carrying all of them in ``errors``."""
        errs = [cls.from_json(x, status) for x in items]
        first = errs[0]
        first.errors = errs
        return first

    def _line(self) -> str:
        where = "".join(p + ": " for p in (self._place(), self.object, self.field) if p)
        text = where + self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        sep = " " if where else ": "
        return self.code + sep + text

    def _place(self) -> str:
        """file:line:column, as the server's errors and the CLI write it, when the line is known."""
        if not self.file or self.line <= 0:
            return self.file
        if self.column <= 0:
            return f"{self.file}:{self.line}"
        return f"{self.file}:{self.line}:{self.column}"

    def __str__(self) -> str:
        return "\n".join(e._line() for e in self.errors)

    def for_cli(self, prog: str) -> "KilnError":
        """self, with the hints that name Python arguments (server=,
        token=) rewritten to name the command line's flags."""
        for err in self.errors:
            if err.hint in CLI_HINTS:
                err.hint = CLI_HINTS[err.hint].format(prog=prog)
        return self

    def __repr__(self) -> str:
        return f"KilnError(code={self.code!r}, message={self.message!r}, field={self.field!r}, status={self.status!r})"
