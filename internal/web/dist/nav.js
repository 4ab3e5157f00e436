// kiln's web UI: where the page is. The address's hash says what it
// shows, so that a view can be linked to, reloaded, and gone back to:
// "#/?phase=Running&q=train" is the runs list with its filters, and
// "#/runs/ID?node=fit&tab=timeline" a run's page with a task selected and
// a tab open; "#/templates/NAME?project=P" a template's launch form
// (templates.js). Loaded last: it starts the page.
"use strict";

// listKeys are the runs list's filters as the API takes them (GET /api/v1/runs).
const listKeys = ["phase", "name", "label", "project", "q", "since", "until", "order", "limit", "cursor"];

// parseHash reads the address: {run, node, tab} or {list: filters}.
function parseHash() {
  const [path, query] = location.hash.replace(/^#/, "").split(/\?(.*)/s);
  const q = new URLSearchParams(query || "");
  const m = path.match(/^\/runs\/(.+)$/);
  if (m) return { run: decodeURIComponent(m[1]), node: q.get("node") || "", tab: q.get("tab") || "graph" };
  const t = path.match(/^\/templates(?:\/(.+))?$/);
  if (t) return { templates: true, template: t[1] ? decodeURIComponent(t[1]) : "", project: q.get("project") || "" };
  return { list: Object.fromEntries(listKeys.filter((k) => q.get(k)).map((k) => [k, q.get(k)])) };
}

// hashFor is the address of state (as parseHash reads it); a run's page
// on its graph with nothing selected is plain "#/runs/ID".
function hashFor(state) {
  const q = new URLSearchParams();
  if (state.run) {
    if (state.node) q.set("node", state.node);
    if (state.tab && state.tab !== "graph") q.set("tab", state.tab);
    return "#/runs/" + encodeURIComponent(state.run) + (q.size ? "?" + q : "");
  }
  if (state.templates) {
    if (state.project) q.set("project", state.project);
    return "#/templates" + (state.template ? "/" + encodeURIComponent(state.template) : "") + (q.size ? "?" + q : "");
  }
  for (const k of listKeys) if ((state.list || {})[k]) q.set(k, state.list[k]);
  return "#/" + (q.size ? "?" + q : "");
}

// goTo shows state, as a new entry of the browser's history.
function goTo(state) {
  const h = hashFor(state);
  if (location.hash === h || (h === "#/" && !location.hash)) route();
  else location.hash = h;
}

// route shows what the address says.
function route() {
  const s = parseHash();
  if (s.run) {
    closeList();
    openRun(s);
  } else if (s.templates) {
    closeRun();
    closeList();
    templatesPage(s);
  } else {
    closeRun();
    openList(s.list);
  }
}
window.addEventListener("hashchange", () => {
  closeDialogs();
  route();
});

// whoami learns the token's name and role (GET /api/v1/whoami); where
// the server has no such route, the role comes from the Kiln-Role header
// of the API's answers, as before.
async function whoami() {
  try {
    const me = await api("/api/v1/whoami");
    role = me.role || "";
    document.getElementById("who").dataset.me = "yes";
    document.getElementById("who").textContent = me.authenticated === false ? "" : `${me.name || ""} (${me.role || "no role"})`;
  } catch {
    document.getElementById("who").textContent = "";
  }
}

// start learns who the user is, then shows the page.
async function start() {
  tokenAccepted();
  await whoami();
  closeRun(); // a new token reads everything again
  closeList();
  route();
}

start();
