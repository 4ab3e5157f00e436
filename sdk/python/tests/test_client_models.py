"""Pure logic of the client: timestamps, lenient models, the config reader."""

import dataclasses
import datetime
import json
import os
import pathlib
import re
import subprocess

import pytest

import kiln
from kiln import _config
from kiln.models import parse_time, to_json
from client_support import hello

UTC = datetime.timezone.utc
ROOT = pathlib.Path(__file__).resolve().parents[3]
HELLO_DOC = hello()


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
kubernetes:
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


SHAPES = {
    "flow items, as kiln config --help shows": (
        "contexts:\n- {name: dev, server: http://127.0.0.1:18717, token: kln_x, project: default}\n"
        "current-context: dev\n"),
    "a flow list": 'contexts: [{name: a, server: "http://a:1"}, {name: b, project: p}]\ncurrent-context: b # here\n',
    "a flow list over lines": "contexts: [\n  {name: a, server: 'http://a:2'},\n  {name: b},\n]\ncurrent-context: a\n",
    "block items, settings, escapes": CONFIG.replace('"kln_abc"', '"kln_\\u0061bc"').replace(
        "'http://127.0.0.1:8080'", "'http://it''s:8080'"),
    "a flow mapping": "{contexts: [{name: a, server: s}], current-context: a}\n",
    "nulls and a plain integer": "---\ncontexts:\n- name: a\n  project: 123\n  token: ~\ncurrent-context: a\n...\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_config_reader_reads_every_shape(shape):
    contexts, current = _config.parse(SHAPES[shape])
    assert current and current in [c["name"] for c in contexts]
    expected = {
        "flow items, as kiln config --help shows": [{"name": "dev", "server": "http://127.0.0.1:18717",
                                                     "token": "kln_x", "project": "default"}],
        "a flow list": [{"name": "a", "server": "http://a:1"}, {"name": "b", "project": "p"}],
        "a flow list over lines": [{"name": "a", "server": "http://a:2"}, {"name": "b"}],
        "block items, settings, escapes": [
            {"name": "prod", "server": "https://kiln.example.com", "token": "kln_abc", "project": "vision"},
            {"name": "laptop", "server": "http://it's:8080"}],
        "a flow mapping": [{"name": "a", "server": "s"}],
        "nulls and a plain integer": [{"name": "a", "project": "123", "token": ""}],
    }[shape]
    assert contexts == expected


@pytest.mark.parametrize("text,code,why", [
    ("contexts:\n- name: a\n  projekt: b\n", "KLN-1001", "line 3: unknown key 'projekt' in a context"),
    ("contexts:\n- {name: a, projekt: b}\n", "KLN-1001", "line 2: unknown key 'projekt'"),
    ("curent-context: a\n", "KLN-1001", "line 1: unknown key 'curent-context' in the file"),
    ("contexts:\n- name: a\n  name: b\n", "KLN-1022", "line 3: the key 'name' again (first on line 2)"),
    ("contexts:\n- name: a\n  server: &anchor http://x\n", "KLN-1001", "line 3: an anchor"),
    ("contexts:\n- {name: yes}\n", "KLN-1021", "line 2: name: the bare value 'yes'"),
    ("contexts:\n- {name: a, project: 1.0}\n", "KLN-1021", "the bare value '1.0'"),
    ("contexts: [{name: a}\n", "KLN-1001", "ends inside a [ ] or { }"),
    ('contexts:\n- name: "a\n    b"\n', "KLN-1001", "line 2: a quoted value that does not end on its line"),
    ("contexts: x\n", "KLN-1001", "contexts is a list"),
    ("contexts:\n- a\n", "KLN-1001", "line 2: a context is a mapping"),
    ("current-context: |\n  a\n", "KLN-1001", "a block scalar"),
    ("current-context: a: b\n", "KLN-1001", "holds ': '"),
    ("contexts:\n- name: a\n   server: b\n", "KLN-1001", "line 3: more indented"),
    ("contexts:\n\t- name: a\n", "KLN-1001", "line 2: a tab in the indentation"),
    ("a: b\n---\nc: d\n", "KLN-1001", "a second document"),
])
def test_config_reader_refuses_what_it_cannot_read(text, code, why):
    with pytest.raises(kiln.KilnError) as e:
        _config.parse(text, "c.yaml")
    assert e.value.code == code and e.value.file == "c.yaml" and why in e.value.message, str(e.value)
    assert str(e.value).startswith(f"{code} c.yaml: line ")


def test_config_typo_hint_names_the_key():
    with pytest.raises(kiln.KilnError) as e:
        _config.parse("contexts:\n- name: a\n  projekt: b\n", "c.yaml")
    assert "did you mean project?" in e.value.hint


def test_config_top_keys_are_the_cli_file_keys():
    """The file's keys are those internal/cli's fileConfig reads, no more, no fewer."""
    src = (ROOT / "internal" / "cli" / "backend.go").read_text()
    body = src[src.index("type fileConfig struct"):]
    body = body[:body.index("\n}\n")]
    assert set(_config.TOP_KEYS) == set(re.findall(r'json:"([^,"]+)', body))
    ctx = (ROOT / "internal" / "cli" / "contexts.go").read_text()
    body = ctx[ctx.index("type cliContext struct"):]
    assert set(_config.CONTEXT_KEYS) == set(re.findall(r'json:"([^,"]+)', body[:body.index("\n}\n")]))


@pytest.mark.parametrize("shape", SHAPES)
def test_go_cli_and_python_pick_the_same_contexts(shape, kiln_bin, tmp_path):
    _write_config(tmp_path / "config.yaml", SHAPES[shape])
    env = dict(os.environ, KILN_HOME=str(tmp_path))
    go = subprocess.run([kiln_bin, "config", "get-contexts", "-o", "json"], capture_output=True, text=True,
                        env=env, check=True)
    cur = subprocess.run([kiln_bin, "config", "current-context"], capture_output=True, text=True, env=env,
                         check=True).stdout.strip()
    contexts, current = _config.parse(SHAPES[shape])
    assert current == cur
    assert [(c["name"], c.get("server", ""), c.get("project", ""), bool(c.get("token"))) for c in contexts] == [
        (c["name"], c.get("server", ""), c.get("project", ""), c["tokenSet"]) for c in _items(go.stdout)]


def test_go_cli_and_python_use_the_same_context_on_a_server(kiln_bin, kiln_server, tmp_path, monkeypatch):
    home = tmp_path / "client-home"
    home.mkdir()
    _write_config(home / "config.yaml", 
        f"contexts:\n- {{name: other, server: http://127.0.0.1:9, token: nope}}\n"
        f"- {{name: dev, server: {kiln_server.url}, token: {kiln_server.token}, project: team}}\n"
        "current-context: dev\n")
    for name in ("KILN_SERVER", "KILN_TOKEN", "KILN_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KILN_HOME", str(home))
    c = kiln.Client()
    assert (c.server, c.project) == (kiln_server.url, "team") and c.whoami().name == "admin"
    run = c.submit(HELLO_DOC)
    got = subprocess.run([kiln_bin, "get", "runs", "-o", "json"], capture_output=True, text=True,
                         env=dict(os.environ, KILN_HOME=str(home)), timeout=60)
    assert got.returncode == 0, got.stderr
    assert run.id in got.stdout and '"team"' in got.stdout


def test_settings_come_from_argument_then_environment_then_context(monkeypatch, tmp_path):
    _write_config(tmp_path / "config.yaml", CONFIG)
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
    _write_config(tmp_path / "config.yaml", CONFIG.replace("current-context: prod", "current-context: gone"))
    monkeypatch.setenv("KILN_HOME", str(tmp_path))
    monkeypatch.delenv("KILN_SERVER", raising=False)
    with pytest.raises(kiln.KilnError) as e:
        kiln.Client()
    assert e.value.code == "KLN-4052" and "prod, laptop" in e.value.message


#: Each modelled class and the schema of components.schemas it mirrors.
SCHEMAS = {
    kiln.Run: "Run", kiln.RunStatus: "RunStatus", kiln.NodeStatus: "NodeStatus",
    kiln.AttemptStatus: "AttemptStatus", kiln.GateStatus: "GateStatus", kiln.Event: "Event",
    kiln.RunOutputs: "RunOutputs", kiln.RunProgress: "RunProgress", kiln.RunList: "RunList",
    kiln.WhoAmI: "Whoami", kiln.Version: "Version", kiln.RunRequested: "RunRequested",
    kiln.RunSuspension: "RunSuspension", kiln.RunDeleted: "RunDeleted", kiln.GateSent: "GateSent",
    kiln.TrainingRuntime: "TrainingRuntime", kiln.WorkflowTemplate: "WorkflowTemplate",
    kiln.Schedule: "Schedule", kiln.ProjectQuota: "ProjectQuota", kiln.SuspendedTime: "SuspendedTime",
}
MODELLED = {name: cls.__name__ for cls, name in SCHEMAS.items()}


def _expected(prop):
    """The annotation a schema property's field has (Optional[...] stripped)."""
    if len(prop.get("allOf", [])) == 1:  # a described reference: {"allOf": [{"$ref": ...}], "description": ...}
        prop = prop["allOf"][0]
    if "$ref" in prop:
        ref = prop["$ref"].rsplit("/", 1)[-1]
        return MODELLED.get(ref, "Dict[str, Any]")
    kind = prop.get("type")
    if kind == "array":
        return f"List[{_expected(prop['items'])}]"
    if kind == "object":
        inner = prop.get("additionalProperties")
        return f"Dict[str, {_expected(inner)}]" if inner and inner.get("type") in ("string", "integer") else "Dict[str, Any]"
    if kind == "string":
        return "datetime" if prop.get("format") == "date-time" else "str"
    return {"integer": "int", "boolean": "bool", "number": "float", None: "Any"}[kind]


def test_models_have_every_property_of_the_api_schema():
    """A property the server sends is a typed field, not something left in extra."""
    schemas = json.loads((ROOT / "api" / "openapi" / "openapi.json").read_text())["components"]["schemas"]
    problems = []
    for cls, name in SCHEMAS.items():
        fields = {f.name: f.type for f in dataclasses.fields(cls)}
        for prop, spec in schemas[name]["properties"].items():
            attr = re.sub(r"(?<!^)(?=[A-Z])", "_", prop).lower()
            if attr not in fields:
                problems.append(f"{cls.__name__} has no field {attr} for {name}.{prop}")
                continue
            have = re.sub(r"^Optional\[(.*)\]$", r"\1", str(fields[attr]))
            if have != _expected(spec):
                problems.append(f"{cls.__name__}.{attr} is {have}, the schema says {_expected(spec)}")
        for attr in set(fields) - {"extra"}:
            camel = re.sub(r"_(.)", lambda m: m.group(1).upper(), attr)
            if camel not in schemas[name]["properties"]:
                problems.append(f"{cls.__name__}.{attr} is not in the schema {name}")
    assert problems == []


def test_run_and_node_reprs_are_short():
    program = "python3 -c '" + "x = 1\n" * 500 + "'"
    run = kiln.Run.from_json({
        "id": "fit-abc12", "name": "fit", "workflow": {"spec": {"tasks": [{"name": "a", "command": [program]}]}},
        "status": {"phase": "Failed", "code": "KLN-3002", "progress": {"total": 6, "done": 4},
                   "outputs": {"parameters": {"best": "0.1"}},
                   "nodes": [{"name": "a", "phase": "Failed", "code": "KLN-3002", "message": "exit 1",
                              "attempts": [{"number": 1, "exitCode": 1}], "outputs": {}}]},
    })
    assert repr(run) == ("Run(id='fit-abc12', name='fit', phase='Failed', code='KLN-3002', progress='4/6', "
                         "outputs={'best': '0.1'})")
    assert repr(run.node("a")) == ("NodeStatus(name='a', phase='Failed', attempts=1, outputs={}, "
                                   "code='KLN-3002', message='exit 1')")
    assert repr(kiln.Run.from_json({"id": "r"})) == "Run(id='r', name='', phase='', progress='-', outputs={})"
    page = kiln.RunList.from_json({"items": [to_json(run)] * 3})
    assert len(repr(page)) < 500


BARE = ["1st-team", "08", "1.2.3", "0x", "10.0.0.1", "-1", "+.inf", ".5e3", "123abc", "123", "0", "1_000",
        "0x1F", "1.0", "2001-12-14", "1:20", "yes", "Off", "y", "null"]


def test_bare_values_read_as_the_cli_reads_them_or_are_refused(kiln_bin, tmp_path):
    """Python keeps a bare value only where the CLI reads the same text;
    where YAML would make it a boolean or a number, it asks for quotes."""
    text = "contexts:\n" + "".join(f"- {{name: c{i}, project: {v}}}\n" for i, v in enumerate(BARE))
    _write_config(tmp_path / "config.yaml", text)
    go = subprocess.run([kiln_bin, "config", "get-contexts", "-o", "json"], capture_output=True, text=True,
                        env=dict(os.environ, KILN_HOME=str(tmp_path)), check=True)
    cli = {c["name"]: c.get("project", "") for c in _items(go.stdout)}
    for i, value in enumerate(BARE):
        try:
            (ctx,), _ = _config.parse(f"contexts:\n- {{name: c{i}, project: {value}}}\n")
        except kiln.KilnError as e:
            assert e.code == "KLN-1021" and cli[f"c{i}"] != value, value
            continue
        assert ctx["project"] == cli[f"c{i}"], value


def _items(text):
    """The items of what kiln prints for a list with -o json: a ContextList, as kubectl prints a List."""
    doc = json.loads(text)
    assert (doc["apiVersion"], doc["kind"]) == ("kiln.dev/v1alpha1", "ContextList")
    return doc["items"]


def _write_config(path, text):
    """Writes a configuration file as kiln expects one holding tokens: 0600."""
    path.write_text(text)
    path.chmod(0o600)


def test_a_token_in_a_file_others_may_read_is_kln_4056(kiln_bin, monkeypatch, tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    path.chmod(0o644)
    monkeypatch.setenv("KILN_HOME", str(tmp_path))
    for name in ("KILN_SERVER", "KILN_TOKEN", "KILN_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(kiln.KilnError) as e:
        kiln.Client()
    assert e.value.code == "KLN-4056" and "0644" in e.value.message and "kln_abc" not in str(e.value)
    go = subprocess.run([kiln_bin, "config", "get-contexts"], capture_output=True, text=True,
                        env=dict(os.environ, KILN_HOME=str(tmp_path)), timeout=60)
    assert go.returncode != 0 and "KLN-4056" in go.stderr and "chmod 600" in go.stderr
    path.chmod(0o600)
    assert kiln.Client().server == "https://kiln.example.com"


def test_the_sdk_and_the_cli_pick_the_same_home_as_root(kiln_bin, monkeypatch, tmp_path):
    """As root, with ~ closed to others and no ~/.kiln, both take /var/lib/kiln."""
    if os.geteuid() != 0:
        pytest.skip("the root default home: the tests do not run as root")
    closed = tmp_path / "root"
    closed.mkdir(mode=0o700)
    monkeypatch.delenv("KILN_HOME", raising=False)
    monkeypatch.setenv("HOME", str(closed))
    for want in (_config.ROOT_HOME, closed / ".kiln"):
        if want != _config.ROOT_HOME:
            want.mkdir()
        assert _config.home() == want
        go = subprocess.run([kiln_bin, "--help"], capture_output=True, text=True, env=dict(os.environ), timeout=60)
        assert f'default "{want}"' in go.stdout, go.stdout
