// kiln's web UI: the runs list. Filters (phase, name, label, project,
// search, time range), the order and the page are in the address; the
// rows update in place: from the runs stream (GET /api/v1/runs?watch=true)
// where the server has it, else by asking again every few seconds.
"use strict";

// listPoll is how often the list is asked for again without a stream.
const listPoll = 3000;
let list = null; // the list shown: {filters, back, timer, stop}

// openList shows the runs list with filters f (see listKeys).
function openList(f) {
  const same = list && JSON.stringify(list.filters) === JSON.stringify(f);
  if (same) return;
  const back = list ? list.back : [];
  closeList();
  list = { filters: f, back, timer: null, stop: null, next: "" };
  show(el("h2", { "data-key": "runs-title" }, "Runs", writer() ? submitButton() : ""), filterForm(f),
    el("p", { id: "list-error", class: "error" }), runsTable([]), pager());
  document.getElementById("runs").classList.add("loading"); // its rows are the last filters' until the new ones come
  loadList();
}

function closeList() {
  if (!list) return;
  clearTimeout(list.timer);
  if (list.stop) list.stop();
  list = null;
}

// listQuery is the API's query for filters f: a time range as typed (a
// duration such as 2h, or a date, which goes as RFC 3339).
function listQuery(f) {
  const q = new URLSearchParams({ limit: "50" }); // f.limit, the page's size, may change it
  for (const [k, v] of Object.entries(f)) q.set(k, ["since", "until"].includes(k) ? rfc3339(v) : v);
  return q;
}

function rfc3339(v) {
  if (/^\d+(\.\d+)?(ns|us|µs|ms|s|m|h)$/.test(v) || !Number.isFinite(Date.parse(v))) return v;
  return new Date(v).toISOString();
}

// loadList asks for the page and shows it, then follows it live.
async function loadList() {
  const mine = list;
  try {
    const got = await api("/api/v1/runs?" + listQuery(mine.filters));
    if (list !== mine) return;
    document.getElementById("list-error").textContent = "";
    showRows(got.items);
    const table = document.getElementById("runs");
    table.classList.remove("loading");
    table.dataset.query = listQuery(mine.filters).toString(); // which filters its rows answer
    const title = document.querySelector('h2[data-key="runs-title"]');
    if (writer() && title && !document.getElementById("new-run")) title.append(submitButton());
    mine.next = got.next || "";
    updatePager();
    if (!mine.stop && !mine.plain && !mine.filters.cursor) watchList(mine);
  } catch (e) {
    if (list !== mine) return;
    document.getElementById("list-error").textContent = errorText(e);
    for (const b of document.querySelectorAll("#pager button")) b.disabled = true; // no rows: no page to move to
  }
  if (!mine.stop) loadListLater(mine);
}

// loadListLater asks for the list again in a while, unless it is gone.
function loadListLater(mine) {
  clearTimeout(mine.timer);
  if (list === mine) mine.timer = setTimeout(loadList, listPoll);
}

// watchList follows the runs stream, where there is one: a changed run's
// row changes; a new one comes first on the newest-first first page.
function watchList(mine) {
  const q = listQuery(mine.filters);
  q.delete("limit");
  q.set("watch", "true");
  mine.stop = sseStream("/api/v1/runs?" + q, {
    onEvents: (batch) => {
      if (list !== mine) return;
      for (const ev of batch.filter((e) => e.event === "run")) upsertRow(JSON.parse(ev.data));
    },
    onUnsupported: () => { Object.assign(mine, { stop: null, plain: true }); loadListLater(mine); },
    onError: () => { Object.assign(mine, { stop: null, plain: true }); loadListLater(mine); },
  });
}

// runsTable is the list's table with runs' rows, in a box that scrolls
// sideways where the window is narrower than the table.
function runsTable(runs) {
  return el("div", { id: "runs-wrap", class: "table-wrap", "data-key": "runs-table" }, el("table", { id: "runs" },
    el("thead", {}, el("tr", {}, ...["Run", "Name", "Kind", "Project", "Phase", "Progress", "Created", "Started", "Ended", "Duration", "Message"]
      .map((h) => el("th", {}, h)))),
    el("tbody", {}, ...runs.map(runRow))));
}

// runRow is run r's row; its key is the run as the API gave it, so an
// unchanged run keeps its row.
function runRow(r) {
  const s = r.status;
  const tr = el("tr", { "data-run": r.id, "data-phase": s.phase, "data-created": r.createdAt },
    el("td", {}, el("a", { href: "#/runs/" + encodeURIComponent(r.id) }, r.id)),
    el("td", {}, r.name, fedMark(r)), el("td", {}, r.kind), el("td", {}, r.project || ""), el("td", {}, phase(s.phase)),
    el("td", { class: "progress" }, progressBar(s.progress)), el("td", { class: "created" }, agoEl(r.createdAt)),
    el("td", { class: "started" }, agoEl(s.startedAt)), el("td", { class: "ended" }, agoEl(s.finishedAt)),
    el("td", { class: "took" }, durationEl(s.startedAt, s.finishedAt)), el("td", { class: "message", title: s.message || "" }, s.message || ""));
  tr.key = JSON.stringify(r);
  return tr;
}

// showRows puts runs in the table: a run shown already keeps its row,
// whose cells that changed are replaced (see patchRow).
function showRows(runs) {
  const body = document.querySelector("#runs tbody");
  const old = new Map([...body.children].map((tr) => [tr.dataset.run, tr]));
  const rows = runs.map((r) => (old.has(r.id) ? patchRow(old.get(r.id), r) : runRow(r)));
  rows.forEach((tr, i) => { if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] || null); });
  while (body.children.length > rows.length) body.lastChild.remove();
  if (!runs.length) body.append(el("tr", { class: "empty" }, el("td", { colspan: 11 }, "No runs match.")));
}

// patchRow makes row tr show run r, replacing only the cells that changed.
function patchRow(tr, r) {
  const key = JSON.stringify(r);
  if (tr.key === key) return tr;
  const next = runRow(r);
  [...next.children].forEach((td, i) => {
    if (tr.children[i].innerHTML !== td.innerHTML) tr.children[i].replaceWith(td);
  });
  tr.dataset.phase = r.status.phase;
  tr.key = key;
  return tr;
}

// upsertRow shows run r from the stream: in place when the page shows
// it; a run the page would show, new since it was read (the newest first
// page, or the last page oldest first), has the page read again.
function upsertRow(r) {
  const body = document.querySelector("#runs tbody");
  if (!body) return;
  const old = body.querySelector(`tr[data-run="${CSS.escape(r.id)}"]`);
  if (old) {
    patchRow(old, r);
    return;
  }
  const first = body.querySelector("tr[data-run]");
  const newer = !first || Date.parse(r.createdAt) > Date.parse(first.dataset.created);
  if (list.filters.order === "asc" ? !list.next : !list.filters.cursor && newer) {
    clearTimeout(list.timer);
    list.timer = setTimeout(loadList, 300);
  }
}

// filterForm edits the filters; a change goes into the address.
function filterForm(f) {
  const input = (k, attrs) => el("input", { name: k, value: f[k] || "", ...attrs });
  const phases = ["", "Pending", "Running", "Suspended", "Failing", "Cancelling", "Succeeded", "Failed", "Cancelled"];
  const phaseSel = el("select", { name: "phase" }, ...phases.map((p) => el("option", { value: p }, p || "any phase")));
  const order = el("select", { name: "order" }, el("option", { value: "" }, "newest first"), el("option", { value: "asc" }, "oldest first"));
  const sizes = ["", "20", "100", "200"];
  const limit = el("select", { name: "limit", title: "runs a page" }, ...sizes.map((n) => el("option", { value: n }, (n || "50") + " a page")));
  if (f.limit && !sizes.includes(f.limit)) limit.append(el("option", { value: f.limit }, f.limit + " a page"));
  limit.value = f.limit || "";
  const form = el("form", { id: "filters", class: "filters", "data-key": "filters\n" + JSON.stringify(f) },
    input("q", { type: "search", placeholder: "search ID or name", class: "search" }), phaseSel,
    input("name", { placeholder: "name" }), input("label", { placeholder: "label k=v" }), input("project", { placeholder: "project" }),
    input("since", { placeholder: "since (2h)", title: "created since: a duration such as 2h (ago), or a date" }),
    input("until", { placeholder: "until (1h)", title: "created until: a duration such as 1h (ago), or a date" }), order, limit,
    el("button", {}, "Filter"), " ", el("a", { href: "#/", class: "clear" }, "clear"));
  phaseSel.value = phases.includes(f.phase) ? f.phase || "" : "";
  if (f.phase && !phases.includes(f.phase)) phaseSel.append(el("option", { value: f.phase, selected: "" }, f.phase));
  order.value = f.order === "asc" ? "asc" : "";
  const apply = (e) => {
    e.preventDefault();
    const next = Object.fromEntries([...new FormData(form)].filter(([, v]) => v.trim()).map(([k, v]) => [k, v.trim()]));
    list.back = [];
    goTo({ list: next });
  };
  form.addEventListener("submit", apply);
  for (const s of [phaseSel, order, limit]) s.addEventListener("change", apply);
  return form;
}

// pager moves between pages by the API's cursors; back goes to the
// page before, as the browser's Back button does.
function pager() {
  // Disabled until the page's rows come (updatePager).
  const prev = el("button", { type: "button", class: "prev", disabled: "" }, "‹ Newer");
  const next = el("button", { type: "button", class: "next", disabled: "" }, "Older ›");
  prev.addEventListener("click", () => {
    const f = { ...list.filters }, back = list.back.slice();
    const c = back.pop();
    if (c) f.cursor = c;
    else delete f.cursor;
    list.back = back;
    goTo({ list: f });
  });
  next.addEventListener("click", () => {
    if (!list.next) return;
    list.back = [...list.back, list.filters.cursor || ""];
    goTo({ list: { ...list.filters, cursor: list.next } });
  });
  return el("p", { id: "pager", class: "pager", "data-key": "pager" }, prev, " ", next);
}

// updatePager enables what the page allows.
function updatePager() {
  document.querySelector("#pager .prev").disabled = !list.filters.cursor;
  document.querySelector("#pager .next").disabled = !list.next;
  const asc = list.filters.order === "asc";
  document.querySelector("#pager .prev").textContent = asc ? "‹ Older" : "‹ Newer";
  document.querySelector("#pager .next").textContent = asc ? "Newer ›" : "Older ›";
}

// submitButton opens the form that submits a run.
function submitButton() {
  const b = el("button", { type: "button", id: "new-run", class: "new-run" }, "Submit a run…");
  b.addEventListener("click", submitForm);
  return b;
}
