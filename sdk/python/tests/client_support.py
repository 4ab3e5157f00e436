"""Workflows and helpers shared by the client's and the CLI's tests."""

import time

import kiln

HELLO = """\
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata:
  name: {name}
  labels: {{team: {team}}}
spec:
  params:
  - {{name: who, default: world}}
  tasks:
  - name: greet
    command: [/bin/sh, -c, 'echo "hello {{{{params.who}}}}"; printf "hi-{{{{params.who}}}}" > $KILN_OUTPUTS/greeting']
    outputs: {{parameters: [{{name: greeting}}]}}
  outputs:
    parameters:
    - {{name: greeting, value: "{{{{tasks.greet.outputs.parameters.greeting}}}}"}}
"""

GATES = """\
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata:
  name: gates
spec:
  tasks:
  - name: ask
    gate: {approve: {message: "go on?"}}
  - name: value
    dependsOn: [ask]
    gate: {signal: {type: string}}
  - name: use
    dependsOn: [value]
    command: [/bin/sh, -c, 'printf "got-%s" "{{tasks.value.outputs.parameters.value}}" > $KILN_OUTPUTS/got']
    outputs: {parameters: [{name: got}]}
"""

SLOW_LINES = """\
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata:
  name: slow-lines
spec:
  tasks:
  - name: talk
    command: [/bin/sh, -c, 'for i in 1 2 3; do echo "line $i"; sleep 1; done']
"""

SLEEPER = """\
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata:
  name: sleeper
spec:
  tasks:
  - name: nap
    command: [/bin/sh, -c, 'echo napping; sleep 120']
"""


def hello(name="hello", team="a"):
    """The one-task workflow called name, labelled team=team."""
    return HELLO.format(name=name, team=team)


def until(check, timeout=30.0, every=0.1, what="the condition"):
    """Polls check() until it returns something true, and returns that;
    fails the test after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout}s")
        time.sleep(every)


def client(served, **kw):
    """A Client of the fixture's server with its admin token."""
    return kiln.Client(served.url, token=served.token, **kw)
