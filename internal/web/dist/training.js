// kiln's web UI: a training job's part of its task's panel: why it waits
// in the queue, its restarts, its replica groups with a mark for each of
// their processes by state, its conditions with their times, and the
// progress it reported.
"use strict";

// trainingView is training node's section of the panel.
function trainingView(run, node) {
  const out = [el("h4", {}, "Training job")];
  if (node.phase === "Waiting" || node.phase === "Pending") {
    out.push(el("p", { id: "queue-reason", class: "queue-reason" }, node.phase === "Waiting" ? "Waiting in the queue" : "Pending",
      node.code || node.message ? ": " + [node.code, node.message].filter(Boolean).join(" ") : "", queuedSince(run, node)));
  }
  const restarts = restartCount(node);
  out.push(el("p", { id: "restarts" }, `Restarts: ${restarts}` + (restarts ? ` (${restarts + 1} attempts)` : "")));
  if (node.trainerStatus) {
    out.push(el("p", { id: "trainer-status" }, "Progress: " + trainerText(node.trainerStatus) +
      " (reported " + when(node.trainerStatus.lastUpdatedTime) + ")"));
  }
  out.push(elasticSize(node.attempts || []));
  if ((node.replicas || []).length) out.push(replicasTable(node.replicas));
  if ((node.conditions || []).length) out.push(conditionsTable(node.conditions));
  return out.filter(Boolean);
}

// restartCount is how many times the job started again: its attempts after the first.
function restartCount(node) { return Math.max(0, (node.attempts || []).length - 1); }

// queuedSince says since when node has waited, from the run's events.
function queuedSince(run, node) {
  const ev = liveEvents(run.id).filter((e) => e.node === node.name && e.phase === "Waiting").pop();
  return ev ? el("span", {}, ", since ", agoEl(ev.time)) : "";
}

// replicasTable counts each replica group's processes by state, with a
// mark per process: the counts are what the API records, not which rank
// is in which state (a gang's log labels its ranks).
function replicasTable(groups) {
  const states = [["active", "Running"], ["succeeded", "Succeeded"], ["failed", "Failed"], ["stopped", "Stopped"]];
  return el("table", { id: "replicas" },
    el("tr", {}, ...["Replicas", "Active", "Succeeded", "Failed", "Stopped", "Processes"].map((h) => el("th", {}, h))),
    ...groups.map((g) => el("tr", { "data-group": g.name }, el("td", {}, g.name), ...states.map(([k]) => el("td", { class: k }, g[k] ?? 0)),
      el("td", { class: "pips" }, ...states.flatMap(([k, p]) => Array.from({ length: Math.min(g[k] || 0, 64) },
        () => el("span", { class: "pip " + p, "data-state": k, title: `${g.name}: ${g[k]} ${k}` })))))));
}

// conditionsTable lists a job's conditions with when each last changed.
function conditionsTable(conditions) {
  return el("table", { id: "conditions" },
    el("tr", {}, ...["Condition", "Status", "Reason", "Message", "Since"].map((h) => el("th", {}, h))),
    ...conditions.map((c) => el("tr", { "data-type": c.type, "data-status": c.status }, el("td", {}, c.type), el("td", {}, c.status),
      el("td", {}, c.reason || ""), el("td", {}, c.message || ""), el("td", { class: "since" }, agoEl(c.lastTransitionTime)))));
}

// elasticSize shows an elastic training job's size in its last attempt:
// the nodes it has now, of every node it started or that joined, and those
// it lost; nothing for a job of fixed size.
function elasticSize(attempts) {
  const a = attempts[attempts.length - 1];
  if (!a || !a.nodes) return "";
  const all = a.nodes + (a.joined || 0), lost = a.dropped || [];
  const notes = [a.joined ? a.joined + " joined" : "", lost.length ? "lost " + lost.join(", ") : ""].filter(Boolean);
  return el("p", { id: "elastic-size" }, "Nodes: " + (all - lost.length) + " of " + all + (notes.length ? " (" + notes.join("; ") + ")" : ""));
}
