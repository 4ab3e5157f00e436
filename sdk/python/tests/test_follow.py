"""``python -m kiln run`` and ``Workflow.run()`` follow the run as it goes:
its ID at once (while the run is still running: a task holds it until the
test has read the ID), the web UI's page of it on a server, each node's
phase, and with --logs the tasks' log lines; locally and on ``kiln serve``."""

import json
import os
import pathlib
import runpy
import subprocess
import sys
import textwrap

import kiln
from client_support import client

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"

PIPELINE = textwrap.dedent('''
    import kiln


    @kiln.task
    def hold(gate: str) -> int:
        import os
        import time
        print("holding until", os.path.basename(gate), flush=True)
        while not os.path.exists(gate):
            time.sleep(0.05)
        print("released", flush=True)
        return 21


    @kiln.task
    def double(n: int) -> int:
        print("doubling", n, flush=True)
        return 2 * n


    @kiln.workflow(name="held")
    def held(gate: str = "") -> dict[str, int]:
        return {"n": double(n=hold(gate=gate).output).output}
''')


def _start(tmp_path, *args, env=None):
    """Starts ``python -m kiln ... run`` on the pipeline, the gate file not there yet."""
    (tmp_path / "held.py").write_text(PIPELINE)
    gate = tmp_path / "gate"
    cmd = [sys.executable, "-m", "kiln", *args, "run", "held.py:held", "-p", f"gate={gate}", "--logs"]
    full = dict(os.environ, PYTHONPATH=str(SRC), **(env or {}))
    return subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full), gate


def _first_line(proc):
    """The first line the command printed; the run holds until the gate exists."""
    line = proc.stdout.readline()
    assert line.startswith("Run held-"), line + proc.stderr.read()
    return line


def _finish(proc, gate):
    """Opens the gate and reads the rest of what the command prints (through
    the same buffered reader as the first lines: communicate() would read the
    pipe beneath it and lose what the reader already holds)."""
    gate.write_text("go")
    out = proc.stdout.read()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, out + err
    return out


def _check_progress(out, run_id):
    lines = out.splitlines()
    assert any(line.endswith(" hold Running attempt 1 started") for line in lines), out
    assert any(line.endswith(" hold Succeeded") for line in lines), out
    assert any(line.endswith(" double Succeeded") for line in lines), out
    assert "hold | released" in lines and "double | doubling 21" in lines, out
    # Each node's phases in the order they happened, the outcome last.
    assert out.index(" hold Succeeded") < out.index(" double Running") < out.index(" double Succeeded"), out
    assert lines[-2:] == [f"Run {run_id} Succeeded", "  n: 42"], out


def test_a_local_run_prints_its_id_at_once_then_progress_and_logs(local, kiln_bin, kiln_home, tmp_path):
    proc, gate = _start(tmp_path)
    try:
        first = _first_line(proc)
        run_id = first.split()[1]
        assert first.strip() == f"Run {run_id} (Workflow held submitted with 2 tasks)"
        # The run is still going: the task holds it.
        got = subprocess.run([kiln_bin, "--home", str(kiln_home), "get", "runs", run_id, "-o", "json"],
                             capture_output=True, text=True, check=True)
        assert json.loads(got.stdout)["status"]["phase"] in ("Pending", "Running")
    finally:
        out = _finish(proc, gate)
    _check_progress(out, run_id)


def test_a_server_run_prints_its_id_and_link_at_once_then_progress_and_logs(kiln_server, tmp_path):
    c = client(kiln_server)
    proc, gate = _start(tmp_path, "--server", kiln_server.url, "--token", kiln_server.token)
    try:
        first = _first_line(proc)
        run_id = first.split()[1]
        assert first.strip() == f"Run {run_id} (Workflow held submitted)"
        assert proc.stdout.readline().strip() == f"{kiln_server.url}/#/runs/{run_id}"
        assert c.get(run_id).phase in ("Pending", "Running")
    finally:
        out = _finish(proc, gate)
    _check_progress(out, run_id)


def test_workflow_run_prints_progress_and_can_be_quiet(kiln_server, tmp_path, capsys):
    c = client(kiln_server)
    (tmp_path / "gate").write_text("open")
    (tmp_path / "held.py").write_text(PIPELINE)
    held = runpy.run_path(str(tmp_path / "held.py"))["held"]
    run = held.run(params={"gate": str(tmp_path / "gate")}, client=c, workdir=tmp_path, timeout=120)
    out = capsys.readouterr().out
    assert out.startswith(f"Run {run.id} (Workflow held submitted)\n  {kiln_server.url}/#/runs/{run.id}\n"), out
    assert " double Succeeded" in out and "double | doubling" not in out, out
    quiet = held.run(params={"gate": str(tmp_path / "gate")}, client=c, workdir=tmp_path, timeout=120,
                     progress=False)
    assert quiet.succeeded and capsys.readouterr().out == ""
    assert isinstance(run, kiln.Run) and run.outputs == {"n": "42"}



GROUPS = textwrap.dedent('''
    import kiln


    @kiln.task
    def sq(x: int) -> int:
        print("squaring", x, flush=True)
        return x * x


    @kiln.workflow(name="groups")
    def groups() -> dict[str, str]:
        with kiln.for_each([1, 2]) as item:
            s = sq(x=item)
        with kiln.on_exit():
            kiln.command("bye", ["sh", "-c", "echo bye now"])()
        return {"s": s.output}
''')


def _run_groups(tmp_path, *args):
    """``python -m kiln ... run groups.py:groups --logs``: its standard output."""
    (tmp_path / "groups.py").write_text(GROUPS)
    cmd = [sys.executable, "-m", "kiln", *args, "run", "groups.py:groups", "--logs"]
    p = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def _check_group_logs(out):
    """A map's and an exit handler's children's logs, and no word of their
    groups' own logs, which do not exist (the server says so if asked)."""
    lines = out.splitlines()
    assert {"sq.0 | squaring 1", "sq.1 | squaring 2", "onExit.bye | bye now"} <= set(lines), out
    assert not [line for line in lines if line.startswith(("sq |", "onExit |"))], out
    assert "could not be read" not in out, out


def test_a_server_run_follows_the_logs_of_a_groups_children_not_the_group(kiln_server, tmp_path):
    _check_group_logs(_run_groups(tmp_path, "--server", kiln_server.url, "--token", kiln_server.token))


def test_a_local_run_follows_the_logs_of_a_groups_children_not_the_group(local, tmp_path):
    _check_group_logs(_run_groups(tmp_path))
