"""HTTP for the client: requests with a timeout, streams without one, and
the server's coded errors turned into KilnError."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.client import HTTPResponse
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import INTERNAL, SERVER_UNREACHABLE, UNREACHABLE_HINT, KilnError

Query = Mapping[str, Union[str, int, bool, Sequence[str], None]]

#: How much of a non-JSON error body an error quotes.
_QUOTE = 200


class Transport:
    """One server, one token. The token goes in the Authorization header
    alone and appears in no repr, str or error."""

    def __init__(self, base: str, token: Optional[str], timeout: Optional[float]) -> None:
        self.base = base.rstrip("/")
        self._token = token
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"Transport({self.base!r})"

    def json(self, method: str, path: str, query: Optional[Query] = None, body: Optional[bytes] = None,
             content_type: str = "", headers: Optional[Mapping[str, str]] = None) -> Any:
        """The response's JSON (None for an empty body) of a request that
        must finish within the timeout."""
        with self.open(method, path, query, body, content_type, headers, timeout=self.timeout) as resp:
            try:
                data = resp.read()
            except OSError as e:  # a timeout or a reset while the answer came
                raise self.unreachable(e) from None
        if not data.strip():
            return None
        try:
            return json.loads(data)
        except ValueError:
            raise error_of(resp.status, resp.headers.get("Content-Type", ""), data, method, path) from None

    def stream(self, method: str, path: str, query: Optional[Query] = None,
               headers: Optional[Mapping[str, str]] = None) -> HTTPResponse:
        """The open response of a stream: the timeout bounds connecting and
        the answer's headers; reading then waits as long as the server is
        silent (a task may print nothing for an hour)."""
        resp = self.open(method, path, query, None, "", headers, timeout=self.timeout)
        sock = getattr(getattr(getattr(resp, "fp", None), "raw", None), "_sock", None)
        if sock is not None:
            sock.settimeout(None)
        return resp

    def open(self, method: str, path: str, query: Optional[Query] = None, body: Optional[bytes] = None,
             content_type: str = "", headers: Optional[Mapping[str, str]] = None,
             timeout: Optional[float] = None) -> HTTPResponse:
        """The open response of a request (the caller closes it); the
        timeout bounds connecting and each read, not the whole stream."""
        req = urllib.request.Request(self.url(path, query), data=body, method=method)
        if content_type:
            req.add_header("Content-Type", content_type)
        if self._token:
            req.add_header("Authorization", "Bearer " + self._token)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            return urllib.request.urlopen(req, timeout=timeout)  # noqa: S310 - the configured server
        except urllib.error.HTTPError as e:
            with e:
                raise error_of(e.code, e.headers.get("Content-Type", ""), e.read(), method, path) from None
        except (urllib.error.URLError, ConnectionError, socket.timeout, OSError) as e:
            raise self.unreachable(e) from None

    def url(self, path: str, query: Optional[Query] = None) -> str:
        """The URL of path with query's values (None and "" left out, lists repeated, bools as true/false)."""
        pairs: List[Tuple[str, str]] = []
        for k, v in (query or {}).items():
            if v is None or v == "" or v is False:
                continue
            values: Iterable[Any] = v if isinstance(v, (list, tuple)) else [v]
            for x in values:
                pairs.append((k, "true" if x is True else str(x)))
        return self.base + path + ("?" + urllib.parse.urlencode(pairs) if pairs else "")

    def unreachable(self, err: BaseException) -> KilnError:
        """The KLN-5060 error of a request that never got an answer."""
        why = getattr(err, "reason", None) or err
        return KilnError(SERVER_UNREACHABLE, f"the kiln server at {self.base} cannot be reached: {why}",
                         hint=UNREACHABLE_HINT)


def api_path(*parts: str) -> str:
    """/api/v1/ and parts, each escaped as one path segment."""
    return "/api/v1/" + "/".join(urllib.parse.quote(p, safe="") for p in parts)


def error_of(status: int, content_type: str, body: bytes, method: str, path: str) -> KilnError:
    """The KilnError of an error response (or of a success whose body is
    not JSON): its coded errors, or for a body that is not kiln's JSON,
    one error quoting it."""
    try:
        data = json.loads(body)
        items = data.get("errors") if isinstance(data, dict) else None
        if items and all(isinstance(x, dict) for x in items):
            return KilnError.from_list(items, status)
    except ValueError:
        pass
    text = body.decode("utf-8", "replace").strip()
    quoted = (text[:_QUOTE] + "...") if len(text) > _QUOTE else text
    what = f" ({content_type})" if content_type else ""
    return KilnError(INTERNAL, f"{method} {path}: HTTP {status} with a body that is not kiln's JSON{what}: "
                     f"{quoted or 'empty'}", status=status,
                     hint="check that the URL is a kiln server's (kiln serve), not a proxy's or another service's")


def multipart(files: Sequence[Tuple[str, bytes]], fields: Mapping[str, Sequence[str]]) -> Tuple[bytes, str]:
    """A multipart/form-data body: one "file" part per (name, data), then
    fields; and its content type."""
    boundary = "kiln-" + uuid.uuid4().hex
    out: List[bytes] = []
    for name, data in files:
        fname = name.replace("\\", "\\\\").replace('"', '\\"')
        out.append(_part(boundary, f'form-data; name="file"; filename="{fname}"', data,
                         "Content-Type: application/octet-stream\r\n"))
    for key, values in fields.items():
        for v in values:
            out.append(_part(boundary, f'form-data; name="{key}"', v.encode("utf-8"), ""))
    out.append(f"--{boundary}--\r\n".encode())
    return b"".join(out), f"multipart/form-data; boundary={boundary}"


def _part(boundary: str, disposition: str, data: bytes, more: str) -> bytes:
    head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\n{more}\r\n"
    return head.encode("utf-8") + data + b"\r\n"


def lines(resp: HTTPResponse) -> Iterator[str]:
    """The lines of a streamed body as they arrive, without their newline."""
    with resp:
        while True:
            line = resp.readline()
            if not line:
                return
            yield line.decode("utf-8", "replace").rstrip("\r\n")


def sse(resp: HTTPResponse) -> Iterator[Dict[str, str]]:
    """The messages of a text/event-stream: dicts of id, event and data
    (data lines joined by newlines); comments (pings) are skipped."""
    msg: Dict[str, str] = {}
    data: List[str] = []
    for line in lines(resp):
        if not line:
            if data:
                msg["data"] = "\n".join(data)
                yield msg
            msg, data = {}, []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "data":
            data.append(value)
        elif key in ("id", "event"):
            msg[key] = value
