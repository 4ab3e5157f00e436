"""The flagship example's scripts (examples/pipeline/*.py) flush each line
they print. A task's stdout is a pipe, which Python buffers unless
PYTHONUNBUFFERED is set (a server gives tasks a clean environment, without
it): unflushed, every line would reach the log at once when the script
exits, with one time, nothing would show while following it, and a failed
run's excerpt could put the error (stderr, unbuffered) before them."""

import ast
import pathlib

import pytest

SCRIPTS = sorted((pathlib.Path(__file__).resolve().parents[3] / "examples" / "pipeline").glob("*.py"))


def _prints(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"]


def _flushes(call):
    return any(k.arg == "flush" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in call.keywords)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_each_print_of_the_example_flushes(script):
    tree = ast.parse(script.read_text())
    prints = _prints(tree)
    assert prints, f"{script.name} prints nothing: the test reads nothing"
    unflushed = [f"{script.name}:{c.lineno}" for c in prints if not _flushes(c)]
    assert not unflushed, f"print(..., flush=True) at {', '.join(unflushed)}"
