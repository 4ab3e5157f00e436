"""The client's run operations against a real kiln serve."""

import datetime
import time

import pytest

import kiln
from client_support import GATES, SLEEPER, SLOW_LINES, client, hello, until


def test_submit_wait_and_read_outputs(kiln_server, tmp_path):
    c = client(kiln_server)
    path = tmp_path / "hello.yaml"
    path.write_text(hello())
    run = c.submit(path, params={"who": "py"})
    assert isinstance(run, kiln.Run)
    assert run.name == "hello" and run.project == "default" and run.params == {"who": "py"}
    assert isinstance(run.created_at, datetime.datetime) and run.created_at.tzinfo is not None

    done = c.wait(run.id, timeout=60)
    assert done.done and done.succeeded and done.phase == "Succeeded"
    assert done.outputs == {"greeting": "hi-py"}
    greet = done.node("greet")
    assert greet.outputs == {"greeting": "hi-py"}
    assert [a.number for a in greet.attempts] == [1] and greet.attempts[0].exit_code == 0
    assert done.status.finished_at >= done.status.started_at
    assert list(c.logs(run.id, "greet")) == ["hello py"]
    with pytest.raises(KeyError, match="no node 'nope'"):
        done.node("nope")


def test_submit_takes_text_bytes_str_path_and_to_yaml(kiln_server, tmp_path):
    c = client(kiln_server)

    class Doc:
        name = "from-object"

        def to_yaml(self):
            return hello("from-object")

    path = tmp_path / "as-str.yaml"
    path.write_text(hello("as-str"))
    runs = [c.submit(hello("as-text")), c.submit(hello("as-bytes").encode()), c.submit(str(path)), c.submit(Doc())]
    assert [r.name for r in runs] == ["as-text", "as-bytes", "as-str", "from-object"]
    assert all(c.wait(r.id, timeout=60).succeeded for r in runs)


def test_list_filters_and_paging(kiln_server):
    c = client(kiln_server)
    ids = [c.submit(hello("alpha", "a")).id, c.submit(hello("alpha", "a")).id, c.submit(hello("beta", "b")).id]
    for i in ids:
        c.wait(i, timeout=60)

    first = c.list_runs(limit=2)
    assert len(first.items) == 2 and first.next
    second = c.list_runs(limit=2, cursor=first.next)
    assert [r.id for r in first.items + second.items] == ids[::-1]
    assert second.next == ""
    assert [r.id for r in c.iter_runs(page_size=1)] == ids[::-1]
    assert [r.id for r in c.iter_runs(order="asc", page_size=2)] == ids

    assert {r.id for r in c.iter_runs(name="beta")} == {ids[2]}
    assert {r.id for r in c.iter_runs(label="team=a")} == set(ids[:2])
    assert len(list(c.iter_runs(phase=["Succeeded", "Failed"]))) == 3
    assert list(c.iter_runs(phase="Running")) == []
    assert len(list(c.iter_runs(since="1h"))) == 3
    past = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    assert list(c.iter_runs(until=past)) == []
    assert len(list(c.iter_runs(since=past, project="default"))) == 3
    assert [r.id for r in c.iter_runs(q=ids[1])] == [ids[1]]


def test_watch_runs_sends_each_run_then_changes(kiln_server):
    c = client(kiln_server)
    first = c.submit(hello("watched")).id
    c.wait(first, timeout=60)
    watch = c.watch_runs(name="watched")
    try:
        change = next(watch)
        assert change.type == "run" and change.run.id == first and change.id.startswith("t")
        second = c.submit(hello("watched")).id
        seen = next(watch)
        assert seen.run_id == second
    finally:
        watch.close()


def test_events_stream_with_gates_approved_and_signalled(kiln_server):
    c = client(kiln_server)
    run = c.submit(GATES)
    reasons = []
    for ev in c.stream_events(run.id):
        assert isinstance(ev, kiln.Event) and ev.run == run.id
        reasons.append((ev.reason, ev.node))
        if (ev.reason, ev.node) == ("Waiting", "ask"):
            sent = c.approve(run.id, "ask", reason="looks right")
            assert (sent.run, sent.task, sent.sent) == (run.id, "ask", "approve")
            assert isinstance(sent, kiln.GateSent) and sent.by.startswith("admin (token ")
        if (ev.reason, ev.node) == ("Waiting", "value"):
            sent = c.signal(run.id, "value", "42")
            assert (sent.run, sent.task, sent.sent) == (run.id, "value", "signal")
    # The stream ends by itself once the run has ended.
    assert ("Waiting", "ask") in reasons and ("Waiting", "value") in reasons
    done = c.get(run.id)
    assert done.succeeded and done.outputs == {} and done.node("use").outputs == {"got": "got-42"}
    assert done.node("ask").gate.decision and done.node("value").gate.value == "42"
    ask = done.node("ask").gate
    assert ask.reason == "looks right" and ask.by.startswith("admin") and ask.at is not None and ask.extra == {}

    listed = c.events(run.id)
    assert [e.seq for e in listed] == sorted(e.seq for e in listed) and len(listed) == len(reasons)
    resumed = list(c.stream_events(run.id, after=listed[2].seq))
    assert [e.seq for e in resumed] == [e.seq for e in listed[3:]]
    assert [e.seq for e in c.events(run.id, after=listed[-2].seq)] == [listed[-1].seq]


def test_reject_fails_the_gate(kiln_server):
    c = client(kiln_server)
    run = c.submit(GATES)
    until(lambda: c.get(run.id).node("ask").phase == "Running", what="ask waits")
    assert c.reject(run.id, "ask", reason="no").sent == "reject"
    done = c.wait(run.id, timeout=60)
    assert done.phase == "Failed" and done.node("ask").code == "KLN-3015"


def test_logs_follow_streams_lines_as_they_come(kiln_server):
    c = client(kiln_server)
    run = c.submit(SLOW_LINES)
    got, first_at_done = [], None
    for line in c.logs(run.id, "talk", follow=True):
        if not got:
            first_at_done = c.get(run.id).done
        got.append(line)
    assert got == ["line 1", "line 2", "line 3"]
    assert first_at_done is False, "the first line came only after the run had ended"
    assert c.wait(run.id, timeout=30).succeeded
    assert list(c.logs(run.id, "talk", tail=1)) == ["line 3"]
    stamped = list(c.logs(run.id, "talk", timestamps=True))
    assert len(stamped) == 3 and stamped[0].endswith("line 1") and stamped[0] != "line 1"
    assert list(c.logs(run.id, "talk", attempt=1)) == got


def test_cancel_a_long_task(kiln_server):
    c = client(kiln_server)
    run = c.submit(SLEEPER)
    until(lambda: c.get(run.id).node("nap").phase == "Running", what="nap runs")
    assert c.cancel(run.id) == kiln.RunRequested(run=run.id, requested="cancel")
    started = time.monotonic()
    done = c.wait(run.id, timeout=30)
    assert done.phase == "Cancelled" and time.monotonic() - started < 30
    assert done.node("nap").phase == "Cancelled"


def test_stop_runs_the_exit_handlers(kiln_server):
    c = client(kiln_server)
    wf = SLEEPER.replace("name: sleeper", "name: stopped") + """  onExit:
  - name: notify
    command: ["true"]
"""
    run = c.submit(wf)
    until(lambda: c.get(run.id).node("nap").phase == "Running", what="nap runs")
    assert c.stop(run.id) == kiln.RunRequested(run=run.id, requested="stop")
    done = c.wait(run.id, timeout=30)
    assert done.phase == "Failed" and done.status.code == "KLN-3020"
    assert done.node("onExit.notify").phase == "Succeeded"


def test_retry_a_failed_run(kiln_server, tmp_path):
    c = client(kiln_server)
    flags = tmp_path / "flags"
    flags.mkdir(mode=0o777)
    flags.chmod(0o777)
    wf = SLEEPER.replace("name: sleeper", "name: flaky").replace(
        "echo napping; sleep 120", f"test -e {flags}/second && echo ok || {{ touch {flags}/second; exit 3; }}")
    run = c.submit(wf)
    failed = c.wait(run.id, timeout=60)
    assert failed.phase == "Failed" and failed.node("nap").attempts[-1].exit_code == 3
    assert c.retry(run.id) == kiln.RunRequested(run=run.id, requested="retry")
    done = c.wait(run.id, timeout=60)
    assert done.id == run.id and done.succeeded
    assert [a.exit_code for a in done.node("nap").attempts][-1] == 0


def test_rerun_from_a_task_reuses_the_rest(kiln_server):
    c = client(kiln_server)
    wf = hello("two").replace("  outputs:\n    parameters:", "  - name: after\n    dependsOn: [greet]\n"
                              "    command: [/bin/sh, -c, 'echo after']\n  outputs:\n    parameters:")
    first = c.wait(c.submit(wf).id, timeout=60)
    assert first.succeeded
    again = c.rerun(first.id, "after", mode="from")
    assert again.id != first.id and again.rerun_of["run"] == first.id and again.rerun_of["mode"] == "from"
    done = c.wait(again.id, timeout=60)
    assert done.succeeded and done.outputs == {"greeting": "hi-world"}
    greet = done.node("greet")
    assert greet.reused["run"] == first.id and greet.reused["node"] == "greet" and greet.extra == {}
    with pytest.raises(kiln.KilnError, match="mode"):
        c.rerun(first.id, "after", mode="sideways")


def test_delete_a_run(kiln_server):
    c = client(kiln_server)
    run = c.submit(SLEEPER)
    with pytest.raises(kiln.KilnError) as e:
        c.delete(run.id)
    assert e.value.code == "KLN-4010" and e.value.status is not None
    assert c.delete(run.id, force=True) == kiln.RunDeleted(run=run.id, deleted=True)
    with pytest.raises(kiln.KilnError) as e:
        c.get(run.id)
    assert e.value.code == "KLN-4001"


@pytest.mark.parametrize("name", ["pipline.yaml", "sub/dir/x.yml", "X.JSON", "no-such-file", "C:/x.yaml"])
def test_a_missing_file_is_kln_1020_and_never_sent(kiln_server, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    c = client(kiln_server)
    with pytest.raises(kiln.KilnError) as e:
        c.submit(name)
    err = e.value
    assert (err.code, err.file, err.status) == ("KLN-1020", name, None)
    assert str(err) == (f"KLN-1020 {name}: cannot read the file: no such file or directory "
                        "(hint: check the path and that the file is readable)")
    assert c.list_runs().items == []


def test_a_directory_is_kln_1020(kiln_server, tmp_path):
    with pytest.raises(kiln.KilnError) as e:
        client(kiln_server).submit(tmp_path)
    assert e.value.code == "KLN-1020" and "is a directory" in e.value.message


def test_submit_takes_a_dict_and_a_list_of_dicts(kiln_server):
    c = client(kiln_server)
    doc = {"apiVersion": "kiln.dev/v1alpha1", "kind": "Workflow", "metadata": {"name": "as-dict"},
           "spec": {"tasks": [{"name": "a", "command": ["/bin/sh", "-c", "echo from-dict"]}]}}
    run = c.wait(c.submit(doc).id, timeout=60)
    assert run.name == "as-dict" and run.succeeded and list(c.logs(run.id, "a")) == ["from-dict"]
    runtime = {"apiVersion": "kiln.dev/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "mine"},
               "spec": {"mlPolicy": {"numNodes": 1, "plain": {}}}}
    job = {"apiVersion": "kiln.dev/v1alpha1", "kind": "TrainJob", "metadata": {"name": "with-rt"},
           "spec": {"runtimeRef": {"name": "mine"},
                    "trainer": {"command": ["/bin/sh", "-c", "echo trained"]}}}
    both = c.wait(c.submit([job, runtime]).id, timeout=60)
    assert both.name == "with-rt" and both.succeeded, both.status
    with pytest.raises(kiln.KilnError) as e:
        c.submit({"apiVersion": "kiln.dev/v1alpha1", "kind": "Workflow", "metadata": {"name": "x"},
                  "spec": {"tasks": [{"name": "a", "comand": ["true"]}]}})
    assert e.value.code == "KLN-1002" and e.value.file == "request"
    with pytest.raises(kiln.KilnError) as e:
        c.submit({"when": datetime.datetime.now()})
    assert e.value.code == "KLN-4002" and "JSON" in e.value.message


def test_suspend_and_unsuspend_answer_what_the_run_was_set_to(kiln_server):
    c = client(kiln_server)
    runtime = {"apiVersion": "kiln.dev/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "plain"},
               "spec": {"mlPolicy": {"numNodes": 1, "plain": {}}}}
    job = {"apiVersion": "kiln.dev/v1alpha1", "kind": "TrainJob", "metadata": {"name": "napper"},
           "spec": {"runtimeRef": {"name": "plain"}, "trainer": {"command": ["/bin/sh", "-c", "sleep 120"]}}}
    run = c.submit([job, runtime])
    until(lambda: c.get(run.id).phase == "Running", what="the job runs")
    assert c.suspend(run.id) == kiln.RunSuspension(run=run.id, suspend=True)
    assert until(lambda: c.get(run.id).suspend, what="the run is suspended")
    assert c.unsuspend(run.id) == kiln.RunSuspension(run=run.id, suspend=False)
    assert c.get(run.id).suspend is False
    assert c.cancel(run.id).requested == "cancel"
    assert c.wait(run.id, timeout=30).phase == "Cancelled"
