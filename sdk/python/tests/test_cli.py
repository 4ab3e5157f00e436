"""``python -m kiln`` run as a user runs it, against a real kiln serve."""

import json
import os
import pathlib
import subprocess
import sys

import kiln.cli
from client_support import GATES, SLOW_LINES, client, hello, until

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"


def kiln_py(served, *args, timeout=60, env=None):
    """Runs python -m kiln with the server's URL and token in the environment."""
    full = dict(os.environ, PYTHONPATH=str(SRC), KILN_HOME=str(served.home) + "-client" if served else "/nonexistent")
    full.pop("KILN_PROJECT", None)
    if served:
        full.update(KILN_SERVER=served.url, KILN_TOKEN=served.token)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "kiln", *args], capture_output=True, text=True,
                          timeout=timeout, env=full)


def test_submit_wait_get_and_list(kiln_server, tmp_path):
    wf = tmp_path / "hello.yaml"
    wf.write_text(hello())
    out = kiln_py(kiln_server, "submit", str(wf), "-p", "who=cli", "--wait")
    assert out.returncode == 0, out.stderr
    run_id = out.stdout.strip()
    got = kiln_py(kiln_server, "get", run_id)
    assert got.returncode == 0 and f"Run:      {run_id}" in got.stdout
    assert "Phase:    Succeeded" in got.stdout and "Output:   greeting=hi-cli" in got.stdout
    as_json = json.loads(kiln_py(kiln_server, "get", run_id, "-o", "json").stdout)
    assert as_json["id"] == run_id and as_json["status"]["outputs"]["parameters"] == {"greeting": "hi-cli"}
    listed = kiln_py(kiln_server, "list", "--phase", "Succeeded,Failed", "--limit", "5")
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[0].split() == ["ID", "NAME", "PHASE", "PROJECT", "CREATED"]
    assert run_id in listed.stdout and "Succeeded" in listed.stdout
    assert kiln_py(kiln_server, "list", "--name", "nothing-like-it").stdout.strip().count("\n") == 0
    other = kiln_py(kiln_server, "submit", str(wf), "--project", "other", "--wait")
    assert other.returncode == 0, other.stderr
    mine = kiln_py(kiln_server, "--project", "other", "list").stdout
    assert other.stdout.strip() in mine and run_id not in mine
    assert run_id in kiln_py(kiln_server, "list", "--project", "default").stdout
    waited = kiln_py(kiln_server, "wait", run_id)
    assert waited.returncode == 0 and waited.stdout.strip() == f"{run_id} Succeeded"


def test_submit_logs_follows_the_task(kiln_server, tmp_path):
    wf = tmp_path / "talk.yaml"
    wf.write_text(SLOW_LINES)
    out = kiln_py(kiln_server, "submit", str(wf), "--logs", "talk")
    assert out.returncode == 0, out.stderr
    run_id, *lines = out.stdout.splitlines()
    assert lines == ["line 1", "line 2", "line 3"]
    tail = kiln_py(kiln_server, "logs", run_id, "talk", "--tail", "2")
    assert tail.stdout.splitlines() == ["line 2", "line 3"]
    stamped = kiln_py(kiln_server, "logs", run_id, "talk", "-f", "--timestamps").stdout.splitlines()
    assert len(stamped) == 3 and stamped[0].endswith("line 1") and stamped[0] != "line 1"


def test_gates_cancel_retry_rerun_delete(kiln_server):
    c = client(kiln_server)
    run = c.submit(GATES)
    until(lambda: c.get(run.id).node("ask").phase == "Running", what="ask waits")
    out = kiln_py(kiln_server, "approve", run.id, "ask", "--reason", "ok")
    assert out.returncode == 0 and out.stdout.strip() == f"{run.id}/ask: approve sent"
    until(lambda: c.get(run.id).node("value").phase == "Running", what="value waits")
    assert kiln_py(kiln_server, "signal", run.id, "value", "7").returncode == 0
    assert c.wait(run.id, timeout=60).node("use").outputs == {"got": "got-7"}

    rerun = kiln_py(kiln_server, "rerun", run.id, "use", "--mode", "only")
    assert rerun.returncode == 0, rerun.stderr
    again = c.wait(rerun.stdout.strip(), timeout=60)
    assert again.succeeded and again.rerun_of["run"] == run.id

    second = c.submit(GATES)
    until(lambda: c.get(second.id).node("ask").phase == "Running", what="ask waits")
    assert kiln_py(kiln_server, "cancel", second.id).stdout.strip() == f"{second.id}: cancel requested"
    assert c.wait(second.id, timeout=30).phase == "Cancelled"
    failed = kiln_py(kiln_server, "wait", second.id)
    assert failed.returncode == 1 and "Cancelled" in failed.stdout
    assert kiln_py(kiln_server, "retry", second.id).returncode == 0
    until(lambda: c.get(second.id).node("ask").phase == "Running", what="the retried gate waits")
    assert kiln_py(kiln_server, "reject", second.id, "ask").returncode == 0
    assert c.wait(second.id, timeout=30).phase == "Failed"
    deleted = kiln_py(kiln_server, "delete", second.id)
    assert deleted.returncode == 0 and deleted.stdout.strip() == f"{second.id}: deleted"


def test_whoami_and_version(kiln_server):
    me = kiln_py(kiln_server, "whoami")
    assert me.returncode == 0 and me.stdout.splitlines()[1].split()[:3] == ["admin", "admin", "*"]
    v = kiln_py(kiln_server, "version")
    assert v.returncode == 0 and v.stdout.startswith("Client: kiln (Python) ") and "Server: kiln " in v.stdout


def test_errors_print_like_the_kiln_cli(kiln_server, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(hello().replace("command: [/bin/sh", "comand: [/bin/sh"))
    out = kiln_py(kiln_server, "submit", str(bad))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith(f"KLN-1002 {bad}:11:5: Workflow/hello: spec.tasks[0].comand: unknown field")
    missing = kiln_py(kiln_server, "get", "no-such-run")
    # The hint kiln's own CLI prints for this code, which the server spells out.
    assert (missing.returncode, missing.stderr) == (1, "KLN-4001 Run/no-such-run: no such run (hint: list runs with kiln get runs)\n")
    token = kiln_py(kiln_server, "--token", "kln_wrong", "list")
    assert token.returncode == 1 and token.stderr.startswith("KLN-4003: ") and "kln_wrong" not in token.stderr
    assert "give the server's token with --token, in KILN_TOKEN" in token.stderr and "token=" not in token.stderr
    missing_file = kiln_py(kiln_server, "submit", str(tmp_path / "nofile.yaml"))
    assert (missing_file.returncode, missing_file.stdout) == (1, "")
    assert missing_file.stderr.startswith(f"KLN-1020 {tmp_path / 'nofile.yaml'}: cannot read the file: no such file")
    assert kiln_py(kiln_server, "--token", "kln_wrong", "whoami").returncode == 1


def test_unreachable_and_usage_errors():
    gone = kiln_py(None, "--server", "http://127.0.0.1:9", "get", "r")
    assert gone.returncode == 1 and gone.stderr.startswith("KLN-5060: the kiln server at http://127.0.0.1:9")
    assert "(hint: check the URL given with --server, in KILN_SERVER" in gone.stderr and "server=" not in gone.stderr
    none = kiln_py(None, "get", "r", env={"KILN_SERVER": "", "KILN_TOKEN": ""})
    assert none.returncode == 1
    assert none.stderr.startswith("KLN-5060: no kiln server is configured (hint: give --server (and --token), set "
                                  "KILN_SERVER"), none.stderr
    assert "  " not in none.stderr and "server=" not in none.stderr
    usage = kiln_py(None, "list", "--limit", "many")
    assert usage.returncode == 2 and "invalid int value" in usage.stderr
    param = kiln_py(None, "--server", "http://127.0.0.1:9", "submit", "x.yaml", "-p", "novalue")
    assert param.returncode == 2 and param.stderr.startswith("KLN-4002")
    assert kiln_py(None).returncode == 2


def test_build_parser_takes_more_commands():
    def add_hello(sub):
        p = sub.add_parser("hello")
        p.set_defaults(func=lambda args: 7)

    parser = kiln.cli.build_parser(kiln.cli.COMMANDS + [add_hello])
    args = parser.parse_args(["hello"])
    assert args.func(args) == 7
    assert parser.parse_args(["get", "r1"]).run == "r1"


def test_help_names_the_command_as_it_was_started():
    out = kiln_py(None, "--help")
    assert out.returncode == 0 and out.stdout.startswith("usage: python -m kiln ")
    sub = kiln_py(None, "submit", "--help")
    assert sub.stdout.startswith("usage: python -m kiln submit ") and "then wait as --wait does" in sub.stdout


def test_submit_logs_says_which_gate_the_run_waits_on(kiln_server, tmp_path):
    wf = tmp_path / "gates.yaml"
    wf.write_text(GATES)
    err = tmp_path / "stderr"
    env = dict(os.environ, PYTHONPATH=str(SRC), KILN_HOME=str(tmp_path / "none"), KILN_SERVER=kiln_server.url,
               KILN_TOKEN=kiln_server.token)
    with open(err, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "kiln", "submit", str(wf), "--logs", "use"],
                                stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
        try:
            run_id = proc.stdout.readline().strip()
            c = client(kiln_server)
            until(lambda: "waiting for gate ask" in err.read_text(), what="the approval gate is named")
            assert (f"waiting for gate ask (go on?): approve with python -m kiln approve {run_id} ask "
                    f"(or python -m kiln reject {run_id} ask)") in err.read_text()
            c.approve(run_id, "ask")
            until(lambda: "signal" in err.read_text(), what="the signal gate is named")
            assert (f"waiting for a signal of type string at gate value: send one with "
                    f"python -m kiln signal {run_id} value VALUE") in err.read_text()
            c.signal(run_id, "value", "9")
            out, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, err.read_text()
    assert out.splitlines() == []
    assert err.read_text().count("waiting") == 2
