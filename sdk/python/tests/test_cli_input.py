"""Bad input to ``python -m kiln compile`` and ``run`` (a file or binary
that is not there, a MODULE:NAME that names nothing, a directory that
cannot be written) ends in one coded line on standard error, exit status 2
as for any usage error: never a Python traceback."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
SRC = ROOT / "sdk" / "python" / "src"
PIPELINE = str(ROOT / "examples" / "python" / "pipeline.py")


def kiln_py(tmp_path, *args, env=None):
    """Runs python -m kiln in tmp_path with no server configured."""
    full = dict(os.environ, PYTHONPATH=str(SRC), KILN_HOME=str(tmp_path / "home"), KILN_SERVER="", KILN_TOKEN="")
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "kiln", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env=full)


def _one_usage_line(p, *words):
    """p failed as a usage error does, in one line holding each of words."""
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("KLN-4002") and len(p.stderr.strip().splitlines()) == 1, p.stderr
    for word in words:
        assert word in p.stderr, p.stderr
    return p.stderr


@pytest.mark.parametrize("bin_", ["/nope", "README-is-no-binary"])
def test_a_kiln_bin_that_names_no_binary_is_named(tmp_path, bin_):
    (tmp_path / "README-is-no-binary").write_text("not a program\n")
    p = kiln_py(tmp_path, "run", f"{PIPELINE}:linear_fit", env={"KILN_BIN": bin_})
    _one_usage_line(p, f"KILN_BIN={bin_} names no kiln binary", "(hint: set KILN_BIN to the kiln binary's path")


def test_compile_to_a_file_that_cannot_be_written(tmp_path):
    _one_usage_line(kiln_py(tmp_path, "compile", f"{PIPELINE}:linear_fit", "-o", "/nonexistent/x.yaml"),
                    "cannot write /nonexistent/x.yaml: No such file or directory")
    _one_usage_line(kiln_py(tmp_path, "compile", f"{PIPELINE}:linear_fit", "-o", str(tmp_path)),
                    f"cannot write {tmp_path}")


@pytest.mark.parametrize("ref, says", [
    ("nope.py:x", "nope.py: no such file"),
    ("{tmp}:x", "{tmp}: not a file"),
    (".:x", "'.:x': name a pipeline as MODULE:NAME or FILE.py:NAME"),
    (f"{PIPELINE}:nope", f"{PIPELINE} has no nope (its pipelines: linear_fit)"),
    (f"{PIPELINE}:kiln", "kiln is a module, not a @kiln.workflow"),
    ("no_such_module:x", "no_such_module:x: No module named 'no_such_module'"),
    (PIPELINE, "name a pipeline as MODULE:NAME or FILE.py:NAME"),
])
def test_a_spec_that_names_no_pipeline(tmp_path, ref, says):
    _one_usage_line(kiln_py(tmp_path, "compile", ref.format(tmp=tmp_path)), says.format(tmp=tmp_path))


def test_run_with_a_workdir_that_is_not_there_or_no_wait_locally(tmp_path, kiln_bin):
    env = {"KILN_BIN": kiln_bin}
    _one_usage_line(kiln_py(tmp_path, "run", f"{PIPELINE}:linear_fit", "--workdir", "/nonexistent", env=env),
                    "workdir /nonexistent: no such directory")
    _one_usage_line(kiln_py(tmp_path, "run", f"{PIPELINE}:linear_fit", "--no-wait", env=env),
                    "--no-wait", "a local run always waits")
