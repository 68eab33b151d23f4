// Memories: one user's memories a page at a time (oldest first), filtered by kind,
// session, agent or metadata on the server, and by text within the page shown.

import { api, userPath } from "./api.js";
import { clip, fmtNum, h, replace, time } from "./dom.js";
import { go, userHash } from "./shell.js";

const KINDS = ["episodic", "semantic", "preference", "procedural", "summary"];
const SIZES = ["20", "50", "100", "200"];

// The cursors of the pages up to this one, so "Previous" can go back; kept per filter set
// in sessionStorage, so a reload keeps the page number right.
const TRAIL_SLOT = "mnemolayer.listTrail";

function loadTrail() {
  try {
    const trail = JSON.parse(sessionStorage.getItem(TRAIL_SLOT) || "null");
    if (trail && typeof trail.filters === "string" && Array.isArray(trail.cursors)) return trail;
  } catch {
    // a damaged entry: start again
  }
  return { filters: "", cursors: [] };
}

function filterKey(p) {
  return ["kind", "session_id", "agent_id", "filters", "limit"].map((n) => p.get(n) || "").join("\u0000");
}

function row(user, m) {
  return h("tr", { dataset: { id: m.id } },
    h("td", { class: "nowrap" }, time(m.occurred_at || m.created_at)),
    h("td", {}, h("span", { class: `badge kind-${m.kind}` }, m.kind)),
    h("td", { class: "nowrap" }, m.session_id || h("span", { class: "muted" }, "—")),
    h("td", { class: "content-cell" }, h("a", { href: userHash(user, "memory", m.id) }, clip(m.content, 180)),
      m.superseded_by ? h("span", { class: "badge warn" }, "superseded") : null,
      m.pinned ? h("span", { class: "badge ok" }, "pinned") : null,
      m.archived_at ? h("span", { class: "badge warn" }, "archived") : null,
      m.merged_into ? h("span", { class: "badge warn" }, "merged") : null),
    h("td", { class: "num" }, fmtNum(m.importance, 2)));
}

export async function render({ root, route, user, live }) {
  const p = route.params;
  const kind = h("select", { id: "list-kind" },
    h("option", { value: "" }, "every kind"),
    KINDS.map((k) => h("option", { value: k, selected: p.get("kind") === k }, k)));
  const session = h("input", { id: "list-session", type: "text", placeholder: "session id", value: p.get("session_id") || "" });
  const agent = h("input", { id: "list-agent", type: "text", placeholder: "agent id", value: p.get("agent_id") || "" });
  const meta = h("input", { id: "list-filters", type: "text", placeholder: '{"source": "chat"}', value: p.get("filters") || "", title: "Metadata filter (JSON), applied by the server" });
  const text = h("input", { id: "list-text", type: "search", placeholder: "text in this page", value: p.get("text") || "" });
  const size = h("select", { id: "list-limit", title: "Page size" },
    SIZES.map((n) => h("option", { value: n, selected: (p.get("limit") || "50") === n }, `${n} a page`)));
  const form = h("form", { class: "toolbar", id: "list-form" },
    kind, session, agent, meta, text, size, h("button", { type: "submit" }, "Apply"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const q = new URLSearchParams();
    for (const [name, el] of [["kind", kind], ["session_id", session], ["agent_id", agent], ["filters", meta], ["text", text], ["limit", size]]) {
      if (el.value.trim()) q.set(name, el.value.trim());
    }
    go(`${userHash(user, "memories")}?${q}`);
  });
  const body = h("div", { id: "list-results" }, h("p", { class: "muted loading" }, "Loading…"));
  replace(root, h("h1", {}, "Memories ", h("span", { class: "muted" }, user)), form, body);

  const key = filterKey(p) + "\u0000" + user;
  let trail = loadTrail();
  if (trail.filters !== key) trail = { filters: key, cursors: [] };
  const cursor = p.get("cursor") || null;
  const at = cursor ? trail.cursors.indexOf(cursor) : -1;
  trail.cursors = cursor ? (at >= 0 ? trail.cursors.slice(0, at + 1) : [...trail.cursors, cursor]) : [];
  sessionStorage.setItem(TRAIL_SLOT, JSON.stringify(trail));

  const page = await api("GET", userPath(user, "memories"), {
    query: {
      kind: p.get("kind"), session_id: p.get("session_id"), agent_id: p.get("agent_id"),
      filters: p.get("filters"), limit: p.get("limit") || "50", cursor,
    },
  });
  if (!live()) return;
  const needle = (p.get("text") || "").toLowerCase();
  const items = needle ? page.items.filter((m) => m.content.toLowerCase().includes(needle)) : page.items;

  const pageHash = (c) => {
    const q = new URLSearchParams(p);
    if (c) q.set("cursor", c);
    else q.delete("cursor");
    return `${userHash(user, "memories")}?${q}`;
  };
  const number = trail.cursors.length + 1;
  const before = trail.cursors.length > 1 ? trail.cursors[trail.cursors.length - 2] : null;
  const pager = h("nav", { class: "pager" },
    number > 1 ? h("a", { class: "button", href: pageHash(null), id: "page-first" }, "« First") : null,
    number > 1 ? h("a", { class: "button", href: pageHash(before), id: "page-prev" }, "‹ Previous") : null,
    h("span", { class: "muted" }, `page ${number}`),
    page.next_cursor ? h("a", { class: "button", href: pageHash(page.next_cursor), id: "page-next" }, "Next ›") : null);
  const counted = needle
    ? `${items.length} of ${page.items.length} on this page contain “${p.get("text")}”`
    : `${items.length} memor${items.length === 1 ? "y" : "ies"} on this page`;
  replace(body,
    h("p", { class: "muted" }, counted),
    items.length
      ? h("table", { class: "grid", id: "memory-table" },
          h("thead", {}, h("tr", {}, ["when", "kind", "session", "content", "importance"].map((c) => h("th", {}, c)))),
          h("tbody", {}, items.map((m) => row(user, m))))
      : h("p", { class: "empty" }, "No memory here."),
    pager);
}
