"""Following a run as it goes, for ``Workflow.run()`` and ``python -m
kiln run``: its ID at once, the UI's page of it when a server runs it, each
node's phase as it changes and, when asked, the tasks' logs as they are
written. A server's run is followed through its event stream and log
endpoints (as ``kiln submit --wait`` does); a local run through the event
lines ``kiln run`` prints and ``kiln logs -f``."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import datetime
from typing import Any, Callable, Iterable, List, Optional, Set, TextIO

from ..models import Event, NodeStatus

#: The node phases whose start is when a task's logs begin.
_STARTED = ("Running",)

#: The kinds of node that run no process of their own, so have no log: a
#: map's, subworkflow's or exit handler's children run (and log) as nodes
#: of their own (``sq.0``, ``onExit.bye``), and a gate only waits.
GROUP_KINDS = ("map", "subworkflow", "exit", "gate")


def has_own_log(node: Optional[NodeStatus]) -> bool:
    """Whether node (None: not known yet) runs a process, and so writes a
    log; a group (GROUP_KINDS, or children and no attempt of its own, as
    the server judges) does not: its children's logs are followed instead."""
    if node is None:
        return True
    if node.kind in GROUP_KINDS:
        return False
    return node.children is None or bool(node.attempts)


class Follower:
    """Prints what happens to one run, from several threads at once (events
    and each task's logs), a whole line at a time."""

    def __init__(self, out: Optional[TextIO] = None, logs: bool = False) -> None:
        self.out = out
        self.logs = logs
        self.run_id = ""
        self._lock = threading.Lock()
        self._logged: Set[str] = set()
        self._threads: List[threading.Thread] = []

    def line(self, text: str) -> None:
        """Prints one line."""
        out = self.out or sys.stdout
        with self._lock:
            out.write(text + "\n")
            out.flush()

    def started(self, run_id: str, what: str = "", url: str = "") -> None:
        """Says the run exists: its ID, what it is, and its page in the web UI."""
        self.run_id = run_id
        self.line(f"Run {run_id}" + (f" ({what})" if what else ""))
        if url:
            self.line(f"  {url}")

    def event(self, ev: Event, tail: Callable[[str], Iterable[str]]) -> None:
        """Prints ev as one line; with logs, starts following a task's log
        (tail(task) yields its lines until it ends) when the task starts."""
        when = ev.time.astimezone().strftime("%H:%M:%S") if isinstance(ev.time, datetime) else "--:--:--"
        parts = [when, ev.node or "run", ev.phase]
        parts += [p for p in (ev.code, ev.message) if p]
        self.line(" ".join(parts))
        if self.logs and ev.node and ev.phase in _STARTED and ev.node not in self._logged:
            self._logged.add(ev.node)
            t = threading.Thread(target=self._copy, args=(ev.node, tail), daemon=True)
            self._threads.append(t)
            t.start()

    def _copy(self, task: str, tail: Callable[[str], Iterable[str]]) -> None:
        """Prints task's log lines as they come, each after the task's name."""
        try:
            for text in tail(task):
                self.line(f"{task} | {text}")
        except Exception as e:  # noqa: BLE001 - a log that cannot be read must not stop the run
            self.line(f"{task} | (its log could not be read: {e})")

    def finish(self, wait: float = 30.0) -> None:
        """Waits for the log threads to print what their tasks wrote (each
        ends when its task ends); wait bounds how long, in seconds."""
        for t in self._threads:
            t.join(wait)


def ui_url(server: str, run_id: str) -> str:
    """The web UI's page of a run on server."""
    return f"{server.rstrip('/')}/#/runs/{run_id}"


def follow_server(client: Any, run_id: str, f: Follower) -> threading.Thread:
    """Starts printing the run's events from the server's event stream; the
    thread ends when the run does."""
    def tail(task: str) -> Iterable[str]:
        if not has_own_log(_node(client, run_id, task)):
            return []  # a group: its children's Running events start their own logs
        return client.logs(run_id, task, follow=True)

    def loop() -> None:
        try:
            for ev in client.stream_events(run_id):
                f.event(ev, tail)
        except Exception as e:  # noqa: BLE001 - progress is shown on a best-effort basis; the wait decides
            f.line(f"(the run's events could not be followed: {e})")

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return t


def _node(client: Any, run_id: str, task: str) -> Optional[NodeStatus]:
    """The run's node called task as the server has it now (None when it has none yet)."""
    nodes: List[NodeStatus] = client.get(run_id).status.nodes
    for node in nodes:
        if node.name == task:
            return node
    return None


def parse_event_line(line: str) -> Optional[Event]:
    """One event line of ``kiln run`` (``15:04:05.000 RUN NODE PHASE [CODE] [MESSAGE]``) as an Event."""
    parts = line.split(" ", 4)
    if len(parts) < 4 or len(parts[0]) != 12 or parts[0][2] != ":" or parts[0][8] != ".":
        return None
    rest = parts[4] if len(parts) > 4 else ""
    code = ""
    if rest.startswith("KLN-") and len(rest) >= 8:
        code, _, rest = rest.partition(" ")
    try:
        clock = datetime.strptime(parts[0], "%H:%M:%S.%f").time()
    except ValueError:
        return None
    now = datetime.now()
    return Event(run=parts[1], node="" if parts[2] == "-" else parts[2], phase=parts[3], code=code, message=rest,
                 time=datetime.combine(now.date(), clock).astimezone())


def local_tail(base: List[str], run_id: str) -> Callable[[str], Iterable[str]]:
    """tail for a local run: ``kiln logs RUN TASK -f`` on the run's home."""
    def tail(task: str) -> Iterable[str]:
        p = subprocess.Popen(base + ["logs", run_id, task, "-f"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        assert p.stdout is not None
        with p.stdout:
            for text in p.stdout:
                yield text.rstrip("\n")
        p.wait()
    return tail
