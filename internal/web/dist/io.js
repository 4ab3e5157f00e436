// kiln's web UI: what a task read and wrote, in its panel (as Argo's node
// panel and Flyte's node I/O show them): its parameters and inputs, the
// values its {{...}} references resolved to (node.inputs, recorded by the
// engine at its last attempt's start); its output parameters; and its
// stored artifacts with their sizes and a download link each (GET
// /api/v1/runs/{id}/artifacts/{node}/{name}, with the browser's token).
"use strict";

// taskIO is node's parameters, inputs, outputs and artifacts: a section
// each that has something to show.
function taskIO(run, node) {
  const ins = Object.entries(node.inputs || {});
  const isParam = ([k]) => k.startsWith("params.") || k === "item" || k.startsWith("item.");
  return [
    ioTable("Parameters", "io-params", ins.filter(isParam)),
    ioTable("Inputs", "io-inputs", ins.filter((e) => !isParam(e))),
    ioTable("Outputs", "io-outputs", Object.entries(node.outputs || {})),
    artifactsTable(run, node),
  ].filter(Boolean);
}

// ioTable is a table of name and value, under a heading; null when empty.
function ioTable(title, id, rows) {
  if (!rows.length) return null;
  rows.sort(([a], [b]) => a.localeCompare(b));
  return el("section", { class: "io", id }, el("h4", {}, title), el("table", {},
    ...rows.map(([k, v]) => el("tr", { "data-key": k }, el("th", {}, k), el("td", {}, el("div", { class: "value" }, v))))));
}

// artifactsTable lists node's stored artifacts: name, path, size and a
// download link each (a directory comes as a tar of its files).
function artifactsTable(run, node) {
  const list = node.artifacts || [];
  if (!list.length) return null;
  return el("section", { class: "io", id: "io-artifacts" }, el("h4", {}, "Artifacts"), el("table", {},
    el("tr", {}, ...["Name", "Path", "Size", ""].map((h) => el("th", {}, h))),
    ...list.map((a) => el("tr", { "data-artifact": a.name, "data-size": a.size },
      el("td", {}, a.name), el("td", {}, a.path + (a.dir ? "/" : "")),
      el("td", { class: "size", title: a.size + " bytes" }, byteSize(a.size) + (a.dir ? ` (${fileCount((a.files || []).length)})` : "")),
      el("td", {}, downloadLink(run, node, a))))));
}

// fileCount is "1 file" or "N files".
function fileCount(n) { return n + (n === 1 ? " file" : " files"); }

// byteSize is n bytes in words: "812 B", "4.2 KiB", "1.5 GiB".
function byteSize(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return (i ? n.toFixed(1) : String(n)) + " " + units[i];
}

// downloadLink fetches artifact a with the browser's token and hands it
// to the browser as a file: a plain link could not send the token.
function downloadLink(run, node, a) {
  const path = `/api/v1/runs/${encodeURIComponent(run.id)}/artifacts/${encodeURIComponent(node.name)}/${encodeURIComponent(a.name)}`;
  const file = a.dir || (a.files || []).length ? a.name + ".tar" : a.path.split("/").pop() || a.name;
  const link = el("a", { href: path, class: "download", download: file }, "Download");
  const status = el("span", { class: "result" });
  link.addEventListener("click", async (e) => {
    e.preventDefault();
    status.className = "result";
    status.textContent = "downloading…";
    try {
      const r = await fetch(path, { headers: authHeader() });
      if (!r.ok) throw await apiError(r);
      const url = URL.createObjectURL(await r.blob());
      const save = el("a", { href: url, download: file });
      document.body.append(save);
      save.click();
      save.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      status.textContent = "";
    } catch (err) {
      status.className = "result error";
      status.textContent = errorText(err);
    }
  });
  return el("span", {}, link, " ", status);
}
