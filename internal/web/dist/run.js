// kiln's web UI: a run's page. It follows the run's event stream (GET
// /api/v1/runs/{id}/events as Server-Sent Events): each batch of events
// has the page ask for the run again and update the parts that changed,
// in place; the rest stay as they are (what one types, a log's scroll).
// It also asks every few seconds, for what writes no event, and for
// when the stream is down. Tabs: the graph, the timeline, the logs.
"use strict";

// runPoll is how often the page asks for its run without news; donePoll
// the same for a run that ended (it may be retried elsewhere).
const runPoll = 5000, donePoll = 30000;
let page = null; // the run page shown: {id, run, events, node, tab, stop, timer, soon}

// liveEvents are the events of run id that the page has read.
function liveEvents(id) { return page && page.id === id ? page.events : []; }

// openRun shows run s.run with node s.node selected and tab s.tab open.
function openRun(s) {
  if (!page || page.id !== s.run) {
    closeRun();
    page = { id: s.run, run: null, events: [], seq: 0, stop: null, timer: null, soon: null };
    show(el("h2", {}, s.run));
    catchUp(page);
  }
  Object.assign(page, { node: s.node, tab: s.tab });
  selected = s.node || null;
  if (page.run) render();
}

function closeRun() {
  if (!page) return;
  if (page.stop) page.stop();
  clearTimeout(page.timer);
  clearTimeout(page.soon);
  const log = document.getElementById("logbox");
  if (log) stopLog(log, "");
  const graph = document.getElementById("graph");
  if (graph && graph.graph) graph.graph.destroy();
  document.body.classList.remove("has-panel");
  page = null;
}

// catchUp reads the run's events so far, then the run, then follows the
// stream: the first drawing has every event before it (a queue's wait).
async function catchUp(mine) {
  try {
    const list = await api(`/api/v1/runs/${encodeURIComponent(mine.id)}/events`);
    for (const e of list.items || []) {
      if (e.seq > mine.seq) { mine.events.push(e); mine.seq = e.seq; }
    }
  } catch (e) {
    runError(e);
  }
  if (page !== mine) return;
  follow();
  refreshRun();
}

// follow reads the run's events from the last one read.
function follow() {
  const mine = page;
  mine.followed = true;
  mine.stop = sseStream(`/api/v1/runs/${encodeURIComponent(mine.id)}/events`, {
    after: mine.seq ? String(mine.seq) : "",
    onEvents: (batch) => {
      for (const ev of batch) {
        const e = JSON.parse(ev.data);
        if (e.seq > mine.seq) { mine.events.push(e); mine.seq = e.seq; }
      }
      clearTimeout(mine.soon);
      mine.soon = setTimeout(refreshRun, 150);
    },
    onEnd: () => { mine.stop = null; refreshRun(); },
    onError: (e) => { mine.stop = null; runError(e); },
  });
}

// refreshRun asks for the run and updates the page; asked again while
// it asks, it asks once more after.
async function refreshRun() {
  const mine = page;
  if (!mine) return;
  if (mine.asking) {
    mine.again = true;
    return;
  }
  mine.asking = true;
  clearTimeout(mine.timer);
  try {
    const run = await api("/api/v1/runs/" + encodeURIComponent(mine.id));
    if (page !== mine) return;
    mine.run = run;
    if (!mine.stop && mine.followed && !["Succeeded", "Failed", "Cancelled"].includes(run.status.phase)) follow(); // retried: it runs again
    render();
  } catch (e) {
    if (page === mine) runError(e);
  }
  mine.asking = false;
  if (page !== mine) return;
  if (mine.again) {
    mine.again = false;
    refreshRun();
    return;
  }
  const ended = mine.run && ["Succeeded", "Failed", "Cancelled"].includes(mine.run.status.phase);
  mine.timer = setTimeout(refreshRun, ended ? donePoll : runPoll);
}

function runError(e) {
  const p = document.getElementById("run-error") || document.getElementById("view").appendChild(el("p", { id: "run-error", class: "error" }));
  p.textContent = errorText(e);
}

// keyed gives element e a key: while the key is the same, the page keeps
// the element it shows already (see show).
function keyed(e, ...key) {
  if (e) e.dataset.key = JSON.stringify(key);
  return e;
}

// render shows the page's run as it is now.
function render() {
  const run = page.run, tab = page.tab;
  const node = page.node ? run.status.nodes.find((n) => n.name === page.node) : null;
  const oldLog = document.getElementById("logbox");
  const s = run.status;
  const parts = [
    keyed(el("h2", {}, run.id, " ", phase(s.phase)), "head", run.id, s.phase),
    keyed(el("p", { class: "run-times" }, ...timesLine(s.startedAt, s.finishedAt, run.createdAt)), "times", run.id, run.createdAt, s.startedAt, s.finishedAt),
    runActions(run), keyed(el("p", { id: "action-result", class: "result" }), "action-result", run.id),
    keyed(rerunOf(run), "rerun-of", run.rerunOf), keyed(federationHeader(run), "federation", run.federation),
    keyed(el("p", { class: "run-message" }, [s.code, s.message].filter(Boolean).join(" ")), "message", s.code, s.message),
    s.progress ? keyed(el("p", { id: "progress", class: "run-progress" }, bar(s.progress), " ", progressText(s.progress)), "progress", s.progress) : null,
    ignoredFields(page.events), tabs(run, tab), ...tabParts(run, tab, node),
  ];
  show(...parts);
  document.body.classList.toggle("has-panel", !!document.getElementById("panel")); // the panel stays in view, at the right
  const view = document.getElementById("view");
  view.dataset.renders = (Number(view.dataset.renders) || 0) + 1; // tests see the page update
  if (oldLog && !oldLog.isConnected) stopLog(oldLog, "");
}

// tabParts are what tab shows, with node selected.
function tabParts(run, tab, node) {
  if (tab === "timeline") return [timeline(run, page.events), node ? panelOf(run, node) : null];
  if (tab === "logs") {
    const shown = logNode(run, node);
    return [nodePicker(run, shown), shown ? logBox(run, shown) : null];
  }
  return [graphBox(run), ...gates(run), keyed(outputs(run), "outputs", run.status.outputs),
    node ? panelOf(run, node) : null, node && hasLog(node) ? logBox(run, node) : null];
}

// logNode is the task whose log the logs tab shows: node, when it has
// one, else the first task that has started an attempt; null before any has.
function logNode(run, node) {
  const started = (n) => hasLog(n) && (n.attempts || []).length > 0;
  if (node && started(node)) return node;
  return run.status.nodes.find(started) || null;
}

// hasLog reports whether node has a log of its own to show.
function hasLog(node) { return node.kind !== "federated" && (!node.children || (node.attempts || []).length > 0); }

// panelOf is node's panel, kept while nothing it shows changed.
function panelOf(run, node) {
  const kids = node.children ? run.status.nodes.filter((n) => n.parent === node.name) : [];
  const queued = [...queueStarts(page.events)].filter(([k]) => k.startsWith(node.name + "#"));
  return keyed(panel(run, node), "panel", run.id, run.status.phase, role, node, kids, queued);
}

// graphBox holds the run's graph, kept across updates; drawGraph draws in it.
function graphBox(run) {
  const key = JSON.stringify(["graph", run.id]);
  const box = [...document.querySelectorAll("#graph")].find((g) => g.dataset.key === key) || el("div", { id: "graph", "data-key": key });
  drawGraph(box, run);
  return box;
}

// drawGraph draws run's graph in container: the one call the page makes
// to the graph. graph.js's KilnGraph is made once for the container and
// then updated in place, so its layout, pan, zoom and opened maps stay.
function drawGraph(container, run) {
  if (!container.graph) {
    container.graph = KilnGraph.create(container, {
      onSelect: (name) => goTo({ run: run.id, node: page && page.node === name ? "" : name, tab: "graph" }),
    });
  }
  container.graph.update(run);
  container.graph.select(selected);
}

// tabs link to the page's tabs, the open one marked.
function tabs(run, tab) {
  return keyed(el("nav", { id: "tabs", class: "tabs" }, ...[["graph", "Graph"], ["timeline", "Timeline"], ["logs", "Logs"]].map(([t, label]) =>
    el("a", { href: hashFor({ run: run.id, node: page.node, tab: t }), "data-tab": t, class: t === tab ? "active" : "" }, label))),
  "tabs", run.id, page.node, tab);
}

// nodePicker picks, on the logs tab, the task whose log shows.
function nodePicker(run, node) {
  const names = run.status.nodes.filter(hasLog).filter((n) => (n.attempts || []).length).map((n) => n.name);
  if (!names.length) return keyed(el("p", { class: "log-node" }, "No task has started yet: no log to show."), "log-node", run.id, names);
  const sel = el("select", { id: "log-node" }, ...names.map((n) => el("option", { value: n }, n)));
  sel.value = node ? node.name : names[0];
  sel.addEventListener("change", () => goTo({ run: run.id, node: sel.value, tab: "logs" }));
  return keyed(el("p", { class: "log-node" }, "Task: ", sel), "log-node", run.id, names, node && node.name);
}

// ignoredFields are the fields of what was submitted that the run's
// backend ignores: its FieldIgnored events, written when it was created.
function ignoredFields(events) {
  const list = events.filter((e) => e.reason === "FieldIgnored").map((e) => e.message);
  if (!list.length) return null;
  return keyed(el("section", { id: "warnings" }, el("h3", {}, "Ignored fields"), el("ul", {}, ...list.map((m) => el("li", {}, m)))), "warnings", list);
}
