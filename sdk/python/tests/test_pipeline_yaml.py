"""The YAML writer: strings YAML would misread are quoted, and kiln reads
back exactly what was written (checked through kiln's own JSON)."""

import json
import subprocess

import pytest

from kiln.dsl import _yaml


@pytest.mark.parametrize("text", ["yes", "No", "on", "off", "y", "n", "true", "null", "~", "", "007", "1.5",
                                  "1e3", "0x1F", "-2", "12:30", "2024-01-02", "a: b", "x #y", " lead", "trail ",
                                  "{{params.x}}", "[a]", "*ref", "&a", "!tag", "%x", "@x", "`x", "'q'", '"q"',
                                  "-", "?", ":", "tab\there", "\x00bell"])
def test_strings_yaml_would_misread_are_quoted(text):
    line = _yaml.scalar(text)
    assert line.startswith('"'), f"{text!r} written as {line}"
    assert json.loads(line) == text


@pytest.mark.parametrize("text", ["python3", "--rows", "pipeline/prepare.py", "500m", "a-b", "lr=0.1 mse=1", "ünï"])
def test_plain_strings_stay_plain(text):
    assert _yaml.scalar(text) == text


def test_document_reads_back_through_kiln(kiln_bin, kiln_home, tmp_path):
    program = "import os\n\n\ndef f():\n    print('a: b #c')\n  \n\tx = 1\n"
    doc = {"apiVersion": "kiln.dev/v1alpha1", "kind": "Workflow", "metadata": {"name": "quoting"},
           "spec": {"params": [{"name": "p", "default": "no"}],
                    "tasks": [{"name": "t", "command": ["python3", "-c", program],
                               "args": ["yes", "007", "", "x: y", "  two", "{{params.p}}", "ends\n\n"],
                               "env": [{"name": "E", "value": "on"}]},
                              {"name": "flow", "command": ["true"],
                               "args": ["a,b", "[x]", "{y}", "k: v", "#c", "d #e", "-", "--x", "1,5", "no"]}]}}
    path = tmp_path / "q.yaml"
    path.write_text(_yaml.dump(doc))
    out = subprocess.run([kiln_bin, "--home", str(kiln_home), "validate", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # kiln runs it and stores the spec it read: compare that with what was written.
    subprocess.run([kiln_bin, "--home", str(kiln_home), "run", "-q", str(path)], capture_output=True, text=True,
                   cwd=tmp_path)
    got = subprocess.run([kiln_bin, "--home", str(kiln_home), "get", "runs", "-o", "json"], capture_output=True,
                         text=True, check=True)
    run_id = json.loads(got.stdout)["items"][0]["id"]
    one = json.loads(subprocess.run([kiln_bin, "--home", str(kiln_home), "get", "runs", run_id, "-o", "json"],
                                    capture_output=True, text=True, check=True).stdout)
    task = one["workflow"]["spec"]["tasks"][0]
    assert task["command"] == ["python3", "-c", program]
    assert task["args"] == doc["spec"]["tasks"][0]["args"]
    assert task["env"] == [{"name": "E", "value": "on"}]
    assert one["workflow"]["spec"]["params"][0]["default"] == "no"
    flow = one["workflow"]["spec"]["tasks"][1]
    assert flow["args"] == doc["spec"]["tasks"][1]["args"]
    assert "args: [" in path.read_text(), "short lists are written in flow style"


def test_short_collections_are_written_in_flow_style():
    text = _yaml.dump({"spec": {"resources": {"cpu": "500m", "memory": "1Gi"}, "deps": ["a", "b"],
                                "params": [{"name": "p", "default": "7"}], "big": ["x" * 60, "y" * 60]}})
    assert text == (
        "spec:\n"
        "  resources: {cpu: 500m, memory: 1Gi}\n"
        "  deps: [a, b]\n"
        "  params: [{name: p, default: \"7\"}]\n"
        "  big:\n"
        f"  - {'x' * 60}\n"
        f"  - {'y' * 60}\n")
