"""Secrets, runtimes, templates, cache and the server's identity through the client."""

import pytest

import kiln
from client_support import client, hello


def test_secrets_put_list_delete(kiln_server):
    c = client(kiln_server)
    assert c.secrets() == []
    c.put_secret("db-password", "s3cr3t")
    c.put_secret("api-key", b"k", project="team")
    assert c.secrets() == [kiln.Secret("db-password", "default")]
    assert [s.name for s in c.secrets(project="team")] == ["api-key"]
    c.delete_secret("db-password")
    assert c.secrets() == []
    with pytest.raises(kiln.KilnError) as e:
        c.delete_secret("db-password")
    assert e.value.code == "KLN-4011"


def test_project_comes_from_the_client(kiln_server):
    c = client(kiln_server, project="vision")
    c.put_secret("only-here", "x")
    assert [s.project for s in c.secrets()] == ["vision"]
    assert client(kiln_server).secrets() == []
    run = c.submit(hello())
    assert run.project == "vision"
    assert [r.id for r in c.iter_runs()] == [run.id]
    assert list(client(kiln_server, project="other").iter_runs()) == []


def test_runtimes_list_and_get(kiln_server):
    c = client(kiln_server)
    runtimes = c.runtimes()
    names = {rt.name for rt in runtimes}
    assert "torch-distributed" in names, names
    assert all(isinstance(rt, kiln.TrainingRuntime) and rt.kind.endswith("TrainingRuntime") for rt in runtimes)
    torch = c.get_runtime("torch-distributed")
    assert torch.name == "torch-distributed" and "mlPolicy" in torch.spec
    with pytest.raises(kiln.KilnError) as e:
        c.get_runtime("no-such-runtime")
    assert e.value.code == "KLN-4028"


def test_templates_apply_get_delete(kiln_server):
    c = client(kiln_server)
    tmpl = hello("tmpl").replace("kind: Workflow", "kind: WorkflowTemplate")
    stored = c.apply_templates(tmpl)
    assert [t.name for t in stored] == ["tmpl"] and stored[0].kind == "WorkflowTemplate"
    assert [t.name for t in c.templates()] == ["tmpl"]
    assert c.get_template("tmpl").spec["tasks"][0]["name"] == "greet"
    c.delete_template("tmpl")
    with pytest.raises(kiln.KilnError) as e:
        c.get_template("tmpl")
    assert e.value.code == "KLN-4015"


def test_whoami_and_version(kiln_server):
    c = client(kiln_server)
    me = c.whoami()
    assert me.authenticated and me.role == "admin" and me.projects == ["*"]
    v = c.version()
    assert v.version and v.go.startswith("go") and "/" in v.platform
    assert c.openapi()["openapi"].startswith("3.")
    assert c.parties()["items"] == []
    assert c.quotas() == []
    assert c.cache_entries() == []


def test_apply_cache_schedules_and_run_kinds(kiln_server):
    c = client(kiln_server)
    applied = c.apply(hello("applied").replace("kind: Workflow", "kind: WorkflowTemplate"))
    assert applied["items"] == [{"kind": "WorkflowTemplate", "name": "applied", "project": "default",
                                 "action": "created"}]
    assert [t.name for t in c.templates()] == ["applied"]
    assert c.prune_cache(all=True) == {"entries": 0, "bytes": 0}
    assert c.schedules() == []
    with pytest.raises(kiln.KilnError) as e:
        c.delete_cache_entry("not-a-key")
    assert (e.value.code, e.value.field) == ("KLN-1012", "key")

    run = c.wait(c.submit(hello()).id, timeout=60)
    with pytest.raises(kiln.KilnError) as e:
        c.get_trainjob(run.id)
    assert e.value.code == "KLN-4032" and "not a TrainJob" in e.value.message
    with pytest.raises(kiln.KilnError) as e:
        c.suspend(run.id)
    assert e.value.code == "KLN-4010" and e.value.status == 409
