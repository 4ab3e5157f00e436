"""Where the client finds its server, token and project, as the kiln CLI does.

Each comes from the first that has it: the argument, the environment
(KILN_SERVER, KILN_TOKEN, KILN_PROJECT), then the current context of
KILN_HOME/config.yaml (~/.kiln/config.yaml when KILN_HOME is unset).

The standard library reads no YAML, so :mod:`kiln._yaml` reads the subset
the file is written in (block or flow mappings and lists of one-line
scalars), and this module checks its keys as strictly as the kiln CLI
does: an unknown key (``projekt:``) is a KLN-1001 error naming it and its
line, a bare ``yes`` or ``1.0`` where text belongs a KLN-1021, never a guess.
The server's settings (store, backend, kubernetes, ...) are read and left
alone.
"""

from __future__ import annotations

import difflib
import os
import pathlib
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from . import _yaml
from .errors import BARE_VALUE, CONFIG_EXPOSED, NO_CONTEXT, PARSE, KilnError

#: The keys of a context, and of the file (internal/cli: fileConfig, cliContext).
CONTEXT_KEYS = ("name", "server", "token", "project")
TOP_KEYS = ("contexts", "current-context", "store", "backend", "kubernetes", "slurm", "artifacts", "cache", "party", "serve")

#: YAML 1.1's booleans, and what starts a number; a plain integer reads as its text in the CLI too.
_BOOLS = frozenset("y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF".split())
_NUMBER = re.compile(r"^[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|0o[0-7_]+|[0-9][0-9_]*|(\.[0-9_]+|[0-9][0-9_]*(\.[0-9_]*)?)"
                     r"([eE][-+]?[0-9]+)?|\.(inf|Inf|INF)|\.(nan|NaN|NAN))$")
_INT = re.compile(r"^-?(0|[1-9][0-9]*)$")


@dataclass
class Settings:
    """The resolved server (None when none is configured), token and project."""

    server: Optional[str]
    token: Optional[str]
    project: Optional[str]


#: The home the kiln CLI takes as root when ~/.kiln does not exist and
#: other users cannot reach it (as under a 0700 /root).
ROOT_HOME = pathlib.Path("/var/lib/kiln")


def home() -> pathlib.Path:
    """KILN_HOME, else ~/.kiln, else, as root, ROOT_HOME: the home the kiln
    CLI picks, so that both read one configuration file."""
    env = os.environ.get("KILN_HOME")
    if env:
        return pathlib.Path(env)
    user_home = pathlib.Path.home() / ".kiln"
    if os.geteuid() != 0 or user_home.exists() or _others_reach(user_home.parent):
        return user_home
    return ROOT_HOME


def _others_reach(directory: pathlib.Path) -> bool:
    """Whether users other than the owner may search directory and each
    directory above it."""
    for d in [directory, *directory.parents]:
        try:
            if not d.stat().st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


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
    _check_exposed(path, contexts)
    if not current:
        return {}
    for ctx in contexts:
        if ctx.get("name") == current:
            return ctx
    names = ", ".join(c.get("name", "") for c in contexts) or "none"
    raise KilnError(NO_CONTEXT, f"the current-context {current!r} is not among the file's contexts ({names})",
                    file=str(path), hint="set current-context to one of them (kiln config use-context NAME)")


def _check_exposed(path: pathlib.Path, contexts: List[Dict[str, str]]) -> None:
    """KLN-4056, as the kiln CLI says it, for a file holding a token that
    users other than its owner may read."""
    holder = next((c.get("name", "") for c in contexts if c.get("token")), None)
    if holder is None:
        return
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise KilnError(CONFIG_EXPOSED, f"the file holds the token of context {holder!r} and its mode {mode:04o} "
                        "lets other users read it: it is not used", file=str(path), hint=f"chmod 600 {path}")


def parse(text: str, name: str = "config.yaml") -> Tuple[List[Dict[str, str]], str]:
    """The contexts and current-context of a configuration file's text.

    Each context is a dict of the keys it sets (a null value reads as "",
    as the kiln CLI reads it)."""
    doc = _yaml.load(text, name)
    if doc is None:
        return [], ""
    if not isinstance(doc, _yaml.Map):
        raise _error(name, 1, "the file is not a mapping of keys (contexts:, current-context: ...)")
    for key, line in doc.lines.items():
        if key not in TOP_KEYS:
            raise _unknown(name, line, key, TOP_KEYS, "the file")
    current = _text(doc.get("current-context"), name, doc.lines.get("current-context", 1), "current-context")
    return _contexts(doc.get("contexts"), name, doc.lines.get("contexts", 1)), current


def _contexts(value: Any, name: str, line: int) -> List[Dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, _yaml.Seq):
        raise _error(name, line, "contexts is a list of contexts (- {name: ..., server: ...})")
    out: List[Dict[str, str]] = []
    for item, at in zip(value, value.lines):
        if not isinstance(item, _yaml.Map):
            raise _error(name, at, "a context is a mapping of name, server, token and project")
        for key, key_line in item.lines.items():
            if key not in CONTEXT_KEYS:
                raise _unknown(name, key_line, key, CONTEXT_KEYS, "a context")
        out.append({k: _text(v, name, item.lines[k], k) for k, v in item.items()})
    return out


def _text(value: Any, name: str, line: int, key: str) -> str:
    """A scalar as the kiln CLI reads it into a string; a bare value YAML
    reads as a boolean or a number other than a plain integer is refused."""
    if value is None:
        return ""
    if isinstance(value, (_yaml.Map, _yaml.Seq)):
        raise _error(name, line, f"{key} takes one value, not a {'mapping' if isinstance(value, dict) else 'list'}")
    if isinstance(value, _yaml.Plain) and (value in _BOOLS or (_NUMBER.match(value) and not _INT.match(value))):
        raise KilnError(BARE_VALUE, f"line {line}: {key}: the bare value {str(value)!r} reads as a boolean or "
                        "a number in YAML", file=name, hint=f'quote it: {key}: "{value}"')
    return str(value)


def _unknown(name: str, line: int, key: str, known: Tuple[str, ...], where: str) -> KilnError:
    close = difflib.get_close_matches(key, known, n=1)
    guess = f"did you mean {close[0]}? " if close else ""
    return KilnError(PARSE, f"line {line}: unknown key {key!r} in {where}", file=name,
                     hint=f"{guess}{where} takes {', '.join(known)}")


def _error(name: str, line: int, why: str) -> KilnError:
    return KilnError(PARSE, f"line {line}: {why}", file=name,
                     hint="see kiln config --help for the shape; or give server= and token= "
                     "(KILN_SERVER, KILN_TOKEN) instead")
