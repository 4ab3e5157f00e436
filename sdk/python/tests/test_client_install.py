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
    shutil.copytree(SDK, src, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
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
