// kiln's web UI: a run's page. It reads the run in pieces (nodes.js):
// the run without its nodes, its top nodes, the items of the groups one
// opens a page at a time and its last events; then it asks every few
// seconds for what changed since (a 304 when nothing did) and updates
// the parts of the page that changed, in place; the rest stay as they
// are (what one types, a log's scroll). Tabs: the graph, the timeline,
// the logs.
"use strict";

// runPoll is how often the page asks what changed in a run that runs;
// donePoll the same for a run that ended (it may be retried elsewhere).
const runPoll = 2000, donePoll = 30000;
let page = null; // the run page shown: {id, rn (a RunNodes), run, node, tab, open, timer}

// liveEvents are the events of run id that the page has read.
function liveEvents(id) { return page && page.id === id ? page.rn.events : []; }

// openRun shows run s.run with node s.node selected and tab s.tab open.
function openRun(s) {
  if (!page || page.id !== s.run) {
    closeRun();
    page = { id: s.run, rn: new RunNodes(s.run), run: null, open: new Set(), timer: null };
    show(el("h2", {}, s.run));
    Object.assign(page, { node: s.node, tab: s.tab });
    selected = s.node || null;
    refreshRun(true);
    return;
  }
  Object.assign(page, { node: s.node, tab: s.tab });
  selected = s.node || null;
  if (wantViews(page).length) refreshRun();
  else if (page.run) render();
}

function closeRun() {
  if (!page) return;
  clearTimeout(page.timer);
  const log = document.getElementById("logbox");
  if (log) stopLog(log, "");
  const graph = document.getElementById("graph");
  if (graph && graph.graph) graph.graph.destroy();
  document.body.classList.remove("has-panel");
  page = null;
}

// wantViews keeps a page of items for each group the graph shows open
// and for the group whose panel is open, and no other; it answers those
// it made (to be read).
function wantViews(mine) {
  const rn = mine.rn, want = new Set(mine.open);
  const sel = mine.node && rn.nodes.get(mine.node);
  if (sel && sel.children && !drawnKinds.includes(sel.kind)) want.add(sel.name);
  for (const [g, v] of [...rn.views]) {
    if (want.has(g)) continue;
    rn.views.delete(g);
    if (sel && sel.parent === g && !rn.scopes.has(g)) rn.scopes.set(g, v.version); // the item selected from it: follow its changes
  }
  const added = [];
  for (const g of want) if (!rn.views.has(g)) { rn.view(g); added.push(g); }
  return added;
}

// refreshRun reads the run (all of it the first time, then what changed)
// and updates the page; asked again while it reads, it reads once more after.
async function refreshRun(first) {
  const mine = page;
  if (!mine) return;
  if (mine.asking) {
    mine.again = true;
    return;
  }
  mine.asking = true;
  clearTimeout(mine.timer);
  try {
    if (first || !mine.run) await mine.rn.load();
    else {
      wantViews(mine);
      await mine.rn.poll();
    }
    if (mine.node && !mine.rn.nodes.has(mine.node) && mine.sought !== mine.node) { // an item of a page not read
      mine.sought = mine.node;
      await mine.rn.find(mine.node);
    }
    for (const g of wantViews(mine)) await mine.rn.readView(g); // the selected node is a group: its first page
    if (page !== mine) return;
    mine.run = mine.rn.run();
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
  const node = page.node ? page.rn.nodes.get(page.node) || null : null;
  const oldLog = document.getElementById("logbox");
  const s = run.status;
  const parts = [
    keyed(el("h2", {}, run.id, " ", phase(s.phase)), "head", run.id, s.phase),
    keyed(el("p", { class: "run-times" }, ...timesLine(s.startedAt, s.finishedAt, run.createdAt)), "times", run.id, run.createdAt, s.startedAt, s.finishedAt),
    runActions(run), keyed(el("p", { id: "action-result", class: "result" }), "action-result", run.id),
    keyed(rerunOf(run), "rerun-of", run.rerunOf), keyed(federationHeader(run), "federation", run.federation),
    keyed(el("p", { class: "run-message" }, [s.code, s.message].filter(Boolean).join(" ")), "message", s.code, s.message),
    s.progress ? keyed(el("p", { id: "progress", class: "run-progress" }, bar(s.progress), " ", progressText(s.progress)), "progress", s.progress) : null,
    ignoredFields(page.rn.events), tabs(run, tab), ...tabParts(run, tab, node),
  ];
  show(...parts);
  document.body.classList.toggle("has-panel", !!document.getElementById("panel")); // the panel stays in view, at the right
  const view = document.getElementById("view");
  view.dataset.renders = (Number(view.dataset.renders) || 0) + 1; // tests see the page update
  if (oldLog && !oldLog.isConnected) stopLog(oldLog, "");
}

// tabParts are what tab shows, with node selected.
function tabParts(run, tab, node) {
  if (tab === "timeline") return [timeline(run, page.rn.events), node ? panelOf(run, node) : null];
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
  const v = node.children ? page.rn.views.get(node.name) : null;
  const kids = v ? v.names.map((n) => page.rn.nodes.get(n)) : node.children ? run.status.nodes.filter((n) => n.parent === node.name) : [];
  const queued = [...queueStarts(page.rn.events)].filter(([k]) => k.startsWith(node.name + "#"));
  return keyed(panel(run, node), "panel", run.id, run.status.phase, role, node, kids, queued, v && [v.phase, v.pages, v.counts, v.remaining]);
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
      onExpand: (name, open) => { // an open map's first items are read a page at a time
        if (!page) return;
        if (open) page.open.add(name);
        else page.open.delete(name);
        if (wantViews(page).length) refreshRun();
      },
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

// groupView is the page of group's items that the run page shows, if it
// reads them a page at a time.
function groupView(group) { return page ? page.rn.views.get(group) || null : null; }

// itemPhases are the phases the items of a group's panel can be filtered by.
const itemPhases = ["Running", "Failed", "Succeeded", "Pending", "Waiting", "Retrying", "Suspended", "Skipped", "Cancelled"];

// itemsPage is a page of group node's items in its panel: their counts by
// phase (of all of them), a phase to filter them by, the page and the
// buttons that turn it.
function itemsPage(run, node, v) {
  const c = node.children || viewCounts(v.counts); // the same counts as its node in the graph
  const pick = el("select", { id: "items-phase", title: "Show the items in one phase" }, el("option", { value: "" }, `All (${c.total})`),
    ...itemPhases.filter((p) => (v.counts || {})[p] || p === v.phase).map((p) => el("option", { value: p }, `${p} (${(v.counts || {})[p] || 0})`)));
  pick.value = v.phase;
  pick.addEventListener("change", () => turnView(node.name, (w) => { w.phase = pick.value; w.pages = [""]; }));
  const from = (v.pages.length - 1) * itemsLimit, to = from + v.names.length;
  const prev = el("button", { type: "button", class: "items-prev" }, "‹ Previous");
  const next = el("button", { type: "button", class: "items-next" }, "Next ›");
  prev.disabled = v.pages.length < 2;
  next.disabled = !v.next;
  prev.addEventListener("click", () => turnView(node.name, (w) => { w.pages.pop(); }));
  next.addEventListener("click", () => turnView(node.name, (w) => { w.pages.push(w.next); }));
  const rows = v.names.map((name) => page.rn.nodes.get(name)).filter(Boolean).map((k) =>
    el("tr", { "data-name": k.name, "data-phase": k.phase }, el("td", {}, select(run, k.name)), el("td", {}, phase(k.phase)), el("td", {}, message(k))));
  return [el("h4", {}, "Children: " + countsText(c)),
    node.message && !["Succeeded", "Running"].includes(node.phase) ?
      el("p", { class: node.code ? "error" : "" }, [node.code, node.message].filter(Boolean).join(" ")) : null,
    el("p", { class: "items-nav" }, pick, " ", prev, " ", el("span", { class: "items-range" },
      v.names.length ? `${from + 1}–${to} of ${to + v.remaining}` : "none"), " ", next),
    el("table", { id: "children" }, el("tr", {}, ...["Task", "Phase", "Message"].map((h) => el("th", {}, h))), ...rows)];
}

// turnView changes group's page with fn, then reads and shows it.
async function turnView(group, fn) {
  const mine = page, v = groupView(group);
  if (!v) return;
  fn(v);
  try {
    await mine.rn.readView(group);
    if (page !== mine) return;
    mine.run = mine.rn.run();
    render();
  } catch (e) {
    if (page === mine) runError(e);
  }
}
