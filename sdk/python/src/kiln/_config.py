"""Where the client finds its server, token and project, as the kiln CLI does.

Each comes from the first that has it: the argument, the environment
(KILN_SERVER, KILN_TOKEN, KILN_PROJECT), then the current context of
KILN_HOME/config.yaml (~/.kiln/config.yaml when KILN_HOME is unset).

The standard library reads no YAML, so this module reads the shape the CLI
documents and nothing more: a ``contexts:`` list of mappings of plain or
quoted scalars (name, server, token, project) and ``current-context:``.
Other top-level keys (the server's settings) are skipped whole. Anything
else in those two keys is a KLN-1001 error naming the line, never a guess.
"""

from __future__ import annotations

import os
import pathlib
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .errors import NO_CONTEXT, PARSE, KilnError

_KEY = re.compile(r"^([A-Za-z][\w-]*)\s*:(?:\s+(.*))?$")
_CONTEXT_KEYS = ("name", "server", "token", "project")


@dataclass
class Settings:
    """The resolved server (None when none is configured), token and project."""

    server: Optional[str]
    token: Optional[str]
    project: Optional[str]


def home() -> pathlib.Path:
    """KILN_HOME, or ~/.kiln."""
    env = os.environ.get("KILN_HOME")
    return pathlib.Path(env) if env else pathlib.Path.home() / ".kiln"


def resolve(server: Optional[str], token: Optional[str], project: Optional[str]) -> Settings:
    """The settings from the arguments, the environment and the current context."""
    env = os.environ
    server = server or env.get("KILN_SERVER") or None
    token = token or env.get("KILN_TOKEN") or None
    project = project or env.get("KILN_PROJECT") or None
    if server and token and project:
        return Settings(server, token, project)
    ctx = current_context(home() / "config.yaml")
    return Settings(server or ctx.get("server") or None, token or ctx.get("token") or None,
                    project or ctx.get("project") or None)


def current_context(path: pathlib.Path) -> Dict[str, str]:
    """The current context of the configuration file at path; {} when the
    file or its current-context is missing. KLN-4052 for a current-context
    the file does not list."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise KilnError(PARSE, f"cannot read the configuration file: {e}", file=str(path)) from e
    contexts, current = parse(text, str(path))
    if not current:
        return {}
    for ctx in contexts:
        if ctx.get("name") == current:
            return ctx
    names = ", ".join(c.get("name", "") for c in contexts) or "none"
    raise KilnError(NO_CONTEXT, f"the current-context {current!r} is not among the file's contexts ({names})",
                    file=str(path), hint="set current-context to one of them (kiln config use-context NAME)")


def parse(text: str, name: str = "config.yaml") -> Tuple[List[Dict[str, str]], str]:
    """The contexts and current-context of a configuration file's text."""
    lines = _lines(text, name)
    contexts: List[Dict[str, str]] = []
    current = ""
    i = 0
    while i < len(lines):
        num, indent, body = lines[i]
        if indent:
            raise _unreadable(name, num, "an indented line outside a top-level key")
        m = _KEY.match(body)
        if not m:
            raise _unreadable(name, num, "not a top-level `key: value` line")
        key, value = m.group(1), m.group(2)
        end = i + 1
        while end < len(lines) and (lines[end][1] > 0 or lines[end][2].startswith("- ")):
            end += 1
        if key == "current-context":
            if end != i + 1 or value is None:
                raise _unreadable(name, num, "current-context takes one plain or quoted name")
            current = _scalar(value, name, num)
        elif key == "contexts":
            if value not in (None, "[]"):
                raise _unreadable(name, num, "contexts is read as a block list of mappings")
            contexts = _contexts(lines[i + 1:end], name)
        i = end
    return contexts, current


def _contexts(lines: List[Tuple[int, int, str]], name: str) -> List[Dict[str, str]]:
    out: List[Dict[str, str]] = []
    item_indent, key_col = -1, -1
    for num, indent, body in lines:
        if body.startswith("- "):
            if item_indent not in (-1, indent):
                raise _unreadable(name, num, "the list's items are not aligned")
            rest = body[2:].lstrip()
            item_indent, key_col = indent, indent + len(body) - len(rest)
            body = rest
            out.append({})
        elif not out or indent != key_col:
            raise _unreadable(name, num, "a context's keys line up under its first key")
        m = _KEY.match(body)
        if not m or m.group(1) not in _CONTEXT_KEYS or m.group(2) is None:
            raise _unreadable(name, num, "a context holds name, server, token and project, each `key: value`")
        out[-1][m.group(1)] = _scalar(m.group(2), name, num)
    return out


def _lines(text: str, name: str) -> List[Tuple[int, int, str]]:
    """(line number, indentation, text) of each line with content, comments dropped."""
    out = []
    for num, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise _unreadable(name, num, "a tab in the indentation")
        stripped = raw.strip()
        if not stripped or stripped.startswith("#") or stripped in ("---", "..."):
            continue
        out.append((num, len(raw) - len(raw.lstrip(" ")), stripped))
    return out


def _scalar(value: str, name: str, num: int) -> str:
    """A plain or quoted scalar, its trailing comment dropped."""
    value = value.strip()
    if value[:1] in ("'", '"'):
        q = value[0]
        end = value.find(q, 1)
        rest = value[end + 1:].strip() if end > 0 else "x"
        if end < 0 or (rest and not rest.startswith("#")) or "\\" in value[1:end]:
            raise _unreadable(name, num, "a quoted value this reader does not take")
        return value[1:end]
    value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
    if value[:1] in ("[", "{", "&", "*", "!", "|", ">", "%", "@", "`"):
        raise _unreadable(name, num, f"the value {value!r} is not a plain scalar")
    return value


def _unreadable(name: str, num: int, why: str) -> KilnError:
    return KilnError(PARSE, f"line {num}: {why}; the kiln Python package reads only the documented "
                     "shape (contexts: a list of name/server/token/project, current-context: NAME)",
                     file=name, hint="see docs/cli.md, Contexts; or give server= and token= "
                     "(KILN_SERVER, KILN_TOKEN) instead")
