// kiln's web UI: a task's log, read as it is written. The log section is
// kept across the page's updates, so that its scroll and a selection in
// it stay; it asks the API for the log once with follow=true and appends
// what comes. Follow on: it streams and sticks to the bottom unless one
// scrolled up; off: it stops, and on again it goes on from where it
// stopped. A selector picks any attempt's log (attempt=N). A gang's
// lines start with their process's label ("worker-1 | "), shown apart.
"use strict";

// maxLogLines bounds the lines a log section keeps; the oldest go first.
const maxLogLines = 20000;

// logBox is the log section of run's task node, the one on the page when
// it shows that task's already (see show).
function logBox(run, node) {
  const key = ["log", run.id, node.name].join("\n");
  const old = document.querySelector(`#logbox[data-key="${CSS.escape(key)}"]`);
  const box = old || newLogBox(run, node, key);
  updateLogBox(box, run, node);
  return box;
}

function newLogBox(run, node, key) {
  const follow = el("input", { type: "checkbox", class: "log-follow", checked: "" });
  const times = el("input", { type: "checkbox", class: "log-times", title: "when each line was written, as the server recorded it" });
  const pick = el("select", { class: "log-attempt", title: "which attempt's log" });
  const pre = el("pre", { id: "log" });
  const box = el("section", { id: "logbox", "data-key": key, "data-node": node.name },
    el("h4", {}, "Log ", pick, " ", el("label", {}, follow, " follow"), " ", el("label", {}, times, " times"), " ", el("span", { class: "log-state" }), " ", el("span", { class: "log-procs" })),
    el("p", { class: "log-error error" }), pre);
  box.log = { run: run.id, node: node.name, attempt: 0, chosen: false, received: 0, partial: "", stop: null, procs: new Set(), lines: 0 };
  follow.addEventListener("change", () => (follow.checked ? startLog(box) : stopLog(box, "paused")));
  times.addEventListener("change", () => switchAttempt(box, box.log.attempt));
  pick.addEventListener("change", () => {
    box.log.chosen = true;
    switchAttempt(box, Number(pick.value));
  });
  return box;
}

// updateLogBox lists node's attempts in the selector and, unless one was
// chosen, moves to the latest; it starts the stream the first time.
function updateLogBox(box, run, node) {
  const nums = (node.attempts || []).map((a) => a.number);
  const pick = box.querySelector(".log-attempt");
  const want = nums.map((n, i) => `#${n}` + (i === nums.length - 1 ? " (latest)" : ""));
  if ([...pick.options].map((o) => o.text).join() !== want.join()) {
    pick.replaceChildren(...nums.map((n, i) => el("option", { value: n }, want[i])));
  }
  const latest = nums[nums.length - 1] || 0;
  if (!box.log.chosen && latest && latest !== box.log.attempt) switchAttempt(box, latest);
  pick.value = String(box.log.attempt || latest);
}

// switchAttempt shows attempt n's log from its start.
function switchAttempt(box, n) {
  stopLog(box, "");
  Object.assign(box.log, { attempt: n, received: 0, partial: "", procs: new Set(), lines: 0 });
  box.querySelector("#log").replaceChildren();
  box.querySelector(".log-procs").replaceChildren();
  if (box.querySelector(".log-follow").checked) startLog(box);
  else readLogOnce(box);
}

function stopLog(box, state) {
  if (box.log.stop) box.log.stop();
  box.log.stop = null;
  if (state) box.querySelector(".log-state").textContent = state;
}

// startLog streams the log of the box's attempt, skipping what it shows already.
function startLog(box) {
  stopLog(box, "");
  const ctl = new AbortController();
  box.log.stop = () => ctl.abort();
  readLog(box, true, ctl.signal).catch((e) => { if (!ctl.signal.aborted) logError(box, e); });
}

// readLogOnce shows what the attempt's log holds now, without following it.
function readLogOnce(box) {
  const ctl = new AbortController();
  box.log.stop = () => ctl.abort();
  readLog(box, false, ctl.signal).catch((e) => { if (!ctl.signal.aborted) logError(box, e); });
}

async function readLog(box, follow, signal) {
  const L = box.log;
  if (!L.attempt) return;
  const times = box.querySelector(".log-times").checked ? "&timestamps=true" : "";
  const path = `/api/v1/runs/${encodeURIComponent(L.run)}/tasks/${encodeURIComponent(L.node)}/logs?attempt=${L.attempt}` + (follow ? "&follow=true" : "") + times;
  box.querySelector(".log-state").textContent = follow ? "following…" : "";
  box.querySelector(".log-error").textContent = "";
  const r = await fetch(path, { headers: authHeader(), signal });
  if (!r.ok) throw await apiError(r);
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let skip = L.received; // what the box shows already
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const fresh = skip >= value.length ? "" : value.slice(skip);
    skip = Math.max(0, skip - value.length);
    if (fresh) appendLog(box, fresh);
  }
  if (L.partial) appendLines(box, [L.partial]);
  L.partial = "";
  box.querySelector(".log-state").textContent = follow ? "ended" : "";
  box.log.stop = null;
}

function logError(box, e) {
  box.querySelector(".log-error").textContent = e.message;
  box.querySelector(".log-state").textContent = "";
}

// appendLog adds text to the log: whole lines now, the rest with the next text.
function appendLog(box, text) {
  const L = box.log;
  L.received += text.length;
  const lines = (L.partial + text).split("\n");
  L.partial = lines.pop();
  if (lines.length) appendLines(box, lines);
}

// appendLines adds lines at the end of the log, keeping its scroll (at
// the bottom while it follows and was there) and any selection in it.
function appendLines(box, lines) {
  const pre = box.querySelector("#log");
  const atBottom = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 4;
  const frag = document.createDocumentFragment();
  for (const line of lines) frag.append(logLine(box, line));
  pre.append(frag);
  box.log.lines += lines.length;
  for (; box.log.lines > maxLogLines; box.log.lines--) pre.firstChild.remove();
  if (atBottom && box.querySelector(".log-follow").checked) pre.scrollTop = pre.scrollHeight;
}

// logLine is one line of the log, its process's label apart: an optional
// RFC 3339 time (with "times"), then "label | " on a gang's lines.
function logLine(box, line) {
  const m = line.match(/^(\d{4}-\d\d-\d\dT\S+ )?([\w.-]+) \| (.*)$/);
  if (!m) {
    const t = line.match(/^(\d{4}-\d\d-\d\dT\S+ )(.*)$/);
    return t ? el("span", { class: "line" }, el("span", { class: "ts" }, t[1]), t[2] + "\n") : el("span", { class: "line" }, line + "\n");
  }
  if (!box.log.procs.has(m[2])) {
    box.log.procs.add(m[2]);
    box.querySelector(".log-procs").append(el("span", { class: "proc", "data-proc": m[2], style: procColour(m[2]) }, m[2]));
  }
  return el("span", { class: "line", "data-proc": m[2] }, m[1] ? el("span", { class: "ts" }, m[1]) : "",
    el("span", { class: "proc", style: procColour(m[2]) }, m[2]), " " + m[3] + "\n");
}

// procColour gives each process label a colour of its own.
function procColour(label) {
  let h = 0;
  for (const c of label) h = (h * 31 + c.charCodeAt(0)) % 360;
  return `background: hsl(${h}, 45%, 35%)`;
}
