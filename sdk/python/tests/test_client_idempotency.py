"""Idempotent submissions: one key, one run, however often it is sent."""

import http.server
import json
import re
import threading

import pytest

import kiln
from client_support import client, hello


def test_idempotency_key_sent_again_answers_with_the_first_run(kiln_server):
    c = client(kiln_server)
    first = c.submit(hello("keyed"), idempotency_key="py-key-1")
    again = c.submit(hello("keyed"), idempotency_key="py-key-1")
    assert again.id == first.id
    with pytest.raises(kiln.KilnError) as refused:
        c.submit(hello("other"), idempotency_key="py-key-1")
    assert refused.value.code == "KLN-4061" and refused.value.status == 409
    fresh = [c.submit(hello("keyed")).id for _ in range(2)]
    assert len({first.id, *fresh}) == 3  # each submit makes its own key


class _Flaky(http.server.BaseHTTPRequestHandler):
    """Loses the first answer, is busy for the second, creates on the third."""

    keys: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers["Content-Length"]))
        self.keys.append(self.headers.get("Idempotency-Key"))
        if len(self.keys) == 1:
            self.connection.close()
            return
        status, body = (503, {"errors": [{"code": "KLN-4013", "message": "busy"}]}) if len(self.keys) == 2 \
            else (201, {"id": "r1", "name": "keyed"})
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("given", [None, "my-key"])
def test_idempotency_key_is_the_same_on_every_retry(given):
    _Flaky.keys = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        run = kiln.Client(f"http://127.0.0.1:{srv.server_address[1]}", token="t").submit(
            hello("keyed"), idempotency_key=given)
    finally:
        srv.shutdown()
        srv.server_close()
    assert run.id == "r1"
    assert len(_Flaky.keys) == 3 and len(set(_Flaky.keys)) == 1
    assert _Flaky.keys[0] == given if given else re.fullmatch(r"[0-9a-f]{32}", _Flaky.keys[0])


def test_a_rerun_sent_again_with_its_key_answers_with_its_first_run(kiln_server):
    c = client(kiln_server)
    src = c.wait(c.submit(hello("rerun-src")).id)
    first = c.rerun(src.id, "greet", idempotency_key="py-rerun-1")
    again = c.rerun(src.id, "greet", idempotency_key="py-rerun-1")
    assert again.id == first.id != src.id
    with pytest.raises(kiln.KilnError) as refused:
        c.rerun(src.id, "greet", mode="only", idempotency_key="py-rerun-1")
    assert refused.value.code == "KLN-4061"
