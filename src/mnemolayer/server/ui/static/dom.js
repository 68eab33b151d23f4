// Small DOM helpers. Text always goes in as text nodes (textContent), never as HTML:
// memory content is user data and must never be parsed as markup.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(el, props, children) {
  for (const [name, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "on") {
      for (const [event, handler] of Object.entries(value)) el.addEventListener(event, handler);
    } else if (name === "dataset") {
      Object.assign(el.dataset, value);
    } else if (name === "value" && "value" in el) {
      el.value = value;
    } else if (name === "checked" || name === "disabled" || name === "selected") {
      el[name] = Boolean(value);
    } else {
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Append children: nodes as they are, strings and numbers as text, arrays flattened. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h("a", {href: "#/x", class: "link"}, "text", otherNode). */
export function h(tag, props, ...children) {
  return fill(document.createElement(tag), props, children);
}

/** An SVG element, same shape as h(). */
export function s(tag, props, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), props, children);
}

/** Replace every child of el with children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** An ISO time as "YYYY-MM-DD HH:MM:SS UTC" (all times shown in UTC), or "—". */
export function fmtTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

/** A time element showing fmtTime(iso), the exact value as its tooltip. */
export function time(iso) {
  return iso ? h("time", { datetime: iso, title: iso }, fmtTime(iso)) : h("span", { class: "muted" }, "—");
}

/** A number with 3 decimals, "—" for null or NaN. */
export function fmtNum(value, digits = 3) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "—";
}

/** The first n characters of a text, with an ellipsis when cut. */
export function clip(text, n) {
  const str = String(text ?? "");
  return str.length > n ? str.slice(0, n - 1) + "…" : str;
}

/** A bar showing a value on [0, 1] (clamped; 0 for null or NaN). */
export function meter(value, cls = "meter") {
  const width = typeof value === "number" && Number.isFinite(value) ? Math.max(0, Math.min(1, value)) : 0;
  const fill = h("span", { class: "meter-fill" });
  fill.style.width = `${(width * 100).toFixed(1)}%`; // CSSOM, allowed under the CSP
  return h("span", { class: cls, "aria-hidden": "true" }, fill);
}

/** A definition list from [label, value] pairs (values: nodes or text). */
export function fields(pairs) {
  return h(
    "dl",
    { class: "fields" },
    pairs.map(([label, value]) => [h("dt", {}, label), h("dd", {}, value ?? "—")]),
  );
}
