"""A small, deterministic YAML writer for the documents the DSL compiles.

It writes mappings in the order given (the compiler builds them in a fixed
order), block style, and quotes every string that YAML would read as
something else: a number, a boolean (``yes``, ``off``...), null, a string
with special characters or surrounding spaces. Multi-line strings (an
embedded program) are written as literal blocks so the committed file stays
readable.
"""

from __future__ import annotations

import json
import re
from typing import Any, List, Optional

# Plain scalars that YAML 1.1 or 1.2 would not read as a string.
_SPECIAL_WORDS = {
    "", "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n",
    "=", "<<", ".nan", ".inf", "-.inf", "+.inf",
}
_NUMBER = re.compile(
    r"^[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?$"  # ints, floats, 1e3
    r"|^[-+]?0[xob][0-9a-fA-F_]+$"  # hex, octal, binary
    r"|^[-+]?\d+(:[0-5]?\d)+(\.\d*)?$"  # sexagesimal (YAML 1.1)
    r"|^\d{4}-\d\d?-\d\d?"  # dates and timestamps
)
# Characters that may not start a plain scalar.
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")


def _plain_ok(s: str) -> bool:
    """Reports whether s can be written unquoted and read back as the same string."""
    if s.lower() in _SPECIAL_WORDS or _NUMBER.match(s):
        return False
    if s != s.strip() or (s[0] in _INDICATORS and not (s[0] in "-?:" and len(s) > 1 and s[1] != " ")):
        return False
    if ": " in s or " #" in s or s.endswith(":"):
        return False
    return all(c.isprintable() and c not in "\t" for c in s)


def scalar(value: Any) -> str:
    """One scalar as YAML text: None, bool, int, float or str."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot write {type(value).__name__} {value!r} as YAML")
    if _plain_ok(value):
        return value
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML double-quoted one


def _block_ok(s: str) -> bool:
    """Reports whether s reads back unchanged from a literal block."""
    body = s.rstrip("\n")
    return (
        "\n" in body
        and not body.startswith((" ", "\n"))
        and all(c.isprintable() or c in "\n\t" for c in s)
        and "\r" not in s
    )


def _literal(s: str, indent: str) -> List[str]:
    """A multi-line string as a literal block (the header, then its lines)."""
    trailing = len(s) - len(s.rstrip("\n"))
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    lines = s.rstrip("\n").split("\n") + [""] * (trailing - 1 if trailing > 1 else 0)
    return ["|" + chomp] + [(indent + line) if line else "" for line in lines]


def _value(value: Any, indent: str) -> List[str]:
    """A scalar or an empty collection: its text, with a literal block's lines."""
    if isinstance(value, str) and _block_ok(value):
        return _literal(value, indent + "  ")
    if isinstance(value, dict):
        return ["{}"]
    if isinstance(value, list):
        return ["[]"]
    return [scalar(value)]


_FLOW_WIDTH = 100


def _flow_scalar(value: Any) -> str:
    """A scalar inside a flow collection, where ``,[]{}?:#`` need quotes too (go-yaml reads ``{a: b?}`` as an error)."""
    text = scalar(value)
    if isinstance(value, str) and not text.startswith('"') and any(c in value for c in ",[]{}?:#"):
        return json.dumps(value, ensure_ascii=False)
    return text


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float)) or (isinstance(value, str) and "\n" not in value)


def _flow(value: Any) -> Optional[str]:
    """value in flow style (``[a, b]``, ``{k: v}``, ``[{name: x}]``) when it is a
    short collection of scalars or of flat mappings, else None."""
    if isinstance(value, list) and value and all(_is_scalar(x) for x in value):
        return "[" + ", ".join(_flow_scalar(x) for x in value) + "]"
    if isinstance(value, dict) and value and all(_is_scalar(x) for x in value.values()):
        return "{" + ", ".join(f"{_flow_scalar(str(k))}: {_flow_scalar(x)}" for k, x in value.items()) + "}"
    if isinstance(value, list) and value and all(isinstance(x, dict) and _flow(x) for x in value):
        return "[" + ", ".join(_flow(x) or "" for x in value) + "]"
    return None


def _mapping(d: dict, indent: str, out: List[str]) -> None:
    """Writes a non-empty mapping, one key a line at indent (short
    collections of scalars on the key's line, in flow style)."""
    for k, v in d.items():
        key = indent + scalar(str(k)) + ":"
        flow = _flow(v)
        if flow is not None and len(key) + 1 + len(flow) <= _FLOW_WIDTH:
            out.append(key + " " + flow)
        elif isinstance(v, dict) and v:
            out.append(key)
            _mapping(v, indent + "  ", out)
        elif isinstance(v, list) and v:
            out.append(key)
            for item in v:
                _item(item, indent, out)
        else:
            head, *rest = _value(v, indent)
            out.append(key + " " + head)
            out.extend(rest)


def _item(item: Any, indent: str, out: List[str]) -> None:
    """Writes one item of a block sequence at indent."""
    flow = _flow(item) if isinstance(item, dict) else None
    if flow is not None and len(indent) + 2 + len(flow) <= _FLOW_WIDTH:
        out.append(indent + "- " + flow)
    elif isinstance(item, dict) and item:
        sub: List[str] = []
        _mapping(item, indent + "  ", sub)
        sub[0] = indent + "- " + sub[0][len(indent) + 2:]
        out.extend(sub)
    elif isinstance(item, list) and item:
        out.append(indent + "-")
        for x in item:
            _item(x, indent + "  ", out)
    else:
        head, *rest = _value(item, indent)
        out.append(indent + "- " + head)
        out.extend(rest)


def dump(doc: dict) -> str:
    """The YAML text of doc (a mapping of dicts, lists and scalars), ending with a newline."""
    out: List[str] = []
    _mapping(doc, "", out)
    return "\n".join(out) + "\n"
