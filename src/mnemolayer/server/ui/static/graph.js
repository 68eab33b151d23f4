// Facts graph: an entity, its neighbours within a few hops and the facts linking them,
// drawn as an SVG node-link view (own layout: concentric rings by hop count), with the
// facts in a table below.

import { api, userPath } from "./api.js";
import { clip, h, replace, s } from "./dom.js";
import { factsTable } from "./memory.js";
import { go, userHash } from "./shell.js";

const WIDTH = 1000;
const NODE_R = 20;
const TYPES = ["person", "place", "organization"]; // others share one colour

/**
 * The nodes and edges of a neighbors answer: entities (hops from the centre) and, for
 * facts whose object is a plain value, one value node each, a ring beyond its subject.
 */
export function buildGraph(answer) {
  const nodes = new Map();
  const add = (id, props) => { if (!nodes.has(id)) nodes.set(id, { id, ...props }); };
  add(answer.entity.id, { name: answer.entity.name, type: answer.entity.type, hops: 0, entity: true });
  for (const n of answer.neighbors) add(n.entity.id, { name: n.entity.name, type: n.entity.type, hops: n.hops, entity: true });
  const edges = new Map();
  for (const f of answer.facts) {
    const from = f.subject_id;
    if (!nodes.has(from)) add(from, { name: f.subject, type: "thing", hops: 1, entity: true });
    let to = f.object_id;
    if (!to || !nodes.has(to)) {
      to = to || `value:${from}:${f.predicate}:${f.object}`;
      add(to, { name: f.object, type: f.object_type || "value", hops: nodes.get(from).hops + 1, entity: Boolean(f.object_id) });
    }
    const key = [from, to].sort().join(" ");
    if (!edges.has(key)) edges.set(key, { from, to, facts: [] });
    edges.get(key).facts.push(f);
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()] };
}

/** Angles of n nodes evenly around the centre, symmetric about the vertical. */
function firstRing(n) {
  const gap = (2 * Math.PI) / n;
  return Array.from({ length: n }, (_, i) => -Math.PI / 2 + gap / 2 + i * gap);
}

/**
 * Angles of nodes on an outer ring, each as near as it can be to the angle it wants (that
 * of the inner nodes it links to, sorted) while at least `sep` radians from the next;
 * evenly spaced when they do not fit.
 */
function outerRing(wants, sep) {
  const n = wants.length;
  const gap = (2 * Math.PI) / n;
  const step = Math.min(gap, sep);
  const out = [];
  for (let i = 0; i < n;) {
    let j = i;
    while (j + 1 < n && Math.abs(wants[j + 1] - wants[i]) < 1e-6) j++;
    const k = j - i + 1; // nodes that want the same spot share it, fanned out around it
    for (let t = 0; t < k; t++) out.push(wants[i] + (t - (k - 1) / 2) * step);
    i = j + 1;
  }
  for (let i = 1; i < n; i++) out[i] = Math.max(out[i], out[i - 1] + step);
  if (n > 1 && out[n - 1] - out[0] > 2 * Math.PI - step) return out.map((_, i) => out[0] + i * gap);
  return out;
}

/** Place nodes on rings by hops; on each ring, near the nodes they link to inside. */
export function layout(graph) {
  const rings = new Map();
  for (const n of graph.nodes) {
    if (!rings.has(n.hops)) rings.set(n.hops, []);
    rings.get(n.hops).push(n);
  }
  // Ring radii (y; x is stretched to use the page's width): the first ring far enough
  // out for its edge labels, each ring wide enough for its nodes.
  const depth = Math.max(...rings.keys());
  const radii = [0];
  for (let k = 1; k <= depth; k++) {
    const n = (rings.get(k) || []).length;
    radii.push(Math.min(radii[k - 1] + 300, Math.max(radii[k - 1] + (k === 1 ? 150 : 120), (80 * n) / (2 * Math.PI))));
  }
  const reach = radii[radii.length - 1] || 1;
  const cx = WIDTH / 2;
  const cy = 0;
  const stretch = Math.min(1.8, (WIDTH / 2 - 90) / reach);
  const angle = new Map();
  const links = new Map(graph.nodes.map((n) => [n.id, []]));
  for (const e of graph.edges) {
    links.get(e.from).push(e.to);
    links.get(e.to).push(e.from);
  }
  for (const hops of [...rings.keys()].sort((a, b) => a - b)) {
    const ring = rings.get(hops);
    if (hops === 0) {
      ring.forEach((n, i) => { n.x = cx + i * 60; n.y = cy; angle.set(n.id, -Math.PI / 2); });
      continue;
    }
    const wanted = (n) => {
      const inner = links.get(n.id).filter((id) => angle.has(id));
      if (!inner.length) return 0;
      const sx = inner.reduce((t, id) => t + Math.cos(angle.get(id)), 0);
      const sy = inner.reduce((t, id) => t + Math.sin(angle.get(id)), 0);
      return Math.atan2(sy, sx);
    };
    ring.sort((a, b) => wanted(a) - wanted(b) || a.name.localeCompare(b.name));
    const radius = radii[hops];
    const angles = hops === 1 ? firstRing(ring.length) : outerRing(ring.map(wanted), 140 / radius);
    ring.forEach((n, i) => {
      const a = angles[i];
      angle.set(n.id, a);
      n.x = cx + radius * Math.cos(a) * stretch;
      n.y = cy + radius * Math.sin(a);
    });
  }
  placeLabels(graph);
  // Crop to the drawing: rings whose nodes all went one way leave empty bands.
  const top = Math.min(...graph.nodes.map((n) => n.y)) - 60;
  const bottom = Math.max(...graph.nodes.map((n) => n.y)) + 60;
  const extra = Math.max(0, 240 - (bottom - top)) / 2;
  return { width: WIDTH, top: top - extra, height: bottom - top + 2 * extra };
}

const SIDES = [["below", Math.PI / 2], ["above", -Math.PI / 2], ["right", 0], ["left", Math.PI]];

/** Put each node's label on the side (below, above, right, left) farthest from its edges. */
function placeLabels(graph) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const dirs = new Map(graph.nodes.map((n) => [n.id, []]));
  for (const e of graph.edges) {
    const a = byId.get(e.from);
    const b = byId.get(e.to);
    dirs.get(a.id).push(Math.atan2(b.y - a.y, b.x - a.x));
    dirs.get(b.id).push(Math.atan2(a.y - b.y, a.x - b.x));
  }
  const apart = (x, y) => Math.abs(Math.atan2(Math.sin(x - y), Math.cos(x - y)));
  for (const n of graph.nodes) {
    const edges = dirs.get(n.id);
    const clearance = (dir) => Math.min(Math.PI, ...edges.map((d) => apart(d, dir)));
    // A side label is wide and crowds the next node: take it only when clearly better.
    const score = ([side, dir]) => clearance(dir) - (side === "left" || side === "right" ? 0.6 : 0);
    n.label = SIDES.reduce((best, c) => (score(c) > score(best) ? c : best))[0];
  }
}

function typeClass(n) {
  if (!n.entity) return "node value";
  return `node ${TYPES.includes(n.type) ? n.type : "other"}`;
}

function edgeShape(e, nodes) {
  const a = nodes.get(e.from);
  const b = nodes.get(e.to);
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = Math.hypot(dx, dy) || 1;
  // Where the line meets the node's outline: a circle, or a box (the centre, a value).
  const pad = (n) => {
    const box = boxOf(n);
    if (!box) return NODE_R;
    const ux = Math.abs(dx / len) || 1e-9;
    const uy = Math.abs(dy / len) || 1e-9;
    return Math.min(box.w / 2 / ux, box.h / 2 / uy) + 1;
  };
  const current = e.facts.some((f) => f.current);
  const line = s("line", {
    x1: a.x + (dx / len) * pad(a), y1: a.y + (dy / len) * pad(a),
    x2: b.x - (dx / len) * (pad(b) + 4), y2: b.y - (dy / len) * (pad(b) + 4),
    class: current ? "edge" : "edge past", "marker-end": current ? "url(#arrow)" : "url(#arrow-past)",
  });
  const mx = (a.x + b.x) / 2;
  const my = (a.y + b.y) / 2;
  const labels = e.facts.map((f, i) => s("text", {
    x: mx, y: my + (i - (e.facts.length - 1) / 2) * 14 - 4, class: f.current ? "edge-label" : "edge-label past",
  }, f.subject_id === e.from ? f.predicate : `${f.predicate} ←`));
  return s("g", { class: "edge-group" }, s("title", {}, e.facts.map((f) => `${f.subject} ${f.predicate} ${f.object}${f.current ? "" : " (past)"}`).join("\n")), line, labels);
}

function labelShapes(n, r, label) {
  const at = {
    below: [n.x, n.y + r + 15, n.y + r + 28, ""],
    above: [n.x, n.y - r - 20, n.y - r - 7, ""],
    right: [n.x + r + 6, n.y - 1, n.y + 12, " start"],
    left: [n.x - r - 6, n.y - 1, n.y + 12, " end"],
  }[n.label || "below"];
  const [x, nameY, typeY, anchor] = at;
  return [
    s("text", { x, y: nameY, class: "node-label" + anchor }, label),
    s("text", { x, y: typeY, class: "node-type" + anchor }, n.type),
  ];
}

/** The box of a node drawn as one (the centre: its name inside; a value), else null. */
function boxOf(n) {
  const label = clip(n.name, 22);
  if (!n.entity) return { w: Math.max(40, label.length * 7 + 14), h: 22, rx: 6 };
  if (n.hops === 0) return { w: Math.max(64, label.length * 9 + 28), h: 36, rx: 18 };
  return null;
}

function nodeShape(n, hrefOf) {
  const label = clip(n.name, 22);
  const box = boxOf(n);
  const rect = () => s("rect", { x: n.x - box.w / 2, y: n.y - box.h / 2, width: box.w, height: box.h, rx: box.rx });
  if (!n.entity) {
    return s("g", { class: typeClass(n), dataset: { name: n.name } },
      s("title", {}, `${n.name} (a value)`),
      rect(),
      s("text", { x: n.x, y: n.y + 4, class: "node-label inside" }, label));
  }
  const link = (...shapes) => s("a", {
    href: hrefOf(n.name), class: typeClass(n) + (box ? " centre" : ""), dataset: { name: n.name },
  }, s("title", {}, `${n.name} (${n.type})${box ? "" : " — open its graph"}`), ...shapes);
  if (box) return link(rect(), s("text", { x: n.x, y: n.y + 5, class: "node-name" }, label));
  return link(
    s("circle", { cx: n.x, cy: n.y, r: NODE_R }),
    s("text", { x: n.x, y: n.y + 4, class: "node-initial" }, n.name.slice(0, 1).toUpperCase()),
    ...labelShapes(n, NODE_R, label));
}

/** The SVG picture of a neighbors answer. */
export function drawGraph(answer, hrefOf) {
  const graph = buildGraph(answer);
  const size = layout(graph);
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]));
  const arrow = (id, cls) => s("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
    s("path", { d: "M0,0 L10,5 L0,10 z", class: cls }));
  return s("svg", {
    id: "graph", class: "graph", viewBox: `0 ${size.top} ${size.width} ${size.height}`, role: "img",
    "aria-label": `Facts graph of ${answer.entity.name}`,
  },
  s("defs", {}, arrow("arrow", "arrow"), arrow("arrow-past", "arrow past")),
  s("g", { class: "edges" }, graph.edges.map((e) => edgeShape(e, nodes))),
  s("g", { class: "nodes" }, graph.nodes.map((n) => nodeShape(n, hrefOf))));
}

/** The key to the colours and strokes that the picture uses. */
function legend(picture) {
  const item = (cls, text) => h("span", { class: "legend-item" }, h("span", { class: `swatch ${cls}` }), text);
  const has = (selector) => picture.querySelector(selector) !== null;
  return h("div", { class: "legend" },
    item("person", "person"), item("place", "place"), item("organization", "organization"),
    item("other", "other entity"),
    has(".node.value") ? item("value", "value") : null,
    has(".edge.past") ? item("past", "no longer true") : null);
}

export async function render({ root, route, user, live }) {
  const p = route.params;
  const depthValue = p.get("depth") || "1";
  const name = h("input", { id: "graph-entity", type: "text", list: "entity-options", value: route.arg || "", placeholder: "entity name", required: true });
  const options = h("datalist", { id: "entity-options" });
  const depth = h("select", { id: "graph-depth", title: "Hops from the entity" },
    ["1", "2", "3"].map((d) => h("option", { value: d, selected: d === depthValue }, `${d} hop${d === "1" ? "" : "s"}`)));
  const history = h("input", { id: "graph-history", type: "checkbox", checked: p.get("history") === "1" });
  const hashOf = (entity, d = depth.value, hist = history.checked) => {
    const q = new URLSearchParams({ depth: d });
    if (hist) q.set("history", "1");
    return `${userHash(user, "graph", entity)}?${q}`;
  };
  const form = h("form", { class: "toolbar", id: "graph-form" }, name, options, depth,
    h("label", { class: "inline", title: "Also facts that no longer hold" }, history, " past facts too"),
    h("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (name.value.trim()) go(hashOf(name.value.trim()));
  });
  const chips = h("ul", { class: "chips", id: "entity-chips" });
  const body = h("div", { id: "graph-body" });
  replace(root, h("h1", {}, "Facts graph ", h("span", { class: "muted" }, user)), form, chips, body);

  const { entities } = await api("GET", userPath(user, "entities"));
  if (!live()) return;
  replace(options, ...entities.map((e) => h("option", { value: e.name })));
  replace(chips, ...entities.slice(0, 60).map((e) =>
    h("li", {}, h("a", { href: hashOf(e.name), class: e.name === route.arg ? "chip active" : "chip" }, e.name))));
  if (!route.arg) {
    const self = entities.find((e) => e.name === "user");
    if (self) {
      location.replace(hashOf(self.name)); // no history entry to come back to
      return;
    }
    replace(body, h("p", { class: "empty" }, entities.length ? "Pick an entity." : `No entity known for ${user} yet.`));
    return;
  }
  const withHistory = history.checked ? "true" : null;
  const answer = await api("GET", userPath(user, "entities", route.arg, "neighbors"), {
    query: { depth: depthValue, include_history: withHistory },
  });
  // The neighbours link entities only; the entity's facts with a plain value for object
  // (a job, a date, "likes beach") come from /facts and are drawn as value boxes.
  const own = await api("GET", userPath(user, "facts"), {
    query: { subject: answer.entity.name, include_history: withHistory },
  });
  if (!live()) return;
  const linked = new Set(answer.facts.map((f) => f.id));
  const facts = [...answer.facts, ...own.facts.filter((f) => !linked.has(f.id) && !f.object_id)];
  const hrefOf = (entity) => hashOf(entity, depthValue, history.checked);
  const picture = drawGraph({ ...answer, facts }, hrefOf);
  replace(body,
    h("section", { class: "card graph-card" }, picture, legend(picture)),
    h("section", { class: "card" },
      h("h2", {}, `Facts (${facts.length})`),
      facts.length ? factsTable(user, facts) : h("p", { class: "muted" }, `No fact links ${answer.entity.name} to anything yet.`)));
}
