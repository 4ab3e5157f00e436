"""``python -m kiln``: a thin command line over :class:`kiln.Client`.

Errors print as the kiln CLI prints them (``KLN-xxxx ...: message (hint:
...)``) on standard error, with exit status 1; usage errors exit 2.

More commands join with one line in ``COMMANDS``: a function that takes
the subparsers object, adds its parsers and sets ``func`` on each to a
handler ``handler(args) -> int``; :func:`client_of` builds the Client
from the global --server, --token and --project.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from .client import RERUN_MODES, Client
from .errors import USAGE, KilnError
from .dsl.cli import add_subcommands as _add_pipelines
from .models import NodeStatus, Run, to_json

Register = Callable[[Any], None]


def client_of(args: argparse.Namespace) -> Client:
    """The Client the global options (then the environment and the current context) name."""
    return Client(server=args.server, token=args.token, project=args.project)


def parse_params(pairs: Optional[Sequence[str]]) -> Dict[str, str]:
    """-p name=value options as a dict; KLN-4002 for one without "="."""
    out: Dict[str, str] = {}
    for kv in pairs or []:
        name, sep, value = kv.partition("=")
        if not sep or not name:
            raise KilnError(USAGE, f"-p {kv!r} is not name=value", field="-p")
        out[name] = value
    return out


def _print_table(rows: Iterable[Sequence[str]], header: Sequence[str]) -> None:
    rows = [list(map(str, r)) for r in rows]
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    for r in [list(header)] + rows:
        print("   ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip())


def _when(run: Run) -> str:
    return run.created_at.strftime("%Y-%m-%d %H:%M:%S") if run.created_at else "-"


def _show_run(run: Run, output: str) -> None:
    if output == "json":
        print(json.dumps(to_json(run), indent=2))
        return
    print(f"Run:      {run.id}\nName:     {run.name}\nKind:     {run.kind}\nProject:  {run.project}")
    print(f"Phase:    {run.phase}" + (f" ({run.status.code}: {run.status.message})" if run.status.code else ""))
    print(f"Created:  {_when(run)}")
    for k, v in sorted(run.outputs.items()):
        print(f"Output:   {k}={v}")
    if run.status.nodes:
        print()
        _print_table(([n.name, n.phase, str(len(n.attempts)), n.code or "", n.message]
                      for n in run.status.nodes), ["TASK", "PHASE", "ATTEMPTS", "CODE", "MESSAGE"])


def _ended(run: Run) -> int:
    """0 for a run that succeeded, else 1 with why on standard error."""
    if run.succeeded:
        return 0
    why = f" {run.status.code}: {run.status.message}" if run.status.code else ""
    print(f"run {run.id} {run.phase}{why}", file=sys.stderr)
    return 1


class Waiting:
    """Says on standard error, once each, the gates a run waits on and the
    command that ends the wait, so that a command that waits is never
    silently blocked."""

    def __init__(self, prog: str, run_id: str) -> None:
        self.prog = prog
        self.run_id = run_id
        self.told: set = set()

    def check(self, run: Run) -> None:
        """Tells of each gate of run that waits now and was not told of yet."""
        for node in run.status.nodes:
            if node.name in self.told or node.gate is None or node.phase != "Running" or node.gate.decision:
                continue
            self.told.add(node.name)
            print(self.line(node), file=sys.stderr, flush=True)

    def line(self, node: NodeStatus) -> str:
        """What to say of the gate node."""
        gate, cmd = node.gate, f"{self.prog} {{}} {self.run_id} {node.name}"
        about = f" ({gate.message})" if gate and gate.message else ""
        if gate and gate.kind == "signal":
            kind = f" of type {gate.type}" if gate.type else ""
            return (f"waiting for a signal{kind} at gate {node.name}{about}: "
                    f"send one with {cmd.format('signal')} VALUE")
        if gate and gate.kind == "sleep":
            return f"waiting: gate {node.name} sleeps until {gate.sleep_until or 'its time'}"
        return (f"waiting for gate {node.name}{about}: approve with {cmd.format('approve')} "
                f"(or {cmd.format('reject')})")


def wait_telling(c: Client, run_id: str, prog: str, timeout: Optional[float] = None, poll: float = 0.5) -> Run:
    """Client.wait that says on standard error which gates the run waits on."""
    waiting = Waiting(prog, run_id)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        run = c.get(run_id)
        if run.done:
            return run
        waiting.check(run)
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"run {run_id} is still {run.phase} after {timeout:g}s")
        time.sleep(poll if deadline is None else max(0.0, min(poll, deadline - time.monotonic())))


def _follow(c: Client, run_id: str, task: str, prog: str) -> None:
    """Prints task's lines as they come while a thread tells of the gates
    the run waits on (the task may wait behind one)."""
    waiting, stop = Waiting(prog, run_id), threading.Event()

    def watch() -> None:
        while not stop.wait(1.0):
            try:
                waiting.check(c.get(run_id))
            except KilnError:
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        for line in c.logs(run_id, task, follow=True):
            print(line, flush=True)
    finally:
        stop.set()
        watcher.join(timeout=5)


# --- handlers ------------------------------------------------------------------------


def _cmd_submit(args: argparse.Namespace) -> int:
    c = client_of(args)
    run = c.submit(args.file, params=parse_params(args.param), project=args.project, cache=args.cache)
    print(run.id, flush=True)
    if args.logs:
        _follow(c, run.id, args.logs, args.prog)
    if args.wait or args.logs:
        return _ended(wait_telling(c, run.id, args.prog))
    return 0


def _cmd_get(args: argparse.Namespace) -> int:
    _show_run(client_of(args).get(args.run), args.output)
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    c = client_of(args)
    phases = [p for x in args.phase or [] for p in x.split(",") if p]
    page = c.list_runs(phase=phases, project=args.project, name=args.name, label=args.label, since=args.since, until=args.until,
                       q=args.q, order=args.order, limit=args.limit, cursor=args.cursor)
    if args.output == "json":
        print(json.dumps(to_json(page), indent=2))
        return 0
    _print_table(([r.id, r.name, r.phase, r.project, _when(r)] for r in page.items),
                 ["ID", "NAME", "PHASE", "PROJECT", "CREATED"])
    if page.next:
        print(f"(more: --cursor {page.next})", file=sys.stderr)
    return 0


def _cmd_wait(args: argparse.Namespace) -> int:
    run = wait_telling(client_of(args), args.run, args.prog, timeout=args.timeout)
    print(f"{run.id} {run.phase}")
    return _ended(run)


def _cmd_logs(args: argparse.Namespace) -> int:
    lines = client_of(args).logs(args.run, args.task, follow=args.follow, attempt=args.attempt,
                                 tail=args.tail, since=args.since, timestamps=args.timestamps)
    for line in lines:
        print(line, flush=True)
    return 0


def _cmd_simple(verb: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        getattr(client_of(args), verb)(args.run)
        print(f"{args.run}: {verb} requested")
        return 0
    return run


def _cmd_rerun(args: argparse.Namespace) -> int:
    run = client_of(args).rerun(args.run, args.node, mode=args.mode, params=parse_params(args.param))
    print(run.id)
    return 0


def _cmd_gate(args: argparse.Namespace) -> int:
    c = client_of(args)
    if args.verb == "signal":
        out = c.signal(args.run, args.task, args.value, reason=args.reason)
    else:
        out = getattr(c, args.verb)(args.run, args.task, reason=args.reason)
    print(f"{args.run}/{args.task}: {out.sent or args.verb} sent")
    return 0


def _cmd_delete(args: argparse.Namespace) -> int:
    client_of(args).delete(args.run, force=args.force)
    print(f"{args.run}: deleted")
    return 0


def _cmd_whoami(args: argparse.Namespace) -> int:
    c = client_of(args)
    me = c.whoami()
    if not me.authenticated:
        raise KilnError("KLN-4003", "the server takes the request for no one: the token is missing, unknown or revoked",
                        hint="give the token with --token, KILN_TOKEN, or token: in the current context")
    _print_table([[me.name, me.role, ",".join(me.projects) or "-", c.server or ""]],
                 ["NAME", "ROLE", "PROJECTS", "SERVER"])
    return 0


def _cmd_version(args: argparse.Namespace) -> int:
    from . import __version__
    print(f"Client: kiln (Python) {__version__}")
    v = client_of(args).version()
    print("Server: kiln " + " ".join(x for x in (v.version, v.commit, v.go, v.platform) if x))
    return 0


# --- parsers --------------------------------------------------------------------------


def _project_option(p: argparse.ArgumentParser) -> None:
    """--project after the command too; absent, it leaves the global one alone."""
    p.add_argument("--project", default=argparse.SUPPRESS, help="the project (as the global --project)")


def _add_runs(sub: Any) -> None:
    p = sub.add_parser("submit", help="submit a Workflow or TrainJob file")
    p.add_argument("file", help="the YAML or JSON file")
    p.add_argument("-p", "--param", action="append", metavar="NAME=VALUE", help="a parameter (repeatable)")
    _project_option(p)
    p.add_argument("--cache", choices=["on", "off", "overwrite"])
    p.add_argument("--wait", action="store_true",
                   help="wait for the run to end (saying which gates it waits on); exit 1 unless it succeeds")
    p.add_argument("--logs", metavar="TASK", help="follow TASK's logs, then wait as --wait does")
    p.set_defaults(func=_cmd_submit)

    p = sub.add_parser("get", help="show a run")
    p.add_argument("run")
    p.add_argument("-o", "--output", choices=["table", "json"], default="table")
    p.set_defaults(func=_cmd_get)

    p = sub.add_parser("list", help="list runs, newest first")
    p.add_argument("--phase", action="append", help="a phase, or several with commas (repeatable)")
    for name in ("name", "label", "since", "until", "q", "cursor"):
        p.add_argument("--" + name)
    _project_option(p)
    p.add_argument("--order", choices=["asc", "desc"])
    p.add_argument("--limit", type=int)
    p.add_argument("-o", "--output", choices=["table", "json"], default="table")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("wait", help="wait for a run to end; exit 1 unless it succeeded")
    p.add_argument("run")
    p.add_argument("--timeout", type=float, help="seconds")
    p.set_defaults(func=_cmd_wait)

    p = sub.add_parser("logs", help="print a task's logs")
    p.add_argument("run")
    p.add_argument("task")
    p.add_argument("-f", "--follow", action="store_true")
    p.add_argument("--tail", type=int, default=0)
    p.add_argument("--attempt", type=int, default=0)
    p.add_argument("--since", help='an RFC 3339 time or a duration such as "10m"')
    p.add_argument("--timestamps", action="store_true")
    p.set_defaults(func=_cmd_logs)


def _add_actions(sub: Any) -> None:
    for verb, text in (("cancel", "cancel a run"), ("stop", "stop a run, running its exit handlers"),
                       ("retry", "run a Failed or Cancelled run again"),
                       ("suspend", "suspend a run: nothing new starts"), ("unsuspend", "resume it")):
        p = sub.add_parser(verb, help=text)
        p.add_argument("run")
        p.set_defaults(func=_cmd_simple(verb))

    p = sub.add_parser("rerun", help="a new run reusing a run's results")
    p.add_argument("run")
    p.add_argument("node")
    p.add_argument("--mode", choices=RERUN_MODES, default="from")
    p.add_argument("-p", "--param", action="append", metavar="NAME=VALUE")
    p.set_defaults(func=_cmd_rerun)

    for verb in ("approve", "reject", "signal"):
        p = sub.add_parser(verb, help=f"{verb} a gate task")
        p.add_argument("run")
        p.add_argument("task")
        if verb == "signal":
            p.add_argument("value")
        p.add_argument("--reason", default="")
        p.set_defaults(func=_cmd_gate, verb=verb)

    p = sub.add_parser("delete", help="delete an ended run")
    p.add_argument("run")
    p.add_argument("--force", action="store_true", help="cancel it first if it has not ended")
    p.set_defaults(func=_cmd_delete)

    sub.add_parser("whoami", help="who the server takes the token for").set_defaults(func=_cmd_whoami)
    sub.add_parser("version", help="the client's and the server's versions").set_defaults(func=_cmd_version)


#: The functions that add the subcommands, in help order.
COMMANDS: List[Register] = [_add_runs, _add_actions, _add_pipelines]


#: The command's name when it runs as ``python -m kiln``.
MODULE_PROG = "python -m kiln"


def build_parser(commands: Optional[Sequence[Register]] = None, prog: str = MODULE_PROG) -> argparse.ArgumentParser:
    """The parser of the command called prog (``python -m kiln``, or
    ``kiln-py``), with the subcommands of commands (default COMMANDS)."""
    parser = argparse.ArgumentParser(prog=prog, description="Write, submit and follow kiln runs.")
    parser.add_argument("--server", help="the kiln server's URL (env KILN_SERVER; default the current context's)")
    parser.add_argument("--token", help="the API token (env KILN_TOKEN; default the current context's)")
    parser.add_argument("--project", help="the project (env KILN_PROJECT; default the current context's)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for register in COMMANDS if commands is None else commands:
        register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None, prog: str = MODULE_PROG) -> int:
    """Runs one command of the command called prog; returns the exit status."""
    args = build_parser(prog=prog).parse_args(argv)
    args.prog = prog
    try:
        return int(args.func(args) or 0)
    except KilnError as e:
        print(str(e.for_cli(prog)), file=sys.stderr)
        return 2 if e.code == USAGE else 1
    except TimeoutError as e:
        print(str(e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # a file or program the command was pointed at is not there: no traceback
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
