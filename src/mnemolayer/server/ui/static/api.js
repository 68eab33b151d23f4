// The REST client of the UI: every call sends the API key (when there is one) and turns
// an error response ({"error": {"type", "message", "field"}}) into an ApiError.

const KEY_SLOT = "mnemolayer.apiKey";

/** The key typed in this tab, or null. sessionStorage: it dies with the tab. */
export function getKey() {
  return sessionStorage.getItem(KEY_SLOT);
}

export function setKey(key) {
  if (key) sessionStorage.setItem(KEY_SLOT, key);
  else sessionStorage.removeItem(KEY_SLOT);
}

/** A failed call: HTTP status (0: no answer), the server's error type, message, field. */
export class ApiError extends Error {
  constructor(status, type, message, field = null, details = []) {
    super(message);
    this.status = status;
    this.type = type;
    this.field = field;
    this.details = details;
  }
}

function url(path, query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

async function failure(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    // not JSON (a proxy's page): fall back to the status line
  }
  const err = body && body.error;
  if (err && typeof err.message === "string") {
    return new ApiError(response.status, err.type || "error", err.message, err.field || null,
      Array.isArray(err.errors) ? err.errors : []);
  }
  return new ApiError(response.status, "http_error", response.statusText || "request failed");
}

/**
 * Call the API: api("GET", "/v1/whoami"), api("POST", path, {body}), api("GET", path, {query}).
 * Resolves to the parsed JSON (null for 204); rejects with an ApiError.
 */
export async function api(method, path, { query, body, key } = {}) {
  const headers = { Accept: "application/json" };
  const token = key === undefined ? getKey() : key;
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, cache: "no-store", credentials: "omit" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(url(path, query), init);
  } catch (exc) {
    throw new ApiError(0, "network_error", `the server did not answer (${exc.message})`);
  }
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

/** The path of one user's routes: userPath("alice", "memories", id) → /v1/users/alice/memories/id. */
export function userPath(user, ...parts) {
  return ["/v1/users", user, ...parts].map((p, i) => (i === 0 ? p : encodeURIComponent(p))).join("/");
}
