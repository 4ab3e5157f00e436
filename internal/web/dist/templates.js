// kiln's web UI: the WorkflowTemplates stored in a project (kiln apply),
// and a form that launches one: a field for each of its params, filled
// with its default, marked when it has none and must be given. Launching
// submits the template's spec as a Workflow of its name, in its project,
// with the params (POST /api/v1/runs, as kiln submit -p name=value does),
// and opens the run's page.
//
//   #/templates?project=P        the list
//   #/templates/NAME?project=P   the launch form
"use strict";

// templatesPage shows what s (parseHash's {templates, project}) names.
async function templatesPage(s) {
  const project = s.project || "default";
  const q = "?project=" + encodeURIComponent(project);
  show(el("h2", {}, "Templates"), el("p", { class: "loading" }, "loading…"));
  try {
    if (s.template) {
      const t = await api(`/api/v1/templates/${encodeURIComponent(s.template)}${q}`);
      if (parseHash().template === s.template) show(...launchForm(t, project));
      return;
    }
    const list = await api("/api/v1/templates" + q);
    if (parseHash().templates && !parseHash().template) show(...templateList(list.items || [], project));
  } catch (e) {
    show(el("h2", {}, "Templates"), el("p", { class: "error", id: "templates-error" }, errorText(e)));
  }
}

// templateList is the project's templates, a row each, linked to its form.
function templateList(items, project) {
  const pick = el("form", { class: "filters", id: "template-project" }, "Project: ",
    el("input", { name: "project", value: project }), el("button", {}, "Show"));
  pick.addEventListener("submit", (e) => {
    e.preventDefault();
    goTo({ templates: true, project: pick.elements.project.value.trim() });
  });
  const rows = items.map((t) => el("tr", { "data-template": t.metadata.name },
    el("td", {}, el("a", { href: hashFor({ templates: true, template: t.metadata.name, project }) }, t.metadata.name)),
    el("td", {}, (t.spec.params || []).map((p) => p.name).join(", ")),
    el("td", {}, String((t.spec.tasks || []).length)),
    el("td", {}, t.status ? when(t.status.updatedAt) : "")));
  return [el("h2", {}, "Templates"), pick,
    items.length ? el("table", { id: "templates" }, el("tr", {}, ...["Template", "Params", "Tasks", "Updated"].map((h) => el("th", {}, h))), ...rows)
      : el("p", { id: "templates-none" }, `Project ${project} has no templates: store one with kiln apply -f FILE --project ${project}.`)];
}

// launchForm is a field for each of template t's params and a Launch button.
function launchForm(t, project) {
  const params = t.spec.params || [];
  const fields = params.map((p) => {
    const input = el("input", { name: p.name, "data-param": p.name, placeholder: p.default == null ? "required" : "" });
    if (p.default != null) input.value = p.default;
    else input.required = true;
    return el("tr", {}, el("th", {}, el("label", {}, p.name)), el("td", {}, input),
      el("td", { class: "param-note" }, [p.default == null ? "required" : "default: " + p.default, p.description].filter(Boolean).join(" — ")));
  });
  const result = el("p", { class: "result", id: "launch-result" });
  const go = el("button", { type: "submit", id: "launch" }, "Launch");
  const form = el("form", { id: "launch-form" }, params.length ? el("table", { class: "params" }, ...fields) :
    el("p", {}, "This template takes no params."), result, go);
  if (!writer()) go.disabled = true;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    go.disabled = true;
    result.className = "result";
    result.textContent = "launching…";
    try {
      const run = await api("/api/v1/runs", false, launchBody(t, project, form));
      goTo({ run: run.id });
    } catch (err) {
      result.className = "result error";
      result.textContent = errorText(err);
      go.disabled = false;
    }
  });
  return [el("h2", {}, "Launch ", t.metadata.name), el("p", {}, "Project ", el("strong", {}, project),
    " · ", el("a", { href: hashFor({ templates: true, project }) }, "all templates")),
  writer() ? null : el("p", { class: "error" }, "This token may only read: launching needs an editor's token."), form];
}

// launchBody is the multipart submission of template t as a Workflow of
// its name and spec, with the form's params.
function launchBody(t, project, form) {
  const wf = { apiVersion: "kiln.dev/v1alpha1", kind: "Workflow", metadata: { name: t.metadata.name, labels: t.metadata.labels }, spec: t.spec };
  const body = new FormData();
  body.append("file", new Blob([JSON.stringify(wf)], { type: "application/json" }), `template ${t.metadata.name}`);
  for (const input of form.querySelectorAll("input[data-param]")) body.append("param", input.name + "=" + input.value);
  body.append("project", project);
  return body;
}
