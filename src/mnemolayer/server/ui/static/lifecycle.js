// The lifecycle part of a memory's page: why it is recalled the way it is (the answer of
// GET .../memories/{id}/explain: retention, importance and its reasons, expiry, and the
// pinned / archived / merged / consolidated / superseded state), and the Pin/Unpin and
// Archive/Restore buttons.

import { api, userPath } from "./api.js";
import { fields, fmtNum, h, meter, time } from "./dom.js";
import { flash, go, userHash } from "./shell.js";

const SOURCES = {
  estimate: "estimated from the text",
  reinforced: "estimated, raised by recalls",
  fact: "set by the fact's category",
  set: "set by hand",
};

const EXPIRY = {
  record: "its own expiry",
  ttl: "its kind's default TTL",
  pinned: "never while pinned",
  none: "never",
};

function link(user, id) {
  return h("a", { href: userHash(user, "memory", id), class: "mono" }, id);
}

function days(value) {
  return `${fmtNum(value, 1)} days`;
}

/** One badge per state the memory is in, then whether search returns it. */
function stateBadges(m, e) {
  const states = [];
  if (e.pinned) states.push(["pinned", "ok", "pinned"]);
  if (m.archived_at) states.push(["archived", "warn", "archived"]);
  if (m.merged_into) states.push(["merged", "warn", "merged"]);
  if (m.consolidated_into) states.push(["consolidated", "", "consolidated"]);
  if (m.superseded_by) states.push(["superseded", "warn", "superseded"]);
  if (e.expiry.expired) states.push(["expired", "warn", "expired"]);
  states.push(e.recallable
    ? ["recallable", "ok", "recalled by search"]
    : ["suppressed", "warn", `left out of search: ${e.suppressed.join(", ")}`]);
  return h("div", { class: "state-badges", id: "memory-state" },
    states.map(([state, tone, label]) => h("span", { class: `badge ${tone}`, dataset: { state } }, label)));
}

/** Whether maintenance forgets the memory now (archives or deletes it). */
function forgetting(r, e) {
  if (r.pinned) return "never: pinned";
  if (e.will_be_forgotten === true) return h("span", { class: "badge warn", id: "forgotten" }, "by the next maintenance pass");
  if (r.below_threshold) return r.forgotten === false ? "no: faded, but important enough to keep" : "below the archive threshold";
  return "no";
}

function retentionPart(e) {
  const r = e.retention;
  const since = r.anchor === "last_accessed_at" ? "last recall" : "it happened";
  return h("div", { class: "lifecycle-part" },
    h("h3", {}, "Retention"),
    h("div", { class: "gauge", id: "retention" },
      meter(r.value, "meter big"),
      h("span", { class: "gauge-value" }, fmtNum(r.value))),
    fields([
      ["age", r.pinned ? "does not count while pinned" : `${days(r.age_days)} since ${since}`],
      ["half-life", `${days(r.half_life_days)} = ${fmtNum(r.base_half_life_days, 0)} d (${e.kind})`
        + ` × ${fmtNum(r.importance_factor, 2)} (importance) × ${fmtNum(r.reinforcement_factor, 2)} (recalls)`],
      ["archive below", fmtNum(r.archive_threshold, 2)],
      ["forgotten", forgetting(r, e)],
    ]));
}

function importancePart(e) {
  const imp = e.importance;
  const estimate = imp.estimate !== null && Math.abs(imp.estimate - imp.value) > 1e-9
    ? ` (the text alone: ${fmtNum(imp.estimate, 2)})` : "";
  return h("div", { class: "lifecycle-part" },
    h("h3", {}, "Importance"),
    h("div", { class: "gauge", id: "importance" },
      meter(imp.value, "meter big"),
      h("span", { class: "gauge-value" }, fmtNum(imp.value, 2))),
    fields([["source", `${SOURCES[imp.source] || imp.source}${estimate}`]]),
    imp.reasons.length
      ? h("ul", { class: "reasons", id: "importance-reasons" }, imp.reasons.map((r) => h("li", {}, r)))
      : h("p", { class: "muted" }, "No signal in the text."));
}

function statePart(user, m, e) {
  const ex = e.expiry;
  return h("div", { class: "lifecycle-part" },
    h("h3", {}, "State"),
    fields([
      ["pinned", e.pinned ? "yes: never fades, expires or is forgotten" : "no"],
      ["expires", ex.expires_at ? [time(ex.expires_at), ` (${EXPIRY[ex.source] || ex.source})`] : EXPIRY[ex.source] || "never"],
      ["archived", m.archived_at ? time(m.archived_at) : "no"],
      // Where its content lives on, when it does (also under Provenance).
      ...[["merged into", m.merged_into], ["consolidated into", m.consolidated_into],
        ["superseded by", m.superseded_by]].filter(([, id]) => id).map(([label, id]) => [label, link(user, id)]),
      ["session only", e.session_only ? `yes: deleted when session ${e.session_id} ends` : null],
    ].filter(([, value]) => value !== null)));
}

/** The card explaining the memory's lifecycle (`e`: its explanation). */
export function lifecycleCard(user, m, e) {
  return h("section", { class: "card", id: "lifecycle" },
    h("h2", {}, "Lifecycle"),
    stateBadges(m, e),
    h("div", { class: "lifecycle-parts" }, retentionPart(e), importancePart(e), statePart(user, m, e)),
    h("details", { class: "explain-summary" },
      h("summary", {}, "Why, in words"),
      h("ul", { id: "explanation-summary" }, e.summary.map((line) => h("li", {}, line)))));
}

async function act(button, method, path, done) {
  button.disabled = true;
  try {
    await api(method, path);
  } finally {
    button.disabled = false;
  }
  flash(done);
  go(location.hash); // the same page again, with fresh data
}

/** Pin/Unpin and Archive/Restore; errors go to `onError` (the banner). */
export function lifecycleButtons(user, m, onError) {
  const at = (what) => userPath(user, "memories", m.id, what);
  const pin = h("button", { type: "button", class: "quiet", id: "pin-memory" }, m.pinned ? "Unpin" : "Pin");
  pin.addEventListener("click", () => (m.pinned
    ? act(pin, "DELETE", at("pin"), `Unpinned memory ${m.id}: it fades again like any other.`)
    : act(pin, "PUT", at("pin"), `Pinned memory ${m.id}: it never fades, expires or is forgotten.`)
  ).catch(onError));
  const archived = Boolean(m.archived_at);
  const locked = m.pinned && !archived;
  const archive = h("button", {
    type: "button",
    class: "quiet",
    id: "archive-memory",
    disabled: locked,
    title: locked ? "A pinned memory cannot be archived: unpin it first." : null,
  }, archived ? "Restore" : "Archive");
  archive.addEventListener("click", () => (archived
    ? act(archive, "POST", at("restore"), `Restored memory ${m.id}: search finds it again.`)
    : act(archive, "POST", at("archive"), `Archived memory ${m.id}: out of search until restored.`)
  ).catch(onError));
  return [pin, archive];
}
