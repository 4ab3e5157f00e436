"""What a user sees when a Python pipeline goes wrong: errors and records
that name where it was defined (not a file that does not exist), params
checked against their annotations before anything runs, a failed run that
says which task failed and how to read its logs, and placeholders that
refuse to be used as Python values."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import kiln
from kiln.dsl import KilnError

HERE = pathlib.Path(__file__).resolve().parent
SRC = HERE.parent / "src"



@kiln.task
def echo_flag(flag: bool, n: int) -> str:
    print("flag", flag, "n", n)
    return f"{flag}-{n}"


@kiln.workflow(name="typed")
def typed(flag: bool = False, n: int = 1):
    return echo_flag(flag=flag, n=n)


@kiln.task
def explode(code: int):
    import sys

    print("about to fail with", code)
    sys.exit(code)


@kiln.workflow(name="explodes")
def explodes():
    explode(code=4)


bad_cpu = kiln.command("bad", ["python3", "-c", "pass"], resources={"cpu": "lots"})


@kiln.workflow(name="badcpu")
def badcpu():
    bad_cpu()


ORIGIN = f"{os.path.relpath(__file__)}:badcpu" if not os.path.relpath(__file__).startswith("..") else None


def test_validate_names_the_python_function_not_a_temp_file(kiln_bin):
    with pytest.raises(KilnError) as e:
        badcpu.validate(kiln_bin=kiln_bin)
    assert badcpu.origin.endswith("test_pipeline_errors.py:badcpu")
    assert e.value.file == badcpu.origin
    assert "/tmp/" not in str(e.value) and "workflow.yaml" not in str(e.value)
    assert str(e.value).startswith(f"{e.value.code} {badcpu.origin}: Workflow/badcpu")


def test_local_run_errors_name_the_python_function(local, tmp_path):
    with pytest.raises(KilnError) as e:
        badcpu.run(workdir=str(tmp_path))
    assert e.value.file == badcpu.origin
    assert " -: " not in str(e.value)


def test_origin_is_relative_beneath_the_current_directory(monkeypatch):
    monkeypatch.chdir(HERE)
    assert kiln.workflow(name="o")(badcpu.fn).origin == "test_pipeline_errors.py:badcpu"
    monkeypatch.chdir("/")
    assert kiln.workflow(name="o")(badcpu.fn).origin == f"{__file__.lstrip('/')}:badcpu"


def test_a_server_run_records_the_python_function_as_its_source(kiln_server, tmp_path):
    client = kiln.Client(server=kiln_server.url, token=kiln_server.token)
    run = typed.run(params={"flag": True, "n": 2}, client=client, workdir=str(HERE), timeout=60)
    assert run.outputs == {"output": "True-2"}
    assert run.source == f"{HERE / 'test_pipeline_errors.py'}:typed"
    # Run from elsewhere: no file is named rather than one that does not exist.
    run = typed.run(params={"flag": True, "n": 2}, client=client, workdir=str(tmp_path), timeout=60)
    assert run.outputs == {"output": "True-2"} and run.source == "-"


def test_server_refusals_name_the_python_function(kiln_server, tmp_path):
    client = kiln.Client(server=kiln_server.url, token=kiln_server.token)
    for workdir in (HERE, tmp_path):
        with pytest.raises(KilnError) as e:
            badcpu.run(client=client, workdir=str(workdir))
        assert e.value.code == "KLN-1010" and e.value.file == badcpu.origin, str(e.value)


@pytest.mark.parametrize("params, expected", [
    ({"flag": "maybe"}, "workflow typed param flag: expected bool, got 'maybe'"),
    ({"n": "abc"}, "workflow typed param n: expected int, got 'abc'"),
    ({"n": 1.5}, "workflow typed param n: expected int, got 1.5"),
    ({"n": True}, "workflow typed param n: expected int, got True"),
])
def test_params_are_checked_against_annotations_before_running(params, expected):
    client = kiln.Client(server="http://127.0.0.1:9", token="unused")  # never reached
    with pytest.raises(TypeError) as e:
        typed.run(params=params, client=client)
    assert str(e.value) == expected


def test_an_unknown_param_is_refused_before_running():
    client = kiln.Client(server="http://127.0.0.1:9", token="unused")
    with pytest.raises(KilnError) as e:
        typed.run(params={"flg": True}, client=client)
    assert e.value.code == "KLN-1014" and "flg" in str(e.value) and "flag, n" in str(e.value)


def test_param_texts_of_the_right_type_pass(local, tmp_path):
    run = typed.run(params={"flag": "yes", "n": "7"}, workdir=str(tmp_path))
    assert run.outputs == {"output": "True-7"}


def test_a_failed_local_run_names_the_task_its_message_and_logs(local, tmp_path):
    with pytest.raises(KilnError) as e:
        explodes.run(workdir=str(tmp_path))
    err, run_id = e.value, e.value.run.id
    text = str(err)
    assert err.code == "KLN-3002" and err.task == "explode"
    assert "task explode" in text and "exited with code 4" in text
    assert f"read its logs with: kiln logs {run_id} explode" in text  # a local run: the kiln CLI reads them
    assert "about to fail with 4" in text  # the log's last lines
    assert text.count(run_id) == 2  # the object, and the logs command


def test_a_failed_server_run_brings_the_log_tail(kiln_server, tmp_path):
    client = kiln.Client(server=kiln_server.url, token=kiln_server.token)
    with pytest.raises(KilnError) as e:
        explodes.run(client=client, workdir=str(tmp_path), timeout=60)
    assert e.value.run.source == "-"
    assert "about to fail with 4" in str(e.value)
    assert f"python -m kiln logs {e.value.run.id} explode" in str(e.value)


@pytest.mark.parametrize("use, words", [
    (lambda p: p + 1, "arithmetic (+)"),
    (lambda p: 1 + p, "arithmetic (+)"),
    (lambda p: bool(p), "tested for truth"),
    (lambda p: [x for x in p], "be iterated over"),
    (lambda p: range(p), "used as an integer"),
    (lambda p: len(p), "len()"),
    (lambda p: p[0], "be indexed"),
])
def test_placeholders_refuse_python_use_and_say_what_to_do(use, words):
    def wf(n: int = 3):
        use(n)
        echo_flag(flag=True, n=n)

    with pytest.raises(TypeError) as e:
        kiln.workflow(name="misuse")(wf)
    text = str(e.value)
    assert words in text and "{{params.n}}" in text and "fills in at run time" in text
    assert "f-string" in text and "when=" in text and "task" in text


def test_an_output_refuses_python_use_too():
    def wf():
        out = echo_flag(flag=True, n=1).output
        if out:
            pass

    with pytest.raises(TypeError) as e:
        kiln.workflow(name="misuse-out")(wf)
    assert "({{tasks.echo-flag.outputs.parameters.output}})" in str(e.value) and "tested for truth" in str(e.value)


@kiln.task
def make(rows: int, data: kiln.OutputPath("data.csv")) -> int:
    with open(data, "w") as f:
        f.write("x\n" * rows)
    return rows


def test_output_means_the_only_parameter_beside_artifacts():
    @kiln.workflow(name="made")
    def made(rows: int = 2):
        return make(rows=rows).output

    assert made.to_dict()["spec"]["outputs"]["parameters"] == [
        {"name": "output", "value": "{{tasks.make.outputs.parameters.output}}"}]


def test_output_with_no_single_parameter_names_the_outputs_spelling():
    @kiln.task
    def arts(a: kiln.OutputPath("a.txt"), b: kiln.OutputPath("b.txt")):
        pass

    def wf():
        return arts().output

    with pytest.raises(TypeError) as e:
        kiln.workflow(name="arts")(wf)
    assert ".outputs.a or .outputs.b" in str(e.value)
    assert "outputs[NAME]" not in str(e.value)


def _cli(*args, cwd, env):
    return subprocess.run([sys.executable, "-m", "kiln", *args], capture_output=True, text=True, cwd=cwd,
                          env={**env, "PYTHONPATH": str(SRC)})


PIPE = '''
import kiln

@kiln.task
def add(a: int, b: int) -> int:
    return a + b

@kiln.task
def boom(code: int):
    import sys
    print("boom log line")
    sys.exit(code)

@kiln.workflow(name="adds")
def adds(a: int = 1, b: int = 2):
    return {"sum": add(a=a, b=b).output}

@kiln.workflow(name="booms")
def booms():
    boom(code=5)
'''


def test_cli_run_prints_outputs_or_the_failure(local, tmp_path):
    (tmp_path / "p.py").write_text(PIPE)
    env = {k: v for k, v in os.environ.items()}
    ok = _cli("run", "p.py:adds", "-p", "a=4", cwd=tmp_path, env=env)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("Run adds-") and " Succeeded" in ok.stdout
    assert "sum: 6" in ok.stdout
    bad = _cli("run", "p.py:booms", cwd=tmp_path, env=env)
    assert bad.returncode == 1
    run_id = bad.stdout.split()[1]
    out = bad.stdout + bad.stderr
    assert "Failed" in out and "KLN-3002" in out and "task boom" in out and "exited with code 5" in out
    assert f"kiln logs {run_id} boom" in out and "boom log line" in out
    typo = _cli("run", "p.py:adds", "-p", "a=x", cwd=tmp_path, env=env)
    assert typo.returncode == 2 and "workflow adds param a: expected int, got 'x'" in typo.stderr


hello_job = kiln.TrainJob("hello", runtime="plain", num_nodes=1,
                          command=["python3", "-c", "print('hello from the trainer')"])


def test_a_trainjob_runs_one_task_named_trainer_as_documented(kiln_server, tmp_path):
    client = kiln.Client(server=kiln_server.url, token=kiln_server.token)
    run = hello_job.run(client=client, workdir=str(tmp_path), timeout=60)
    assert [n.name for n in run.status.nodes] == ["trainer"]
    assert any("hello from the trainer" in line for line in client.logs(run.id, "trainer", follow=True))
    assert hello_job.origin.endswith("test_pipeline_errors.py:hello")
