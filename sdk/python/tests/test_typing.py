"""Every pipeline a user reads (docs/python.md, the README's Python
examples, examples/python) type-checks with no error in pyright's strict
mode (the engine of VS Code's Pylance) and with ``mypy --strict``, as a
user's IDE and CI would check them; and a wrong call is an error there."""

import json
import pathlib
import re
import subprocess
import sys

import pytest

SDK = pathlib.Path(__file__).resolve().parents[1]
ROOT = SDK.parents[1]
PYRIGHT = SDK / "typecheck" / "node_modules" / ".bin" / "pyright"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def examples():
    """Each example as (name, source): the docs' python blocks, the README's
    that import kiln (its pipelines), and examples/python/*.py."""
    found = []
    for i, code in enumerate(_BLOCK.findall((ROOT / "docs" / "python.md").read_text())):
        found.append((f"docs_python_{i + 1}.py", code))
    for i, code in enumerate(_BLOCK.findall((ROOT / "README.md").read_text())):
        if re.search(r"^import kiln$", code, re.M):
            found.append((f"readme_{i + 1}.py", code))
    for path in sorted((ROOT / "examples" / "python").glob("*.py")):
        found.append((f"examples_{path.name}", path.read_text()))
    return found


def _write(tmp_path, files):
    for name, code in files:
        (tmp_path / name).write_text(code)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({
        "typeCheckingMode": "strict", "pythonVersion": "3.9", "extraPaths": [str(SDK / "src")],
        "include": [name for name, _ in files],
    }))
    # kiln's own modules are read for their types and not reported, as for
    # an installed package; the examples are checked strictly.
    (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\npython_version = 3.9\n\n"
                                       "[mypy-kiln.*]\nfollow_imports = silent\n")


def pyright(tmp_path):
    if not PYRIGHT.exists():
        pytest.fail(f"pyright is not installed: run `make deps` (npm ci in {PYRIGHT.parents[2]})")
    return subprocess.run([str(PYRIGHT), "--pythonpath", sys.executable, "--outputjson"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)


def mypy(tmp_path, names):
    probe = subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.fail("mypy is not installed: run `make deps` (Debian's mypy)")
    cache = str(SDK / ".mypy_cache")  # torch takes mypy a minute to read the first time
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", cache, *names],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={"MYPYPATH": str(SDK / "src"), "PATH": "/usr/bin:/bin"})


def _diagnostics(out):
    report = json.loads(out.stdout)
    return [f"{pathlib.Path(d['file']).name}:{d['range']['start']['line'] + 1}: {d['message']} ({d.get('rule', '')})"
            for d in report["generalDiagnostics"] if d["severity"] == "error"], report["summary"]


def test_the_examples_are_found():
    names = [n for n, _ in examples()]
    assert "docs_python_1.py" in names and "examples_pipeline.py" in names
    assert any(n.startswith("readme_") for n in names), names


WRONG = '''import kiln


@kiln.task
def scale(x: float, by: int = 2, out: kiln.OutputPath = kiln.OutputPath()) -> float:
    with open(out, "w") as f:
        f.write(str(x * by))
    return x * by


step = kiln.command("step", ["true"], parameters=["n"])


@kiln.workflow(name="wrong")
def wrong(x: float = 1.0) -> None:
    scale(x=x, bye=3)
    scale(x=x, by="three")
    step(argz=["a"])
'''


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """Both checkers run once over the examples and wrong.py: (files, pyright's errors, mypy's output)."""
    tmp_path = tmp_path_factory.mktemp("typing")
    files = examples()
    _write(tmp_path, files + [("wrong.py", WRONG)])
    errors, summary = _diagnostics(pyright(tmp_path))
    assert summary["filesAnalyzed"] >= len(files) + 1, summary
    out = mypy(tmp_path, [n for n, _ in files] + ["wrong.py"])
    return files, errors, out.stdout + out.stderr


def test_pyright_strict_finds_no_error_in_the_examples(checked):
    _, errors, _ = checked
    mine = [e for e in errors if not e.startswith("wrong.py:")]
    assert mine == [], "\n".join(mine)


def test_mypy_strict_finds_no_error_in_the_examples(checked):
    files, _, out = checked
    mine = [line for line in out.splitlines() if ": error:" in line and not line.startswith("wrong.py:")]
    assert mine == [], out
    assert f"in 1 file (checked {len(files) + 1} source files)" in out, out


def test_the_checkers_find_a_wrong_call(checked):
    """A misspelt keyword, a value of the wrong type and an unknown argument
    of a command task are errors in both checkers: the tests above can fail."""
    _, errors, out = checked
    text = "\n".join(e for e in errors if e.startswith("wrong.py:"))
    assert 'No parameter named "bye"' in text and '"Literal[\'three\']"' in text and '"argz"' in text, text
    assert 'Unexpected keyword argument "bye"' in out, out
    assert 'Argument "by" to "__call__" of "FunctionTask" has incompatible type "str"' in out, out
    assert 'Unexpected keyword argument "argz"' in out, out
