"""Check TF_CONFIG the way tf.distribute's cluster resolver reads it.

The chief's exit decides a TensorFlow job and stops the other replicas,
as training-operator does, so the chief waits until every replica has
checked in (a file in the attempt's shared output directory) first.
"""
import json
import os
import time

cfg = json.loads(os.environ["TF_CONFIG"])
cluster, task = cfg["cluster"], cfg["task"]
want_workers = int(os.environ["EXPECT_NODES"]) - 1
assert len(cluster["chief"]) == 1, cluster
assert len(cluster.get("worker", [])) == want_workers, cluster
assert len(cluster.get("ps", [])) == int(os.environ["EXPECT_PS"]), cluster
assert task["type"] in cluster and 0 <= task["index"] < len(cluster[task["type"]]), task
addrs = [a for role in cluster.values() for a in role]
assert len(set(addrs)) == len(addrs), f"addresses repeat: {addrs}"
me = f"{task['type']}-{task['index']}"
print(f"{me} ok: {json.dumps(cluster, sort_keys=True)}", flush=True)

out = os.environ["KILN_OUTPUTS"]
open(os.path.join(out, f"checked-{me}"), "w").close()
if task["type"] == "chief":
    deadline = time.time() + 60
    while len([f for f in os.listdir(out) if f.startswith("checked-")]) < len(addrs):
        if time.time() > deadline:
            raise SystemExit("not every replica checked in")
        time.sleep(0.05)
