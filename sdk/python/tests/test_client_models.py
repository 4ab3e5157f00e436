"""Pure logic of the client: timestamps, lenient models, the config reader."""

import datetime

import pytest

import kiln
from kiln import _config
from kiln.models import parse_time, to_json

UTC = datetime.timezone.utc


def test_parse_time_reads_go_nanoseconds_and_zones():
    assert parse_time("2026-11-23T19:16:40.123456789Z") == datetime.datetime(2026, 11, 23, 19, 16, 40, 123456, UTC)
    assert parse_time("2026-11-23T19:16:40Z") == datetime.datetime(2026, 11, 23, 19, 16, 40, tzinfo=UTC)
    t = parse_time("2026-11-23T21:16:40.5+02:00")
    assert t == datetime.datetime(2026, 11, 23, 19, 16, 40, 500000, UTC)
    assert parse_time("") is None and parse_time(None) is None
    with pytest.raises(ValueError, match="RFC 3339"):
        parse_time("yesterday")


def test_models_keep_unknown_keys_and_read_camel_case():
    run = kiln.Run.from_json({
        "id": "r-1", "name": "w", "kind": "Workflow", "createdAt": "2026-01-02T03:04:05.000000001Z",
        "newTopLevel": {"x": 1},
        "status": {"phase": "Succeeded", "startedAt": "2026-01-02T03:04:06Z", "shiny": True,
                   "outputs": {"parameters": {"best": "0.1"}},
                   "nodes": [{"name": "a", "phase": "Succeeded", "outputs": {"loss": "0.2"},
                              "attempts": [{"number": 1, "exitCode": 0, "future": "yes"}]}]},
    })
    assert run.extra == {"newTopLevel": {"x": 1}} and run.status.extra == {"shiny": True}
    assert run.created_at == datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert run.done and run.succeeded and run.outputs == {"best": "0.1"}
    attempt = run.node("a").attempts[0]
    assert attempt.exit_code == 0 and attempt.extra == {"future": "yes"}
    back = to_json(run)
    assert back["createdAt"] == "2026-01-02T03:04:05Z" and back["newTopLevel"] == {"x": 1}
    assert back["status"]["nodes"][0]["attempts"][0]["exitCode"] == 0


def test_a_run_without_status_or_outputs():
    run = kiln.Run.from_json({"id": "r"})
    assert run.phase == "" and not run.done and run.outputs == {} and run.status.nodes == []


CONFIG = """\
# contexts as the kiln CLI writes them
backend: local
kube:
  namespace: x
contexts:
- name: prod
  server: https://kiln.example.com   # the team's
  token: "kln_abc"
  project: vision
-   name: laptop
    server: 'http://127.0.0.1:8080'
current-context: prod
"""


def test_config_reader_reads_the_documented_shape():
    contexts, current = _config.parse(CONFIG)
    assert current == "prod"
    assert contexts == [
        {"name": "prod", "server": "https://kiln.example.com", "token": "kln_abc", "project": "vision"},
        {"name": "laptop", "server": "http://127.0.0.1:8080"},
    ]


@pytest.mark.parametrize("text,why", [
    ("contexts: [{name: a}]\n", "block list"),
    ("contexts:\n- name: a\n  server: &anchor http://x\n", "plain scalar"),
    ("contexts:\n- name: a\n  colour: red\n", "name, server, token and project"),
    ("current-context:\n  - a\n", "one plain or quoted name"),
    ("  indented: x\n", "indented line"),
])
def test_config_reader_refuses_what_it_cannot_read(text, why):
    with pytest.raises(kiln.KilnError) as e:
        _config.parse(text, "c.yaml")
    assert e.value.code == "KLN-1001" and e.value.file == "c.yaml" and why in e.value.message


def test_settings_come_from_argument_then_environment_then_context(monkeypatch, tmp_path):
    (tmp_path / "config.yaml").write_text(CONFIG)
    monkeypatch.setenv("KILN_HOME", str(tmp_path))
    for name in ("KILN_SERVER", "KILN_TOKEN", "KILN_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    c = kiln.Client()
    assert (c.server, c.project) == ("https://kiln.example.com", "vision")
    monkeypatch.setenv("KILN_SERVER", "http://env:1")
    monkeypatch.setenv("KILN_PROJECT", "envproj")
    assert (kiln.Client().server, kiln.Client().project) == ("http://env:1", "envproj")
    assert kiln.Client(server="http://arg:2/", project="p").server == "http://arg:2"
    assert "kln_abc" not in repr(kiln.Client()) and "kln_abc" not in str(vars(kiln.Client()))


def test_a_current_context_the_file_lacks_is_kln_4052(monkeypatch, tmp_path):
    (tmp_path / "config.yaml").write_text(CONFIG.replace("current-context: prod", "current-context: gone"))
    monkeypatch.setenv("KILN_HOME", str(tmp_path))
    monkeypatch.delenv("KILN_SERVER", raising=False)
    with pytest.raises(kiln.KilnError) as e:
        kiln.Client()
    assert e.value.code == "KLN-4052" and "prod, laptop" in e.value.message
