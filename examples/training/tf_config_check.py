"""Check TF_CONFIG the way tf.distribute's cluster resolver reads it."""
import json
import os

cfg = json.loads(os.environ["TF_CONFIG"])
cluster, task = cfg["cluster"], cfg["task"]
want_workers = int(os.environ["EXPECT_NODES"]) - 1
assert len(cluster["chief"]) == 1, cluster
assert len(cluster.get("worker", [])) == want_workers, cluster
assert len(cluster.get("ps", [])) == int(os.environ["EXPECT_PS"]), cluster
assert task["type"] in cluster and 0 <= task["index"] < len(cluster[task["type"]]), task
addrs = [a for role in cluster.values() for a in role]
assert len(set(addrs)) == len(addrs), f"addresses repeat: {addrs}"
print(f"{task['type']}-{task['index']} ok: {json.dumps(cluster, sort_keys=True)}")
