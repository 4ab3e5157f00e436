"""Pipelines written in Python: compiled YAML that kiln validates, the
example pipeline equal to examples/pipeline.yaml, function tasks passing
parameters and artifacts in real local runs, and clear errors."""

import json
import pathlib
import runpy
import subprocess
from typing import NamedTuple

import pytest

import kiln
from kiln.dsl import KilnError

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def _kiln(kiln_bin, home, *args, cwd=None, stdin=None):
    return subprocess.run([kiln_bin, "--home", str(home), *args], capture_output=True, text=True, cwd=cwd,
                          input=stdin)


def _run_json(kiln_bin, home, run_id):
    out = _kiln(kiln_bin, home, "get", "runs", run_id, "-o", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _phase(run):
    return run.phase


def _id(run):
    return run.id


def _node_outputs(run, name):
    return run.node(name).outputs



def _example():
    return runpy.run_path(str(EXAMPLES / "python" / "pipeline.py"))["linear_fit"]


def test_example_compiles_to_yaml_kiln_validates(tmp_path, kiln_bin):
    path = tmp_path / "linear-fit.yaml"
    _example().save(path)
    out = subprocess.run([kiln_bin, "validate", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "Workflow/linear-fit (4 tasks)" in out.stdout
    assert _example().to_yaml() == path.read_text(), "compiling twice gives other text"


def test_example_is_the_yaml_example_and_runs(local, kiln_bin):
    """Both forms run; kiln stores the spec it read from each: they are equal."""
    yaml_run = _kiln(kiln_bin, local, "run", "-q", str(EXAMPLES / "pipeline.yaml"), "-p", "epochs=300")
    assert yaml_run.returncode == 0, yaml_run.stdout + yaml_run.stderr
    yaml_id = yaml_run.stdout.split()[1]
    run = _example().run(params={"epochs": 300}, workdir=str(EXAMPLES))
    assert _phase(run) == "Succeeded"
    from_yaml = _run_json(kiln_bin, local, yaml_id)["workflow"]
    from_python = _run_json(kiln_bin, local, _id(run))["workflow"]
    assert from_python == from_yaml
    assert _node_outputs(run, "evaluate")["best"].startswith("lr=0.1 ")
    assert _node_outputs(run, "prepare") == {"rows": "2000"}


class Stats(NamedTuple):
    total: float
    count: int
    big: bool


@kiln.task(cache="1", resources={"cpu": "250m"})
def make_rows(rows: int, data: kiln.OutputPath("data.csv")) -> int:
    with open(data, "w") as f:
        for i in range(rows):
            f.write(f"{i},{2 * i}\n")
    return rows


@kiln.task(retries=1, timeout=60)
def summarize(data: kiln.InputPath, scale: float = 1.0, label: str = "x", strict: bool = False) -> Stats:
    import csv

    with open(data) as f:
        values = [float(r[1]) for r in csv.reader(f)]
    total = sum(values) * scale
    print(f"{label}: {total}")
    return (total, len(values), strict and total > 10)


@kiln.task
def report(total: float, label: str, note: kiln.OutputPath) -> str:
    import os

    os.makedirs(note)
    with open(os.path.join(note, "report.txt"), "w") as f:
        f.write(f"{label} {total}")
    return f"{label}={total}"


@kiln.workflow(name="fn-demo", timeout="5m", fail_fast=True)
def fn_demo(rows: int = 5, label: str = "yes", strict: bool = True):
    made = make_rows(rows=rows)
    stats = summarize(made.outputs.data, scale=0.5, label=label, strict=strict)
    again = summarize(made.outputs.data, label="no")
    rep = report(total=stats.outputs.total, label=f"{label}-{again.outputs.count}")
    return {"total": stats.outputs.total, "line": rep.outputs.output, "note": rep.outputs.note}


def test_function_tasks_compile_with_their_inputs_and_outputs(kiln_bin, tmp_path):
    doc = fn_demo.to_dict()
    assert doc["spec"]["params"] == [{"name": "rows", "default": "5"}, {"name": "label", "default": "yes"},
                                     {"name": "strict", "default": "true"}]
    tasks = {t["name"]: t for t in doc["spec"]["tasks"]}
    assert list(tasks) == ["make-rows", "summarize", "summarize-2", "report"]
    assert tasks["make-rows"]["command"][:2] == ["python3", "-c"]
    assert tasks["make-rows"]["outputs"] == {"parameters": [{"name": "output"}],
                                             "artifacts": [{"name": "data", "path": "data.csv"}]}
    assert tasks["make-rows"]["cache"] == {"version": "1"} and tasks["make-rows"]["resources"] == {"cpu": "250m"}
    assert tasks["summarize"]["args"] == ["--data", "{{tasks.make-rows.outputs.artifacts.data}}", "--scale", "0.5",
                                          "--label", "{{params.label}}", "--strict", "{{params.strict}}"]
    assert tasks["summarize"]["retries"] == {"limit": 1} and tasks["summarize"]["timeout"] == "60s"
    assert tasks["report"]["dependsOn"] == ["summarize", "summarize-2"]
    assert tasks["report"]["args"][-1] == "{{params.label}}-{{tasks.summarize-2.outputs.parameters.count}}"
    assert doc["spec"]["outputs"] == {
        "parameters": [{"name": "total", "value": "{{tasks.summarize.outputs.parameters.total}}"},
                       {"name": "line", "value": "{{tasks.report.outputs.parameters.output}}"}],
        "artifacts": [{"name": "note", "value": "{{tasks.report.outputs.artifacts.note}}"}]}
    kiln.dsl.runner.validate(fn_demo.to_yaml(), kiln_bin=kiln_bin)


def test_function_tasks_pass_parameters_and_artifacts(local, kiln_bin, tmp_path):
    run = fn_demo.run(params={"rows": 10, "label": "sum"}, workdir=str(tmp_path))
    assert _phase(run) == "Succeeded"
    assert _node_outputs(run, "make-rows") == {"output": "10"}
    assert _node_outputs(run, "summarize") == {"total": "45.0", "count": "10", "big": "true"}
    assert _node_outputs(run, "summarize-2") == {"total": "90.0", "count": "10", "big": "false"}
    assert _node_outputs(run, "report") == {"output": "sum-10=45.0"}
    logs = _kiln(kiln_bin, local, "logs", _id(run), "summarize")
    assert "sum: 45.0" in logs.stdout, logs.stdout + logs.stderr


@kiln.task
def fail_loudly(code: int) -> None:
    import sys

    sys.exit(code)


@kiln.workflow(name="fails")
def fails():
    fail_loudly(code=3)


def test_a_failed_run_raises_with_its_code(local, tmp_path):
    with pytest.raises(KilnError) as e:
        fails.run(workdir=str(tmp_path))
    assert e.value.code == "KLN-3002"
    assert e.value.task == "fail-loudly" and "task fail-loudly failed" in str(e.value)
    assert _phase(e.value.run) == "Failed"
    run = fails.run(workdir=str(tmp_path), check=False)
    assert _phase(run) == "Failed"


def test_kiln_rejects_come_back_with_code_and_field(local, tmp_path):
    bad = kiln.command("bad", ["python3", "-c", "pass"], extra={"timeout": "soon"})

    @kiln.workflow(name="rejected")
    def rejected():
        bad()

    with pytest.raises(KilnError) as e:
        rejected.validate()
    assert e.value.code == "KLN-1009"
    assert e.value.field == "spec.tasks[0].timeout"
    assert e.value.object == "Workflow/rejected"
    with pytest.raises(KilnError) as e:
        rejected.run(workdir=str(tmp_path))
    assert e.value.code == "KLN-1009" and e.value.field == "spec.tasks[0].timeout"


def test_cycle_is_refused_with_its_path():
    a = kiln.command("a", ["true"])
    b = kiln.command("b", ["true"])
    with pytest.raises(KilnError) as e:
        @kiln.workflow(name="loop")
        def loop():
            first = a()
            second = b().after(first)
            first.after(second)
    assert e.value.code == "KLN-1008"
    assert "a -> b -> a" in str(e.value)


def test_after_orders_tasks_that_share_no_data():
    a = kiln.command("a", ["true"])
    b = kiln.command("b", ["true"])

    @kiln.workflow(name="ordered")
    def ordered():
        first = a()
        second = b().after(first)
        b().after(first, second)

    tasks = ordered.to_dict()["spec"]["tasks"]
    # Tasks given to after() are listed as given (as the README's report lists sweep and ship).
    assert [(t["name"], t.get("dependsOn")) for t in tasks] == [("a", None), ("b", ["a"]), ("b-2", ["a", "b"])]


def test_duplicate_names_are_refused():
    a = kiln.command("a", ["true"])
    with pytest.raises(KilnError) as e:
        @kiln.workflow(name="dup")
        def dup():
            a()
            a().with_overrides(name="a")
    assert e.value.code == "KLN-1006" and "two tasks are named a" in str(e.value)


def test_unknown_input_and_wrong_types_name_the_task_and_argument():
    with pytest.raises(TypeError, match=r"task summarize: .*unexpected keyword argument 'nope'"):
        @kiln.workflow(name="w1")
        def w1():
            summarize(data="/x", nope=1)
    with pytest.raises(TypeError, match=r"task make-rows argument rows: expected int, got str"):
        @kiln.workflow(name="w2")
        def w2():
            make_rows(rows="many")
    with pytest.raises(TypeError, match=r"task summarize argument data: a kiln.InputPath takes an artifact"):
        @kiln.workflow(name="w3")
        def w3():
            made = make_rows(rows=1)
            summarize(data=made.outputs.output)
    with pytest.raises(TypeError, match=r"task report argument total: make-rows.data is an artifact"):
        @kiln.workflow(name="w4")
        def w4():
            report(total=make_rows(rows=1).outputs.data, label="x")
    with pytest.raises(TypeError, match=r"task make-rows: data is an output"):
        @kiln.workflow(name="w5")
        def w5():
            make_rows(rows=1, data="/tmp/x")
    with pytest.raises(KeyError, match="task make-rows has no output 'nope'"):
        @kiln.workflow(name="w6")
        def w6():
            make_rows(rows=1).outputs["nope"]


def test_output_of_another_workflow_is_an_unknown_dependency():
    kept = {}

    @kiln.workflow(name="one")
    def one():
        kept["made"] = make_rows(rows=1)

    with pytest.raises(KilnError) as e:
        @kiln.workflow(name="two")
        def two():
            summarize(data=kept["made"].outputs.data)
    assert e.value.code == "KLN-1007"


def test_functions_that_cannot_run_alone_are_refused_clearly():
    with pytest.raises(ValueError, match="a lambda cannot be a task"):
        kiln.task(lambda: None)
    factor = 3

    def closure(x: int) -> int:
        return x * factor

    with pytest.raises(ValueError, match="reads factor from the function around it"):
        kiln.task(closure)

    def uses_global(x: str) -> str:
        return json.dumps(x)

    with pytest.raises(ValueError, match="reads the global name.*json.*import modules inside the function"):
        kiln.task(uses_global)

    def untyped(x):
        return x

    with pytest.raises(TypeError, match="task untyped parameter x: annotate it"):
        kiln.task(untyped)
    with pytest.raises(RuntimeError, match="called outside a workflow"):
        make_rows(rows=1)


def test_task_options_are_checked_at_definition():
    with pytest.raises(TypeError, match="unknown option.*memory"):
        kiln.command("x", ["true"], memory="1Gi")
    with pytest.raises(ValueError, match="resources take cpu, memory and gpu, not disk"):
        kiln.command("x", ["true"], resources={"disk": "1"})
    with pytest.raises(TypeError, match="a duration is a string"):
        kiln.command("x", ["true"], timeout=[1])


def test_cli_compiles_and_runs(local, tmp_path):
    from kiln.dsl.cli import main

    out = tmp_path / "lf.yaml"
    assert main(["compile", f"{EXAMPLES}/python/pipeline.py:linear_fit", "-o", str(out)]) == 0
    assert out.read_text() == _example().to_yaml()
    rc = subprocess.run(
        ["/usr/bin/python3", "-c", "import sys; from kiln.dsl.cli import main; sys.exit(main(sys.argv[1:]))",
         "run", "python/pipeline.py:linear_fit", "-p", "epochs=300"],
        cwd=EXAMPLES, capture_output=True, text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "sdk" / "python" / "src")})
    assert rc.returncode == 0, rc.stdout + rc.stderr
    assert rc.stdout.startswith("Run linear-fit-") and rc.stdout.strip().endswith("Succeeded")
