"""The package installs with pip, offline, and imports from where it went."""

import pathlib
import shutil
import subprocess

SDK = pathlib.Path(__file__).resolve().parents[1]


def test_the_build_declares_setuptools_and_wheel():
    text = (SDK / "pyproject.toml").read_text()
    requires = text[text.index("requires = "):].splitlines()[0]
    assert '"setuptools>=61"' in requires and '"wheel"' in requires


def test_pip_install_into_a_venv(tmp_path):
    # A copy, so that the build leaves nothing in the source tree.
    src = tmp_path / "sdk"
    shutil.copytree(SDK, src, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__",
                                                             "node_modules", ".mypy_cache"))
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    out = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-index", "--no-deps",
         "--disable-pip-version-check", str(src)],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    probe = subprocess.run(
        [str(py), "-c", "import kiln, kiln.cli; print(kiln.__file__); print(kiln.Client.__name__)"],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    )
    where, name = probe.stdout.split()
    assert where.startswith(str(venv)) and name == "Client"
    script = venv / "bin" / "kiln-py"
    help_out = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    assert "submit" in help_out.stdout and help_out.stdout.startswith("usage: kiln-py ")
    assert "python -m kiln" not in help_out.stdout
    assert (pathlib.Path(where).parent / "py.typed").is_file(), "the package ships without py.typed"


def test_mypy_reads_the_installed_package_as_typed(tmp_path):
    """mypy refuses an installed package without py.typed ("missing library
    stubs or py.typed marker"); with it, a wrong argument of a task is found."""
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    src = tmp_path / "sdk"
    shutil.copytree(SDK, src, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__",
                                                            "node_modules", ".mypy_cache"))
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-index", "--no-deps",
                    "--disable-pip-version-check", str(src)], check=True, capture_output=True, timeout=120,
                   env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "/usr/lib/python3/dist-packages"})
    good = tmp_path / "good.py"
    good.write_text("import kiln\n\n\n@kiln.task\ndef double(n: int) -> int:\n    return 2 * n\n\n\n"
                    "@kiln.workflow\ndef twice(n: int = 1) -> None:\n    double(n=double(n=n).output)\n")
    bad = tmp_path / "bad.py"
    bad.write_text(good.read_text().replace("double(n=n)", "double(m=n)"))
    mypy = ["/usr/bin/python3", "-m", "mypy", "--strict", "--no-incremental", "--python-executable", str(py)]
    out = subprocess.run(mypy + [str(good)], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    out = subprocess.run(mypy + [str(bad)], capture_output=True, text=True, cwd=tmp_path)
    assert 'Unexpected keyword argument "m"' in out.stdout, out.stdout + out.stderr


def _docs_install_block():
    """The commands of docs/python.md's install block, less the apt-get line (make deps installs those)."""
    docs = (SDK.parents[1] / "docs" / "python.md").read_text()
    block = docs[docs.index("```sh\n", docs.index("--no-build-isolation") - 400):]
    block = block[len("```sh\n"):block.index("```", 6)]
    return [line.split("#")[0].strip() for line in block.splitlines() if "apt-get" not in line and line.strip()]


def test_the_docs_install_works_offline_and_their_checkers_see_kiln(tmp_path):
    """docs/python.md's offline install, as written, in a directory holding
    ./sdk/python; then its mypy and pyright commands find no error in an
    example, reading kiln from the venv."""
    shutil.copytree(SDK, tmp_path / "sdk" / "python", ignore=shutil.ignore_patterns(
        "tests", "build", "*.egg-info", "__pycache__", "node_modules", ".mypy_cache"))
    lines = _docs_install_block()
    assert lines[-1] == ". .venv/bin/activate", lines
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for line in lines[:-1]:
        out = subprocess.run(line, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=180, env=env)
        assert out.returncode == 0, line + "\n" + out.stdout + out.stderr
    shutil.copy(SDK.parents[1] / "examples" / "python" / "pipeline.py", tmp_path / "pipeline.py")
    docs = (SDK.parents[1] / "docs" / "python.md").read_text()
    mypy = "python -m mypy --strict pipeline.py"
    assert f"`{mypy}` with the venv active" in docs
    out = subprocess.run(f". .venv/bin/activate && {mypy}", shell=True, cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0 and "Success: no issues found" in out.stdout, out.stdout + out.stderr
    pyright = SDK / "typecheck" / "node_modules" / ".bin" / "pyright"
    assert "`pyright --pythonpath .venv/bin/python pipeline.py`" in docs
    if pyright.exists():  # make deps installs it; test_typing.py fails without it
        out = subprocess.run([str(pyright), "--pythonpath", ".venv/bin/python", "pipeline.py"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0 and "0 errors" in out.stdout, out.stdout + out.stderr
