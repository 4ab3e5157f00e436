"""Errors reach the caller as KilnError with the server's code and place."""

import http.server
import socket
import threading

import pytest

import kiln
from client_support import client, hello


def test_bad_spec_names_code_file_and_field(kiln_server):
    c = client(kiln_server)
    bad = hello().replace("command: [/bin/sh", "comand: [/bin/sh")
    with pytest.raises(kiln.KilnError) as e:
        c.submit(bad, filename="bad.yaml")
    err = e.value
    assert err.code == "KLN-1002" and err.status == 400
    assert err.field == "spec.tasks[0].comand" and err.file == "bad.yaml" and err.object == "Workflow/hello"
    assert (err.line, err.column) == (11, 5)
    assert str(err).startswith("KLN-1002 bad.yaml:11:5: Workflow/hello: spec.tasks[0].comand: unknown field")
    # The server sent every problem: the missing command as well.
    assert [x.code for x in err.errors] == ["KLN-1002", "KLN-1004"]
    assert str(err).count("\n") == 1


def test_a_mistake_repeated_is_listed_50_times_and_counted(kiln_server):
    """200 tasks with one mistake and 3 with another: 50 of the first, a
    KLN-1086 error counting the other 150, and the 3 others."""
    head = "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: many}\nspec:\n  tasks:\n"
    tasks = "".join(f"  - {{name: t{i}, dependsOn: [nope], command: [x]}}\n" for i in range(200))
    tasks += "".join(f"  - {{name: 'bad name {i}', command: [x]}}\n" for i in range(3))
    with pytest.raises(kiln.KilnError) as e:
        client(kiln_server).submit(head + tasks, filename="many.yaml")
    codes = [x.code for x in e.value.errors]
    assert (codes.count("KLN-1007"), codes.count("KLN-1005"), codes.count("KLN-1086")) == (50, 3, 1)
    more = next(x for x in e.value.errors if x.code == "KLN-1086")
    assert (more.omitted, more.omitted_code, more.field) == (150, "KLN-1007", "spec.tasks[*].dependsOn[*]")
    assert "… and 150 more KLN-1007 like these" in str(more)


def test_unknown_run_is_404_kln_4001(kiln_server):
    with pytest.raises(kiln.KilnError) as e:
        client(kiln_server).get("no-such-run")
    assert (e.value.code, e.value.status, e.value.object) == ("KLN-4001", 404, "Run/no-such-run")
    assert str(e.value) == "KLN-4001 Run/no-such-run: no such run (hint: list runs with kiln get runs)"


def test_bad_token_is_kln_4003_and_never_shown(kiln_server):
    c = kiln.Client(kiln_server.url, token="kln_not_a_token")
    with pytest.raises(kiln.KilnError) as e:
        c.list_runs()
    assert (e.value.code, e.value.status) == ("KLN-4003", 401)
    assert "KILN_TOKEN" in e.value.hint
    assert "kln_not_a_token" not in repr(c) + str(c) + str(e.value) + repr(e.value)
    assert c.whoami().authenticated is False


def test_bad_filter_names_its_field(kiln_server):
    with pytest.raises(kiln.KilnError) as e:
        client(kiln_server).list_runs(phase="Sideways")
    assert (e.value.code, e.value.field, e.value.status) == ("KLN-4050", "phase", 400)
    with pytest.raises(kiln.KilnError) as e:
        client(kiln_server).list_runs(since="yesterday-ish")
    assert (e.value.code, e.value.field) == ("KLN-4051", "since")
    # Streams make their request at once: a refusal is raised by the call.
    with pytest.raises(kiln.KilnError) as e:
        client(kiln_server).watch_runs(phase="Sideways")
    assert e.value.code == "KLN-4050"
    with pytest.raises(kiln.KilnError) as e:
        client(kiln_server).stream_events("no-such-run")
    assert e.value.code == "KLN-4001"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_is_kln_5060_with_a_hint():
    c = kiln.Client(f"http://127.0.0.1:{_free_port()}", token="t", timeout=5)
    with pytest.raises(kiln.KilnError) as e:
        c.get("x")
    assert e.value.code == "KLN-5060" and e.value.status is None
    assert "cannot be reached" in e.value.message and "KILN_SERVER" in e.value.hint
    with pytest.raises(kiln.KilnError) as e:
        list(c.logs("x", "t", follow=True))
    assert e.value.code == "KLN-5060"


def test_no_server_configured_is_kln_5060(monkeypatch, tmp_path):
    for name in ("KILN_SERVER", "KILN_TOKEN", "KILN_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KILN_HOME", str(tmp_path))
    c = kiln.Client()
    assert c.server is None
    with pytest.raises(kiln.KilnError) as e:
        c.get("x")
    assert str(e.value) == (
        "KLN-5060: no kiln server is configured (hint: set KILN_SERVER (and KILN_TOKEN), pass server= (and "
        "token=), or make a context with a server current in KILN_HOME/config.yaml (kiln config use-context NAME))")


class _PlainNotFound(http.server.BaseHTTPRequestHandler):
    """Answers every request as a proxy or another service would: a plain-text 404."""

    def do_GET(self):  # noqa: N802 - http.server's name
        body = b"404 page not found\n"
        self.send_response(404)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet
        pass


def test_a_body_that_is_not_kiln_json_still_reads_clearly():
    srv = http.server.HTTPServer(("127.0.0.1", 0), _PlainNotFound)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        c = kiln.Client(f"http://127.0.0.1:{srv.server_address[1]}", token="t")
        with pytest.raises(kiln.KilnError) as e:
            c.get("r1")
    finally:
        srv.shutdown()
    err = e.value
    assert err.status == 404 and err.code == "KLN-4009"
    assert "HTTP 404" in err.message and "404 page not found" in err.message and "text/plain" in err.message
    assert "kiln server" in err.hint


def test_a_path_the_server_has_no_route_for_is_coded(kiln_server):
    # A URL with a path before /api/v1 reaches no route: the server says so in JSON.
    c = kiln.Client(kiln_server.url + "/elsewhere", token=kiln_server.token)
    with pytest.raises(kiln.KilnError) as e:
        c.get("r1")
    assert e.value.status == 404 and e.value.code == "KLN-4063" and "/elsewhere/api/v1/runs/r1" in e.value.message


def test_cli_error_lines_keep_their_place_and_drop_it_for_python_origins():
    """kiln's CLI writes FILE:LINE:COLUMN; a document generated from Python
    is named by its origin alone, since its lines are the generated YAML's."""
    from kiln.dsl.runner import _named, errors_from

    err = errors_from('error: KLN-1002 /tmp/x/wf.yaml:8:5: Workflow/w: spec.tasks[0].retires: unknown field, '
                      'did you mean "retries"? (hint: check the spelling; fields are camelCase)\n')
    assert (err.file, err.line, err.column, err.object, err.field) == (
        "/tmp/x/wf.yaml", 8, 5, "Workflow/w", "spec.tasks[0].retires")
    assert str(err).startswith("KLN-1002 /tmp/x/wf.yaml:8:5: Workflow/w: ")
    named = _named(err, "/tmp/x/wf.yaml", "pipe.py:train")
    assert (named.file, named.line, named.column) == ("pipe.py:train", 0, 0)
    assert str(named).startswith("KLN-1002 pipe.py:train: Workflow/w: spec.tasks[0].retires: unknown field")
