// kiln's web UI: times. Absolute times in the reader's zone, relative
// ones ("3m ago") and durations that tick every second in place: an
// element with data-ago shows how long ago that time was; one with
// data-since shows the time from then to data-until, or to now while
// data-until is absent. Nothing here invents a time: an element shows
// only the times the API recorded.
"use strict";

// ago is how long ago time t was: "just now", "40s ago", "3m ago", "2h ago", "5d ago".
function ago(t) {
  const s = Math.round((Date.now() - new Date(t).getTime()) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return s + "s ago";
  if (s < 3600) return Math.floor(s / 60) + "m ago";
  if (s < 86400) return Math.floor(s / 3600) + "h ago";
  return Math.floor(s / 86400) + "d ago";
}

// span is a duration of ms milliseconds: "850ms", "4.2s", "40s", "2m5s", "1h2m", "3d4h".
function span(ms) {
  if (ms < 0) ms = 0;
  if (ms < 1000) return Math.round(ms) + "ms";
  if (ms < 10000) return (Math.floor(ms / 100) / 10).toFixed(1) + "s"; // 1.4s: whole seconds would round a short run's axis to "+1s" twice
  const s = Math.floor(ms / 1000);
  if (s >= 86400) return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
  return eta(s);
}

// between is the duration from start to end, or to now when end is absent.
function between(start, end) {
  return span((end ? new Date(end) : new Date()).getTime() - new Date(start).getTime());
}

// agoEl is time t as "3m ago", ticking, with the full time as its tooltip.
function agoEl(t) {
  if (!t) return "";
  return el("time", { datetime: t, "data-ago": t, title: when(t) }, ago(t));
}

// durationEl is the time from start to end, ticking while end is absent;
// empty when start is.
function durationEl(start, end) {
  if (!start) return "";
  const attrs = { class: "duration", "data-since": start, title: when(start) + " → " + (end ? when(end) : "now") };
  if (end) attrs["data-until"] = end;
  return el("span", attrs, between(start, end));
}

// timesLine is a run's creation, start, end and the time between, as elements:
// "created 4m ago · started 3m ago · ended 1m ago · run took 2m0s"
// (running: "running for 2m0s"); the run's time runs from its first
// task's start to its end.
function timesLine(start, end, created) {
  const parts = [];
  if (created) parts.push("created ", agoEl(created));
  if (start) parts.push((parts.length ? " · " : "") + "started ", agoEl(start));
  if (end) parts.push(" · ended ", agoEl(end));
  if (start) parts.push(end ? " · run took " : " · running for ", durationEl(start, end));
  return parts;
}

// taskTimesLine is a task's times: "started 3m ago · ended 1m ago ·
// task took 5ms (2 attempts)". The task's time runs from its first
// attempt's start to the task's end (for a task without attempts, a gate
// or a group, from its start): retries and the waits between attempts
// are in it; each attempt's own time is in the attempts table.
function taskTimesLine(node) {
  const start = node.startedAt, end = node.finishedAt, n = (node.attempts || []).length;
  const parts = ["started ", agoEl(start)];
  if (end) parts.push(" · ended ", agoEl(end));
  const took = durationEl(start, end);
  took.title = (n ? "from the first attempt's start to the task's end, retries included: " : "from the task's start to its end: ") + took.title;
  parts.push(end ? " · task took " : " · task running for ", took);
  if (n) parts.push(n === 1 ? " (1 attempt)" : ` (${n} attempts)`);
  return parts;
}

// tick brings every ticking time on the page up to now, in place.
function tick() {
  for (const e of document.querySelectorAll("[data-ago]")) {
    const v = ago(e.dataset.ago);
    if (e.textContent !== v) e.textContent = v;
  }
  for (const e of document.querySelectorAll("[data-since]:not([data-until])")) e.textContent = between(e.dataset.since);
  if (typeof timelineTick === "function") timelineTick();
}
setInterval(tick, 1000);
