"""examples/pipeline.yaml written in Python: make a data set, fit two models
in parallel with different learning rates, and keep the better one.

    PYTHONPATH=sdk/python/src python3 examples/python/pipeline.py            # run it locally (or on KILN_SERVER)
    PYTHONPATH=sdk/python/src python3 -m kiln compile examples/python/pipeline.py:linear_fit   # print the YAML

The tasks run the same programs as the YAML (examples/pipeline/*.py), from
the examples directory.
"""

import pathlib

import kiln

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent

prepare = kiln.command(
    "prepare", ["python3", "pipeline/prepare.py"],
    parameters=["rows"], artifacts={"data": "data.csv"},
    resources={"cpu": "500m", "memory": "256Mi"},
    cache="1",  # the key cannot see prepare.py: bump the version if it changes
)
train = kiln.command(
    "train", ["python3", "pipeline/train.py"],
    parameters=["loss"], artifacts={"model": "model.json"},
    retries={"limit": 2, "backoff": {"duration": "1s", "factor": 2, "max": "10s"}}, timeout="5m",
)
evaluate = kiln.command("evaluate", ["python3", "pipeline/evaluate.py"], parameters=["best"])


@kiln.workflow(name="linear-fit", labels={"team": "examples"}, timeout="10m")
def linear_fit(epochs: int = 200, rows: int = 2000, seed: int = 7) -> None:
    prep = prepare(args=["--rows", rows, "--seed", seed, "--out", f"{kiln.OUTPUTS_DIR}/data.csv"])
    data = prep.outputs.data
    slow = train(args=["--data", data, "--lr", "0.01", "--epochs", epochs]).with_overrides(name="train-slow")
    fast = train(args=["--data", data, "--lr", "0.1", "--epochs", epochs]).with_overrides(name="train-fast")
    evaluate(
        args=["--data", data, "--model", slow.outputs.model, "--model", fast.outputs.model],
        env={"EXPECTED_ROWS": prep.outputs.rows},
    )


if __name__ == "__main__":
    run = linear_fit.run(workdir=EXAMPLES)  # on KILN_SERVER if set, else locally; raises unless it succeeded
    print(f"Run {run.id} {run.phase}: best {run.node('evaluate').outputs['best']}")
