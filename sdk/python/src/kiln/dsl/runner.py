"""Running a workflow or TrainJob with one call: on the configured kiln
server through the Client, else locally with the kiln binary."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from typing import Any, Dict, List, Mapping, Optional, TextIO, Tuple

from ..client import Client
from ..errors import KilnError
from ..models import Run
from .follow import Follower, follow_server, local_tail, parse_event_line, ui_url

_ERROR_LINE = re.compile(r"^error: (KLN-\d{4}) (.*)$")
_RUN_LINE = re.compile(r"^Run (\S+) (Succeeded|Failed|Cancelled)\b", re.M)
_FINAL = ("Succeeded", "Failed", "Cancelled")


_NO_BINARY_HINT = "set KILN_BIN or put kiln on PATH, or configure a server (KILN_SERVER)"


def kiln_binary(kiln_bin: Optional[str] = None) -> str:
    """The kiln binary: the argument, else KILN_BIN, else ``kiln`` on PATH;
    KLN-4002 when there is none, or the one named is no executable file."""
    named, where = (kiln_bin, "kiln_bin") if kiln_bin else (os.environ.get("KILN_BIN"), "KILN_BIN")
    if not named:
        path = shutil.which("kiln")
        if not path:
            raise KilnError("KLN-4002", "no kiln binary to run the workflow locally", hint=_NO_BINARY_HINT)
        return path
    path = shutil.which(named)  # a path, or a name looked up on PATH
    if not path:
        raise KilnError("KLN-4002", f"{where}={named} names no kiln binary to run the workflow locally "
                        "(no executable file is there)",
                        hint=f"set {where} to the kiln binary's path, or leave it out to use kiln on PATH, "
                             "or configure a server (KILN_SERVER)")
    return os.path.abspath(path)  # tasks' workdir is kiln's, so a relative path would miss


def _workdir(workdir: Optional[str]) -> str:
    """The absolute directory tasks start in (default the current one); KLN-4002 when it is none."""
    cwd = os.path.abspath(workdir or os.getcwd())
    if not os.path.isdir(cwd):
        raise KilnError("KLN-4002", f"workdir {workdir}: no such directory",
                        hint="give the directory the tasks start in (their files' paths are relative to it)")
    return cwd


def _error(line: str) -> Optional[KilnError]:
    """One ``error: KLN-xxxx FILE: Kind/name: field: message (hint: ...)`` line as a KilnError."""
    m = _ERROR_LINE.match(line.strip())
    if not m:
        return None
    code, rest = m.groups()
    hint = ""
    if rest.endswith(")") and " (hint: " in rest:
        rest, hint = rest[:-1].split(" (hint: ", 1)
    parts = rest.split(": ")
    file = obj = field = ""
    line = column = 0
    place = re.match(r"^(.+?):(\d+)(?::(\d+))?$", parts[0]) if parts else None
    if place and (place.group(1).startswith(("/", "-", ".")) or place.group(1).endswith((".yaml", ".yml", ".json"))):
        parts[0], line, column = place.group(1), int(place.group(2)), int(place.group(3) or 0)  # FILE:LINE:COLUMN
    if parts and (parts[0].startswith(("/", "-", ".")) or parts[0].endswith((".yaml", ".yml", ".json"))):
        file = parts.pop(0)
    if parts and re.match(r"^[A-Z][A-Za-z]+/\S+$", parts[0]):
        obj = parts.pop(0)
    if len(parts) > 1 and re.match(r"^(spec|metadata|kind|apiVersion)[\w.\[\]-]*$", parts[0]):
        field = parts.pop(0)
    return KilnError(code, ": ".join(parts), field=field, file=file, object=obj, hint=hint, line=line, column=column)


def errors_from(stderr: str) -> Optional[KilnError]:
    """Every coded error in the CLI's output, as one KilnError (None when there is none)."""
    errs = [e for e in (_error(line) for line in stderr.splitlines()) if e is not None]
    if not errs:
        return None
    first = errs[0]
    first.errors = errs
    first.args = ("\n".join(str(e.args[0]) if e.args else "" for e in errs),)
    return first


def _named(err: Optional[KilnError], temp: str, origin: Optional[str]) -> Optional[KilnError]:
    """err with each error that names the file kiln read (temp: a temporary
    path or "-") naming origin, where the document was defined, instead."""
    if err is None or not origin:
        return err
    errs = getattr(err, "errors", None) or [err]
    for e in errs:
        if e.file == temp:
            # The line and column are those of the YAML generated from
            # origin, which the user never saw: origin alone says where.
            e.file, e.line, e.column = origin, 0, 0
    err.args = ("\n".join(e._line() for e in errs),)
    return err


def validate(text: str, *, kiln_bin: Optional[str] = None, origin: Optional[str] = None) -> None:
    """Checks YAML text with ``kiln validate``; raises a KilnError listing
    each problem, naming origin (where the document was defined) as its file."""
    with tempfile.TemporaryDirectory(prefix="kiln-") as d:
        path = os.path.join(d, "workflow.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        p = subprocess.run([kiln_binary(kiln_bin), "validate", path], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        err = _named(errors_from(p.stderr + p.stdout), path, origin)
        raise err or KilnError("KLN-4009", f"kiln validate failed: {(p.stderr or p.stdout).strip()}")


def _texts(params: Optional[Mapping[str, Any]]) -> Dict[str, str]:
    """Param values as the strings kiln reads (bools as true/false)."""
    return {k: ("true" if v else "false") if isinstance(v, bool) else str(v) for k, v in (params or {}).items()}


def _param_args(params: Optional[Mapping[str, Any]]) -> List[str]:
    """``-p name=value`` for each param."""
    out: List[str] = []
    for k, v in _texts(params).items():
        out += ["-p", f"{k}={v}"]
    return out


def run_local(spec: Any, params: Optional[Mapping[str, Any]] = None, *, project: Optional[str] = None,
              workdir: Optional[str] = None, kiln_bin: Optional[str] = None, cache: Optional[str] = None,
              home: Optional[str] = None, follow: Optional[Follower] = None) -> Run:
    """Runs spec with ``kiln run`` on this machine (tasks start in workdir,
    the current directory by default) and returns the final Run; follow,
    when given, prints the run's ID, its events and logs as they come."""
    kiln = kiln_binary(kiln_bin)
    base = [kiln] + (["--home", str(home)] if home else [])
    cmd = base + ["run"] + ([] if follow else ["-q"]) + ["-f", "-"] + _param_args(params)
    cmd += (["--project", project] if project else []) + (["--cache", cache] if cache else [])
    cwd = _workdir(workdir)
    if follow is None:
        p = subprocess.run(cmd, input=spec.to_yaml(), capture_output=True, text=True, cwd=cwd, check=False)
        code, stdout, stderr = p.returncode, p.stdout, p.stderr
    else:
        code, stdout, stderr = _run_following(cmd, spec.to_yaml(), cwd, base, follow)
    m = _RUN_LINE.search(stdout + "\n" + stderr)
    if not m:
        err = _named(errors_from(stderr + "\n" + stdout), "-", getattr(spec, "origin", None))
        raise err or KilnError("KLN-4009", f"kiln run ended with {code}: {(stderr or stdout).strip()}")
    got = subprocess.run(base + ["get", "runs", m.group(1), "-o", "json"], capture_output=True, text=True, check=False)
    if got.returncode != 0:
        raise errors_from(got.stderr) or KilnError("KLN-4009", f"kiln get runs {m.group(1)}: {got.stderr.strip()}")
    return Run.from_json(json.loads(got.stdout))


def _run_following(cmd: List[str], text: str, cwd: str, base: List[str], follow: Follower) -> Tuple[int, str, str]:
    """Runs ``kiln run`` (cmd), printing through follow each event line it
    prints as it prints it: the first names the run. Returns its exit
    status, standard output and standard error."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=cwd)
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    err: List[str] = []
    reader = threading.Thread(target=lambda: err.append(p.stderr.read() if p.stderr else ""), daemon=True)
    reader.start()
    p.stdin.write(text)
    p.stdin.close()
    out: List[str] = []
    for line in p.stdout:
        out.append(line)
        ev = parse_event_line(line.rstrip("\n"))
        if ev is None:
            continue
        if not follow.run_id:
            follow.started(ev.run, ev.message)
        else:
            follow.event(ev, local_tail(base, ev.run))
    code = p.wait()
    reader.join()
    follow.finish()
    return code, "".join(out), "".join(err)


def failed_task(run: Run) -> Any:
    """The first node of run that failed or was cancelled with a code (None when none did)."""
    for node in run.status.nodes:
        if node.phase in ("Failed", "Cancelled") and node.code:
            return node
    return None


def failure(run: Run, lines: Optional[List[str]] = None, *, local: bool = False) -> KilnError:
    """A KilnError that says why run did not succeed: its code, the task
    that failed, its message, how to read its logs (``kiln logs`` for a
    local run, ``python -m kiln logs`` for a server's) and, when given, their
    last lines. The Run is in ``err.run``, the task's name in ``err.task``."""
    status = run.status
    code, message = status.code, status.message or ""
    node = failed_task(run)
    task = node.name if node is not None else ""
    if node is not None:
        code = code or node.code
        message = node.message or message
    if task and f"task {task}" not in message:
        message = f"task {task} failed: {message}" if run.phase == "Failed" else f"task {task}: {message}"
    logs = "kiln logs" if local else "python -m kiln logs"
    hint = f"read its logs with: {logs} {run.id} {task}" if task else ""
    if lines:
        message += "; its log ends:\n" + "".join(f"  | {line}\n" for line in lines)
    err = KilnError(code or ("KLN-3007" if run.phase == "Cancelled" else "KLN-3002"),
                    message or f"the run {run.phase}", object=f"Run/{run.id}", hint=hint)
    err.run = run  # type: ignore[attr-defined]
    err.task = task  # type: ignore[attr-defined]
    return err


def log_tail(run: Run, client: Any, home: Optional[str], kiln_bin: Optional[str], n: int = 10) -> List[str]:
    """The last n lines of the failed task's log (empty when they cannot be read)."""
    node = failed_task(run)
    if node is None or node.phase != "Failed":
        return []
    try:
        if client is not None:
            return list(client.logs(run.id, node.name, tail=n))
        base = [kiln_binary(kiln_bin)] + (["--home", str(home)] if home else [])
        p = subprocess.run(base + ["logs", run.id, node.name, "--tail", str(n)], capture_output=True, text=True,
                           check=False, timeout=30)
        return p.stdout.splitlines()[-n:] if p.returncode == 0 else []
    except (KilnError, OSError, subprocess.SubprocessError):
        return []


def server_client(client: Any) -> Any:
    """client, or a Client from the environment when one is configured (None otherwise)."""
    if client is not None:
        return client
    c = Client()
    return c if getattr(c, "server", None) else None


def server_filename(origin: str, workdir: str) -> str:
    """The file name to submit a document defined at origin (``FILE.py:FUNC``)
    under. A server records the name joined to the workdir and starts tasks
    in that file's directory, so the origin goes as ``BASENAME.py:FUNC`` when
    the .py file lies in workdir (recorded as its true path); otherwise as
    "-", which names no file and starts tasks in workdir."""
    path, _, _ = origin.rpartition(":")
    if path and os.path.dirname(os.path.abspath(path)) == os.path.abspath(workdir):
        return os.path.basename(origin)
    return "-"


def _submit(c: Any, spec: Any, params: Optional[Mapping[str, Any]], project: Optional[str],
            cache: Optional[str], workdir: str) -> Run:
    """Submits spec with c; the server's errors name spec's origin as their file."""
    origin = getattr(spec, "origin", "") or ""
    name = server_filename(origin, workdir) if origin else None
    try:
        return c.submit(spec, params=_texts(params) or None, project=project, cache=cache, workdir=workdir,
                        filename=name)
    except KilnError as e:
        if name:
            for err in e.errors or [e]:
                if err.file in (name, os.path.join(workdir, name)):
                    err.file, err.line, err.column = origin, 0, 0  # lines of the generated YAML
        e.args = (str(e),)
        raise


def run(spec: Any, params: Optional[Mapping[str, Any]] = None, *, client: Any = None, wait: bool = True,
        project: Optional[str] = None, check: bool = True, workdir: Optional[str] = None,
        timeout: Optional[float] = None, kiln_bin: Optional[str] = None, cache: Optional[str] = None,
        progress: bool = True, logs: bool = False, out: Optional[TextIO] = None) -> Run:
    """Runs a Workflow or TrainJob and returns its Run.

    With ``client``, or a server configured for ``kiln.Client()``
    (KILN_SERVER or the current context), the run is submitted there and,
    with ``wait``, waited on (``timeout`` seconds at most). Otherwise it runs
    on this machine with ``kiln run`` (KILN_BIN or ``kiln`` on PATH), which
    always waits. Tasks start in ``workdir`` (default: the current
    directory). With ``check`` (the default) a run that did not succeed
    raises a KilnError with its code, the Run in ``err.run``.

    With ``progress`` (the default) it prints (to ``out``, default standard
    output) the run's ID at once, its page in the web UI when a server runs
    it, and each node's phase as it changes; ``logs`` adds the tasks' log
    lines as they are written, each after its task's name.
    """
    check_params(spec, params)
    c = server_client(client)
    follow = Follower(out, logs) if progress or logs else None
    if c is None:
        if not wait:
            raise ValueError("a local run always waits (the engine lives in the kiln run process); "
                             "configure a server to submit without waiting")
        result = run_local(spec, params, project=project, workdir=workdir, kiln_bin=kiln_bin, cache=cache,
                           follow=follow)
    else:
        result = _submit(c, spec, params, project, cache, os.path.abspath(workdir or os.getcwd()))
        if follow is not None:
            follow.started(result.id, f"{result.kind or 'Workflow'} {result.name} submitted",
                           ui_url(c.server or "", result.id))
        if not wait:
            return result
        events = follow_server(c, result.id, follow) if follow is not None else None
        result = c.wait(result.id, timeout=timeout)
        if events is not None and follow is not None:
            events.join(30)  # the stream ends with the run: its last events are printed before the outcome
            follow.finish()
    if check and result.phase != "Succeeded":
        raise failure(result, log_tail(result, c, None, kiln_bin), local=c is None)
    return result


_KINDS = {bool: "bool", int: "int", float: "float", str: "str"}


def _kind(annotation: Any) -> Optional[str]:
    """"bool", "int", "float" or "str" for such an annotation (or its string form), else None."""
    if isinstance(annotation, str):
        return annotation if annotation in _KINDS.values() else None
    return _KINDS.get(annotation)


def _fits(kind: str, value: Any) -> bool:
    """Whether value (a Python value or the text of one) is a kind."""
    if isinstance(value, str):
        text = value.strip().lower()
        if kind == "bool":
            return text in ("true", "false", "1", "0", "yes", "no")
        try:
            {"int": int, "float": float}.get(kind, str)(value)
        except ValueError:
            return False
        return True
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True


def check_params(spec: Any, params: Optional[Mapping[str, Any]]) -> None:
    """Raises a TypeError, before anything runs, for a param value that is
    not of its annotated type (bool, int, float or str) in the workflow
    function's signature, and a KilnError (KLN-1014) for an unknown param."""
    declared = {p.name: p for p in getattr(spec, "params", None) or []}
    if not declared:
        return
    name = getattr(spec, "name", "")
    for key, value in (params or {}).items():
        if key not in declared:
            raise KilnError("KLN-1014", f"workflow {name} has no param {key!r} (its params: {', '.join(declared)})",
                            object=f"Workflow/{name}")
        kind = _kind(declared[key].annotation)
        if kind and not _fits(kind, value):
            raise TypeError(f"workflow {name} param {key}: expected {kind}, got {value!r}")
