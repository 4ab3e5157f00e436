"""``python -m kiln compile`` and ``python -m kiln run`` for pipelines
written in Python: ``add_subcommands`` adds them to the package's parser."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from typing import Any, Dict, List

from ..client import Client
from ..errors import KilnError
from .runner import check_params, failure, log_tail as tail, run, server_client
from .trainjob import TrainJob
from .workflow import Workflow


def load(ref: str) -> Any:
    """The Workflow or TrainJob named by ``MODULE:NAME`` or ``path/to/file.py:NAME``."""
    module_name, sep, attr = ref.rpartition(":")
    if not sep or not module_name or not attr or module_name.startswith("."):
        raise ValueError(f"{ref!r}: name a pipeline as MODULE:NAME or FILE.py:NAME")
    if module_name.endswith(".py") or os.sep in module_name:
        if not os.path.isfile(module_name):
            raise ValueError(f"{module_name}: " + ("not a file" if os.path.exists(module_name) else "no such file"))
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(module_name))[0], module_name)
        if spec is None or spec.loader is None:
            raise ValueError(f"{module_name}: cannot load this file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # typing.get_type_hints reads a NamedTuple's module from here
        sys.path.insert(0, os.path.dirname(os.path.abspath(module_name)))
        spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_name)
    obj = getattr(module, attr, None)
    if not isinstance(obj, (Workflow, TrainJob)):
        there = sorted(k for k, v in vars(module).items() if isinstance(v, (Workflow, TrainJob)))
        what = (f"{ref}: {attr} is a {type(obj).__name__}, not a @kiln.workflow or a kiln.TrainJob"
                if obj is not None else f"{module_name} has no {attr}")
        raise ValueError(f"{what} (its pipelines: {', '.join(there) or 'none'})")
    return obj


def _params(items: List[str]) -> Dict[str, str]:
    """``name=value`` items as a dict."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"-p {item!r}: give a param as name=value")
        out[name] = value
    return out


def _load(ref: str) -> Any:
    """load(ref), a usage error (KLN-4002) when ref names no pipeline."""
    try:
        return load(ref)
    except ImportError as e:
        raise KilnError("KLN-4002", f"{ref}: {e}") from e
    except (ValueError, OSError) as e:
        raise KilnError("KLN-4002", str(e)) from e


def _client(a: argparse.Namespace) -> Any:
    """A Client for --server/--token given to the package's CLI, else None (the environment decides)."""
    if not getattr(a, "server", None):
        return None
    return Client(server=a.server, token=getattr(a, "token", None), project=getattr(a, "project", None))


def _compile(a: argparse.Namespace) -> int:
    text = _load(a.pipeline).to_yaml()
    if a.output and a.output != "-":
        try:
            with open(a.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise KilnError("KLN-4002", f"cannot write {a.output}: {e.strerror or e}", field="-o") from e
    else:
        sys.stdout.write(text)
    return 0


def _run(a: argparse.Namespace) -> int:
    """Runs the pipeline; prints the run's ID (and its page in the web UI, on
    a server) at once, each node's phase as it changes (and with --logs the
    tasks' logs), then the run's ID and phase and its outputs, or why it
    failed (code, task, message, the logs command and their last lines)."""
    try:
        params = _params(a.param)
    except ValueError as e:
        raise KilnError("KLN-4002", str(e)) from e
    pipeline = _load(a.pipeline)
    try:
        check_params(pipeline, params)
    except TypeError as e:
        raise KilnError("KLN-4002", str(e), object=f"Workflow/{pipeline.name}") from e
    try:
        result = run(pipeline, params, client=_client(a), project=getattr(a, "project", None),
                     workdir=a.workdir, check=False, wait=not a.no_wait, progress=not a.quiet, logs=a.logs)
    except ValueError as e:  # --no-wait with no server to submit to
        raise KilnError("KLN-4002", str(e), field="--no-wait") from e
    print(f"Run {result.id} {result.phase}")
    if a.no_wait:
        return 0
    if result.phase == "Succeeded":
        for name, value in (result.outputs or {}).items():
            print(f"  {name}: {value}")
        return 0
    c = _server(a)
    print(str(failure(result, tail(result, c, None, None), local=c is None)), file=sys.stderr)
    return 1


def _server(a: argparse.Namespace) -> Any:
    """The Client the run went through, None for a local run."""
    try:
        return server_client(_client(a))
    except KilnError:
        return None


def add_subcommands(subparsers: Any) -> None:
    """Adds ``compile`` and ``run`` to an argparse subparsers object; each
    sets ``func`` (Namespace -> exit code). ``run`` reads ``server``,
    ``token`` and ``project`` from the namespace when the parent parser has
    them; errors are KilnErrors (KLN-4002 for a bad MODULE:NAME or param)."""
    c = subparsers.add_parser("compile", help="print (or write) the YAML of a pipeline written in Python")
    c.add_argument("pipeline", help="MODULE:NAME or FILE.py:NAME of a @kiln.workflow or kiln.TrainJob")
    c.add_argument("-o", "--output", help="write the YAML to this file instead of standard output")
    c.set_defaults(func=_compile)
    r = subparsers.add_parser("run", help="run a pipeline written in Python, on the server or locally")
    r.add_argument("pipeline", help="MODULE:NAME or FILE.py:NAME of a @kiln.workflow or kiln.TrainJob")
    r.add_argument("-p", "--param", action="append", default=[], help="a workflow param, name=value (repeatable)")
    r.add_argument("--workdir", help="where tasks start (default: the current directory)")
    r.add_argument("--no-wait", action="store_true", help="submit to the server and return without waiting")
    r.add_argument("--logs", action="store_true", help="print the tasks' log lines as they are written")
    r.add_argument("-q", "--quiet", action="store_true",
                   help="print only the outcome, not the run's ID, link and progress as it goes")
    r.set_defaults(func=_run)


def main(argv: List[str] = None) -> int:  # type: ignore[assignment]
    """Runs ``compile`` or ``run`` alone (the package's CLI adds them beside its own commands)."""
    p = argparse.ArgumentParser(prog="python -m kiln")
    p.add_argument("--project", help="the run's project")
    add_subcommands(p.add_subparsers(dest="command", required=True))
    a = p.parse_args(argv)
    try:
        return a.func(a)
    except (KilnError, ValueError, TypeError, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
