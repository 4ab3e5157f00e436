// kiln's web UI: what every view uses (the token, the API, elements)
// and a run's DAG, its gates and a task's panel. The views are in files
// of their own: runs.js (the runs list), run.js (a run's page; nodes.js reads its run in pieces), actions.js,
// timeline.js, logs.js, training.js; nav.js routes between them.
"use strict";

const fills = { Pending: "#9e9e9e", Skipped: "#8d6e63", Waiting: "#e0a000", Running: "#1e88e5", Retrying: "#fb8c00",
  Succeeded: "#2e7d32", Failed: "#c62828", Cancelled: "#555", Suspended: "#7b1fa2" };
// A group's children list shows its first listFirst children, then at
// most listMore later ones that run or ended badly; it counts the rest.
const listFirst = 50, listMore = 200;
let selected = null; // the task whose panel a run's page shows
let role = ""; // the token's role (GET /api/v1/whoami, else the API's answers): editors and admins see the buttons that change runs

// authHeader is the stored token as an Authorization header.
function authHeader() { return { Authorization: "Bearer " + (localStorage.getItem("kiln-token") || "") } }

// api calls the API with the stored token: a GET, or a POST (or method)
// of body when there is one: JSON, or FormData as it is. It throws the
// API's first error, as "code: message".
async function api(path, text, body, method) {
  const init = { headers: authHeader(), method: method || (body !== undefined ? "POST" : "GET") };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const r = await fetch(path, init);
  role = r.headers.get("Kiln-Role") || role;
  const who = document.getElementById("who");
  if (who && !who.dataset.me) who.textContent = role ? `(${role})` : ""; // no GET /api/v1/whoami: the role alone
  if (!r.ok) throw await apiError(r);
  if (r.status === 204) return null;
  return text ? r.text() : r.json();
}

// apiError is the API's first error in response r, as "code: message"
// with, for an error in a spec, where it is (file:line:column); its code,
// hint and HTTP status are fields, and the errors after it, in words, too.
async function apiError(r) {
  const answer = await r.json().catch(() => ({}));
  const [e = {}, ...rest] = answer.errors || [];
  const err = new Error(`${e.code || r.status}: ${errorPlace(e)}${e.message || r.statusText}`);
  Object.assign(err, { code: e.code || "", hint: e.hint || "", status: r.status,
    others: rest.map((o) => `${o.code}: ${errorPlace(o)}${o.message}`) });
  if (r.status === 401) needToken(err); // auth.js
  return err;
}

// errorPlace is where an error of the API was found in a spec, as
// compilers and kiln's CLI write it ("wf.yaml:7:9: "), with its object and
// field when it names them; "" when it names no place.
function errorPlace(e) {
  let file = e.file || "";
  if (e.line > 0) file = (file || "line") + (e.file ? ":" : " ") + e.line + (e.column > 0 ? ":" + e.column : "");
  const parts = [file, e.object, e.field].filter(Boolean);
  return parts.length ? parts.join(": ") + ": " : "";
}

function el(tag, attrs, ...children) {
  const ns = ["svg", "g", "rect", "text", "path", "defs", "marker"].includes(tag) ? "http://www.w3.org/2000/svg" : null;
  const n = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined) n.append(c);
  return n;
}

function phase(p) { return el("span", { class: "phase " + p }, p); }

function when(t) { return t ? new Date(t).toLocaleString() : ""; }

// show replaces the page with nodes. A node with a data-key that the page
// shows already is kept as it is, so that what one types into it (a gate's
// reason) survives the page's refresh.
function show(...nodes) {
  const view = document.getElementById("view");
  const old = new Map([...view.children].filter((c) => c.dataset.key).map((c) => [c.dataset.key, c]));
  const next = nodes.filter(Boolean).map((n) => old.get(n.dataset.key) || n);
  const kept = new Set(next.filter((n) => n.parentNode === view));
  for (const c of [...view.children]) if (!kept.has(c)) c.remove();
  let at = null;
  for (const n of next) {
    if (!kept.has(n)) at ? at.after(n) : view.prepend(n);
    at = n;
  }
}

// writer reports whether the token may change runs.
function writer() { return ["editor", "admin"].includes(role); }

// progressBar is a run's tasks done of its total: a bar and "7/12";
// nothing for a run stored before kiln counted them.
function progressBar(p) {
  if (!p) return "";
  return el("span", { class: "run-progress", title: progressText(p) }, bar(p), ` ${p.done}/${p.total}`);
}

// bar is a run's progress as a segmented bar: a segment per kind of
// task in its colour (succeeded green, failed red, cancelled and skipped
// grey, running blue), each as wide as its share of the total; the rest,
// tasks still to run, is the bar's pale ground.
function bar(p) {
  const total = Math.max(p.total, 1);
  const b = el("span", { class: "seg-bar", role: "progressbar", "aria-valuenow": p.done, "aria-valuemax": total, title: progressText(p) });
  for (const k of ["succeeded", "failed", "cancelled", "skipped", "running"]) {
    if (p[k]) b.append(el("span", { class: "seg " + k, "data-count": p[k], style: `width: ${(p[k] / total * 100).toFixed(3)}%` }));
  }
  return b;
}

// progressText is a run's progress in words: "7/12 done: 5 succeeded, 1 failed, 2 running".
function progressText(p) {
  const parts = ["succeeded", "failed", "skipped", "cancelled", "running"].filter((k) => p[k]).map((k) => `${p[k]} ${k}`);
  return `${p.done}/${p.total} done` + (parts.length ? ": " + parts.join(", ") : "");
}

// eta is a number of seconds as "1h2m", "2m5s" or "40s".
function eta(s) {
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  return h ? `${h}h${m}m` : m ? `${m}m${sec}s` : `${sec}s`;
}

// trainerText is what a training job reported: "40% · ETA 2m5s · loss=0.31".
function trainerText(ts) {
  const parts = [];
  if (ts.progressPercentage != null) parts.push(ts.progressPercentage + "%");
  if (ts.estimatedRemainingSeconds != null) parts.push("ETA " + eta(ts.estimatedRemainingSeconds));
  for (const m of ts.metrics || []) parts.push(`${m.name}=${m.value}`);
  return parts.join(" · ");
}

// countsText is a group's children in words: "7/10 succeeded, 2 failed, 1 running".
function countsText(c) {
  return [`${c.succeeded || 0}/${c.total} succeeded`, ...["failed", "running", "pending", "skipped", "cancelled"]
    .filter((k) => c[k]).map((k) => `${c[k]} ${k}`)].join(", ");
}

// waiting reports whether node n is a gate that waits for something now.
function waiting(n) { return n.gate && !n.gate.decision && n.phase === "Running"; }

// waitsFor is what a waiting gate waits for, in a few words.
function waitsFor(g) {
  if (g.kind === "approve") return "an approval";
  if (g.kind === "signal") return `a value (${g.type || "string"})`;
  return "a timer" + (g.wakeAt ? ", until " + when(g.wakeAt) : "");
}

// decision says how a gate's wait ended: who decided, when, why, and the value.
function decision(g) {
  return g.decision + (g.value ? ` "${g.value}"` : "") + (g.by ? " by " + g.by : "") + (g.at ? " at " + when(g.at) : "") +
    (g.reason ? ` (“${g.reason}”)` : "");
}

// cacheStatus says what the cache did for node n: its result, its key,
// the run a reused result came from (a link), and why it missed.
function cacheStatus(c) {
  const p = el("p", { class: "cache-status", "data-cache": c.result }, "Cache: " + c.result);
  if (c.key) p.append(" (key " + c.key.replace("sha256:", "").slice(0, 12) + ")");
  if (c.sourceRun) p.append(" — reused from run ", el("a", { href: "#/runs/" + encodeURIComponent(c.sourceRun) }, c.sourceRun), " (task " + c.sourceNode + ")");
  if (c.message) p.append(": " + c.message);
  return p;
}

async function runPage(id) {
  // A click on a node changed selected: the address says which node the
  // page shows (nav.js), and the page follows the address.
  goTo({ run: id, node: selected || "", tab: "graph" });
}

// gates are a box for each gate that waits, with what it takes, then a
// line for each that was decided, at most 50 of each. Their keys keep a
// box while its gate waits.
function gates(run) {
  const nodes = run.status.nodes;
  const shown = [...nodes.filter(waiting).slice(0, 50), ...nodes.filter((n) => n.gate && n.gate.decision).slice(0, 50)];
  return shown.map((n) => {
    const key = ["gate", run.id, n.name, n.gate.waitingSince || "", n.gate.decision || ""].join("\n");
    if (n.gate.decision) {
      return el("p", { class: "gate decided", "data-key": key, "data-gate": n.name }, el("strong", {}, n.name), ": " + decision(n.gate));
    }
    return gateBox(run, n, key);
  });
}

// gateBox says what gate n waits for and, unless it sleeps, takes an
// approval or a value for it, with an optional reason.
function gateBox(run, n, key) {
  const g = n.gate;
  const box = el("section", { class: "gate waiting", "data-key": key, "data-gate": n.name },
    el("p", {}, el("strong", {}, n.name), " waits for " + waitsFor(g) + (g.waitingSince ? ", since " + when(g.waitingSince) : "") +
      (g.wakeAt && g.kind !== "sleep" ? "; times out " + when(g.wakeAt) : "") +
      (g.nextLook ? "; looks again " + when(g.nextLook) : "")),
    g.message ? el("p", { class: "message" }, g.message) : null);
  if (g.kind === "sleep" || !writer()) return box;
  const reason = el("input", { class: "reason", placeholder: "reason (optional)" });
  const result = el("p", { class: "result" });
  const send = (verb, body) => async () => {
    if (body.approve === false && !await confirmDialog(`Reject ${n.name}? The gate fails and so does what depends on it.`)) return;
    box.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    try {
      const r = await api(`/api/v1/runs/${encodeURIComponent(run.id)}/nodes/${encodeURIComponent(n.name)}/${verb}`, false,
        { ...body, reason: reason.value });
      result.className = "result";
      result.textContent = `${r.sent} sent by ${r.by}; waiting for the run to take it`;
    } catch (e) {
      result.className = "result error";
      result.textContent = e.message;
      box.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    }
  };
  const button = (cls, label, fn) => { const b = el("button", { class: cls, type: "button" }, label); b.addEventListener("click", fn); return b; };
  if (g.kind === "approve") {
    box.append(el("div", {}, reason, button("approve", "Approve", send("approve", { approve: true })),
      button("reject", "Reject", send("approve", { approve: false }))));
  } else {
    const value = el("input", { class: "value", placeholder: `value (${g.type || "string"})` });
    box.append(el("div", {}, value, reason, button("send", "Send", () => send("signal", { value: value.value })())));
  }
  box.append(result);
  return box;
}

// outputs are the workflow's outputs, once the run has them.
function outputs(run) {
  const o = run.status.outputs;
  if (!o) return null;
  const rows = [...Object.entries(o.parameters || {}).map(([k, v]) => [k, v]),
    ...Object.entries(o.artifacts || {}).map(([k, v]) => [k + " (artifact)", v])];
  return el("section", { id: "outputs" }, el("h3", {}, "Outputs"), el("table", {},
    ...rows.map(([k, v]) => el("tr", { "data-output": k }, el("th", {}, k), el("td", {}, el("div", { class: "value" }, v))))));
}

// message is a node's code and message; a group's starts with its children's counts.
function message(n) {
  const own = [n.code, n.message].filter(Boolean).join(" ");
  if (!n.children) return own;
  return countsText(n.children) + (own && !["Succeeded", "Running"].includes(n.phase) ? "; " + own : "");
}

// select shows node name's panel, in a link.
function select(run, name, label) {
  const a = el("a", { href: location.hash, "data-select": name }, label ?? name);
  a.addEventListener("click", (e) => { e.preventDefault(); selected = name; runPage(run.id); });
  return a;
}

// children lists group node's children: a page of a map's items, with
// its controls; else the first listFirst, then those that run or ended
// badly, and a note of how many of each phase it hides.
function children(run, node) {
  const v = groupView(node.name); // run.js: a map's items, read a page at a time
  if (v) return itemsPage(run, node, v);
  const kids = run.status.nodes.filter((n) => n.parent === node.name);
  const rows = [], hidden = {};
  let more = 0;
  for (const [i, k] of kids.entries()) {
    const notable = !["Succeeded", "Pending", "Waiting", "Skipped"].includes(k.phase);
    if (i < listFirst || (notable && more++ < listMore)) {
      rows.push(el("tr", { "data-name": k.name, "data-phase": k.phase }, el("td", {}, select(run, k.name)), el("td", {}, phase(k.phase)),
        el("td", {}, message(k))));
    } else {
      hidden[k.phase] = (hidden[k.phase] || 0) + 1;
    }
  }
  const nHidden = kids.length - rows.length;
  return [el("h4", {}, "Children: " + countsText(node.children)),
    node.message && !["Succeeded", "Running"].includes(node.phase) ?
      el("p", { class: node.code ? "error" : "" }, [node.code, node.message].filter(Boolean).join(" ")) : null,
    el("table", { id: "children" }, el("tr", {}, ...["Task", "Phase", "Message"].map((h) => el("th", {}, h))), ...rows),
    nHidden ? el("p", { class: "hidden-children" }, `${nHidden} more not shown: ` +
      Object.entries(hidden).map(([p, c]) => `${c} ${p.toLowerCase()}`).join(", ") + `; kiln describe run ${run.id} --children lists all`) : null];
}

// runLink links to run id's page.
function runLink(id) { return el("a", { href: "#/runs/" + encodeURIComponent(id) }, id); }

// rerunOf says which run a rerun reruns, and how.
function rerunOf(run) {
  const r = run.rerunOf;
  return r ? el("p", { class: "rerun-of" }, "Rerun of ", runLink(r.run), ` (--${r.mode} ${r.node})`) : null;
}

// rerunButton offers, on a top-level task of a run that ended, to rerun
// the run from it (kiln rerun RUN --from TASK), to those who may.
function rerunButton(run, node) {
  const done = ["Succeeded", "Failed", "Cancelled"].includes(run.status.phase);
  if (!done || node.parent || node.kind === "exit" || !writer()) return "";
  const result = el("span", { class: "result" });
  const b = el("button", { class: "rerun", type: "button" }, "Rerun from here");
  b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      const made = await api(`/api/v1/runs/${encodeURIComponent(run.id)}/rerun`, false, { mode: "from", node: node.name });
      goTo({ run: made.id });
    } catch (e) {
      result.className = "result error";
      result.textContent = e.message;
      b.disabled = false;
    }
  });
  return el("p", {}, b, " ", result);
}

// panel is the selected node's details; its log is a section of its own
// (logs.js), kept across the page's updates.
function panel(run, node) {
  const close = el("button", { type: "button", class: "panel-close", title: "Close the panel" }, "×");
  close.addEventListener("click", () => { selected = null; runPage(run.id); });
  const box = el("section", { id: "panel", "data-node": node.name }, close, el("h3", {}, node.name, " ", phase(node.phase)));
  if (node.startedAt) box.append(el("p", { class: "node-times" }, ...taskTimesLine(node)));
  if (node.parent) box.append(el("p", {}, "in ", select(run, node.parent)));
  if (node.reused) box.append(el("p", { class: "reused" }, "reused from ", runLink(node.reused.run),
    ` (task ${node.reused.node}` + (node.reused.attempt ? `, attempt #${node.reused.attempt})` : ")")));
  box.append(rerunButton(run, node));
  if (node.message && !node.children) box.append(el("p", { class: node.code ? "error" : "" }, message(node)));
  if (node.cache) box.append(cacheStatus(node.cache));
  if (node.gate) box.append(el("p", { class: "gate-status" }, "Gate: " + (node.gate.decision ? decision(node.gate) : "waits for " + waitsFor(node.gate))));
  box.append(...taskIO(run, node)); // io.js
  if (node.children) box.append(...children(run, node).filter(Boolean));
  box.append(...partyShares(run, node));
  if (!node.children || (node.attempts || []).length) {
    if (node.children) box.append(el("h4", {}, "Attempts"));
    box.append(attemptsTable(run, node));
  }
  if (node.kind === "train" || node.conditions || node.replicas) box.append(...trainingView(run, node));
  else if (node.trainerStatus) {
    box.append(el("p", { id: "trainer-status" }, "Progress: " + trainerText(node.trainerStatus) + // the task's $KILN_PROGRESS
      " (reported " + when(node.trainerStatus.lastUpdatedTime) + ")"));
  }
  return box;
}
