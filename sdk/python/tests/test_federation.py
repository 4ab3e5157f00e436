"""kiln.federation's own logic; the channel itself runs for real across
three kiln servers in test/e2e (secure sum, FedAvg, a partition)."""

import pytest

from kiln import KilnError
from kiln import federation


def test_a_process_outside_a_federated_task_has_no_channel(monkeypatch):
    monkeypatch.delenv("KILN_FEDERATION_CHANNEL", raising=False)
    monkeypatch.delenv("KILN_FEDERATION_TOKEN", raising=False)
    with pytest.raises(federation.ChannelError) as e:
        federation.Channel()
    assert e.value.code == "KLN-7002"
    assert "kiln serve --party" in e.value.hint
    assert isinstance(e.value, KilnError)


def test_peers_come_from_the_environment_and_are_named_by_party_and_role(monkeypatch):
    monkeypatch.setenv("KILN_FEDERATION_CHANNEL", "http://127.0.0.1:1/api/v1/channel/r-bob/t/1")
    monkeypatch.setenv("KILN_FEDERATION_TOKEN", "kch_x")
    monkeypatch.setenv(
        "KILN_FEDERATION_PEERS",
        '[{"party": "alice", "role": "guest", "task": "t"}, {"party": "carol", "role": "arbiter", "task": "t"},'
        ' {"party": "carol", "role": "host", "task": "t-host"}]',
    )
    ch = federation.Channel()
    assert ch.peer("alice").role == "guest"
    assert ch.peer("carol", "host").task == "t-host"
    with pytest.raises(federation.ChannelError) as e:
        ch.peer("carol")
    assert e.value.code == "KLN-7020" and "name the role" in str(e.value)
    with pytest.raises(federation.ChannelError) as e:
        ch.peer("dave")
    assert "alice/guest" in str(e.value)


def test_a_call_that_never_reaches_its_server_gives_up_in_time(monkeypatch):
    ch = federation.Channel(url="http://127.0.0.1:9/api/v1/channel/r-bob/t/1", token="kch_x",
                            peers=[federation.Peer("alice", "guest")], timeout=1)
    with pytest.raises(federation.ChannelError) as e:
        ch.send("alice", "m", b"hello")
    assert e.value.code == "KLN-7004"
    assert "FEDERATION_TIMEOUT" in e.value.hint
