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
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from .client import RERUN_MODES, Client
from .errors import USAGE, KilnError
from .dsl.cli import add_subcommands as _add_pipelines
from .models import Run, to_json

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


# --- handlers ------------------------------------------------------------------------


def _cmd_submit(args: argparse.Namespace) -> int:
    c = client_of(args)
    run = c.submit(args.file, params=parse_params(args.param), project=args.project, cache=args.cache)
    print(run.id)
    if args.logs:
        for line in c.logs(run.id, args.logs, follow=True):
            print(line, flush=True)
    if args.wait or args.logs:
        return _ended(c.wait(run.id))
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
    run = client_of(args).wait(args.run, timeout=args.timeout)
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
    p.add_argument("--wait", action="store_true", help="wait for the run to end; exit 1 unless it succeeds")
    p.add_argument("--logs", metavar="TASK", help="follow TASK's logs, then wait")
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
    for verb, text in (("cancel", "cancel a run"), ("retry", "run a Failed or Cancelled run again"),
                       ("suspend", "suspend a run's training jobs"), ("unsuspend", "resume them")):
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


def build_parser(commands: Optional[Sequence[Register]] = None) -> argparse.ArgumentParser:
    """The parser of ``python -m kiln``, with the subcommands of commands (default COMMANDS)."""
    parser = argparse.ArgumentParser(prog="python -m kiln", description="Write, submit and follow kiln runs.")
    parser.add_argument("--server", help="the kiln server's URL (env KILN_SERVER; default the current context's)")
    parser.add_argument("--token", help="the API token (env KILN_TOKEN; default the current context's)")
    parser.add_argument("--project", help="the project (env KILN_PROJECT; default the current context's)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for register in COMMANDS if commands is None else commands:
        register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs one command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KilnError as e:
        print(str(e), file=sys.stderr)
        return 2 if e.code == USAGE else 1
    except TimeoutError as e:
        print(str(e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
