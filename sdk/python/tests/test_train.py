"""Training in Python: a standalone TrainJob and a real torch DDP train
node (2 nodes x 2 processes, gloo, CPU) between a prepare and an evaluate
task, run locally and on a real kiln server."""

import json
import pathlib
import subprocess
import time

import pytest

import kiln
from kiln.dsl import KilnError

TORCH_PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch


@kiln.task(python=TORCH_PYTHON)
def prepare(rows: int, data: kiln.OutputPath("data.pt")) -> int:
    import torch

    g = torch.Generator().manual_seed(1234)
    x = torch.randn(rows, 4, generator=g)
    y = x @ torch.tensor([[2.0], [-3.0], [0.5], [1.0]]) + 0.01 * torch.randn(rows, 1, generator=g)
    torch.save((x, y), data)
    return rows


@kiln.task(python=TORCH_PYTHON, retries=1,
           train=kiln.Train("torch-distributed", num_nodes=2, num_proc_per_node=2, resources_per_node={"cpu": "250m"}))
def train(data: kiln.InputPath, steps: int, model: kiln.OutputPath("model.pt")) -> float:
    """DDP over gloo: kiln starts every process with RANK, WORLD_SIZE, MASTER_ADDR..."""
    import os
    import socket
    import time

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    if int(os.environ["RANK"]) != 0:  # wait for rank 0's store (torch backs off a second when early)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection((os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])), 1).close()
                break
            except OSError:
                time.sleep(0.01)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    x_all, y_all = torch.load(data)
    x, y = x_all[rank::world], y_all[rank::world]
    net = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
    print(f"rank {rank}/{world} loss {loss.item():.6f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        torch.save(net.module.state_dict(), model)
    return round(loss.item(), 6)


@kiln.task(python=TORCH_PYTHON)
def evaluate(data: kiln.InputPath, model: kiln.InputPath) -> float:
    import torch

    x, y = torch.load(data)
    net = torch.nn.Linear(4, 1)
    net.load_state_dict(torch.load(model))
    mse = torch.nn.functional.mse_loss(net(x), y).item()
    print(f"mse {mse:.6f}")
    return round(mse, 6)


@kiln.workflow(name="train-eval", timeout="5m")
def train_eval(rows: int = 512, steps: int = 40):
    data = prepare(rows=rows).outputs.data
    trained = train(data=data, steps=steps)
    scored = evaluate(data=data, model=trained.outputs.model)
    return {"loss": trained.outputs.output, "mse": scored.output}


def test_train_node_compiles_to_a_train_block(kiln_bin):
    task = train_eval.to_dict()["spec"]["tasks"][1]
    assert task["name"] == "train" and task["dependsOn"] == ["prepare"]
    block = task["train"]
    assert block["runtime"] == "torch-distributed"
    assert (block["numNodes"], block["numProcPerNode"], block["resourcesPerNode"]) == (2, 2, {"cpu": "250m"})
    assert block["command"][:2] == [TORCH_PYTHON, "-c"] and "def train(" in block["command"][2]
    assert block["args"] == ["--data", "{{tasks.prepare.outputs.artifacts.data}}", "--steps", "{{params.steps}}"]
    assert task["outputs"] == {"parameters": [{"name": "output"}], "artifacts": [{"name": "model", "path": "model.pt"}]}
    assert task["retries"] == {"limit": 1}
    kiln.dsl.runner.validate(train_eval.to_yaml(), kiln_bin=kiln_bin)


def test_trainjob_compiles_to_kind_trainjob(kiln_bin, tmp_path):
    job = kiln.TrainJob("ddp", runtime="torch-distributed", command=["python3", "ddp.py"], args=["--steps", 20],
                        num_nodes=2, num_proc_per_node=2, resources_per_node={"cpu": "500m"},
                        env={"LOG_LEVEL": "debug"}, run_policy={"backoff_limit": 1, "active_deadline_seconds": 600})
    assert job.to_dict() == {
        "apiVersion": "kiln.dev/v1alpha1", "kind": "TrainJob", "metadata": {"name": "ddp"},
        "spec": {"runtimeRef": {"name": "torch-distributed"},
                 "trainer": {"command": ["python3", "ddp.py"], "args": ["--steps", "20"],
                             "env": [{"name": "LOG_LEVEL", "value": "debug"}], "numNodes": 2,
                             "numProcPerNode": 2, "resourcesPerNode": {"cpu": "500m"}},
                 "runPolicy": {"backoffLimit": 1, "activeDeadlineSeconds": 600}}}
    job.validate(kiln_bin=kiln_bin)
    with pytest.raises(KilnError) as e:
        kiln.TrainJob("bad", runtime="no-such-runtime", command=["true"]).validate(kiln_bin=kiln_bin)
    assert e.value.code == "KLN-1017"
    with pytest.raises(ValueError, match="exactly one of command"):
        kiln.TrainJob("x")


def test_trainjob_of_a_function_runs_locally(monkeypatch, kiln_bin, kiln_home, tmp_path):
    monkeypatch.setenv("KILN_BIN", kiln_bin)
    monkeypatch.setenv("KILN_HOME", str(kiln_home))
    monkeypatch.delenv("KILN_SERVER", raising=False)

    def allreduce(expect: int) -> None:
        import os

        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        t = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(t)
        print(f"rank {dist.get_rank()} sum {t.item()}", flush=True)
        assert t.item() == expect, t.item()
        dist.destroy_process_group()

    job = kiln.TrainJob("allreduce", function=allreduce, arguments={"expect": 3}, python=TORCH_PYTHON,
                        num_nodes=2, num_proc_per_node=1, resources_per_node={"cpu": "250m"})
    assert job.to_dict()["spec"]["trainer"]["args"] == ["--expect", "3"]
    run = job.run(workdir=str(tmp_path))
    assert (run["status"]["phase"] if isinstance(run, dict) else run.phase) == "Succeeded"


def _outputs(run, node):
    if isinstance(run, dict):
        return next(n for n in run["status"]["nodes"] if n["name"] == node).get("outputs", {})
    return run.node(node).outputs


def test_ddp_pipeline_runs_locally(monkeypatch, kiln_bin, kiln_home, tmp_path):
    monkeypatch.setenv("KILN_BIN", kiln_bin)
    monkeypatch.setenv("KILN_HOME", str(kiln_home))
    monkeypatch.delenv("KILN_SERVER", raising=False)
    run = train_eval.run(params={"steps": 30}, workdir=str(tmp_path))
    loss = float(_outputs(run, "train")["output"])
    mse = float(_outputs(run, "evaluate")["output"])
    assert 0 < loss < 0.5 and 0 < mse < 0.5, (loss, mse)
    logs = subprocess.run([kiln_bin, "--home", str(kiln_home), "logs", run["id"] if isinstance(run, dict) else run.id,
                           "train"], capture_output=True, text=True)
    ranks = {line.split("rank ")[1].split("/")[0] for line in logs.stdout.splitlines() if "rank " in line}
    assert ranks == {"0", "1", "2", "3"}, logs.stdout


def _node_phase(client, run_id, name):
    """The phase of a run's node, "" before the node exists."""
    for node in client.get(run_id).status.nodes:
        if node.name == name:
            return node.phase
    return ""


def test_ddp_pipeline_on_a_server(kiln_server, tmp_path):
    """The issue's end-to-end test: built in Python, submitted to a real
    kiln serve, its train logs followed, its outputs read."""
    client = kiln.Client(server=kiln_server.url, token=kiln_server.token)
    run = train_eval.run(params={"steps": 30}, client=client, wait=False, workdir=str(tmp_path))
    deadline = time.monotonic() + 90
    while _node_phase(client, run.id, "train") in ("", "Pending") and time.monotonic() < deadline:
        time.sleep(0.2)
    lines = list(client.logs(run.id, "train", follow=True))
    ranks = {line.split("rank ")[1].split("/")[0] for line in lines if "rank " in line}
    assert ranks == {"0", "1", "2", "3"}, lines
    final = client.wait(run.id, timeout=90)
    assert final.succeeded, final.status
    loss = float(final.node("train").outputs["output"])
    assert 0 < loss < 0.5
    assert float(final.outputs["mse"]) < 0.5
    assert final.node("evaluate").phase == "Succeeded"
    # a bad pipeline comes back from the server with its code and field
    bad = kiln.command("bad", ["true"], extra={"timeout": "soon"})

    @kiln.workflow(name="rejected")
    def rejected():
        bad()

    with pytest.raises(KilnError) as e:
        rejected.run(client=client)
    assert e.value.code == "KLN-1009" and e.value.field.endswith("timeout")
