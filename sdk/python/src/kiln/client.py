"""The client of kiln's HTTP API (``kiln serve``).

>>> from kiln import Client
>>> c = Client()                          # KILN_SERVER/KILN_TOKEN or the current context
>>> run = c.submit("pipeline.yaml", params={"epochs": "2"})
>>> run = c.wait(run.id)
>>> run.outputs
"""

from __future__ import annotations

import json
import os
import secrets
import time
from datetime import datetime, timedelta
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _config
from ._http import Transport, lines, multipart, sse
from ._http import api_path as _path
from ._resources import Resources
from ._source import Spec, read_specs
from .errors import NO_SERVER_HINT, SERVER_UNREACHABLE, USAGE, KilnError
from .models import Event, GateSent, Run, RunChange, RunDeleted, RunList, RunRequested, RunSuspension, format_time

#: How many times one submission is sent, and the longest wait between
#: two sends, in seconds.
_SUBMIT_TRIES = 5
_SUBMIT_MAX_WAIT = 30

#: A time filter: a datetime, or text the server reads (RFC 3339, or a duration before now such as "2h").
TimeArg = Union[datetime, timedelta, str, None]

#: The rerun modes: from the node on, the node only, or up to the node.
RERUN_MODES = ("from", "only", "until")


def _when(value: TimeArg) -> Optional[str]:
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, timedelta):
        return f"{int(value.total_seconds())}s"
    return value or None


class Client(Resources):
    """A client of one kiln server, with one token and a default project.

    server, token and project are the arguments, else KILN_SERVER,
    KILN_TOKEN and KILN_PROJECT, else the current context of
    KILN_HOME/config.yaml. ``server`` is None when none is configured; a
    call then fails with KLN-5060 "no kiln server is configured". timeout bounds each request that is not
    a stream (seconds; None waits for ever); streams (logs that follow,
    watches, event streams) are bounded only while connecting.
    """

    def __init__(self, server: Optional[str] = None, token: Optional[str] = None,
                 project: Optional[str] = None, timeout: Optional[float] = 30.0) -> None:
        s = _config.resolve(server, token, project)
        self.server: Optional[str] = s.server.rstrip("/") if s.server else None
        self.project: Optional[str] = s.project
        self.timeout = timeout
        self._http = Transport(self.server or "", s.token, timeout)

    def __repr__(self) -> str:
        return f"Client(server={self.server!r}, project={self.project!r})"

    # --- plumbing -------------------------------------------------------------

    def _call(self, method: str, path: str, query: Optional[Mapping[str, Any]] = None,
              body: Optional[bytes] = None, content_type: str = "",
              headers: Optional[Mapping[str, str]] = None) -> Any:
        self._need_server()
        return self._http.json(method, path, query, body, content_type, headers)

    def _stream(self, path: str, query: Optional[Mapping[str, Any]] = None,
                headers: Optional[Mapping[str, str]] = None):
        self._need_server()
        return self._http.stream("GET", path, query, headers)

    def _json_body(self, method: str, path: str, body: Any, query: Optional[Mapping[str, Any]] = None) -> Any:
        return self._call(method, path, query, json.dumps(body).encode(), "application/json")

    def _need_server(self) -> None:
        if not self.server:
            raise KilnError(SERVER_UNREACHABLE, "no kiln server is configured", hint=NO_SERVER_HINT)

    def _project(self, project: Optional[str]) -> Optional[str]:
        return project or self.project

    # --- runs -----------------------------------------------------------------

    def submit(self, spec: Spec, params: Optional[Mapping[str, Any]] = None, project: Optional[str] = None,
               cache: Optional[str] = None, filename: Optional[str] = None, workdir: Optional[str] = None,
               files: Sequence[Spec] = (), idempotency_key: Optional[str] = None) -> Run:
        """Submits a Workflow or TrainJob and returns the new run.

        spec is YAML or JSON text (str or bytes), a path (a pathlib.Path, or
        a one-line str ending in .yaml, .yml or .json or holding no ':'; a
        file that cannot be read is KLN-1020 and nothing is sent), a dict
        (sent as JSON), a list of these, or an object with ``to_yaml()``.
        files are more documents sent beside it (TrainingRuntimes). params
        set the workflow's parameters; cache is "on", "off" or "overwrite";
        workdir (default: this process's directory) is where a server on
        this machine resolves relative names. A spec the server refuses is
        a KilnError with its code, file and field.

        The submission is sent with idempotency_key (default: 32 random hex
        digits) as its Idempotency-Key, and sent again with the same key
        when the server is busy or could not check it in time (503) or its
        answer did not come (KLN-5060): up to 5 times. The server creates
        one run for all sends with one key within 24h and answers each with
        it; the same key with another submission is KLN-4061.
        """
        docs = read_specs(spec, filename) + [d for f in files for d in read_specs(f)]
        fields: Dict[str, List[str]] = {
            "param": [f"{k}={v}" for k, v in (params or {}).items()],
            "project": [p for p in [self._project(project)] if p],
            "workdir": [workdir or os.getcwd()],
            "cache": [cache] if cache else [],
        }
        body, ctype = multipart(docs, fields)
        key = idempotency_key or secrets.token_hex(16)
        return Run.from_json(self._create(_path("runs"), body, ctype, key))

    def _create(self, path: str, body: bytes, ctype: str, key: str) -> Any:
        """Posts a request that creates a run (a submission, a rerun), and
        posts it again with its key while the server cannot take it now or
        its answer is lost."""
        for attempt in range(1, _SUBMIT_TRIES + 1):
            try:
                return self._call("POST", path, body=body, content_type=ctype,
                                  headers={"Idempotency-Key": key})
            except KilnError as e:
                if attempt == _SUBMIT_TRIES or not (e.status == 503 or e.code == SERVER_UNREACHABLE):
                    raise
                time.sleep(min(attempt, _SUBMIT_MAX_WAIT))
        raise AssertionError("unreachable")

    def get(self, run_id: str) -> Run:
        """The run with its nodes and attempts; KLN-4001 (status 404) for an unknown one."""
        return Run.from_json(self._call("GET", _path("runs", run_id)))

    def get_trainjob(self, run_id: str) -> Dict[str, Any]:
        """A TrainJob run as a Kubeflow Trainer v2 TrainJob object (JSON); KLN-4032 for another kind."""
        return self._call("GET", _path("runs", run_id, "trainjob"))

    def list_runs(self, phase: Union[str, Sequence[str], None] = None, name: Optional[str] = None,
                  label: Optional[str] = None, project: Optional[str] = None, since: TimeArg = None,
                  until: TimeArg = None, q: Optional[str] = None, order: Optional[str] = None,
                  limit: Optional[int] = None, cursor: Optional[str] = None) -> RunList:
        """One page of runs, newest first (order="asc": oldest first).

        phase is one phase or several; label is ``key=value``; since and
        until are datetimes or text such as "2h" (before now); q searches
        IDs and workflow names; limit is 1 to 500 (the server's default is
        50). The page's ``next`` is the cursor of the following page.
        """
        query = self._run_filters(phase, name, label, project, since, until, q, order)
        query.update(limit=limit, cursor=cursor)
        return RunList.from_json(self._call("GET", _path("runs"), query))

    def iter_runs(self, phase: Union[str, Sequence[str], None] = None, name: Optional[str] = None,
                  label: Optional[str] = None, project: Optional[str] = None, since: TimeArg = None,
                  until: TimeArg = None, q: Optional[str] = None, order: Optional[str] = None,
                  page_size: int = 100) -> Iterator[Run]:
        """Every run the filters select, page after page (see list_runs)."""
        cursor: Optional[str] = None
        while True:
            page = self.list_runs(phase, name, label, project, since, until, q, order, page_size, cursor)
            yield from page.items
            if not page.next:
                return
            cursor = page.next

    def watch_runs(self, phase: Union[str, Sequence[str], None] = None, name: Optional[str] = None,
                   label: Optional[str] = None, project: Optional[str] = None, since: TimeArg = None,
                   until: TimeArg = None, q: Optional[str] = None, order: Optional[str] = None,
                   limit: Optional[int] = None, after: Optional[str] = None) -> Iterator[RunChange]:
        """Changes to the runs the filters select, as they happen (a stream
        that does not end by itself): first each run as it is, then each
        run again when it changes, and "deleted" when one goes. Give a
        change's ``id`` as after to resume a watch without the runs that
        did not change since."""
        query = self._run_filters(phase, name, label, project, since, until, q, order)
        query.update(limit=limit, watch=True)
        headers = {"Last-Event-ID": after} if after else None
        return self._changes(self._stream(_path("runs"), query, headers))

    @staticmethod
    def _changes(resp: Any) -> Iterator[RunChange]:
        for msg in sse(resp):
            data = json.loads(msg["data"])
            kind = msg.get("event", "run")
            if kind == "deleted":
                yield RunChange(kind, msg.get("id", ""), None, str(data.get("id", "")))
            else:
                run = Run.from_json(data)
                yield RunChange(kind, msg.get("id", ""), run, run.id)

    def _run_filters(self, phase: Union[str, Sequence[str], None], name: Optional[str], label: Optional[str],
                     project: Optional[str], since: TimeArg, until: TimeArg, q: Optional[str],
                     order: Optional[str]) -> Dict[str, Any]:
        phases = [phase] if isinstance(phase, str) else list(phase or [])
        return {"phase": ",".join(phases), "name": name, "label": label, "project": self._project(project),
                "since": _when(since), "until": _when(until), "q": q, "order": order}

    def wait(self, run_id: str, timeout: Optional[float] = None, poll: float = 0.5) -> Run:
        """Polls the run until its phase is final and returns it as it
        ended; TimeoutError if timeout seconds pass first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            run = self.get(run_id)
            if run.done:
                return run
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"run {run_id} is still {run.phase} after {timeout:g}s")
            pause = poll if deadline is None else max(0.0, min(poll, deadline - time.monotonic()))
            time.sleep(pause)

    def events(self, run_id: str, after: int = 0) -> List[Event]:
        """The run's events so far, after sequence number after."""
        data = self._call("GET", _path("runs", run_id, "events"), {"after": after or None})
        return [Event.from_json(x) for x in data.get("items") or []]

    def stream_events(self, run_id: str, after: int = 0) -> Iterator[Event]:
        """The run's events after sequence number after, as they happen,
        until the run ends (the request is made at once: an error is raised
        here, not on the first event). Give the last event's ``seq`` as after to
        resume a stream that broke (sent as Last-Event-ID)."""
        headers = {"Accept": "text/event-stream"}
        if after:
            headers["Last-Event-ID"] = str(after)
        resp = self._stream(_path("runs", run_id, "events"), None, headers)
        return (Event.from_json(json.loads(msg["data"])) for msg in sse(resp))

    def logs(self, run_id: str, task: str, follow: bool = False, attempt: int = 0, tail: int = 0,
             since: TimeArg = None, timestamps: bool = False) -> Iterator[str]:
        """What a task's processes wrote, line by line (without newlines),
        as the lines arrive. follow keeps reading until the task ends;
        attempt picks a try (default the last); tail keeps the last lines;
        since drops older lines; timestamps prefixes each with its time."""
        query = {"follow": follow, "attempt": attempt or None, "tail": tail or None,
                 "since": _when(since), "timestamps": timestamps}
        return lines(self._stream(_path("runs", run_id, "tasks", task, "logs"), query))

    def cancel(self, run_id: str) -> RunRequested:
        """Asks the server to cancel the run; the run ends Cancelled soon after
        (``wait`` for it). Returns the acknowledgement: run and requested ("cancel")."""
        return RunRequested.from_json(self._call("POST", _path("runs", run_id, "cancel")))

    def stop(self, run_id: str) -> RunRequested:
        """Asks the server to stop the run as ``argo stop`` does: its running
        tasks are stopped, nothing else starts but its exit handlers, and it
        ends Failed (KLN-3020); ``cancel`` skips the exit handlers. Returns
        the acknowledgement: run and requested ("stop")."""
        return RunRequested.from_json(self._call("POST", _path("runs", run_id, "stop")))

    def retry(self, run_id: str, params: Optional[Mapping[str, Any]] = None,
              restart: Optional[Sequence[str]] = None) -> RunRequested:
        """Runs a Failed or Cancelled run again from where it stopped (the same
        run ID): what did not succeed, and the exit handlers. ``params`` change
        params for what runs again; ``restart`` names top-level tasks to run
        again although they succeeded, with everything downstream of them.
        Returns the acknowledgement: run and requested ("retry")."""
        body: Dict[str, Any] = {}
        if params:
            body["params"] = {k: str(v) for k, v in params.items()}
        if restart:
            body["restartSuccessful"], body["nodes"] = True, list(restart)
        if not body:
            return RunRequested.from_json(self._call("POST", _path("runs", run_id, "retry")))
        return RunRequested.from_json(self._json_body("POST", _path("runs", run_id, "retry"), body))

    def rerun(self, run_id: str, node: str, mode: str = "from", params: Optional[Mapping[str, Any]] = None,
              cache: Optional[str] = None, idempotency_key: Optional[str] = None) -> Run:
        """A new run of the run's workflow that reuses its results: from
        node on (mode "from"), node alone ("only"), or up to node ("until").

        Sent with idempotency_key (default: 32 random hex digits) and sent
        again with it as ``submit`` is: one rerun results."""
        if mode not in RERUN_MODES:
            raise KilnError(USAGE, f"rerun mode {mode!r} is not one of {', '.join(RERUN_MODES)}", field="mode")
        body: Dict[str, Any] = {"mode": mode, "node": node}
        if params:
            body["params"] = {k: str(v) for k, v in params.items()}
        if cache:
            body["cache"] = cache
        key = idempotency_key or secrets.token_hex(16)
        return Run.from_json(self._create(_path("runs", run_id, "rerun"), json.dumps(body).encode(),
                                          "application/json", key))

    def suspend(self, run_id: str) -> RunSuspension:
        """Suspends the run's training jobs; returns run and suspend (True)."""
        return RunSuspension.from_json(self._call("POST", _path("runs", run_id, "suspend")))

    def unsuspend(self, run_id: str) -> RunSuspension:
        """Resumes the run's suspended training jobs; returns run and suspend (False)."""
        return RunSuspension.from_json(self._call("POST", _path("runs", run_id, "unsuspend")))

    def delete(self, run_id: str, force: bool = False) -> RunDeleted:
        """Deletes an ended run: records, logs and outputs. force cancels an
        unfinished run first. KLN-4010 for a run that has not ended. Returns
        run and deleted (True)."""
        return RunDeleted.from_json(self._call("DELETE", _path("runs", run_id), {"force": "true" if force else "false"}))

    def approve(self, run_id: str, node: str, reason: str = "") -> GateSent:
        """Approves the approval gate node; KLN-4014 when it is not waiting.
        Returns run, task, sent ("approve") and by (the token's name)."""
        return GateSent.from_json(self._json_body("POST", _path("runs", run_id, "nodes", node, "approve"),
                                  {"approve": True, "reason": reason}))

    def reject(self, run_id: str, node: str, reason: str = "") -> GateSent:
        """Rejects the approval gate node (the gate fails); returns a GateSent (sent "reject")."""
        return GateSent.from_json(self._json_body("POST", _path("runs", run_id, "nodes", node, "approve"),
                                  {"approve": False, "reason": reason}))

    def signal(self, run_id: str, node: str, value: str, reason: str = "") -> GateSent:
        """Sends value to the signal gate node, which outputs it; returns a GateSent (sent "signal")."""
        return GateSent.from_json(self._json_body("POST", _path("runs", run_id, "nodes", node, "signal"),
                                  {"value": str(value), "reason": reason}))

    def _files(self, spec: Union[Spec, Sequence[Spec]]) -> List[Tuple[str, bytes]]:
        return read_specs(spec)
