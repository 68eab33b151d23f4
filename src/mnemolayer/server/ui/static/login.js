// The sign-in page: asks for an API key, checks it with /v1/whoami, keeps it in this tab.

import { h, replace } from "./dom.js";
import { clearError, go, session, showError, signIn, takeNext, userHash } from "./shell.js";

function landing() {
  const next = takeNext();
  if (next) return next;
  const users = session.who && session.who.users;
  return users && users.length === 1 ? userHash(users[0], "search") : "#/";
}

export function render({ root }) {
  const who = session.who;
  if (who && !who.auth) {
    replace(root, h("section", { class: "panel narrow" },
      h("h1", {}, "No key needed"),
      h("p", {}, "This server runs in single-user mode: every request acts on its one store."),
      h("a", { href: landing(), class: "button" }, "Open the memory browser")));
    return;
  }
  const input = h("input", {
    id: "api-key", name: "api-key", type: "password", autocomplete: "off", spellcheck: "false",
    placeholder: "msk_…", required: true,
  });
  const submit = h("button", { type: "submit", id: "sign-in" }, "Sign in");
  const form = h("form", { id: "login-form", class: "stack" },
    h("label", { for: "api-key" }, "API key"),
    input,
    submit);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearError();
    submit.disabled = true;
    try {
      await signIn(input.value.trim());
      go(landing());
    } catch (err) {
      showError(err);
      input.select();
    } finally {
      submit.disabled = false;
    }
  });
  replace(root, h("section", { class: "panel narrow login" },
    h("h1", {}, "mnemolayer memory browser"),
    who ? h("p", { class: "muted" }, `Signed in ${who.operator ? "as the server operator" : `to tenant ${who.tenant}`}; enter another key to switch.`) : null,
    h("p", {}, "Enter an API key (from ", h("code", {}, "mnemolayer keys create"), "). ",
      "It is kept in this browser tab only (sessionStorage) and sent as an ",
      h("code", {}, "Authorization: Bearer"), " header with every request."),
    form));
  input.focus();
}
