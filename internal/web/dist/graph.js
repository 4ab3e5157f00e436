// kiln's web UI: a run's DAG, laid out in layers by dagre (vendor/dagre.min.js),
// that one pans (drag) and zooms (wheel, buttons). A map's items fold into one
// node with their counts, which opens on request; a subworkflow's tasks are a
// group; a federated task's parties are lanes under its node (federation.js's
// shares). A later update with the same nodes only restyles them.
//
//   const g = KilnGraph.create(container, {onSelect(name), onExpand(name, open)});
//   g.update(run); g.select(name); g.expand(name, open); g.fit(); g.destroy();
//   KilnGraph.forget() drops the layouts it keeps for drawings seen lately.
//
// Self-contained: it needs dagre, and federation.js's shares for lanes.
"use strict";

window.KilnGraph = (function () {
  const SVG = "http://www.w3.org/2000/svg";
  // A node is W by H pixels, and LANE more for each federated party's lane.
  const W = 150, H = 40, LANE = 16;
  // An opened map shows its first openCap items, then a "+N more" node.
  const openCap = 24;
  // A row of more than foldAt sibling tasks (the same upstream tasks)
  // shows its first foldShow, then a "+N more" node that opens the row.
  const foldAt = 12, foldShow = 8;
  const fills = { Pending: "#9e9e9e", Skipped: "#8d6e63", Waiting: "#e0a000", Running: "#1e88e5", Retrying: "#fb8c00",
    Succeeded: "#2e7d32", Failed: "#c62828", Cancelled: "#555", Suspended: "#7b1fa2" };
  const laneFills = { Pending: "#9e9e9e", Reserving: "#e0a000", Reserved: "#00897b", Running: "#1e88e5",
    Succeeded: "#2e7d32", Failed: "#c62828", Released: "#555", Stopped: "#555", Unreachable: "#fb8c00",
    Skipped: "#8d6e63", Cancelled: "#555" };

  // mk makes an SVG element with attributes and children.
  function mk(tag, attrs, ...kids) {
    const n = document.createElementNS(SVG, tag);
    for (const k in attrs) n.setAttribute(k, attrs[k]);
    for (const c of kids) if (c !== null && c !== undefined) n.append(c);
    return n;
  }

  // cut shortens s to n characters, with an ellipsis.
  function cut(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

  // eta is a number of seconds as "1h2m", "2m5s" or "40s".
  function eta(s) {
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return h ? `${h}h${m}m` : m ? `${m}m${sec}s` : `${sec}s`;
  }

  // marks are the signs of the phases counted on a node, in the order
  // shown; the legend says which is which.
  const marks = [["succeeded", "✓"], ["failed", "✗"], ["running", "▶"], ["pending", "○"], ["skipped", "↷"], ["cancelled", "⊘"]];

  // counts is a group's children on its node, every phase that has some,
  // from the same counts as the panel's words: "7/10 ✓ 2 ✗ 1 ▶".
  function counts(c) {
    return `${c.succeeded || 0}/${c.total} ✓` + marks.slice(1).filter(([k]) => c[k]).map(([k, sign]) => ` ${c[k]} ${sign}`).join("");
  }

  // countWords is a count of children in words: "7/10 succeeded, 2 failed".
  function countWords(c) {
    return [`${c.succeeded || 0}/${c.total} succeeded`, ...marks.slice(1).filter(([k]) => c[k]).map(([k]) => `${c[k]} ${k}`)].join(", ");
  }

  // phaseCounts counts nodes by phase as a group's children are counted.
  function phaseCounts(nodes) {
    const c = { total: nodes.length };
    const key = { Succeeded: "succeeded", Failed: "failed", Skipped: "skipped", Cancelled: "cancelled", Pending: "pending", Waiting: "pending" };
    for (const n of nodes) {
      const k = key[n.phase] || "running";
      c[k] = (c[k] || 0) + 1;
    }
    return c;
  }

  // subtitle is the second line of a node, if it has one.
  function subtitle(n) {
    if (n.children) return counts(n.children);
    const ts = n.trainerStatus;
    if (ts && ts.progressPercentage != null) {
      return ts.progressPercentage + "%" + (ts.estimatedRemainingSeconds != null && n.phase === "Running" ? " · ETA " + eta(ts.estimatedRemainingSeconds) : "");
    }
    const g = n.gate;
    if (g && !g.decision && n.phase === "Running") return "waits for " + (g.kind === "approve" ? "approval" : g.kind);
    if (g && g.decision) return g.decision;
    if (n.cache && n.cache.result === "Hit") return "from the cache";
    return "";
  }

  // laneList is node n's federated shares (federation.js), if it has any.
  function laneList(run, n) {
    return typeof shares === "function" ? shares(run, n) : []; // eslint-disable-line no-undef
  }

  // laneText is share s in words, for its tooltip.
  function laneText(s) {
    return `${s.party} as ${s.role}: ${s.state}` + (s.attempt ? ` (attempt #${s.attempt})` : "") + (s.address ? " at " + s.address : "") +
      (s.code || s.message ? " — " + [s.code, s.message].filter(Boolean).join(" ") : "");
  }

  // upstream names the tasks that task t of spec waits for: its dependsOn
  // and the task names its depends expression mentions.
  function upstream(t, names) {
    const out = new Set(t.dependsOn || []);
    for (const w of (t.depends || "").split(/[^A-Za-z0-9_-]+/)) if (names.has(w)) out.add(w);
    return [...out].filter((d) => names.has(d) && d !== t.name);
  }

  // ---- the model: what to draw, from a run ----

  // model is run's drawing, before layout: nodes (real ones, and "+N more"
  // ones), clusters (groups) and edges, and a key that changes when the
  // layout would.
  function model(run, open) {
    const spec = (run.workflow && run.workflow.spec) || {};
    const status = new Map(), kids = new Map();
    for (const n of run.status.nodes || []) {
      status.set(n.name, n);
      if (n.parent) {
        let k = kids.get(n.parent);
        if (!k) kids.set(n.parent, (k = []));
        k.push(n);
      }
    }
    const subs = new Map((run.subworkflows || []).map((w) => [w.metadata && w.metadata.name, w.spec || {}]));
    const m = { nodes: [], clusters: [], edges: [], order: [], status, kids, run, hidden: new Map() };
    const top = (spec.tasks || []).slice();
    const ex = status.get("onExit");
    if (ex && ex.kind === "exit") top.push({ name: "onExit", exit: true });
    tasks(m, top, "", null, spec, subs, open, true);
    m.key = m.nodes.map((n) => n.id + "/" + n.h + "/" + (n.cluster || "") + (n.group ? "/g" : "") + (n.more || n.row ? "/" + n.count : "")).join("|") + "#" +
      m.edges.map((e) => e.from + ">" + e.to + "/" + e.minlen).join("|");
    return m;
  }

  // tasks adds the tasks of one workflow (top level, a subworkflow's or
  // the exit handler's), named prefix+task, in cluster, with their edges.
  // It returns how many layers they span.
  function tasks(m, list, prefix, cluster, spec, subs, open, atTop) {
    const names = new Set(list.map((t) => t.name));
    const span = {}, rank = {};
    const { folded, rows } = foldRows(m, list, names, prefix, cluster, open);
    const at = (name) => folded.get(name) || prefix + name; // the node a task is drawn as
    const seen = new Set();
    const edge = (e) => { // once for each pair: the tasks of a folded row share one node
      const k = e.from + ">" + e.to;
      if (e.from !== e.to && !seen.has(k)) { seen.add(k); m.edges.push(e); }
    };
    for (const t of list) span[t.name] = folded.has(t.name) ? 1 : item(m, prefix + t.name, t, cluster, spec, subs, open, prefix);
    m.nodes.push(...rows); // after the tasks: the first node drawn is a task
    const byName = Object.fromEntries(list.map((t) => [t.name, t]));
    const visit = (name, seen) => {
      if (rank[name] !== undefined) return rank[name];
      if (seen.has(name)) return 0;
      seen.add(name);
      const ups = upstream(byName[name], names);
      rank[name] = ups.length ? Math.max(...ups.map((u) => visit(u, seen) + span[u])) : 0;
      return rank[name];
    };
    let depth = 0;
    for (const t of list) {
      if (t.exit && atTop) { // the exit handler comes after every task: a hidden edge from the deepest one
        const last = list.filter((o) => !o.exit).sort((a, b) => (visit(b.name, new Set()) + span[b.name]) - (visit(a.name, new Set()) + span[a.name]))[0];
        if (last) edge({ from: at(last.name), to: prefix + t.name, minlen: span[last.name], cls: "edge exit" });
        rank[t.name] = last ? visit(last.name, new Set()) + span[last.name] : 0;
      } else {
        for (const u of upstream(t, names)) edge({ from: at(u), to: at(t.name), minlen: span[u], cls: "edge" });
      }
      depth = Math.max(depth, visit(t.name, new Set()) + span[t.name]);
    }
    for (const n of rows) if (n.open) for (const u of n.ups) edge({ from: at(u), to: n.id, minlen: span[u], cls: "edge" });
    return { depth, roots: [...new Set(list.filter((t) => !upstream(t, names).length).map((t) => at(t.name)))] };
  }

  // foldRows folds each long row of sibling tasks of list (tasks with the
  // same upstream and the same downstream tasks, as a static fan-out
  // makes, so that the ones folded stand in the same place): its first foldShow
  // are drawn, the rest as one "+N more" node, which opens the row (then
  // a "fold" node closes it). It returns the node of each folded task, and
  // the rows' nodes.
  function foldRows(m, list, names, prefix, cluster, open) {
    const rows = new Map(), downs = new Map();
    for (const t of list) for (const u of upstream(t, names)) downs.set(u, (downs.get(u) || []).concat(t.name));
    for (const t of list) {
      if (t.exit || t.workflow) continue; // a group of its own: never folded
      const k = upstream(t, names).sort().join(",");
      const row = k + ">" + (downs.get(t.name) || []).sort().join(",");
      if (!rows.has(row)) rows.set(row, { k, names: [] });
      rows.get(row).names.push(t.name);
    }
    const out = new Map(), nodes = [];
    for (const [key, { k, names: row }] of rows) {
      if (row.length <= foldAt) continue;
      const id = `row:${prefix}${key}`, rest = row.slice(foldShow).map((n) => prefix + n);
      const isOpen = open.has(id);
      nodes.push({ id, row: id, names: rest, count: rest.length, open: isOpen, prefix, ups: k ? k.split(",") : [], cluster, h: H,
        label: isOpen ? `− fold ${rest.length}` : `+${rest.length} more` });
      if (!isOpen) {
        for (const n of row.slice(foldShow)) out.set(n, id);
        for (const n of rest) m.hidden.set(n, id);
      }
      const shown = (isOpen ? row : row.slice(0, foldShow)).map((n) => prefix + n).concat(id);
      for (let i = 1; i < shown.length; i++) m.order.push({ left: shown[i - 1], right: shown[i] });
    }
    return { folded: out, rows: nodes };
  }

  // item adds node name (task t) to m: a task, a map folded or open, or a
  // subworkflow with its tasks in a cluster. It returns the layers it spans.
  function item(m, name, t, cluster, spec, subs, open, prefix) {
    const n = m.status.get(name) || { name, phase: "Pending" };
    const own = m.kids.get(name) || [];
    const lanes = laneList(m.run, n).length;
    const node = { id: name, name, label: prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name,
      train: !!(t && t.train), group: !!n.children, cluster, h: H + (lanes ? 2 + lanes * LANE : 0) };
    const sub = t && t.workflow && subs.get(t.workflow.name);
    const inner = n.kind === "exit" ? { tasks: spec.onExit || [] } : sub;
    if (own.length && inner) { // a subworkflow or the exit handler: its tasks in a cluster
      const cid = "cluster:" + name;
      m.clusters.push({ id: cid, name, parent: cluster });
      node.cluster = cid;
      node.header = true;
      m.nodes.push(node);
      const r = tasks(m, inner.tasks || [], name + ".", cid, inner, subs, open, false);
      for (const root of r.roots) m.edges.push({ from: name, to: root, minlen: 1, cls: "edge child" });
      return 1 + r.depth;
    }
    m.nodes.push(node);
    if (!own.length || !open.has(name)) return 1; // (a page draws a map open once it has read a page of its items)
    const cid = "items:" + name; // an open map: its first items in order, then how many more
    m.clusters.push({ id: cid, name, parent: cluster, items: true });
    const shown = own.slice(0, openCap).map((k) => k.name);
    for (const k of own.slice(0, openCap)) {
      m.nodes.push({ id: k.name, name: k.name, label: k.name.slice(name.length + 1) || k.name, cluster: cid, group: !!k.children, h: H });
      m.edges.push({ from: name, to: k.name, minlen: 1, cls: "edge child" });
    }
    const total = Math.max(own.length, n.children ? n.children.total : 0); // the items read, or all there are
    if (total > Math.min(own.length, openCap)) {
      const more = total - Math.min(own.length, openCap);
      m.nodes.push({ id: "more:" + name, more: name, label: `+${more} more`, cluster: cid, h: H, count: more });
      m.edges.push({ from: name, to: "more:" + name, minlen: 1, cls: "edge child" });
      shown.push("more:" + name);
    }
    for (let i = 1; i < shown.length; i++) m.order.push({ left: shown[i - 1], right: shown[i] });
    return 2;
  }

  // ---- layout ----

  // fastRanker ranks a big graph in linear time where dagre's network
  // simplex takes seconds (7 s at 500 tasks): each node one layer after its
  // deepest upstream, then the nodes that only hang from others (sources,
  // a group's top border) pulled as late as their downstream lets them.
  // g is dagre's own graph of the layout, with its minimum edge lengths.
  function fastRanker(g) {
    const nodes = g.nodes(), indeg = new Map(), order = [];
    for (const v of nodes) indeg.set(v, (g.inEdges(v) || []).length);
    const ready = nodes.filter((v) => !indeg.get(v));
    while (ready.length) {
      const v = ready.pop();
      order.push(v);
      for (const e of g.outEdges(v) || []) {
        indeg.set(e.w, indeg.get(e.w) - 1);
        if (!indeg.get(e.w)) ready.push(e.w);
      }
    }
    for (const v of order) {
      let r = 0;
      for (const e of g.inEdges(v) || []) r = Math.max(r, g.node(e.v).rank + g.edge(e).minlen);
      g.node(v).rank = r;
    }
    for (let i = order.length - 1; i >= 0; i--) {
      const v = order[i], outs = g.outEdges(v) || [];
      if (!outs.length || !(g.inEdges(v) || []).every((e) => !g.edge(e).weight)) continue;
      let r = Infinity;
      for (const e of outs) r = Math.min(r, g.node(e.w).rank - g.edge(e).minlen);
      g.node(v).rank = r;
    }
  }

  // layout places m's nodes and routes its edges with dagre, left to right:
  // dagre's own ranking, which keeps edges short, up to bigRank nodes.
  const bigRank = 100;
  function layout(m) {
    const compound = m.clusters.length > 0;
    const g = new dagre.graphlib.Graph({ compound, multigraph: false }); // eslint-disable-line no-undef
    g.setGraph({ rankdir: "LR", nodesep: compound ? 34 : 14, ranksep: 50, edgesep: 8, marginx: 16, marginy: compound ? 34 : 16,
      ranker: m.nodes.length > bigRank ? fastRanker : "network-simplex" });
    g.setDefaultEdgeLabel(() => ({}));
    for (const c of m.clusters) g.setNode(c.id, { label: c.name });
    for (const c of m.clusters) if (c.parent) g.setParent(c.id, c.parent);
    for (const n of m.nodes) {
      g.setNode(n.id, { width: W, height: n.h });
      if (n.cluster) g.setParent(n.id, n.cluster);
    }
    for (const e of m.edges) g.setEdge(e.from, e.to, { minlen: e.minlen || 1, weight: e.cls === "edge" ? 1 : 2 });
    dagre.layout(g, { constraints: m.order }); // eslint-disable-line no-undef
    const pos = new Map();
    for (const id of g.nodes()) {
      const v = g.node(id);
      pos.set(id, { x: v.x - v.width / 2, y: v.y - v.height / 2, w: v.width, h: v.height });
    }
    const routes = m.edges.map((e) => (g.edge(e.from, e.to) || {}).points || []);
    const gl = g.graph();
    return { pos, routes, width: gl.width || 0, height: gl.height || 0 };
  }

  // layouts keeps the last few layouts by their model's key: going back to
  // a run, or closing a map one opened, draws at once.
  const layouts = new Map();
  function cached(m) {
    let L = layouts.get(m.key);
    if (!L) {
      try {
        L = layout(m);
      } catch (e) { // a layout dagre cannot make with groups: the same without them
        console.error("kiln graph: laying out without groups:", e);
        L = layout(Object.assign({}, m, { clusters: [], order: [], nodes: m.nodes.map((n) => Object.assign({}, n, { cluster: null })) }));
      }
      layouts.set(m.key, L);
      if (layouts.size > 8) layouts.delete(layouts.keys().next().value);
    }
    layouts.delete(m.key); // the most recent last
    layouts.set(m.key, L);
    return L;
  }

  // curve is a smooth path through points (a B-spline, as d3's curveBasis).
  function curve(p) {
    if (!p.length) return "";
    const f = (v) => Math.round(v * 10) / 10;
    let d = `M${f(p[0].x)},${f(p[0].y)}`;
    if (p.length < 3) return d + p.slice(1).map((q) => `L${f(q.x)},${f(q.y)}`).join("");
    let x0 = p[0].x, y0 = p[0].y, x1 = p[1].x, y1 = p[1].y;
    d += `L${f((5 * x0 + x1) / 6)},${f((5 * y0 + y1) / 6)}`;
    const bez = (x, y) => `C${f((2 * x0 + x1) / 3)},${f((2 * y0 + y1) / 3)} ${f((x0 + 2 * x1) / 3)},${f((y0 + 2 * y1) / 3)} ${f((x0 + 4 * x1 + x) / 6)},${f((y0 + 4 * y1 + y) / 6)}`;
    for (const q of p.slice(2)) {
      d += bez(q.x, q.y);
      [x0, y0, x1, y1] = [x1, y1, q.x, q.y];
    }
    return d + bez(x1, y1) + `L${f(x1)},${f(y1)}`;
  }

  // ---- drawing ----

  // nodeEl draws node n at p (its box, label, second line, lanes and, on a
  // group, the stack behind and the open/close button), unstyled.
  function nodeEl(n, p) {
    if (n.more) {
      return mk("g", { class: "more", "data-more": n.more, "data-count": n.count, transform: `translate(${p.x},${p.y})` },
        mk("rect", { width: W, height: H }), mk("text", { x: W / 2, y: 25, "text-anchor": "middle" }, n.label));
    }
    if (n.row) {
      return mk("g", { class: "more row" + (n.open ? " open" : ""), "data-row": n.row, "data-count": n.count, transform: `translate(${p.x},${p.y})` },
        mk("rect", { width: W, height: H }), mk("text", { x: W / 2, y: n.open ? 25 : 17, "text-anchor": "middle" }, n.label),
        mk("text", { class: "sub", x: W / 2, y: 33, "text-anchor": "middle" }));
    }
    const g = mk("g", { class: "node", "data-name": n.name, transform: `translate(${p.x},${p.y})` });
    const full = (n.train ? "⚙ " : "") + n.label;
    if (n.group) g.append(mk("rect", { class: "stack", x: 4, y: -4, width: W, height: H }));
    g.append(mk("rect", { class: "box", width: W, height: H }), mk("text", { class: "label", x: 10, y: 25 }, cut(full, 19)),
      mk("text", { class: "sub", x: 10, y: 33 }));
    if (n.group && !n.header) {
      g.append(mk("g", { class: "expander", transform: `translate(${W - 16},${4})` },
        mk("circle", { cx: 6, cy: 6, r: 6 }), mk("path", { d: "M3 6H9M6 3V9" })));
    }
    return g;
  }

  // style gives node element g the look of status n: phase, colour,
  // second line, lanes. It touches only what changed.
  function style(st, run, g, n, info) {
    const fill = fills[n.phase] || "#9e9e9e";
    const sub = subtitle(n);
    const lanes = laneList(run, n);
    const cls = "node" + (n.children ? " group" : "") + (n.gate ? " gate" : "") + (lanes.length ? " federated" : "") +
      (info.open ? " open" : "") + (st.selectedEl === g ? " selected" : "");
    const key = [n.phase, sub, cls, lanes.map((s) => s.party + s.role + s.state + (s.attempt || 0) + laneText(s)).join()].join("\n");
    if (g._key === key) return;
    g._key = key;
    g.setAttribute("class", cls);
    g.setAttribute("data-phase", n.phase);
    for (const r of g.querySelectorAll(":scope > rect")) r.setAttribute("fill", fill);
    const label = g.querySelector(":scope > text.label"), line = g.querySelector(":scope > text.sub");
    label.setAttribute("y", sub ? 17 : 25);
    line.textContent = sub;
    for (const old of g.querySelectorAll(":scope > .party-lane")) old.remove();
    lanes.forEach((s, i) => {
      const y = H + 2 + i * LANE;
      const title = mk("title");
      title.textContent = laneText(s);
      g.append(mk("g", { class: "party-lane", "data-party": s.party, "data-role": s.role, "data-state": s.state, "data-attempt": s.attempt || 0 },
        title, mk("rect", { y, width: W, height: LANE - 2, fill: laneFills[s.state] || "#9e9e9e" }),
        mk("text", { x: 6, y: y + 11 }, cut(`${s.party} · ${s.role}`, 15)),
        mk("text", { class: "state", x: W - 6, y: y + 11, "text-anchor": "end" }, s.state)));
    });
  }

  // styleRow gives a folded row's node the counts of the tasks it hides.
  function styleRow(g, n, m) {
    const c = phaseCounts(n.names.map((name) => m.status.get(name) || { phase: "Pending" }));
    const line = n.open ? "" : marks.filter(([k]) => c[k]).map(([k, sign]) => `${c[k]} ${sign}`).join(" ");
    const sub = g.querySelector("text.sub");
    if (sub.textContent !== line) sub.textContent = line;
    g.dataset.counts = countWords(c);
  }

  // legend is the colour of each phase, and the sign its count has on a
  // group's node.
  function legend() {
    const box = document.createElement("div");
    box.className = "kg-legend";
    const sign = Object.fromEntries(marks.map(([k, s]) => [k, s]));
    for (const p of ["Pending", "Waiting", "Running", "Retrying", "Succeeded", "Failed", "Skipped", "Cancelled", "Suspended"]) {
      const item = document.createElement("span");
      item.dataset.phase = p;
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = fills[p];
      item.append(sw, p + (sign[p.toLowerCase()] ? " " + sign[p.toLowerCase()] : ""));
      box.append(item);
    }
    return box;
  }

  // ---- the graph object ----

  // create makes a graph in container: its buttons, the svg and a tooltip.
  // opts.onSelect(name) is called when a node is clicked (a "+N more" node
  // selects its map), opts.onExpand(name, open) when a map opens or closes.
  function create(container, opts) {
    opts = opts || {};
    const st = { container, opts, open: new Set(), key: null, view: null, els: new Map(), edges: [], m: null,
      selected: null, selectedEl: null, moved: false };
    container.classList.add("kiln-graph");
    const bar = document.createElement("div");
    bar.className = "kg-bar";
    for (const [cls, text, title] of [["kg-zoom-in", "+", "Zoom in"], ["kg-zoom-out", "−", "Zoom out"], ["kg-fit", "Fit", "Fit to screen"], ["kg-reset", "1:1", "Actual size"]]) {
      const b = document.createElement("button");
      Object.assign(b, { type: "button", className: cls, textContent: text, title });
      bar.append(b);
    }
    const tip = document.createElement("div");
    tip.className = "kg-tip";
    tip.hidden = true;
    const svg = mk("svg", { id: "dag", class: "kg-svg" },
      mk("defs", {}, mk("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto" },
        mk("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#888" }))));
    const vp = mk("g", { class: "viewport" });
    const layers = { clusters: mk("g", { class: "clusters" }), edges: mk("g", { class: "edges" }), nodes: mk("g", { class: "nodes" }) };
    vp.append(layers.clusters, layers.edges, layers.nodes);
    svg.append(vp);
    container.append(bar, legend(), svg, tip);
    Object.assign(st, { svg, vp, layers, tip, bar });
    const off = wire(st);

    const api = {
      update(run) { update(st, run); },
      select(name) { select(st, name); },
      expand(name, on) { toggle(st, name, on); },
      fit() { fit(st); },
      view() { return Object.assign({}, st.view); },
      destroy() { off(); container.replaceChildren(); container.classList.remove("kiln-graph"); },
    };
    st.api = api;
    return api;
  }

  // update draws run: laid out again when its nodes changed, else restyled.
  function update(st, run) {
    st.run = run;
    const m = model(run, st.open);
    if (m.key !== st.key) draw(st, m);
    st.m = m;
    for (const n of m.nodes) {
      const g = st.els.get(n.id);
      if (g && n.row) styleRow(g, n, m);
      else if (g && !n.more) style(st, run, g, m.status.get(n.name) || { name: n.name, phase: "Pending" }, { open: st.open.has(n.name) });
    }
    if (st.selected !== null) select(st, st.selected);
  }

  // draw lays m out and replaces the drawing in one go; the view stays
  // where one left it, or fits the drawing the first time.
  function draw(st, m) {
    const L = cached(m);
    st.key = m.key;
    st.size = { w: L.width, h: L.height };
    st.first = m.nodes.length ? L.pos.get(m.nodes[0].id) : null;
    st.pos = L.pos;
    const cl = document.createDocumentFragment(), ed = document.createDocumentFragment(), nd = document.createDocumentFragment();
    for (const c of m.clusters) {
      const p = L.pos.get(c.id);
      if (!p) continue;
      cl.append(mk("g", { class: "cluster" + (c.items ? " items" : ""), "data-cluster": c.name },
        mk("rect", { x: p.x, y: p.y - 18, width: p.w, height: p.h + 18 }),
        mk("text", { x: p.x + 8, y: p.y - 5 }, cut(c.items ? c.name + " items" : c.name, Math.max(8, Math.floor(p.w / 7))))));
    }
    st.edges = m.edges.map((e, i) => {
      const path = mk("path", { class: e.cls, d: curve(L.routes[i]), "data-from": e.from, "data-to": e.to });
      ed.append(path);
      return path;
    });
    st.els = new Map();
    st.selectedEl = null;
    for (const n of m.nodes) {
      const g = nodeEl(n, L.pos.get(n.id));
      st.els.set(n.id, g);
      nd.append(g);
    }
    st.layers.clusters.replaceChildren(cl);
    st.layers.edges.replaceChildren(ed);
    st.layers.nodes.replaceChildren(nd);
    const h = Math.max(160, Math.min(L.height + 8, Math.round(window.innerHeight * 0.7)));
    st.svg.setAttribute("height", h);
    st.svg.setAttribute("data-nodes", m.nodes.filter((n) => !n.more && !n.row).length);
    if (!st.view) {
      st.view = { x: 0, y: 0, k: 1 };
      st.fresh = true;
      if (!st.container.isConnected) requestAnimationFrame(() => firstView(st));
    }
    firstView(st);
  }

  // firstView shows a new drawing whole if it fits at half its size or
  // more, else at half size from its left, the first task half way down.
  // It runs once: later drawings keep the view.
  function firstView(st) {
    const box = st.container.getBoundingClientRect(), h = Number(st.svg.getAttribute("height"));
    if (st.fresh && box.width) {
      const k = Math.min(1, Math.max(0.5, Math.min((box.width - 4) / (st.size.w || 1), h / (st.size.h || 1))));
      // Too high to fit: the first task shows, at the left, half way down.
      const high = st.size.h * k > h && st.first;
      const y = high ? Math.max(h - st.size.h * k, Math.min(0, h / 2 - (st.first.y + st.first.h / 2) * k)) : 0;
      st.view = { x: 0, y, k };
      st.fresh = false;
    }
    apply(st);
  }

  // apply moves and scales the drawing to the view; the svg's data-zoom
  // says the scale.
  function apply(st) {
    const v = st.view;
    st.svg.dataset.zoom = Math.round(v.k * 1000) / 1000;
    st.vp.setAttribute("transform", `translate(${Math.round(v.x * 10) / 10},${Math.round(v.y * 10) / 10}) scale(${Math.round(v.k * 1000) / 1000})`);
  }

  // zoom scales the view by f around the point (cx, cy) of the svg.
  function zoom(st, f, cx, cy) {
    const v = st.view || { x: 0, y: 0, k: 1 };
    const k = Math.min(3, Math.max(0.05, v.k * f));
    st.fresh = false;
    st.view = { k, x: cx - (cx - v.x) * (k / v.k), y: cy - (cy - v.y) * (k / v.k) };
    apply(st);
  }

  // fit shows the whole drawing.
  function fit(st) {
    if (!st.size) return;
    const r = st.svg.getBoundingClientRect();
    const k = Math.min(2, (r.width - 8) / (st.size.w || 1), (r.height - 8) / (st.size.h || 1));
    st.view = { k, x: (r.width - st.size.w * k) / 2, y: (r.height - st.size.h * k) / 2 };
    st.fresh = false;
    apply(st);
  }

  // select highlights node name, or the nearest of its parents drawn, and
  // the edges that touch it; null clears the highlight.
  function select(st, name) {
    st.selected = name;
    let g = null;
    for (let at = name; at && st.m && !(g = st.els.get(at) || st.els.get(st.m.hidden.get(at))); at = (st.m.status.get(at) || {}).parent);
    if (g === st.selectedEl) return;
    if (st.selectedEl) st.selectedEl.classList.remove("selected");
    st.selectedEl = g;
    const id = g && (g.dataset.name || g.dataset.row);
    if (g) g.classList.add("selected");
    for (const e of st.edges) {
      const on = id && (e.dataset.from === id || e.dataset.to === id);
      if (on !== e.classList.contains("hl")) e.classList.toggle("hl", !!on);
    }
  }

  // toggle opens or closes map name's items and lays the drawing out again.
  function toggle(st, name, on) {
    const open = on ?? !st.open.has(name);
    if (open) st.open.add(name);
    else st.open.delete(name);
    const was = st.pos && st.pos.get(name);
    if (st.run) update(st, st.run);
    const now = st.pos && st.pos.get(name);
    if (was && now && st.view) { // the node opened stays where it was on the screen
      st.view = Object.assign({}, st.view, { x: st.view.x + (was.x - now.x) * st.view.k, y: st.view.y + (was.y - now.y) * st.view.k });
      apply(st);
    }
    if (st.opts.onExpand) st.opts.onExpand(name, open);
  }

  // wire listens for clicks, drags, the wheel, the buttons and hovering;
  // it returns what stops listening.
  function wire(st) {
    const { svg, bar, tip } = st;
    let drag = null;
    const down = (e) => {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, vx: st.view ? st.view.x : 0, vy: st.view ? st.view.y : 0, moved: false };
    };
    const move = (e) => {
      if (drag && !(e.buttons & 1)) drag = null;
      if (drag) {
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
        if (!drag.moved) svg.setPointerCapture && svg.setPointerCapture(e.pointerId);
        drag.moved = true;
        st.fresh = false;
        st.view = Object.assign({}, st.view, { x: drag.vx + dx, y: drag.vy + dy });
        apply(st);
        tip.hidden = true;
        return;
      }
      const g = e.target.closest && e.target.closest("g.node, g.more");
      if (!g) { tip.hidden = true; return; }
      const n = st.m && st.m.status.get(g.dataset.name);
      const said = n && (n.children ? countWords(n.children) : subtitle(n));
      tip.textContent = g.dataset.name ? g.dataset.name + (n ? ` · ${n.phase}` + (said ? ` · ${said}` : "") : "")
        : g.dataset.row ? (g.classList.contains("open") ? `fold the row's last ${g.dataset.count} tasks` : `${g.dataset.count} more tasks: ${g.dataset.counts}; select to show them`)
          : `${g.dataset.count} more items of ${g.dataset.more}: select it to list them`;
      const r = st.container.getBoundingClientRect();
      Object.assign(tip.style, { left: e.clientX - r.left + 12 + "px", top: e.clientY - r.top + 12 + "px" });
      tip.hidden = false;
    };
    const up = () => { setTimeout(() => { drag = null; }, 0); };
    const click = (e) => {
      if (drag && drag.moved) return;
      const ex = e.target.closest("g.expander");
      const g = e.target.closest("g.node, g.more");
      if (ex && g) toggle(st, g.dataset.name);
      else if (g && g.dataset.row) toggle(st, g.dataset.row);
      else if (g && g.dataset.more) st.opts.onSelect && st.opts.onSelect(g.dataset.more);
      else if (g) st.opts.onSelect && st.opts.onSelect(g.dataset.name);
    };
    const wheel = (e) => {
      e.preventDefault();
      const r = svg.getBoundingClientRect();
      zoom(st, Math.exp(-e.deltaY * (e.deltaMode ? 0.05 : 0.0015)), e.clientX - r.left, e.clientY - r.top);
    };
    const buttons = (e) => {
      const b = e.target.closest("button");
      if (!b) return;
      const r = svg.getBoundingClientRect();
      if (b.classList.contains("kg-zoom-in")) zoom(st, 1.25, r.width / 2, r.height / 2);
      if (b.classList.contains("kg-zoom-out")) zoom(st, 0.8, r.width / 2, r.height / 2);
      if (b.classList.contains("kg-fit")) fit(st);
      if (b.classList.contains("kg-reset")) { st.view = { x: 0, y: 0, k: 1 }; st.fresh = false; apply(st); }
    };
    const leave = () => { tip.hidden = true; };
    svg.addEventListener("pointerdown", down);
    svg.addEventListener("pointermove", move);
    svg.addEventListener("pointerup", up);
    svg.addEventListener("pointerleave", leave);
    svg.addEventListener("click", click);
    svg.addEventListener("wheel", wheel, { passive: false });
    bar.addEventListener("click", buttons);
    return () => {
      svg.removeEventListener("pointerdown", down);
      svg.removeEventListener("pointermove", move);
      svg.removeEventListener("pointerup", up);
      svg.removeEventListener("pointerleave", leave);
      svg.removeEventListener("click", click);
      svg.removeEventListener("wheel", wheel);
      bar.removeEventListener("click", buttons);
    };
  }

  // forget drops the layouts kept, so that the next drawing is laid out
  // afresh (to measure it).
  function forget() { layouts.clear(); }

  return { create, forget };
})();
