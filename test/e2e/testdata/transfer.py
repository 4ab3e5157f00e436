"""Sends blocks of bytes from the sender's share to the receiver's
through the federation channel: BLOCKS messages of BLOCK_MIB MiB each,
then one message of BIG_MIB MiB (many pieces). The receiver checks every
digest (kiln.federation does) and the bytes themselves; each writes the
MiB it sent or received to its output mib."""
import hashlib
import os
import sys

from kiln import federation

BLOCKS = int(os.environ.get("BLOCKS", "24"))
BLOCK_MIB = int(os.environ.get("BLOCK_MIB", "1"))
BIG_MIB = int(os.environ.get("BIG_MIB", "8"))


def block(name, mib):
    seed = hashlib.sha256(name.encode()).digest()
    return (seed * (mib * 32768))[: mib << 20]


def main():
    role = os.environ.get("KILN_ROLE")
    peer = federation.peers()[0].party
    names = [(f"block-{i}", BLOCK_MIB) for i in range(BLOCKS)] + [("big", BIG_MIB)]
    total = 0
    for name, mib in names:
        if role == "sender":
            federation.send(peer, name, block(name, mib))
        elif federation.recv(peer, name) != block(name, mib):
            sys.exit(f"{name} arrived with other bytes")
        total += mib
        print(f"{role}: {name}", flush=True)
    with open(os.path.join(os.environ["KILN_OUTPUTS"], "mib"), "w") as f:
        f.write(str(total))


if __name__ == "__main__":
    main()
