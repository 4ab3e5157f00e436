"""A secure sum across three parties, standard library only.

guest and host each hold a private number (PRIVATE_VALUE, from a secret
of their own party). guest draws a random mask r and sends it to host;
guest sends (x_g + r) mod P and host (x_h - r) mod P to the arbiter, which
adds the two and learns x_g + x_h, never x_g nor x_h. The arbiter sends the
total back; every share prints total=<n> and writes the output parameter
total. No process prints or sends another party's raw value.

kiln gives each share KILN_ROLE, KILN_FEDERATION_ADDRESS (where it
listens) and its peers, in KILN_FEDERATION_FILE or KILN_FEDERATION_PEERS.
"""
import json
import os
import secrets
import socket
import sys
import time

P = 2**61 - 1  # a prime: shares are numbers modulo P
CONNECT_FOR = 60.0  # seconds a peer may take to start listening
TALK_FOR = 120.0  # seconds any one exchange may take


def federation():
    """This share's role, address and peers, as kiln wrote them."""
    path = os.environ.get("KILN_FEDERATION_FILE")
    if path:
        with open(path) as f:
            me = json.load(f)
        return me["role"], me["address"], me.get("peers") or []
    peers = json.loads(os.environ.get("KILN_FEDERATION_PEERS") or "[]")
    return os.environ["KILN_ROLE"], os.environ["KILN_FEDERATION_ADDRESS"], peers


def peer(peers, role):
    """The address of the one peer that fills role."""
    found = [p["address"] for p in peers if p["role"] == role]
    if len(found) != 1:
        sys.exit(f"secure sum needs exactly one {role}, the peers list {len(found)}")
    return found[0]


def split(address):
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def connect(address):
    """A connection to address, retried while the peer starts."""
    deadline = time.monotonic() + CONNECT_FOR
    while True:
        try:
            return socket.create_connection(split(address), timeout=TALK_FOR)
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit(f"cannot reach {address} within {CONNECT_FOR:.0f}s: {e}")
            time.sleep(0.2)


def listen(address, count):
    """Accept count connections on address."""
    srv = socket.create_server(split(address), reuse_port=False)
    srv.settimeout(TALK_FOR)
    conns = []
    try:
        while len(conns) < count:
            conn, _ = srv.accept()
            conn.settimeout(TALK_FOR)
            conns.append(conn)
    except socket.timeout:
        sys.exit(f"{count - len(conns)} peer(s) did not connect to {address} within {TALK_FOR:.0f}s")
    finally:
        srv.close()
    return conns


def send(conn, msg):
    conn.sendall((json.dumps(msg) + "\n").encode())


def receive(conn):
    line = conn.makefile("r").readline()
    if not line:
        sys.exit("a peer closed the connection early")
    return json.loads(line)


def private_value():
    try:
        return int(os.environ["PRIVATE_VALUE"]) % P
    except (KeyError, ValueError):
        sys.exit("PRIVATE_VALUE must be set to a whole number (a secret of this party)")


def guest(peers):
    x, r = private_value(), secrets.randbelow(P)
    with connect(peer(peers, "host")) as h:
        send(h, {"mask": r})
    with connect(peer(peers, "arbiter")) as a:
        send(a, {"role": "guest", "share": (x + r) % P})
        return receive(a)["total"]


def host(address, peers):
    x = private_value()
    (g,) = listen(address, 1)
    with g:
        r = receive(g)["mask"]
    with connect(peer(peers, "arbiter")) as a:
        send(a, {"role": "host", "share": (x - r) % P})
        return receive(a)["total"]


def arbiter(address):
    conns = listen(address, 2)
    shares = {}
    for c in conns:
        msg = receive(c)
        shares[msg["role"]] = msg["share"]
    if sorted(shares) != ["guest", "host"]:
        sys.exit(f"expected one share from guest and one from host, got {sorted(shares)}")
    total = sum(shares.values()) % P
    for c in conns:
        with c:
            send(c, {"total": total})
    return total


def main():
    role, address, peers = federation()
    if role == "guest":
        total = guest(peers)
    elif role == "host":
        total = host(address, peers)
    elif role == "arbiter":
        total = arbiter(address)
    else:
        sys.exit(f"unknown role {role!r}: secure sum has guest, host and arbiter")
    print(f"total={total}", flush=True)
    out = os.environ.get("KILN_OUTPUTS")
    if out:
        with open(os.path.join(out, "total"), "w") as f:
            f.write(str(total))


if __name__ == "__main__":
    main()
