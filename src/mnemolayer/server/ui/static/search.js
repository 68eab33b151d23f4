// Search: hybrid recall over one user's memories, each hit with its score breakdown.

import { api, userPath } from "./api.js";
import { clip, fmtNum, h, meter, replace, time } from "./dom.js";
import { go, userHash } from "./shell.js";

// The parts of Hit.scores (models.Hit, retrieval/search.py) in two columns: how well the
// memory matches the query, then how the ranking adjusted that. bar: a value on [0, 1]
// drawn as a bar; raw: a number on its own scale; flag: 0 or 1. Parts the server adds
// later are listed under ranking as raw numbers.
const MATCH = [
  ["relevance", "bar", "the fused relevance of the signals below, on [0, 1]"],
  ["vector_norm", "bar", "vector similarity, scaled to [0, 1] as fused"],
  ["keyword_norm", "bar", "keyword (BM25) match, scaled to [0, 1] as fused"],
  ["context", "bar", "relevance of the best neighbouring turn"],
  ["fact_key", "bar", "cosine of the memory's best current fact, when that beat its own"],
  ["vector", "raw", "raw cosine similarity"],
  ["keyword", "raw", "raw BM25 score"],
];
const RANKING = [
  ["reranked", "bar", "relevance after the importance, recency and access rerank"],
  ["importance", "bar", "the memory's importance"],
  ["recency", "bar", "decays with the memory's age"],
  ["access", "bar", "grows with how often the memory was recalled"],
  ["retention", "bar", "how well the memory is retained; scales the final score"],
  ["outdated", "flag", "yes: ranked down as no longer true"],
];

function part(scores, [name, how, help]) {
  const value = scores[name];
  const shown = how === "flag" ? (value ? "yes" : "no") : fmtNum(value);
  return h("div", { class: `part part-${how}`, title: help, dataset: { part: name } },
    h("span", { class: "part-name" }, name),
    how === "bar" ? meter(value) : h("span", { class: "meter-gap" }),
    h("span", { class: "part-value" }, shown));
}

/** The score breakdown of one hit: the final score, then each part it was made of. */
export function breakdown(hit) {
  const scores = hit.scores || {};
  const known = new Set([...MATCH, ...RANKING].map(([name]) => name).concat(["final"]));
  const extra = Object.keys(scores).filter((name) => !known.has(name)).map((name) => [name, "raw", ""]);
  const column = (title, parts) => h("div", { class: "parts-column" },
    h("div", { class: "parts-title" }, title),
    parts.filter(([name]) => name in scores).map((spec) => part(scores, spec)));
  return h("div", { class: "breakdown" },
    h("div", { class: "final", title: "the final score: the reranked relevance, scaled by retention" },
      h("span", { class: "final-label" }, "score"),
      meter(hit.score, "meter big"),
      h("span", { class: "final-value" }, fmtNum(hit.score))),
    h("div", { class: "parts" },
      column("match", MATCH),
      column("ranking", [...RANKING, ...extra])));
}

function hitItem(user, hit, rank) {
  const m = hit.memory;
  return h("li", { class: "hit card", dataset: { id: m.id } },
    h("div", { class: "hit-main" },
      h("div", { class: "hit-rank" }, `#${rank}`),
      h("a", { class: "hit-content", href: userHash(user, "memory", m.id) }, clip(m.content, 400)),
      h("div", { class: "meta" },
        h("span", { class: `badge kind-${m.kind}` }, m.kind),
        m.session_id ? h("span", {}, `session ${m.session_id}`) : null,
        m.agent_id ? h("span", {}, `agent ${m.agent_id}`) : null,
        time(m.occurred_at || m.created_at),
        m.superseded_by ? h("span", { class: "badge warn" }, "superseded") : null)),
    breakdown(hit));
}

export async function render({ root, route, user, live }) {
  const p = route.params;
  const query = p.get("q") || "";
  const input = h("input", { id: "search-query", type: "search", value: query, placeholder: "What do you want to recall?", required: true });
  const mode = h("select", { id: "search-mode", title: "How to match" },
    ["hybrid", "vector", "keyword"].map((m) => h("option", { value: m, selected: m === (p.get("mode") || "hybrid") }, m)));
  const limit = h("input", { id: "search-limit", type: "number", min: 1, max: 100, value: p.get("limit") || "10", title: "Hits" });
  const history = h("input", { id: "search-history", type: "checkbox", checked: p.get("history") === "1" });
  const form = h("form", { class: "toolbar", id: "search-form" },
    input, mode, h("label", { class: "inline" }, "hits ", limit),
    h("label", { class: "inline", title: "Also memories replaced by newer ones, ranked lower" }, history, " superseded too"),
    h("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const q = new URLSearchParams({ q: input.value.trim(), mode: mode.value, limit: limit.value });
    if (history.checked) q.set("history", "1");
    go(`${userHash(user, "search")}?${q}`);
  });
  const results = h("div", { id: "search-results" });
  replace(root, h("h1", {}, "Search ", h("span", { class: "muted" }, user)), form, results);
  if (!query) {
    input.focus();
    replace(results, h("p", { class: "muted" }, "Hits come best first; each shows its score and the parts it was made of (hover a part for its meaning)."));
    return;
  }
  replace(results, h("p", { class: "muted loading" }, "Searching…"));
  const body = { query, mode: mode.value, limit: Number(limit.value) || 10 };
  if (history.checked) body.include_history = true;
  const { hits } = await api("POST", userPath(user, "search"), { body });
  if (!live()) return;
  if (!hits.length) {
    replace(results, h("p", { class: "empty" }, `No memory of ${user} matches “${query}”.`));
    return;
  }
  replace(results,
    h("p", { class: "muted" }, `${hits.length} hit${hits.length === 1 ? "" : "s"} for “${query}”`),
    h("ol", { class: "hits" }, hits.map((hit, i) => hitItem(user, hit, i + 1))));
}
