"""A small, strict reader of the YAML subset kiln's config.yaml uses.

It reads block and flow mappings and lists, and one-line scalars: plain,
'single-quoted' and "double-quoted" (with the common escapes), with
comments, a leading ``---`` and a closing ``...``. Anything else (anchors,
aliases, tags, block scalars, quoted values over several lines, a second
document, a duplicate key) is a KilnError naming the file and the line.
Plain scalars stay :class:`Plain` strings: the caller decides what a bare
``yes`` or ``1.0`` means where it expects text.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from .errors import DUPLICATE_KEY, PARSE, KilnError

_HINT = ("the kiln Python package reads config.yaml's plain YAML: mappings and lists, block or flow, of "
         "one-line plain or quoted values; no anchors, tags or block scalars")
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
            "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0"}
_HEX = {"x": 2, "u": 4, "U": 8}
_FLOW_END = ",]}"


class Plain(str):
    """An unquoted scalar, as written."""


class Map(Dict[str, Any]):
    """A mapping, with the line each key is on."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.lines: Dict[str, int] = {}


class Seq(List[Any]):
    """A list, with the line each item starts on."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.lines: List[int] = []


def load(text: str, name: str) -> Any:
    """The one document of text (None when it holds nothing)."""
    return _Reader(text, name).document()


class _Reader:
    def __init__(self, text: str, name: str) -> None:
        self.lines = text.splitlines()
        self.name = name
        self.row = 0  # the current line (0-based)
        self.col = 0

    # --- errors and position ------------------------------------------------------

    def fail(self, why: str, row: Optional[int] = None, code: str = PARSE, hint: str = _HINT) -> KilnError:
        line = (self.row if row is None else row) + 1
        return KilnError(code, f"line {line}: {why}", file=self.name, hint=hint)

    @property
    def text(self) -> str:
        return self.lines[self.row] if self.row < len(self.lines) else ""

    def rest(self) -> str:
        return self.text[self.col:]

    def skip_blank(self) -> bool:
        """Moves to the next line with content; False at the end."""
        while self.row < len(self.lines):
            line = self.lines[self.row]
            body = line.strip()
            if body and not body.startswith("#"):
                lead = line[: len(line) - len(line.lstrip())]
                if "\t" in lead:
                    raise self.fail("a tab in the indentation (YAML indents with spaces)")
                self.col = len(lead)
                return True
            self.row += 1
            self.col = 0
        return False

    def indent(self) -> int:
        return len(self.text) - len(self.text.lstrip(" "))

    def at_marker(self) -> bool:
        """Whether the current line is a document marker (``---``, ``...``)."""
        return self.text in ("---", "...") or self.text.startswith(("--- ", "... "))

    def end_of_line(self) -> None:
        """Only a comment may follow on this line."""
        rest = self.rest()
        stripped = rest.lstrip()
        if stripped and not (stripped.startswith("#") and (len(rest) > len(stripped) or self.col == 0)):
            raise self.fail(f"unexpected {stripped[:20]!r} after the value")
        self.row += 1
        self.col = 0

    # --- the document ---------------------------------------------------------------

    def document(self) -> Any:
        if not self.skip_blank():
            return None
        if self.text.strip() == "---" or self.text.startswith("--- "):
            self.col = 3
            self.end_of_line()
        value = self.block(-1) if self.skip_blank() else None
        if self.skip_blank():
            body = self.text.strip()
            if body == "...":
                self.row += 1
                if not self.skip_blank():
                    return value
            if body.startswith("---"):
                raise self.fail("a second document; config.yaml holds one")
            raise self.fail(f"unexpected {body[:30]!r}")
        return value

    # --- block nodes ------------------------------------------------------------------

    def block(self, parent: int, in_seq_ok: bool = False) -> Any:
        """The node that starts on the current line, indented more than parent."""
        ind = self.col
        rest = self.rest()
        if ind <= parent and not (in_seq_ok and ind == parent and _is_item(rest)):
            return None
        if _is_item(rest):
            return self.block_seq(ind)
        if rest[:1] in "[{":
            value = self.flow()
            self.end_of_line()
            return value
        if self.key_ahead():
            return self.block_map(ind)
        value = self.scalar(block=True)
        self.end_of_line()
        return value

    def key_ahead(self) -> bool:
        """Whether the current position holds ``key:``."""
        save = self.col
        try:
            self.key()
            return True
        except KilnError:
            return False
        finally:
            self.col = save

    def key(self) -> str:
        rest = self.rest()
        if rest[:1] in "'\"":
            k = self.quoted()
        else:
            m = re.match(r"[^\s#:,\[\]{}][^#,\[\]{}]*?(?=:(?:\s|$))", rest)
            if not m or m.group(0).rstrip() != m.group(0):
                raise self.fail("not a `key: value` line")
            self.check_plain(m.group(0))
            k = Plain(m.group(0))
            self.col += len(m.group(0))
        if not re.match(r"\s*:(\s|$)", self.rest()):
            raise self.fail("a key without `: `")
        self.col += self.rest().index(":") + 1
        return str(k)

    def block_map(self, ind: int) -> Map:
        out = Map(self.row + 1)
        while True:
            row = self.row
            k = self.key()
            self.add(out, k, row)
            self.skip_spaces()
            if not self.rest() or self.rest().startswith("#"):
                self.row += 1
                self.col = 0
                out[k] = self.block(ind, in_seq_ok=True) if self.skip_blank() else None
            elif _is_item(self.rest()):
                raise self.fail("a list item on the line of its key; start it on the next line")
            elif self.rest()[:1] in "[{":
                out[k] = self.flow()
                self.end_of_line()
            else:
                out[k] = self.scalar(block=True)
                self.end_of_line()
            if not self.skip_blank() or self.col < ind or self.at_marker():
                return out
            if self.col > ind:
                raise self.fail("more indented than the keys before it")
            if _is_item(self.rest()):
                return out

    def block_seq(self, ind: int) -> Seq:
        out = Seq(self.row + 1)
        while True:
            out.lines.append(self.row + 1)
            self.col += 1
            self.skip_spaces()
            if not self.rest() or self.rest().startswith("#"):
                self.row += 1
                self.col = 0
                out.append(self.block(ind) if self.skip_blank() else None)
            else:
                out.append(self.block(ind))
            if not self.skip_blank() or self.col < ind or self.at_marker() or (self.col == ind and not _is_item(self.rest())):
                return out
            if self.col > ind:
                raise self.fail("not aligned with the list's items")

    def add(self, out: Map, k: str, row: int) -> None:
        if k in out:
            raise self.fail(f"the key {k!r} again (first on line {out.lines[k]})", row, DUPLICATE_KEY,
                            "remove one of the two lines named")
        out.lines[k] = row + 1

    # --- flow nodes ---------------------------------------------------------------------

    def skip_spaces(self, lines: bool = False) -> None:
        """Skips spaces, and in a flow collection line ends and comments."""
        while True:
            rest = self.rest()
            stripped = rest.lstrip(" \t")
            self.col += len(rest) - len(stripped)
            if not lines:
                return
            if stripped and not stripped.startswith("#"):
                return
            self.row += 1
            self.col = 0
            if self.row >= len(self.lines):
                raise self.fail("the file ends inside a [ ] or { }", self.row - 1)

    def flow(self) -> Any:
        opener = self.rest()[0]
        closer = "}" if opener == "{" else "]"
        out: Any = Map(self.row + 1) if opener == "{" else Seq(self.row + 1)
        self.col += 1
        while True:
            self.skip_spaces(lines=True)
            if self.rest().startswith(closer):
                self.col += 1
                return out
            row = self.row
            if isinstance(out, Map):
                k = self.key()
                self.add(out, k, row)
                out[k] = self.flow_value()
            else:
                out.lines.append(row + 1)
                out.append(self.flow_value())
            self.skip_spaces(lines=True)
            if self.rest().startswith(","):
                self.col += 1
            elif not self.rest().startswith(closer):
                raise self.fail(f"expected ',' or '{closer}' at {self.rest()[:20]!r}")

    def flow_value(self) -> Any:
        self.skip_spaces(lines=True)
        if self.rest()[:1] in "[{":
            return self.flow()
        if self.rest()[:1] in _FLOW_END:
            raise self.fail(f"a missing value before {self.rest()[:1]!r}")
        return self.scalar(block=False)

    # --- scalars ---------------------------------------------------------------------------

    def scalar(self, block: bool) -> Any:
        rest = self.rest()
        if rest[:1] in "'\"":
            return self.quoted()
        stop = r"\s+#|$" if block else r"\s+#|[,\]}]|:(?=[\s,\]}]|$)|$"
        m = re.match(r"(.*?)\s*(?:" + stop + ")", rest)
        value = m.group(1) if m else rest
        if block and re.search(r":(\s|$)", value):
            raise self.fail(f"the value {value!r} holds ': '; quote it")
        self.check_plain(value)
        self.col += len(value)
        if value in ("", "~", "null", "Null", "NULL"):
            return None
        return Plain(value)

    def check_plain(self, value: str) -> None:
        if value[:1] in ("&", "*", "!", "|", ">", "%", "@", "`", "?") or value.startswith("- "):
            what = {"&": "an anchor", "*": "an alias", "!": "a tag", "|": "a block scalar",
                    ">": "a block scalar"}.get(value[:1], "a value starting with " + repr(value[:1]))
            raise self.fail(f"{what} ({value[:20]!r}); quote the value")

    def quoted(self) -> str:
        q = self.rest()[0]
        i = self.col + 1
        line = self.text
        out: List[str] = []
        while i < len(line):
            ch = line[i]
            if ch == q:
                if q == "'" and line[i + 1:i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                self.col = i + 1
                return "".join(out)
            if ch == "\\" and q == '"':
                ch, i = self.escape(line, i)
                out.append(ch)
                continue
            out.append(ch)
            i += 1
        raise self.fail("a quoted value that does not end on its line; put it on one line")

    def escape(self, line: str, i: int) -> Tuple[str, int]:
        c = line[i + 1:i + 2]
        if c in _ESCAPES:
            return _ESCAPES[c], i + 2
        if c in _HEX:
            digits = line[i + 2:i + 2 + _HEX[c]]
            if re.fullmatch(r"[0-9a-fA-F]{%d}" % _HEX[c], digits):
                return chr(int(digits, 16)), i + 2 + _HEX[c]
        raise self.fail(f"the escape \\{c} in a double-quoted value")


def _is_item(rest: str) -> bool:
    return rest == "-" or rest.startswith("- ") or rest.startswith("-\t") or rest.startswith("- #")
