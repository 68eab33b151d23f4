// The shell of the memory browser: sign-in state, the user picker, the hash router, the
// error banner and the confirmation dialog. Each page lives in its own module.

import { api, ApiError, getKey, setKey } from "./api.js";
import { h, replace } from "./dom.js";
import * as graphPage from "./graph.js";
import * as listPage from "./list.js";
import * as loginPage from "./login.js";
import * as memoryPage from "./memory.js";
import * as searchPage from "./search.js";
import {
  clearError, flash, go, rememberNext, session, showError, showFlash, userHash,
} from "./shell.js";

const USERS_SLOT = "mnemolayer.users";
const $ = (id) => document.getElementById(id);

let renderCount = 0;

// -- session --------------------------------------------------------------------------

function knownUsers() {
  const bound = session.who && Array.isArray(session.who.users) ? session.who.users : [];
  let recent = [];
  try {
    recent = JSON.parse(sessionStorage.getItem(USERS_SLOT) || "[]");
  } catch {
    recent = [];
  }
  return [...new Set([...bound, ...recent])];
}

function rememberUser(user) {
  const recent = knownUsers().filter((u) => u !== user);
  sessionStorage.setItem(USERS_SLOT, JSON.stringify([user, ...recent].slice(0, 20)));
}

/** Check the stored key (or none) with /v1/whoami; null when it is refused. */
async function whoami() {
  try {
    session.who = await api("GET", "/v1/whoami");
  } catch (err) {
    session.who = null;
    if (!(err instanceof ApiError) || err.status !== 401) throw err;
  }
  return session.who;
}

function signOut() {
  setKey(null);
  sessionStorage.removeItem(USERS_SLOT);
  session.who = null;
  session.user = null;
  go("#/login");
}

function drawTopbar(route) {
  const who = session.who;
  const signedIn = Boolean(who);
  $("topbar-controls").hidden = !signedIn;
  if (!signedIn) return;
  const options = knownUsers().map((u) => h("option", { value: u }));
  replace($("user-options"), ...options);
  $("user-input").value = session.user || "";
  const tabs = { search: "Search", memories: "Memories", graph: "Facts graph" };
  const links = Object.entries(tabs).map(([page, label]) =>
    session.user
      ? h("a", {
          href: userHash(session.user, page),
          class: route.page === page || (page === "memories" && route.page === "memory") ? "tab active" : "tab",
        }, label)
      : h("span", { class: "tab disabled" }, label));
  replace($("tabs"), ...links);
  // The operator's key belongs to no tenant: it reaches no memories to browse.
  const mode = !who.auth ? "single-user mode (no key)"
    : who.operator ? "server operator (no tenant's memories)" : `tenant ${who.tenant}`;
  const scope = who.users ? ` · users: ${who.users.join(", ")}` : "";
  replace($("who"), mode + scope + (who.admin && !who.operator ? " · admin" : ""));
  $("sign-out").hidden = !who.auth;
}

// -- routing --------------------------------------------------------------------------

function parseRoute() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [pathPart, queryPart = ""] = raw.split("?");
  const parts = pathPart.split("/").filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(queryPart);
  if (parts[0] === "login") return { page: "login", params };
  if (parts[0] === "u" && parts.length >= 2) {
    return { page: parts[2] || "search", user: parts[1], arg: parts[3], params };
  }
  return { page: "home", params };
}

const PAGES = {
  search: searchPage,
  memories: listPage,
  memory: memoryPage,
  graph: graphPage,
};

function homePage(root) {
  replace(root,
    h("section", { class: "panel narrow" },
      h("h1", {}, "Pick a user"),
      h("p", {}, "Every memory belongs to a user id. Type one in the box at the top",
        knownUsers().length ? " or pick one of these:" : "."),
      h("ul", { class: "chips" }, knownUsers().map((u) =>
        h("li", {}, h("a", { href: userHash(u, "search"), class: "chip" }, u))))));
}

async function render() {
  const count = ++renderCount;
  const route = parseRoute();
  const root = $("view");
  clearError();
  showFlash();
  // Ask /v1/whoami once per key: at start, and after the key changed (sign in or out).
  if (session.who === null && session.checked !== getKey()) {
    try {
      await whoami();
    } catch (err) {
      showError(err);
      return;
    }
    if (count !== renderCount) return;
    session.checked = getKey();
  }
  if (session.who === null && route.page !== "login") {
    if (getKey()) flash("The saved key was refused; enter it again.");
    rememberNext(location.hash);
    location.replace("#/login");
    return;
  }
  if (route.user) {
    session.user = route.user;
    rememberUser(route.user);
  }
  // Where "Back" (and a deletion) returns to from a memory: the last search or list.
  if (route.page === "search" || route.page === "memories") session.back = location.hash;
  else if (route.page !== "memory") session.back = null;
  drawTopbar(route);
  root.replaceChildren();
  document.body.dataset.page = route.page;
  const ctx = {
    root,
    route,
    user: session.user,
    who: session.who,
    live: () => count === renderCount,
  };
  if (route.page === "login") return loginPage.render(ctx);
  const page = PAGES[route.page];
  if (!page || !route.user) return homePage(root);
  try {
    await page.render(ctx);
  } catch (err) {
    if (!ctx.live()) return;
    showError(err);
    for (const waiting of root.querySelectorAll(".loading")) waiting.remove();
  }
}

function start() {
  $("user-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const user = $("user-input").value.trim();
    if (!user) return;
    const route = parseRoute();
    const page = ["search", "memories", "graph"].includes(route.page) ? route.page : "search";
    go(userHash(user, page));
  });
  $("sign-out").addEventListener("click", signOut);
  $("confirm").addEventListener("cancel", () => { $("confirm").returnValue = ""; });
  window.addEventListener("hashchange", render);
  render();
}

start();
