// kiln's web UI: a run's times. The attempts table of a task's panel and
// the timeline (Gantt) of a run's attempts: a row per attempt (a node
// without attempts, a gate or a group, gets one for itself), a bar from
// its start to its end, and before it, drawn apart, the time it waited in
// the queue. The wait is read from the run's events: from the first
// event that put the node in Waiting to the event that started the
// attempt; an attempt that never waited shows none. No time is made up.
"use strict";

// maxRows bounds the timeline's rows; a run with more says so.
const maxRows = 500;

// queueStarts maps "node#attempt" to when that attempt began to wait in
// the queue, from the run's events in order.
function queueStarts(events) {
  const out = new Map(), from = new Map();
  for (const ev of events) {
    if (!ev.node) continue;
    if (ev.phase === "Waiting" && !from.has(ev.node)) from.set(ev.node, ev.time);
    else if (ev.reason === "Started") {
      if (from.has(ev.node)) out.set(ev.node + "#" + ev.attempt, from.get(ev.node));
      from.delete(ev.node);
    } else if (["Succeeded", "Failed", "Cancelled", "Skipped"].includes(ev.phase)) from.delete(ev.node);
  }
  return out;
}

// attemptsTable lists node's attempts with their times: when each began
// to wait and how long, when it started and ended, and how long it ran.
function attemptsTable(run, node) {
  const queued = queueStarts(liveEvents(run.id));
  return el("table", { id: "attempts" },
    el("tr", {}, ...["Attempt", "Phase", "Queued", "Started", "Ended", "Attempt took", "Exit", "Code", "Message"].map((h) =>
      el("th", h === "Attempt took" ? { title: "from the attempt's process start to its exit" } : {}, h))),
    ...(node.attempts || []).map((a) => {
      const q = queued.get(node.name + "#" + a.number);
      return el("tr", { "data-attempt": a.number }, el("td", {}, "#" + a.number), el("td", {}, phase(a.phase)),
        el("td", { class: "queued" }, q && a.startedAt ? el("span", { title: when(q) }, span(new Date(a.startedAt) - new Date(q))) : ""),
        el("td", { class: "started" }, agoEl(a.startedAt)), el("td", { class: "ended" }, agoEl(a.finishedAt)),
        el("td", { class: "took", title: "this attempt alone, from its start to its exit" }, durationEl(a.startedAt, a.finishedAt)),
        el("td", {}, a.exitCode ?? a.signal ?? "-"), el("td", {}, a.code || ""),
        el("td", {}, (a.system ? "(system) " : "") + (a.message || "")));
    }));
}

// timelineRows are the timeline's rows: {node, attempt, label, phase, queued, start, end}.
function timelineRows(run, events) {
  const queued = queueStarts(events), rows = [];
  for (const n of run.status.nodes) {
    for (const a of n.attempts || []) {
      if (!a.startedAt) continue;
      rows.push({ node: n.name, attempt: a.number, label: `${n.name} #${a.number}`, phase: a.phase,
        queued: queued.get(n.name + "#" + a.number) || "", start: a.startedAt, end: a.finishedAt || "" });
    }
    const start = n.startedAt || (n.gate && n.gate.waitingSince);
    if (!(n.attempts || []).length && start) {
      rows.push({ node: n.name, attempt: 0, label: n.name, phase: n.phase, queued: "", start, end: n.finishedAt || (n.gate && n.gate.at) || "" });
    }
  }
  return rows;
}

// timeline draws run's rows against one time axis, from the run's
// creation to its end (or now, while a bar is open).
function timeline(run, events) {
  const rows = timelineRows(run, events);
  const key = JSON.stringify([run.id, run.createdAt, rows]);
  const box = el("section", { id: "timeline", "data-key": key, "data-t0": run.createdAt });
  if (!rows.length) {
    box.append(el("p", {}, "No task has started yet."));
    return box;
  }
  box.append(el("div", { class: "tl-axis" }), el("p", { class: "tl-legend" }, el("span", { class: "tl-queue sample" }), " waiting in the queue ",
    el("span", { class: "tl-bar sample Running" }), " running (its phase's colour)"));
  for (const r of rows.slice(0, maxRows)) box.append(timelineRow(run, r));
  if (rows.length > maxRows) box.append(el("p", { class: "hidden-children" }, `${rows.length - maxRows} more attempts not shown`));
  placeBars(box);
  return box;
}

// timelineRow is one attempt's row: its label (a link to its node) and its bars.
function timelineRow(run, r) {
  const track = el("div", { class: "tl-track" });
  if (r.queued) {
    track.append(el("div", { class: "tl-queue", "data-start": r.queued, "data-end": r.start,
      title: `${r.label}: waited ${between(r.queued, r.start)} in the queue, from ${when(r.queued)}` }));
  }
  const attrs = { class: "tl-bar " + r.phase, "data-start": r.start, title: `${r.label}: ${r.phase}, ${when(r.start)} → ${r.end ? when(r.end) : "now"}` };
  if (r.end) attrs["data-end"] = r.end;
  else attrs["data-open"] = "";
  track.append(el("div", attrs, durationEl(r.start, r.end || undefined)));
  // A long name is cut, never the attempt's number after it.
  const label = el("a", { class: "tl-label", href: hashFor({ run: run.id, node: r.node, tab: "timeline" }), title: r.label },
    el("span", { class: "tl-name" }, r.node), r.attempt ? el("span", { class: "tl-num" }, " #" + r.attempt) : null);
  return el("div", { class: "tl-row", "data-node": r.node, "data-attempt": r.attempt }, label, track);
}

// placeBars sets each bar's place and width on the axis from the
// timeline's start to its last end, or now while a bar is open.
function placeBars(box) {
  const bars = [...box.querySelectorAll(".tl-queue[data-start], .tl-bar[data-start]")];
  if (!bars.length) return;
  const t0 = new Date(box.dataset.t0).getTime();
  const open = box.querySelector("[data-open]") !== null;
  const t1 = Math.max(t0 + 1000, open ? Date.now() : 0, ...bars.map((b) => new Date(b.dataset.end || b.dataset.start).getTime()));
  const at = (t) => ((new Date(t).getTime() - t0) / (t1 - t0)) * 100;
  for (const b of bars) {
    const left = Math.max(0, at(b.dataset.start)), right = b.dataset.end ? at(b.dataset.end) : 100;
    b.style.left = left.toFixed(3) + "%";
    b.style.width = Math.max(0.2, right - left).toFixed(3) + "%";
  }
  const axis = box.querySelector(".tl-axis");
  axis.replaceChildren(...[0, 0.25, 0.5, 0.75, 1].map((f) =>
    el("span", { style: `left: ${f * 100}%` }, "+" + span(f * (t1 - t0)))));
}

// timelineTick moves the open bars of the timeline on the page, if any, to now.
function timelineTick() {
  const box = document.getElementById("timeline");
  if (box && box.querySelector("[data-open]")) placeBars(box);
}
