"""The federation channel, for the programs of a federated run's tasks.

A task of a federated workflow runs at several parties (its *shares*).
Its processes exchange messages with the shares of the other parties
only through their own kiln server, which forwards each message to the
other party's server over the link the servers already have: no process
ever connects to another party. kiln tells a share's processes where
their channel is (``KILN_FEDERATION_CHANNEL``), its credential
(``KILN_FEDERATION_TOKEN``) and who its peers are
(``KILN_FEDERATION_PEERS``)::

    from kiln import federation

    federation.send("carol", "weights-1", data)        # bytes to party carol
    avg = federation.recv("carol", "average-1")        # bytes from carol
    federation.broadcast("average-1", avg)             # to every peer
    parts = federation.gather("weights-1")             # {party: bytes}

A message is bytes with a name (1 to 128 letters, digits, ``.``, ``_``
or ``-``); one message per name, sender and receiver in an attempt, so
give each round its own (``weights-3``). Messages of any size up to
1 GiB are sent in pieces of 512 KiB: a transfer that is cut off (a
server restarted, a link down) resumes at its piece, and the receiver
checks the SHA-256 of the whole. Every call is bounded: it retries
while the servers cannot be reached, and raises :class:`ChannelError`
(a :class:`kiln.KilnError`) with a ``KLN-`` code when it gives up or the
channel refuses.

Only the standard library is used, so a plain script imports it with the
SDK on ``PYTHONPATH``. To send tensors, serialize them yourself, for
example ``tensor.numpy().tobytes()``; never unpickle what another party
sent.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Dict, Iterable, List, Mapping, Optional

from .errors import KilnError

__all__ = [
    "Channel",
    "ChannelError",
    "Peer",
    "broadcast",
    "channel",
    "gather",
    "peers",
    "recv",
    "recv_file",
    "send",
    "send_file",
]

#: The size of one piece of a message, as the server takes it.
PIECE = 512 << 10
#: The largest message.
MAX_MESSAGE = 1 << 30
#: How long one call keeps trying by default, in seconds
#: (``FEDERATION_TIMEOUT`` overrides it).
DEFAULT_TIMEOUT = 600.0
#: How long one receive waits at the server before asking again.
_WAIT = 20

UNREACHABLE = "KLN-7004"
CHANNEL_TIMEOUT = "KLN-7025"
CHANNEL_MESSAGE = "KLN-7021"
NO_CHANNEL = "KLN-7002"


class ChannelError(KilnError):
    """A message the channel refused, or one that did not get through in time."""


class Peer:
    """Another share of the same attempt: its party, role and task."""

    __slots__ = ("party", "role", "task")

    def __init__(self, party: str, role: str, task: str = "") -> None:
        self.party, self.role, self.task = party, role, task

    def __repr__(self) -> str:
        return f"Peer(party={self.party!r}, role={self.role!r})"


class Channel:
    """This share's end of the federation channel.

    The defaults come from the environment kiln gives a share's
    processes; ``timeout`` bounds each call, retries included.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        peers: Optional[Iterable[Peer]] = None,
        timeout: Optional[float] = None,
    ) -> None:
        self.url = (url or os.environ.get("KILN_FEDERATION_CHANNEL") or "").rstrip("/")
        self.token = token or os.environ.get("KILN_FEDERATION_TOKEN") or ""
        if not self.url or not self.token:
            raise ChannelError(
                NO_CHANNEL,
                "this process has no federation channel: KILN_FEDERATION_CHANNEL and KILN_FEDERATION_TOKEN are not set",
                hint="run it as a task of a federated workflow, at a kiln server with a party identity (kiln serve --party)",
            )
        if peers is None:
            raw = json.loads(os.environ.get("KILN_FEDERATION_PEERS") or "[]")
            peers = [Peer(p["party"], p["role"], p.get("task", "")) for p in raw]
        self.peers: List[Peer] = list(peers)
        self.timeout = float(timeout if timeout is not None else os.environ.get("FEDERATION_TIMEOUT") or DEFAULT_TIMEOUT)
        # An https server's own certificate, which kiln names when the
        # server has one (kiln serve --tls-cert); else the system's roots.
        ca = os.environ.get("KILN_FEDERATION_CA")
        self._ssl = ssl.create_default_context(cafile=ca) if ca else None
        #: Bytes this process sent and received, for reports.
        self.bytes_sent = 0
        self.bytes_received = 0

    # -- addressing ----------------------------------------------------

    def peer(self, party: str, role: Optional[str] = None) -> Peer:
        """The peer of party (and role, when the party fills several)."""
        found = [p for p in self.peers if p.party == party and (role is None or p.role == role)]
        if len(found) == 1:
            return found[0]
        listed = ", ".join(f"{p.party}/{p.role}" for p in self.peers) or "none"
        if not found:
            raise ChannelError("KLN-7020", f"no peer {party}{'/' + role if role else ''} in this attempt; its peers are {listed}")
        raise ChannelError("KLN-7020", f"party {party} is several peers ({listed}): name the role")

    def _targets(self, parties: Optional[Iterable[str]]) -> List[Peer]:
        if parties is None:
            return list(self.peers)
        return [self.peer(p) for p in parties]

    # -- sending and receiving -----------------------------------------

    def send(self, to: str, name: str, data: bytes, role: Optional[str] = None) -> None:
        """Send data to party to's share as message name."""
        peer = self.peer(to, role)
        data = bytes(data)
        if len(data) > MAX_MESSAGE:
            raise ChannelError(CHANNEL_MESSAGE, f"message {name} is {len(data)} bytes, over the largest, {MAX_MESSAGE}")
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        pieces = max((len(data) + PIECE - 1) // PIECE, 1)
        deadline = time.monotonic() + self.timeout
        for i in range(pieces):
            chunk = data[i * PIECE:(i + 1) * PIECE]
            query = urllib.parse.urlencode({"piece": i, "pieces": pieces, "size": len(data), "digest": digest})
            self._call("PUT", f"out/{_q(peer.party)}/{_q(peer.role)}/{_q(name)}?{query}", chunk, deadline)
        self.bytes_sent += len(data)

    def recv(self, frm: str, name: str, role: Optional[str] = None) -> bytes:
        """Receive message name from party frm's share, waiting for it."""
        peer = self.peer(frm, role)
        path = f"in/{_q(peer.party)}/{_q(peer.role)}/{_q(name)}"
        deadline = time.monotonic() + self.timeout
        pieces: List[bytes] = []
        size, digest, count = 0, "", 1
        while len(pieces) < count:
            status, headers, body = self._call("GET", f"{path}?piece={len(pieces)}&wait={_WAIT}", None, deadline)
            if status == 204:
                if time.monotonic() > deadline:
                    raise ChannelError(
                        CHANNEL_TIMEOUT,
                        f"message {name} from {peer.party}/{peer.role} did not arrive within {self.timeout:.0f}s",
                        hint="the sender may have failed; its party's run shows why",
                    )
                continue
            count = int(headers.get("Kiln-Pieces", "1"))
            size, digest = int(headers.get("Kiln-Size", "0")), headers.get("Kiln-Digest", "")
            pieces.append(body)
        data = b"".join(pieces)
        got = "sha256:" + hashlib.sha256(data).hexdigest()
        if len(data) != size or got != digest:
            raise ChannelError(CHANNEL_MESSAGE, f"message {name} from {peer.party}/{peer.role} arrived as {len(data)} bytes ({got}); "
                                                f"it was sent as {size} bytes ({digest})")
        self._call("DELETE", path, None, deadline)
        self.bytes_received += len(data)
        return data

    def broadcast(self, name: str, data: bytes, parties: Optional[Iterable[str]] = None) -> None:
        """Send data as message name to every peer (or to parties)."""
        for p in self._targets(parties):
            self.send(p.party, name, data, role=p.role)

    def gather(self, name: str, parties: Optional[Iterable[str]] = None) -> Dict[str, bytes]:
        """Receive message name from every peer (or from parties), by party."""
        return {p.party: self.recv(p.party, name, role=p.role) for p in self._targets(parties)}

    def send_file(self, to: str, name: str, path: str, role: Optional[str] = None) -> None:
        """Send the file at path to party to as message name."""
        with open(path, "rb") as f:
            self.send(to, name, f.read(), role=role)

    def recv_file(self, frm: str, name: str, path: str, role: Optional[str] = None) -> None:
        """Receive message name from party frm into the file at path."""
        data = self.recv(frm, name, role=role)
        tmp = path + ".part"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)

    # -- HTTP ------------------------------------------------------------

    def _call(self, method: str, path: str, body: Optional[bytes], deadline: float):
        """One call, retried with backoff while the servers are not reached."""
        delay = 0.2
        while True:
            req = urllib.request.Request(f"{self.url}/{path}", data=body, method=method)
            req.add_header("Authorization", "Bearer " + self.token)
            if body is not None:
                req.add_header("Content-Type", "application/octet-stream")
            try:
                with urllib.request.urlopen(req, timeout=_WAIT + 30, context=self._ssl) as resp:
                    return resp.status, resp.headers, resp.read()
            except urllib.error.HTTPError as e:
                err = _coded(e)
                if not _retryable(e.code, err.code):
                    raise err from None
                why = str(err)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                why = f"kiln server at {self.url} not reached: {e}"
            if time.monotonic() + delay > deadline:
                raise ChannelError(UNREACHABLE, f"gave up after {self.timeout:.0f}s: {why}",
                                   hint="FEDERATION_TIMEOUT sets how long a call keeps trying")
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


def _retryable(status: int, code: str) -> bool:
    # A party not reached, a server busy or restarting, a part not created
    # yet at the other end: all pass.
    return status in (429, 502, 503, 504) or code in (UNREACHABLE, "KLN-4001") or status >= 500


def _coded(e: "urllib.error.HTTPError") -> ChannelError:
    try:
        first = json.loads(e.read() or b"{}").get("errors", [{}])[0]
    except (ValueError, AttributeError, IndexError):
        first = {}
    return ChannelError(first.get("code") or f"HTTP {e.code}", first.get("message") or e.reason, hint=first.get("hint") or "")


def _q(s: str) -> str:
    return urllib.parse.quote(s, safe="")


_default: Optional[Channel] = None


def channel() -> Channel:
    """This process's channel, made from its environment on first use."""
    global _default
    if _default is None:
        _default = Channel()
    return _default


def peers() -> List[Peer]:
    """The other shares of this attempt."""
    return channel().peers


def send(to: str, name: str, data: bytes, role: Optional[str] = None) -> None:
    """Send data to party to as message name (see :meth:`Channel.send`)."""
    channel().send(to, name, data, role=role)


def recv(frm: str, name: str, role: Optional[str] = None) -> bytes:
    """Receive message name from party frm (see :meth:`Channel.recv`)."""
    return channel().recv(frm, name, role=role)


def broadcast(name: str, data: bytes, parties: Optional[Iterable[str]] = None) -> None:
    """Send data as message name to every peer (see :meth:`Channel.broadcast`)."""
    channel().broadcast(name, data, parties)


def gather(name: str, parties: Optional[Iterable[str]] = None) -> Mapping[str, bytes]:
    """Receive message name from every peer (see :meth:`Channel.gather`)."""
    return channel().gather(name, parties)


def send_file(to: str, name: str, path: str, role: Optional[str] = None) -> None:
    """Send a file (see :meth:`Channel.send_file`)."""
    channel().send_file(to, name, path, role=role)


def recv_file(frm: str, name: str, path: str, role: Optional[str] = None) -> None:
    """Receive a file (see :meth:`Channel.recv_file`)."""
    channel().recv_file(frm, name, path, role=role)
