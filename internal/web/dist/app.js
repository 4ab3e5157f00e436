// kiln's web UI: the runs list and a run's DAG, updated live from the API.
"use strict";

const fills = { Pending: "#9e9e9e", Skipped: "#9e9e9e", Waiting: "#e0a000", Running: "#1e88e5", Retrying: "#fb8c00",
  Succeeded: "#2e7d32", Failed: "#c62828", Cancelled: "#555", Suspended: "#7b1fa2" };
let timer = null;
let selected = null;

// The token comes from ?token= once (then leaves the address bar) or the form, and is kept in this browser.
(function takeToken() {
  const q = new URLSearchParams(location.search);
  if (q.get("token")) {
    localStorage.setItem("kiln-token", q.get("token"));
    history.replaceState(null, "", location.pathname + location.hash);
  }
})();
document.getElementById("login").addEventListener("submit", (e) => {
  e.preventDefault();
  localStorage.setItem("kiln-token", document.getElementById("token").value);
  route();
});

async function api(path, text) {
  const r = await fetch(path, { headers: { Authorization: "Bearer " + (localStorage.getItem("kiln-token") || "") } });
  if (!r.ok) {
    const body = await r.json().catch(() => ({}));
    const e = (body.errors || [])[0] || {};
    throw new Error(`${e.code || r.status}: ${e.message || r.statusText}`);
  }
  return text ? r.text() : r.json();
}

function el(tag, attrs, ...children) {
  const ns = ["svg", "g", "rect", "text", "path", "defs", "marker"].includes(tag) ? "http://www.w3.org/2000/svg" : null;
  const n = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, v);
  for (const c of children) n.append(c);
  return n;
}

function phase(p) { return el("span", { class: "phase " + p }, p); }

function show(...nodes) { document.getElementById("view").replaceChildren(...nodes); }

function every(ms, fn) {
  clearInterval(timer);
  const tick = () => fn().catch((e) => show(el("p", { class: "error" }, e.message)));
  tick();
  timer = setInterval(tick, ms);
}

function route() {
  const m = location.hash.match(/^#\/runs\/(.+)$/);
  selected = null;
  if (m) every(1000, () => runPage(decodeURIComponent(m[1])));
  else every(1000, runsPage);
}
window.addEventListener("hashchange", route);

async function runsPage() {
  const page = await api("/api/v1/runs?limit=100");
  const rows = page.items.map((r) => el("tr", { "data-run": r.id },
    el("td", {}, el("a", { href: "#/runs/" + encodeURIComponent(r.id) }, r.id)),
    el("td", {}, r.name), el("td", {}, r.kind), el("td", {}, r.project || ""), el("td", {}, phase(r.status.phase)),
    el("td", {}, r.status.message || "")));
  show(el("h2", {}, "Runs"), el("table", { id: "runs" },
    el("tr", {}, ...["Run", "Name", "Kind", "Project", "Phase", "Message"].map((h) => el("th", {}, h))), ...rows));
}

// layers places each task one column right of its deepest dependency.
function layers(tasks) {
  const byName = Object.fromEntries(tasks.map((t) => [t.name, t]));
  const depth = {};
  const visit = (n) => depth[n] ?? (depth[n] = Math.max(-1, ...(byName[n].dependsOn || []).map(visit)) + 1);
  tasks.forEach((t) => visit(t.name));
  return depth;
}

function graph(run) {
  const tasks = run.workflow.spec.tasks;
  const depth = layers(tasks);
  const rowOf = {}, used = {};
  tasks.forEach((t) => { rowOf[t.name] = used[depth[t.name]] = (used[depth[t.name]] ?? -1) + 1; });
  const pos = (n) => ({ x: 20 + depth[n] * 200, y: 20 + rowOf[n] * 70 });
  const status = Object.fromEntries(run.status.nodes.map((n) => [n.name, n]));
  const svg = el("svg", { id: "dag", width: 40 + 200 * (Math.max(...Object.values(depth)) + 1),
    height: 40 + 70 * Math.max(...Object.values(used).map((v) => v + 1)) },
  el("defs", {}, el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto" },
    el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#888" }))));
  for (const t of tasks) {
    for (const d of t.dependsOn || []) {
      const a = pos(d), b = pos(t.name);
      svg.append(el("path", { class: "edge", d: `M ${a.x + 150} ${a.y + 20} C ${a.x + 175} ${a.y + 20}, ${b.x - 25} ${b.y + 20}, ${b.x} ${b.y + 20}` }));
    }
  }
  for (const t of tasks) {
    const p = pos(t.name), ph = status[t.name].phase;
    const g = el("g", { class: "node" + (selected === t.name ? " selected" : ""), "data-name": t.name, "data-phase": ph },
      el("rect", { x: p.x, y: p.y, width: 150, height: 40, fill: fills[ph] || "#9e9e9e" }),
      el("text", { x: p.x + 10, y: p.y + 25 }, (t.train ? "⚙ " : "") + t.name));
    g.addEventListener("click", () => { selected = t.name; runPage(run.id); });
    svg.append(g);
  }
  return svg;
}

async function runPage(id) {
  const run = await api("/api/v1/runs/" + encodeURIComponent(id));
  const parts = [el("h2", {}, run.id, " ", phase(run.status.phase)), el("p", {}, run.status.message || ""), graph(run)];
  if (selected) parts.push(await panel(run, run.status.nodes.find((n) => n.name === selected)));
  show(...parts);
}

async function panel(run, node) {
  const box = el("section", { id: "panel" }, el("h3", {}, node.name, " ", phase(node.phase)));
  if (node.message) box.append(el("p", { class: node.code ? "error" : "" }, [node.code, node.message].filter(Boolean).join(" ")));
  box.append(el("table", { id: "attempts" },
    el("tr", {}, ...["Attempt", "Phase", "Exit", "Code", "Message"].map((h) => el("th", {}, h))),
    ...(node.attempts || []).map((a) => el("tr", {}, el("td", {}, "#" + a.number), el("td", {}, phase(a.phase)),
      el("td", {}, a.exitCode ?? a.signal ?? "-"), el("td", {}, a.code || ""),
      el("td", {}, (a.system ? "(system) " : "") + (a.message || ""))))));
  if (node.conditions) {
    box.append(el("h4", {}, "Training job"), el("table", { id: "conditions" },
      ...node.conditions.map((c) => el("tr", {}, el("td", {}, c.type), el("td", {}, c.status), el("td", {}, c.reason || ""), el("td", {}, c.message || "")))),
    el("table", { id: "replicas" }, el("tr", {}, ...["Replicas", "Active", "Succeeded", "Failed", "Stopped"].map((h) => el("th", {}, h))),
      ...(node.replicas || []).map((g) => el("tr", {}, el("td", {}, g.name), el("td", {}, g.active), el("td", {}, g.succeeded), el("td", {}, g.failed), el("td", {}, g.stopped ?? 0)))));
  }
  const log = (node.attempts || []).length ? await api(`/api/v1/runs/${encodeURIComponent(run.id)}/tasks/${encodeURIComponent(node.name)}/logs`, true) : "";
  box.append(el("h4", {}, "Log"), el("pre", { id: "log" }, log.split("\n").slice(-200).join("\n")));
  return box;
}

route();
