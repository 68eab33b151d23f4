// What every page shares: who is signed in, navigation, the error banner, one-time
// notices and the confirmation dialog.

import { api, ApiError, setKey } from "./api.js";
import { h, replace } from "./dom.js";

const $ = (id) => document.getElementById(id);

/** who: the /v1/whoami answer (null: not signed in); checked: the key whoami last
 * refused or accepted; user: the user id being browsed; back: the search or list page a
 * memory was opened from. */
export const session = { who: null, checked: undefined, user: null, back: null };

/** Navigate to a hash route; the same route again is drawn again (fresh data). */
export function go(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = hash;
}

/** The route of one user's page: userHash("alice", "memory", id) → #/u/alice/memory/id. */
export function userHash(user, ...parts) {
  return "#/" + ["u", user, ...parts].map(encodeURIComponent).join("/");
}

/** Where to go once signed in (the page that asked for a key). */
export function rememberNext(hash) {
  if (hash && !hash.startsWith("#/login")) sessionStorage.setItem("mnemolayer.next", hash);
}

/** The page remembered by rememberNext (forgotten now), or null. */
export function takeNext() {
  const hash = sessionStorage.getItem("mnemolayer.next");
  sessionStorage.removeItem("mnemolayer.next");
  return hash;
}

/** Sign in with a key: resolves when the server accepts it, rejects with its ApiError. */
export async function signIn(key) {
  session.who = await api("GET", "/v1/whoami", { key });
  setKey(key);
}

/** Show an error (an ApiError or any Error) in the banner above the page. */
export function showError(err) {
  const box = $("error");
  const parts = [];
  if (err instanceof ApiError) {
    parts.push(h("strong", { class: "error-status" }, err.status ? `${err.status} ${err.type}` : err.type));
    parts.push(" ", err.message);
    if (err.field) parts.push(" ", h("span", { class: "error-field" }, `(field: ${err.field})`));
    const more = err.details.filter((d) => d.message !== err.message || d.field !== err.field);
    if (more.length) {
      parts.push(h("ul", {}, more.map((d) => h("li", {}, d.field ? `${d.field}: ${d.message}` : d.message))));
    }
    if (err.status === 401 && session.who && session.who.auth) {
      parts.push(" ", h("a", { href: "#/login", class: "button small" }, "Enter another key"));
    }
  } else {
    parts.push(h("strong", { class: "error-status" }, "Error"), " ", String(err && err.message ? err.message : err));
  }
  replace(box, ...parts);
  box.hidden = false;
}

export function clearError() {
  $("error").hidden = true;
  $("error").replaceChildren();
}

/** A one-line notice, shown on the next page drawn. */
export function flash(text) {
  sessionStorage.setItem("mnemolayer.flash", text);
}

/** Show the pending notice (if any) and forget it. */
export function showFlash() {
  const text = sessionStorage.getItem("mnemolayer.flash");
  sessionStorage.removeItem("mnemolayer.flash");
  $("flash").hidden = !text;
  $("flash").textContent = text || "";
}

/** Ask before something that cannot be undone; resolves to true when confirmed. */
export function confirmAction(title, text, action) {
  const dialog = $("confirm");
  replace($("confirm-title"), title);
  replace($("confirm-text"), text);
  $("confirm-ok").textContent = action;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}
