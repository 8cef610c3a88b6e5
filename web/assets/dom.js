// Every page is built from elements, never from HTML strings: user content
// (titles, bodies, nicknames) is only ever a text node, so a title such as
// `<img src=x onerror=alert(1)>` shows as those characters.

/** `h("a", {href: "#/"}, "text", child)`: an element; strings become text nodes. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Korean dates: 2026. 12. 2. 오후 3:04 */
export function when(iso) {
  return new Date(iso).toLocaleString("ko-KR", { dateStyle: "medium", timeStyle: "short" });
}

/**
 * A board list's date, as Korean boards write it: the time (14:05) for
 * today, the month and day (12.02) for this year, the year too (25.12.02)
 * before; the browser's local time.
 */
export function listDate(iso, now = new Date()) {
  const d = new Date(iso);
  const two = (n) => String(n).padStart(2, "0");
  if (d.toDateString() === now.toDateString()) return `${two(d.getHours())}:${two(d.getMinutes())}`;
  const day = `${two(d.getMonth() + 1)}.${two(d.getDate())}`;
  return d.getFullYear() === now.getFullYear() ? day : `${two(d.getFullYear() % 100)}.${day}`;
}
