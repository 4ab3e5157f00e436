// kiln's web UI: a run's nodes read in pieces, as docs/api.md's "Large
// runs" tells a client to: the run without its nodes (?nodes=false), the
// nodes at the top of the run, the tasks of the groups drawn open (a
// subworkflow, an exit handler) and, of a map or a dynamic task, only the
// page of its items that the graph or the panel shows. Then, every poll,
// only what changed: each listing asks for the nodes changed since its
// resourceVersion, and each request sends the ETag of the answer it had,
// so that a run where nothing happened costs a few 304s.
"use strict";

// itemsLimit is how many of a group's items one page holds: in its panel,
// and in the graph when it is opened there (which shows its first 24).
const itemsLimit = 50;
// drawnKinds are the groups whose tasks the graph draws inside them, so
// the page reads all of their nodes; a map's or a dynamic task's items it
// reads a page at a time.
const drawnKinds = ["subworkflow", "exit"];

// RunNodes holds what the page read of run id: its head, its nodes by
// name in the run's order, the listings it follows (scopes: "" for the
// top of the run, a group's name for its tasks) and the pages of groups
// shown (views).
class RunNodes {
  constructor(id) {
    this.id = id;
    this.base = "/api/v1/runs/" + encodeURIComponent(id);
    this.head = null;
    this.nodes = new Map();
    this.scopes = new Map(); // parent -> resourceVersion of its last listing
    this.full = new Set(); // the parents whose every node the page read: a new one of theirs is read too
    this.views = new Map(); // group -> {phase, pages: [continue tokens], version, names, counts, remaining, next}
    this.tags = new Map(); // slot -> {url, etag, body}: the last answer of each thing polled
    this.events = [];
    this.seq = 0;
  }

  // get asks for url with the ETag of the last answer to slot: it
  // answers that answer's body again, with same set, on a 304.
  async get(slot, url) {
    const prev = this.tags.get(slot);
    const headers = authHeader();
    if (prev && prev.url === url) headers["If-None-Match"] = prev.etag;
    const r = await fetch(url, { headers, cache: "no-store" });
    role = r.headers.get("Kiln-Role") || role;
    if (r.status === 304 && prev && prev.url === url) return { body: prev.body, same: true };
    if (!r.ok) throw await apiError(r);
    const body = await r.json();
    const etag = r.headers.get("ETag");
    if (etag) this.tags.set(slot, { url, etag, body });
    else this.tags.delete(slot);
    return { body, same: false };
  }

  // load reads the run afresh: its head, its top nodes and the tasks of
  // the groups drawn open, the pages of the groups shown, the last events.
  async load() {
    this.nodes.clear();
    this.scopes.clear();
    this.full.clear();
    await this.readHead();
    await this.list("");
    for (const g of [...this.views.keys()]) await this.readView(g);
    if (!this.seq) await this.readEvents();
  }

  // poll reads what changed since the last load or poll; on a version
  // the server no longer knows (410, KLN-4075) it loads again.
  async poll() {
    try {
      await this.readHead();
      for (const p of [...this.scopes.keys()]) await this.list(p, true);
      for (const g of [...this.views.keys()]) await this.readView(g);
    } catch (e) {
      if (e.status !== 410) throw e;
      await this.load();
    }
    await this.readEvents();
  }

  async readHead() {
    this.head = (await this.get("head", this.base + "?nodes=false")).body;
  }

  // list reads the nodes whose parent is parent ("" the top of the run):
  // all of them, or those changed since the listing before when changed
  // is set; a page at a time. A group drawn open among them is listed too.
  async list(parent, changed) {
    const since = changed ? this.scopes.get(parent) : undefined;
    let q = "parent=" + encodeURIComponent(parent) + (since !== undefined ? "&sinceVersion=" + encodeURIComponent(since) : "");
    let version = null;
    for (let token = "", first = true; first || token; first = false) {
      const url = `${this.base}/nodes?${q}&limit=500` + (token ? "&continue=" + encodeURIComponent(token) : "");
      const { body } = await this.get("list:" + parent, url);
      version ??= body.resourceVersion;
      for (const n of body.items || []) if (!changed || this.full.has(parent) || this.nodes.has(n.name)) this.merge(n);
      token = body.continue || "";
    }
    this.scopes.set(parent, version);
    if (!changed) this.full.add(parent);
    for (const n of this.nodes.values()) {
      if ((n.parent || "") === parent && n.children && drawnKinds.includes(n.kind) && !this.full.has(n.name)) await this.list(n.name);
    }
  }

  // merge keeps node n, in place of the one of its name.
  merge(n) { this.nodes.set(n.name, n); }

  // view is group's page shown, made when first asked for.
  view(group) {
    let v = this.views.get(group);
    if (!v) this.views.set(group, (v = { phase: "", pages: [""], names: [], counts: null, remaining: 0, next: "" }));
    return v;
  }

  // readView reads the page of group's items that its view shows, with
  // the counts of all its items by phase.
  async readView(group) {
    const v = this.view(group);
    const token = v.pages[v.pages.length - 1];
    const url = `${this.base}/nodes?parent=${encodeURIComponent(group)}&limit=${itemsLimit}` +
      (v.phase ? "&phase=" + v.phase : "") + (token ? "&continue=" + encodeURIComponent(token) : "");
    const { body } = await this.get("view:" + group, url);
    for (const n of body.items || []) this.merge(n);
    Object.assign(v, { version: body.resourceVersion, names: (body.items || []).map((n) => n.name), counts: body.counts || {}, remaining: body.remainingItemCount || 0, next: body.continue || "" });
  }

  // readEvents reads the last events, or those after the last read.
  async readEvents() {
    const url = `${this.base}/events?tail=200` + (this.seq ? "&after=" + this.seq : "");
    const { body, same } = await this.get("events", url);
    if (same) return;
    for (const e of body.items || []) {
      if (e.seq > this.seq) { this.events.push(e); this.seq = e.seq; }
    }
  }

  // find reads pages of the group that node name is an item of until it
  // has the node; false when it has no such group.
  async find(name) {
    const groups = [...this.nodes.values()].filter((n) => n.children && name.startsWith(n.name + "."));
    const g = groups.sort((a, b) => b.name.length - a.name.length)[0];
    if (!g) return false;
    let token = "", version = null;
    do {
      const r = await fetch(`${this.base}/nodes?parent=${encodeURIComponent(g.name)}&limit=500` + (token ? "&continue=" + encodeURIComponent(token) : ""),
        { headers: authHeader(), cache: "no-store" });
      if (!r.ok) throw await apiError(r);
      const body = await r.json();
      version ??= body.resourceVersion;
      for (const n of body.items || []) if (n.name === name) this.merge(n);
      token = body.continue || "";
    } while (token && !this.nodes.has(name));
    if (!this.scopes.has(g.name)) this.scopes.set(g.name, version); // follow its changes from now on
    return this.nodes.has(name);
  }

  // run is the run as the page draws it: its head with the nodes read.
  run() {
    if (!this.head) return null;
    return { ...this.head, status: { ...this.head.status, nodes: [...this.nodes.values()] } };
  }
}

// viewCounts are a group's items counted by phase, as a node's children
// are counted: from a page's counts.
function viewCounts(c) {
  const key = { Succeeded: "succeeded", Failed: "failed", Skipped: "skipped", Cancelled: "cancelled", Pending: "pending", Waiting: "pending" };
  const out = { total: 0 };
  for (const [p, k] of Object.entries(c || {})) {
    const name = key[p] || "running";
    out[name] = (out[name] || 0) + k;
    out.total += k;
  }
  return out;
}
