"""Fixtures shared by the SDK's tests: the kiln binary, a fresh kiln home,
local runs on it (no server configured), and a real ``kiln serve`` on it.

KILN_BIN names the binary (``make test`` sets it to bin/kiln); without it the
tests look for bin/kiln at the repository's root.
"""

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "sdk" / "python" / "src"))


@pytest.fixture(scope="session")
def kiln_bin():
    """The path of the kiln binary the tests drive."""
    path = pathlib.Path(os.environ.get("KILN_BIN", ROOT / "bin" / "kiln"))
    if not path.is_file():
        pytest.fail(f"no kiln binary at {path}: run `make build` or set KILN_BIN")
    return str(path)


def _traversable(path):
    """Lets tasks that run as project accounts (a server run as root does
    that) reach path through its parents, which pytest keeps private."""
    for parent in path.parents:
        if parent == pathlib.Path("/tmp") or parent == parent.parent:
            break
        os.chmod(parent, 0o711)


@pytest.fixture
def kiln_home(tmp_path):
    """A new, empty kiln home."""
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    _traversable(home)
    yield home
    _stop_supervisor(home)


@pytest.fixture
def local(monkeypatch, kiln_bin, kiln_home):
    """Local runs (no server configured) on a fresh home."""
    monkeypatch.setenv("KILN_BIN", kiln_bin)
    monkeypatch.setenv("KILN_HOME", str(kiln_home))
    for var in ("KILN_SERVER", "KILN_TOKEN", "KILN_PROJECT"):
        monkeypatch.delenv(var, raising=False)
    return kiln_home


@pytest.fixture(scope="session", autouse=True)
def _no_supervisor_outlives_the_tests(tmp_path_factory):
    """Kills, when the session ends, every supervisor of a home under the
    session's temporary directory: tests that make a home of their own
    (not kiln_home) would otherwise leave theirs running."""
    base = str(tmp_path_factory.getbasetemp())
    yield
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv]
        if "supervise" in args and "--home" in args:
            home = args[args.index("--home") + 1] if args.index("--home") + 1 < len(args) else ""
            if home.startswith(base + os.sep):
                try:
                    os.kill(int(proc.name), signal.SIGKILL)
                except ProcessLookupError:
                    pass


def _stop_supervisor(home):
    """Kills home's supervisor, which outlives the server by design."""
    lock = home / "supervisor.lock"
    try:
        pid = int(lock.read_text().strip() or 0)
    except (OSError, ValueError):
        return
    if pid <= 0:
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


class Served:
    """A running ``kiln serve``: its URL, admin token and home."""

    def __init__(self, url, token, home, proc, output):
        self.url = url
        self.token = token
        self.home = home
        self.proc = proc
        self.output = output  # the lines the server printed, as it prints them


@pytest.fixture
def kiln_server(kiln_bin, kiln_home):
    """A real ``kiln serve`` on a fresh home, listening on a free loopback
    port; stopped, with its supervisor, when the test ends."""
    proc = subprocess.Popen(
        [kiln_bin, "--home", str(kiln_home), "serve", "--addr", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url, seen = "", []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("kiln serving on "):
            url = line[len("kiln serving on "):].strip()
            break
    if not url:
        proc.kill()
        proc.wait()
        pytest.fail("kiln serve never said where it listens:\n" + "".join(seen))
    # Keep reading what the server prints, or a full pipe would stop it.
    drain = threading.Thread(target=lambda: seen.extend(proc.stdout), daemon=True)
    drain.start()
    token = (kiln_home / "admin.token").read_text().strip()
    try:
        yield Served(url, token, kiln_home, proc, seen)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        drain.join(timeout=5)
