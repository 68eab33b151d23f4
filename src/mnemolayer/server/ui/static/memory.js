// One memory: its content, lifecycle (why it is recalled the way it is), fields, times,
// provenance, the facts it stated and its history; pinning, archiving and deleting it.

import { api, ApiError, userPath } from "./api.js";
import { clip, fields, fmtNum, h, replace, time } from "./dom.js";
import { lifecycleButtons, lifecycleCard } from "./lifecycle.js";
import { confirmAction, flash, go, session, showError, userHash } from "./shell.js";

function memoryLink(user, id) {
  return h("a", { href: userHash(user, "memory", id), class: "mono" }, id);
}

function idList(user, ids) {
  return ids && ids.length ? h("span", { class: "id-list" }, ids.map((id) => memoryLink(user, id))) : null;
}

/** A table of facts; the source column links the memories each fact came from (the
 * semantic record holding it, then the memories it was extracted from), except `self`. */
function factsTable(user, facts, self = null) {
  return h("table", { class: "grid facts-table" },
    h("thead", {}, h("tr", {},
      ["subject", "predicate", "object", "valid from", "valid to", "now", "confidence", "memories"]
        .map((c) => h("th", {}, c)))),
    h("tbody", {}, facts.map((f) => h("tr", { class: f.current ? "" : "past", dataset: { id: f.id } },
      h("td", {}, h("a", { href: userHash(user, "graph", f.subject) }, f.subject)),
      h("td", {}, h("code", {}, f.predicate)),
      h("td", {}, f.object_id ? h("a", { href: userHash(user, "graph", f.object) }, f.object) : f.object,
        f.date ? h("span", { class: "muted" }, ` (${f.date})`) : null),
      h("td", { class: "nowrap" }, time(f.valid_from)),
      h("td", { class: "nowrap" }, time(f.valid_to)),
      h("td", {}, f.current ? h("span", { class: "badge ok" }, "yes") : h("span", { class: "badge" }, "no")),
      h("td", { class: "num" }, fmtNum(f.confidence, 2)),
      h("td", {}, idList(user, [...new Set([f.memory_id, ...f.source_ids])].filter((id) => id && id !== self)))))));
}

function metadataChange(e) {
  if (JSON.stringify(e.old_metadata) === JSON.stringify(e.new_metadata)) return null;
  return h("details", {}, h("summary", {}, "metadata"),
    h("pre", {}, `before: ${JSON.stringify(e.old_metadata)}\nafter:  ${JSON.stringify(e.new_metadata)}`));
}

function historyTable(events) {
  if (!events.length) return h("p", { class: "muted" }, "No history events.");
  return h("table", { class: "grid", id: "history-table" },
    h("thead", {}, h("tr", {}, ["when", "event", "before", "after"].map((c) => h("th", {}, c)))),
    h("tbody", {}, events.map((e) => h("tr", { dataset: { event: e.event } },
      h("td", { class: "nowrap" }, time(e.created_at)),
      h("td", {}, h("span", { class: `badge event-${String(e.event).toLowerCase()}` }, e.event)),
      h("td", { class: "history-cell" }, e.old_content === null ? h("span", { class: "muted" }, "—") : clip(e.old_content, 300)),
      h("td", { class: "history-cell" }, e.new_content === null ? h("span", { class: "muted" }, "—") : clip(e.new_content, 300),
        metadataChange(e))))));
}

function section(title, ...body) {
  return h("section", { class: "card" }, h("h2", {}, title), ...body);
}

/** The search or list page this memory was opened from (of this user), else the list. */
function backHash(user) {
  const back = session.back;
  return back && back.startsWith(userHash(user) + "/") ? back : userHash(user, "memories");
}

async function remove(user, m) {
  const ok = await confirmAction("Delete this memory?",
    `“${clip(m.content, 120)}” will be removed from ${user}'s memories; its history keeps a DELETE event.`,
    "Delete");
  if (!ok) return;
  await api("DELETE", userPath(user, "memories", m.id));
  flash(`Deleted memory ${m.id}.`);
  go(backHash(user));
}

export async function render({ root, route, user, live }) {
  const id = route.arg || "";
  replace(root, h("p", { class: "muted loading" }, "Loading…"));
  const [got, history, facts, explained] = await Promise.allSettled([
    api("GET", userPath(user, "memories", id)),
    api("GET", userPath(user, "memories", id, "history")),
    api("GET", userPath(user, "facts"), { query: { include_history: "true" } }),
    api("GET", userPath(user, "memories", id, "explain")),
  ]);
  if (!live()) return;
  const events = history.status === "fulfilled" ? history.value.events : [];
  const gone = got.status === "rejected" && got.reason instanceof ApiError && got.reason.status === 404;
  if (got.status === "rejected" && !(gone && events.length)) throw got.reason;
  const back = h("a", { href: backHash(user), class: "button", id: "back" }, "‹ Back");
  const heading = h("h1", {}, "Memory ", h("span", { class: "mono muted small" }, id));
  const historyPart = section("History", history.status === "fulfilled" ? historyTable(events) : h("p", { class: "error-inline" }, history.reason.message));
  if (gone) {
    replace(root, heading, h("p", { class: "notice", id: "memory-gone" }, "This memory was deleted; its history remains."), back, historyPart);
    return;
  }
  const m = got.value;
  const stated = facts.status === "fulfilled"
    ? facts.value.facts.filter((f) => f.memory_id === m.id || f.source_ids.includes(m.id))
    : [];
  const del = h("button", { type: "button", class: "danger", id: "delete-memory" }, "Delete…");
  del.addEventListener("click", () => remove(user, m).catch(showError));
  const lifecycle = explained.status === "fulfilled"
    ? lifecycleCard(user, m, explained.value)
    : section("Lifecycle", h("p", { class: "error-inline" }, explained.reason.message));
  replace(root,
    heading,
    h("div", { class: "actions" }, back, ...lifecycleButtons(user, m, showError), del),
    h("article", { class: "card memory-content", id: "memory-content" }, m.content),
    lifecycle,
    h("div", { class: "columns" },
      section("Details", fields([
        ["kind", h("span", { class: `badge kind-${m.kind}` }, m.kind)],
        ["user", m.user_id], ["agent", m.agent_id], ["session", m.session_id],
        ["role", m.role], ["speaker", m.speaker],
        ["importance", fmtNum(m.importance, 2)], ["recalled", `${m.access_count} time${m.access_count === 1 ? "" : "s"}`],
        ["pinned", m.pinned ? "yes" : "no"], ["session only", m.session_only ? "yes" : "no"],
        ["embedding", m.embedding_model],
      ])),
      section("Times", fields([
        ["occurred", time(m.occurred_at)], ["created", time(m.created_at)], ["updated", time(m.updated_at)],
        ["valid from", time(m.valid_from)], ["valid to", time(m.valid_to)], ["expires", time(m.expires_at)],
        ["last recalled", time(m.last_accessed_at)], ["archived", time(m.archived_at)],
      ])),
      section("Provenance", fields([
        // An episodic memory's sources are the ids of the messages it was stored from;
        // any other memory's are the memories it was derived from.
        m.kind === "episodic"
          ? ["message id", m.source_ids.length ? h("span", { class: "id-list mono" }, m.source_ids.map((id) => h("span", {}, id))) : null]
          : ["derived from", idList(user, m.source_ids)],
        ["superseded by", m.superseded_by ? memoryLink(user, m.superseded_by) : null],
        ["merged into", m.merged_into ? memoryLink(user, m.merged_into) : null],
        ["consolidated into", m.consolidated_into ? memoryLink(user, m.consolidated_into) : null],
        ["entities", m.entities.length ? h("span", { class: "id-list" }, m.entities.map((e) => h("a", { href: userHash(user, "graph", e) }, e))) : null],
      ]),
      h("h3", {}, "Metadata"),
      Object.keys(m.metadata).length ? h("pre", { class: "json" }, JSON.stringify(m.metadata, null, 2)) : h("p", { class: "muted" }, "none"))),
    section("Facts it stated", stated.length ? factsTable(user, stated, m.id) : h("p", { class: "muted" }, facts.status === "fulfilled" ? "No fact comes from this memory." : facts.reason.message)),
    historyPart);
}

export { factsTable };
