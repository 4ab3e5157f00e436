// kiln's web UI: what changes runs. A run's buttons (cancel, retry,
// suspend, resume, delete), the form that submits a run, and the dialog
// that asks before what cannot be undone. Every action is a call to the
// API with the user's token; the buttons show only to editors and
// admins, and the API's error shows with its KLN code.
"use strict";

// confirmDialog asks text, with OK and Cancel; true on OK.
function confirmDialog(text, ok) {
  const d = el("dialog", { id: "confirm" }, el("p", { class: "question" }, text),
    el("form", { method: "dialog" }, el("button", { value: "cancel", class: "confirm-cancel" }, "Keep it"), " ",
      el("button", { value: "ok", class: "confirm-ok danger" }, ok || "Yes")));
  document.body.append(d);
  d.show(); // not modal: the page stays readable behind it
  return new Promise((resolve) => d.addEventListener("close", () => { resolve(d.returnValue === "ok"); d.remove(); }));
}

// closeDialogs closes every open dialog (the submit form, a question):
// what they were about is no longer on the page once the address changes.
// A question closed so is answered no.
function closeDialogs() {
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
}

// runActions are the buttons of run's page that change it, as fit its
// phase; none for a viewer. Each says in #action-result what it did.
function runActions(run) {
  if (!writer()) return el("div", { id: "actions", class: "actions", "data-key": "no-actions" });
  const p = run.status.phase, done = ["Succeeded", "Failed", "Cancelled"].includes(p), id = encodeURIComponent(run.id);
  const suspended = run.suspend || p === "Suspended";
  const list = [
    !done && ["cancel", "Cancel", () => api(`/api/v1/runs/${id}/cancel`, false, {}), `Cancel run ${run.id}? Its running tasks are stopped.`],
    ["Failed", "Cancelled"].includes(p) && ["retry", "Retry", () => api(`/api/v1/runs/${id}/retry`, false, {})],
    !done && !suspended && ["suspend", "Suspend", () => api(`/api/v1/runs/${id}/suspend`, false, {})],
    !done && suspended && ["unsuspend", "Resume", () => api(`/api/v1/runs/${id}/unsuspend`, false, {})],
    done && ["delete", "Delete", async () => { await api(`/api/v1/runs/${id}`, false, undefined, "DELETE"); goTo({ list: {} }); },
      `Delete run ${run.id} and its records? This cannot be undone.`],
  ].filter(Boolean);
  return el("div", { id: "actions", class: "actions", "data-key": ["actions", run.id, p, suspended, role].join("\n") },
    ...list.map(([cls, label, fn, ask]) => actionButton(cls, label, fn, ask)));
}

// actionButton calls fn on a click, once asked when ask is set, and
// says what came of it in #action-result.
function actionButton(cls, label, fn, ask) {
  const b = el("button", { type: "button", class: "action " + cls + (ask ? " danger" : ""), "data-action": cls }, label);
  b.addEventListener("click", async () => {
    if (ask && !await confirmDialog(ask, `${label} the run`)) return;
    b.disabled = true;
    const out = document.getElementById("action-result");
    try {
      await fn();
      if (out) { out.className = "result"; out.textContent = `${label}: asked; the run changes as the engine takes it.`; }
      refreshRun();
    } catch (e) {
      if (out) { out.className = "result error"; out.textContent = errorText(e); }
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

// errorText is an API error with its hint.
// A refused token's hint is for HTTP clients: the page says more (auth.js).
function errorText(e) {
  return e.message + (e.hint && e.status !== 401 ? " — " + e.hint : "") + ((e.others || []).length ? "; " + e.others.join("; ") : "");
}

// submitForm is the dialog that submits a run: a YAML pasted or files
// picked, parameters (name=value, a line each) and a project.
function submitForm() {
  const d = el("dialog", { id: "submit" });
  const yaml = el("textarea", { id: "submit-yaml", rows: 12, cols: 80, placeholder: "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\n…", spellcheck: "false" });
  const files = el("input", { id: "submit-files", type: "file", multiple: "", accept: ".yaml,.yml,.json" });
  const params = el("textarea", { id: "submit-params", rows: 3, cols: 40, placeholder: "name=value, one a line" });
  const project = el("input", { id: "submit-project", placeholder: "default" });
  const result = el("p", { class: "result" });
  const go = el("button", { type: "submit", class: "submit-go" }, "Submit");
  const form = el("form", {}, el("h3", {}, "Submit a run"),
    el("p", {}, el("label", {}, "Workflow or TrainJob (YAML): ", el("br"), yaml)),
    el("p", {}, el("label", {}, "or files: ", files)),
    el("p", {}, el("label", {}, "Parameters: ", el("br"), params)),
    el("p", {}, el("label", {}, "Project: ", project)), result,
    el("p", {}, go, " ", el("button", { type: "button", class: "submit-close" }, "Close")));
  d.append(form);
  form.querySelector(".submit-close").addEventListener("click", () => d.close());
  d.addEventListener("close", () => d.remove());
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    go.disabled = true;
    result.className = "result";
    result.textContent = "submitting…";
    try {
      const run = await api("/api/v1/runs", false, submission(yaml.value, files.files, params.value, project.value));
      d.close();
      goTo({ run: run.id });
    } catch (err) {
      result.className = "result error";
      result.textContent = errorText(err);
    } finally {
      go.disabled = false;
    }
  });
  document.body.append(d);
  d.show(); // not modal: the page stays readable behind it
}

// submission is the multipart body POST /api/v1/runs takes.
function submission(text, files, params, project) {
  const f = new FormData();
  if (text.trim()) f.append("file", new Blob([text], { type: "application/yaml" }), "pasted.yaml");
  for (const file of files) f.append("file", file, file.name);
  for (const line of params.split("\n").map((l) => l.trim()).filter(Boolean)) f.append("param", line);
  if (project.trim()) f.append("project", project.trim());
  return f;
}
