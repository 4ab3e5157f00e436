"""The program embedded in a function task: only the entry code its
signature needs, a NamedTuple returned as itself, and real local runs of
each shape (one output, several, bools, artifacts)."""

from __future__ import annotations

import os
import pathlib
from typing import NamedTuple

import pytest

import kiln



class Stats(NamedTuple):
    mean: float
    n: int
    ok: bool


@kiln.task
def stats(a: float, b: float, strict: bool) -> Stats:
    return Stats((a + b) / 2, 2, not strict)


@kiln.task
def add(a: int, b: int) -> int:
    return a + b


@kiln.task
def note(text: str):
    print(text)


@kiln.task
def make(rows: int, data: kiln.OutputPath("data.csv")) -> int:
    with open(data, "w") as f:
        f.write("x\n" * rows)
    return rows


@kiln.task
def count(data: kiln.InputPath) -> int:
    with open(data) as f:
        return len(f.read().splitlines())


@kiln.workflow(name="shapes")
def shapes(a: float = 1.0, strict: bool = False):
    s = stats(a=a, b=3.0, strict=strict)
    total = add(a=s.outputs.n, b=40)
    note(text=f"mean {s.outputs.mean}")
    made = make(rows=total.output)
    return {"mean": s.outputs.mean, "ok": s.outputs.ok, "rows": count(data=made.outputs.data).output}


def _program(wf, task):
    node = next(t for t in wf.to_dict()["spec"]["tasks"] if t["name"] == task)
    return node.get("train", node)["command"][2]


def test_the_entry_holds_only_what_the_signature_needs(kiln_bin):
    prog = _program(shapes, "add")
    entry = prog.split("return a + b", 1)[1]
    assert len(entry.strip().splitlines()) <= 14, entry
    assert "_kiln_bool" not in prog and "RANK" not in prog and "float(" not in entry
    assert "int(_kiln_args['--a'])" in prog
    assert "_kiln_bool('strict', _kiln_args['--strict'])" in _program(shapes, "stats")
    assert "_kiln_write" not in _program(shapes, "note") and "import os" not in _program(shapes, "note")
    assert "os.path.join(_kiln_out, 'data.csv')" in _program(shapes, "make")
    shapes.validate(kiln_bin=kiln_bin)


def test_a_training_task_keeps_the_rank_check():
    @kiln.task(train=kiln.Train(num_nodes=2))
    def fit(steps: int) -> float:
        return 0.5

    @kiln.workflow(name="trains")
    def trains():
        fit(steps=3)

    assert "'OMPI_COMM_WORLD_RANK'" in _program(trains, "fit")


def test_a_namedtuple_return_is_defined_in_the_program():
    prog = _program(shapes, "stats")
    assert "Stats = __import__(\"collections\").namedtuple('Stats', ['mean', 'n', 'ok'])" in prog


def test_every_shape_runs_locally(local, tmp_path):
    run = shapes.run(params={"a": 2.0, "strict": "false"}, workdir=str(tmp_path))
    assert run.outputs == {"mean": "2.5", "ok": "true", "rows": "42"}
    run = shapes.run(params={"strict": True}, workdir=str(tmp_path))
    assert run.outputs["ok"] == "false"


class Other(NamedTuple):
    x: int


def test_another_global_says_how_to_return_several_values():
    def f(a: int) -> int:
        return Other(a).x

    with pytest.raises(ValueError) as e:
        kiln.task(f)
    assert "reads the global name(s) Other" in str(e.value)
    assert "return a plain tuple, a dict by output name, or the NamedTuple of the return annotation" in str(e.value)


NT_FILE = '''
import os
import pathlib
from typing import NamedTuple
import kiln

class Pair(NamedTuple):
    lo: int
    hi: int

@kiln.task
def span(a: int, b: int) -> Pair:
    return Pair(min(a, b), max(a, b))

@kiln.workflow(name="spans")
def spans(a: int = 5, b: int = 2):
    p = span(a=a, b=b)
    return {"lo": p.outputs.lo, "hi": p.outputs.hi}
'''


def test_cli_compiles_a_file_whose_task_returns_a_namedtuple(kiln_bin, tmp_path):
    import subprocess
    import sys

    (tmp_path / "spans.py").write_text(NT_FILE)
    src = str(pathlib.Path(__file__).resolve().parents[1] / "src")
    out = subprocess.run([sys.executable, "-m", "kiln", "compile", "spans.py:spans", "-o", "spans.yaml"],
                         cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": src})
    assert out.returncode == 0, out.stderr
    checked = subprocess.run([kiln_bin, "validate", "spans.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    ran = subprocess.run([kiln_bin, "--home", str(tmp_path / "home"), "run", "-q", "spans.yaml"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert ran.returncode == 0 and "hi=5" in ran.stdout and "lo=2" in ran.stdout, ran.stdout + ran.stderr
