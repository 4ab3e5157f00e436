"""Maps, conditions, gates, exit handlers, subworkflows, templates and
dynamic tasks written in Python compile to exactly the YAML the docs show
(the README's "Maps, conditions, ..." example and docs/python.md's), and a
map, a condition and a gate run for real on ``kiln serve``."""

import pathlib
import re
import runpy

import pytest
import yaml

import kiln
from client_support import client, until

ROOT = pathlib.Path(__file__).resolve().parents[3]
_BLOCK = re.compile(r"^```(python|yaml)\n(.*?)^```", re.M | re.S)


def _blocks(text, after):
    """The code blocks of text after the heading after, as (language, code)."""
    return _BLOCK.findall(text[text.index(after):])


def _python_example(tmp_path, name):
    """docs/python.md's python block that defines name, run as a file."""
    for lang, code in _blocks((ROOT / "docs" / "python.md").read_text(), "# Pipelines in Python"):
        if lang == "python" and f"def {name}(" in code:
            path = tmp_path / f"{name}.py"
            path.write_text(code)
            return runpy.run_path(str(path))
    raise AssertionError(f"docs/python.md has no python example defining {name}")


def test_the_readme_example_in_python_compiles_to_the_readme_yaml(tmp_path):
    readme = (ROOT / "README.md").read_text()
    want = yaml.safe_load(next(c for lang, c in _blocks(readme, "## Maps, conditions, subworkflows, gates and exit "
                                                            "handlers") if lang == "yaml"))
    assert _python_example(tmp_path, "tune")["tune"].to_dict() == want


def test_subworkflows_templates_and_dynamic_tasks_compile_to_the_docs_yaml(tmp_path):
    docs = (ROOT / "docs" / "python.md").read_text()
    want = list(yaml.safe_load_all(next(c for lang, c in _blocks(docs, "compiles to these documents")
                                        if lang == "yaml")))
    g = _python_example(tmp_path, "study")
    assert g["study"].documents() == want
    assert list(yaml.safe_load_all(g["study"].to_yaml())) == want
    assert g["fit_one"].as_template().to_dict()["kind"] == "WorkflowTemplate"


def test_conditions_render_as_cel():
    seen = {}

    @kiln.workflow(name="cel")
    def cel(mode: str = "full", n: int = 3) -> None:
        a = kiln.command("a", ["true"], parameters=["loss"])()
        seen["c"] = ((mode == "full") & (n > 2)) | ~a.failed
        seen["d"] = (a.outputs.loss < 0.5) & (a.phase != "Skipped")
        with kiln.condition(mode == "fast"):
            with kiln.condition(seen["c"]):
                kiln.command("b", ["true"])()

    assert str(seen["c"]) == 'params.mode == "full" && params.n > 2 || !tasks.a.failed'
    assert str(seen["d"]) == 'tasks.a.outputs.parameters.loss < 0.5 && tasks.a.phase != "Skipped"'
    b = cel.to_dict()["spec"]["tasks"][1]
    assert b["when"] == 'params.mode == "fast" && (params.mode == "full" && params.n > 2 || !tasks.a.failed)'
    assert b["dependsOn"] == ["a"]  # the condition reads a


def test_a_condition_cannot_be_tested_in_python():
    with pytest.raises(TypeError, match="decided when the run runs"):
        @kiln.workflow(name="iffy")
        def iffy(mode: str = "full") -> None:
            if mode == "full":
                kiln.command("a", ["true"])()


MAPPED = '''
import kiln

grid = kiln.command("grid", ["sh", "-c", "echo '[1, 2, 3]' > $KILN_OUTPUTS/grid"], parameters=["grid"])


@kiln.task
def square(x: int) -> int:
    return x * x


@kiln.task
def total(xs: str) -> int:
    import json
    return sum(int(v) for v in json.loads(xs))


@kiln.workflow(name="mapped")
def mapped(mode: str = "full") -> dict[str, str]:
    g = grid()
    with kiln.for_each(g.outputs.grid, max_parallel=2) as item:
        squares = square(x=item)
    with kiln.condition(mode == "full"):
        t = total(xs=squares.output)
    with kiln.condition(mode != "full"):
        total(xs=squares.output)                      # total-2, skipped
    kiln.gate("ship", approve="ship the total?").after(t)
    with kiln.on_exit():
        kiln.command("done", ["sh", "-c", f"echo run {kiln.WORKFLOW_STATUS}"])()
    return {"total": t.output}
'''


def test_a_map_a_condition_a_gate_and_an_exit_handler_run_on_a_server(kiln_server, tmp_path):
    (tmp_path / "mapped.py").write_text(MAPPED)
    mapped = runpy.run_path(str(tmp_path / "mapped.py"))["mapped"]
    c = client(kiln_server)
    run = mapped.run(client=c, wait=False, workdir=tmp_path, progress=False)
    until(lambda: c.get(run.id).node("ship").phase == "Running", timeout=120, what="the gate to wait")
    assert c.get(run.id).phase == "Running"  # held by the gate
    c.approve(run.id, "ship", reason="looks right")
    done = c.wait(run.id, timeout=120)
    assert done.phase == "Succeeded", done
    assert done.outputs == {"total": "14"}
    assert done.node("square").children["succeeded"] == 3
    assert done.node("total").phase == "Succeeded" and done.node("total-2").phase == "Skipped"
    assert done.node("onExit").phase == "Succeeded"
    assert c.logs(run.id, "onExit.done") and list(c.logs(run.id, "onExit.done")) == ["run Succeeded"]


NESTED = '''
import kiln


@kiln.task
def add(a: int, b: int) -> int:
    return a + b


@kiln.workflow(name="plus")
def plus(a: int = 1, b: int = 2) -> dict[str, str]:
    return {"sum": add(a=a, b=b).output}


@kiln.workflow(name="outer")
def outer(n: int = 5) -> dict[str, str]:
    with kiln.for_each(range(3)) as item:
        each = plus(a=n, b=item)
    return {"sums": each.outputs.sum}
'''


def test_a_map_over_a_subworkflow_runs_locally(local, tmp_path):
    import json

    (tmp_path / "outer.py").write_text(NESTED)
    outer = runpy.run_path(str(tmp_path / "outer.py"))["outer"]
    assert [d["metadata"]["name"] for d in outer.documents()] == ["outer", "plus"]
    run = outer.run(params={"n": 10}, workdir=tmp_path, progress=False)
    assert run.succeeded
    assert json.loads(run.outputs["sums"]) == ["10", "11", "12"]


def test_a_stored_template_runs_as_a_task_on_a_server(kiln_server, tmp_path):
    """as_template() is stored as kiln apply stores it; kiln.template runs it."""
    (tmp_path / "outer.py").write_text(NESTED)
    plus = runpy.run_path(str(tmp_path / "outer.py"))["plus"]
    c = client(kiln_server)
    stored = c.apply_templates(plus.as_template())
    assert [t.name for t in stored] == ["plus"]

    @kiln.workflow(name="uses-plus")
    def uses_plus(n: int = 4) -> dict[str, str]:
        return {"sum": kiln.template("plus", {"a": n, "b": 3}, outputs=["sum"]).outputs.sum}

    assert uses_plus.to_dict()["spec"]["tasks"] == [
        {"name": "plus", "workflow": {"name": "plus", "params": [{"name": "a", "value": "{{params.n}}"},
                                                              {"name": "b", "value": "3"}]}}]
    run = uses_plus.run(client=c, workdir=tmp_path, timeout=120, progress=False)
    assert run.outputs == {"sum": "7"}
