// kiln's web UI for federated runs: a lane per party's share on a
// federated task's DAG node, the shares in its panel, and who takes part
// in the run. Loaded before app.js, whose helpers (el, phase) it calls.
"use strict";

// roleOrder lists a federation's roles as FATE does: guest, host,
// arbiter, then the others by name.
function roleOrder(roles) {
  const rank = (r) => { const i = ["guest", "host", "arbiter"].indexOf(r); return i < 0 ? 3 : i; };
  return Object.keys(roles || {}).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

// shares are federated task n's shares: one for each party of each of its
// task's roles (Pending until the run reports it), then any other share
// the run reports. Empty for a task that is not federated.
function shares(run, n) {
  const spec = run.workflow && run.workflow.spec;
  if (!(spec && spec.federation) && !(n.parties || []).length) return [];
  const task = spec && (spec.tasks || []).find((t) => t.name === n.name);
  const roles = (spec && spec.federation && spec.federation.roles) || {};
  const seen = n.parties || [];
  const key = (s) => s.party + "\n" + s.role;
  const byKey = new Map(seen.map((s) => [key(s), s]));
  // A share never reported is Pending, or ended with its task (skipped, say).
  const idle = ["Skipped", "Cancelled", "Failed", "Succeeded"].includes(n.phase) ? n.phase : "Pending";
  const want = ((task && task.roles) || []).flatMap((role) => (roles[role] || []).map((party) => ({ party, role, state: idle })));
  // A party's share is named after its task, and its role too when the party fills several of the task's roles.
  for (const s of want) s.task = want.filter((o) => o.party === s.party).length > 1 ? `${n.name}-${s.role}` : n.name;
  const wanted = new Set(want.map(key));
  return [...want.map((s) => byKey.get(key(s)) || s), ...seen.filter((s) => !wanted.has(key(s)))];
}

// partyShares are, in federated node's panel, its shares in a table: the
// party, role, state, attempt, where it listens, why, and when the party
// was last heard from. On a party's part, the task's note says which
// federated task and role it is a share of.
function partyShares(run, node) {
  const out = [];
  const f = run.federation;
  const ref = f && f.part && (f.shares || []).find((s) => s.name === node.name);
  if (ref) {
    out.push(el("p", { class: "share-of", "data-task": ref.task, "data-role": ref.role },
      `Share of task ${ref.task} as ${ref.role} of run ${f.run}, initiated by ${f.initiator}`));
  }
  const list = shares(run, node);
  if (!list.length) return out;
  out.push(el("h4", {}, "Parties"), el("table", { id: "parties" },
    el("tr", {}, ...["Party", "Role", "State", "Attempt", "Address", "Code", "Message", "Last heard"].map((h) => el("th", {}, h))),
    ...list.map((s) => el("tr", { class: "party-share", "data-party": s.party, "data-role": s.role, "data-state": s.state },
      el("td", {}, s.party), el("td", {}, s.role), el("td", {}, phase(s.state)), el("td", {}, s.attempt ? "#" + s.attempt : ""),
      el("td", {}, s.address || ""), el("td", {}, s.code || ""), el("td", {}, s.message || ""), el("td", {}, when(s.seenAt))))));
  if (f && !f.part) {
    out.push(el("p", {}, "Each party keeps its share's log; on its server:"), el("ul", { class: "party-logs" },
      ...list.map((s) => el("li", { "data-party": s.party, "data-role": s.role },
        `${s.party}: `, el("code", {}, `kiln logs ${run.id}-${s.party} ${s.task || node.name}`)))));
  }
  return out;
}

// federationHeader says, on a run's page, who takes part in it: the
// initiator and each role's parties; on a party's part, the run it is a
// part of (a link when that run is on this server) and as which party.
function federationHeader(run) {
  const f = run.federation;
  if (!f) return null;
  const box = el("section", { id: "federation", class: f.part ? "part" : "whole", "data-initiator": f.initiator, "data-party": f.party || "" });
  if (f.part) {
    const whole = f.party === f.initiator ? runLink(f.run) : f.run;
    box.append(el("p", { class: "part-of" }, "Part of run ", whole, ` (initiated by ${f.initiator}) as party ${f.party}`));
  } else {
    const mine = roleOrder(f.roles).some((r) => (f.roles[r] || []).includes(f.party));
    box.append(el("p", { class: "initiated" }, `Federated run, initiated by ${f.initiator}`,
      f.party === f.initiator ? " (this server)" : "",
      mine ? el("span", {}, "; this server's part: ", runLink(run.id + "-" + f.party)) : null));
  }
  box.append(el("ul", { class: "roles" }, ...roleOrder(f.roles).map((r) =>
    el("li", { "data-role": r }, el("strong", {}, r), ": " + (f.roles[r] || []).join(", ")))));
  return box;
}

// fedMark marks, in the runs list, a federated run or a party's part of one.
function fedMark(r) {
  const f = r.federation;
  if (!f) return null;
  return f.part ? el("span", { class: "fed-mark", "data-fed": "part", title: `part of run ${f.run}, initiated by ${f.initiator}` }, "part of " + f.run)
    : el("span", { class: "fed-mark", "data-fed": "run", title: `initiated by ${f.initiator}` }, "federated");
}
