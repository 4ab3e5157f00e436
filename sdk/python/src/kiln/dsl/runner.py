"""Running a workflow or TrainJob with one call: on the configured kiln
server through the Client, else locally with the kiln binary."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from typing import Any, Dict, List, Mapping, Optional

from ..client import Client
from ..errors import KilnError
from ..models import Run

_ERROR_LINE = re.compile(r"^error: (KLN-\d{4}) (.*)$")
_RUN_LINE = re.compile(r"^Run (\S+) (Succeeded|Failed|Cancelled)\b", re.M)
_FINAL = ("Succeeded", "Failed", "Cancelled")


def kiln_binary(kiln_bin: Optional[str] = None) -> str:
    """The kiln binary: the argument, else KILN_BIN, else ``kiln`` on PATH."""
    path = kiln_bin or os.environ.get("KILN_BIN") or shutil.which("kiln")
    if not path:
        raise KilnError("KLN-4002", "no kiln binary to run the workflow locally",
                        hint="set KILN_BIN or put kiln on PATH, or configure a server (KILN_SERVER)")
    return path


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
    if parts and (parts[0].startswith(("/", "-", ".")) or parts[0].endswith((".yaml", ".yml", ".json"))):
        file = parts.pop(0)
    if parts and re.match(r"^[A-Z][A-Za-z]+/\S+$", parts[0]):
        obj = parts.pop(0)
    if len(parts) > 1 and re.match(r"^(spec|metadata|kind|apiVersion)[\w.\[\]-]*$", parts[0]):
        field = parts.pop(0)
    return KilnError(code, ": ".join(parts), field=field, file=file, object=obj, hint=hint)


def errors_from(stderr: str) -> Optional[KilnError]:
    """Every coded error in the CLI's output, as one KilnError (None when there is none)."""
    errs = [e for e in (_error(line) for line in stderr.splitlines()) if e is not None]
    if not errs:
        return None
    first = errs[0]
    first.errors = errs
    first.args = ("\n".join(str(e.args[0]) if e.args else "" for e in errs),)
    return first


def validate(text: str, *, kiln_bin: Optional[str] = None) -> None:
    """Checks YAML text with ``kiln validate``; raises a KilnError listing each problem."""
    with tempfile.TemporaryDirectory(prefix="kiln-") as d:
        path = os.path.join(d, "workflow.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        p = subprocess.run([kiln_binary(kiln_bin), "validate", path], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        err = errors_from(p.stderr + p.stdout)
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
              home: Optional[str] = None) -> Any:
    """Runs spec with ``kiln run`` on this machine (tasks start in workdir,
    the current directory by default) and returns the final Run."""
    kiln = kiln_binary(kiln_bin)
    base = [kiln] + (["--home", str(home)] if home else [])
    cmd = base + ["run", "-q", "-f", "-"] + _param_args(params)
    cmd += (["--project", project] if project else []) + (["--cache", cache] if cache else [])
    p = subprocess.run(cmd, input=spec.to_yaml(), capture_output=True, text=True,
                       cwd=os.path.abspath(workdir or os.getcwd()), check=False)
    m = _RUN_LINE.search(p.stdout + "\n" + p.stderr)
    if not m:
        err = errors_from(p.stderr + "\n" + p.stdout)
        raise err or KilnError("KLN-4009", f"kiln run ended with {p.returncode}: {(p.stderr or p.stdout).strip()}")
    got = subprocess.run(base + ["get", "runs", m.group(1), "-o", "json"], capture_output=True, text=True, check=False)
    if got.returncode != 0:
        raise errors_from(got.stderr) or KilnError("KLN-4009", f"kiln get runs {m.group(1)}: {got.stderr.strip()}")
    return Run.from_json(json.loads(got.stdout))


def failure(run: Run) -> KilnError:
    """A KilnError that says why run did not succeed: its code, else its first failed node's."""
    status = run.status
    code, message, field = status.code, status.message or "", ""
    for node in status.nodes:
        if node.phase in ("Failed", "Cancelled") and node.code:
            code = code or node.code
            field = node.name
            message = message or node.message or ""
            break
    err = KilnError(code or ("KLN-3007" if run.phase == "Cancelled" else "KLN-3002"),
                    f"run {run.id} {run.phase}: {message}".rstrip(": "), object=f"Run/{run.id}", field=field)
    err.run = run  # type: ignore[attr-defined]
    return err


def _server_client(client: Any) -> Any:
    """client, or a Client from the environment when one is configured (None otherwise)."""
    if client is not None:
        return client
    c = Client()
    return c if getattr(c, "server", None) else None


def run(spec: Any, params: Optional[Mapping[str, Any]] = None, *, client: Any = None, wait: bool = True,
        project: Optional[str] = None, check: bool = True, workdir: Optional[str] = None,
        timeout: Optional[float] = None, kiln_bin: Optional[str] = None, cache: Optional[str] = None) -> Any:
    """Runs a Workflow or TrainJob and returns its Run.

    With ``client``, or a server configured for ``kiln.Client()``
    (KILN_SERVER or the current context), the run is submitted there and,
    with ``wait``, waited on (``timeout`` seconds at most). Otherwise it runs
    on this machine with ``kiln run`` (KILN_BIN or ``kiln`` on PATH), which
    always waits. Tasks start in ``workdir`` (default: the current
    directory). With ``check`` (the default) a run that did not succeed
    raises a KilnError with its code, the Run in ``err.run``.
    """
    c = _server_client(client)
    if c is None:
        if not wait:
            raise ValueError("a local run always waits (the engine lives in the kiln run process); "
                             "configure a server to submit without waiting")
        result = run_local(spec, params, project=project, workdir=workdir, kiln_bin=kiln_bin, cache=cache)
    else:
        result = c.submit(spec, params=_texts(params) or None, project=project, cache=cache,
                          workdir=os.path.abspath(workdir or os.getcwd()))
        if not wait:
            return result
        result = c.wait(result.id, timeout=timeout)
    if check and result.phase != "Succeeded":
        raise failure(result)
    return result
