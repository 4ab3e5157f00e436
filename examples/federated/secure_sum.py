"""A secure sum across three parties, over the federation channel.

guest and host each hold a private number (PRIVATE_VALUE, from a secret
of their own party). guest draws a random mask r and sends it to host;
guest sends (x_g + r) mod P and host (x_h - r) mod P to the arbiter, which
adds the two and learns x_g + x_h, never x_g nor x_h. The arbiter sends the
total back; every share prints total=<n> and writes the output parameter
total. No process prints or sends another party's raw value, and no
process connects to another party: every message goes through the
share's own kiln server (kiln.federation).
"""
import os
import secrets
import sys

from kiln import federation

P = 2**61 - 1  # a prime: shares are numbers modulo P


def number(b):
    return int(b.decode())


def encode(n):
    return str(n).encode()


def private_value():
    try:
        return int(os.environ["PRIVATE_VALUE"]) % P
    except (KeyError, ValueError):
        sys.exit("PRIVATE_VALUE must be set to a whole number (a secret of this party)")


def party_of(role):
    """The one peer that fills role."""
    found = [p.party for p in federation.peers() if p.role == role]
    if len(found) != 1:
        sys.exit(f"secure sum needs exactly one {role}, the peers list {len(found)}")
    return found[0]


def guest():
    x, r = private_value(), secrets.randbelow(P)
    federation.send(party_of("host"), "mask", encode(r))
    federation.send(party_of("arbiter"), "share", encode((x + r) % P))
    return number(federation.recv(party_of("arbiter"), "total"))


def host():
    x = private_value()
    r = number(federation.recv(party_of("guest"), "mask"))
    federation.send(party_of("arbiter"), "share", encode((x - r) % P))
    return number(federation.recv(party_of("arbiter"), "total"))


def arbiter():
    shares = [number(federation.recv(party_of(role), "share")) for role in ("guest", "host")]
    total = sum(shares) % P
    federation.broadcast("total", encode(total))
    return total


def main():
    role = os.environ.get("KILN_ROLE", "")
    run = {"guest": guest, "host": host, "arbiter": arbiter}.get(role)
    if run is None:
        sys.exit(f"unknown role {role!r}: secure sum has guest, host and arbiter")
    total = run()
    print(f"total={total}", flush=True)
    out = os.environ.get("KILN_OUTPUTS")
    if out:
        with open(os.path.join(out, "total"), "w") as f:
            f.write(str(total))


if __name__ == "__main__":
    main()
