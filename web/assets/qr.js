// A QR code as an SVG element, drawn here from the module grid of the
// vendored generator (vendor/qrcode.js: qrcode-generator 2.0.4, MIT;
// vendor/README.md). Built from elements, as every page is, and with
// presentation attributes rather than style, so the page's CSP holds.
// app.js imports this module only when a TOTP enrollment starts.

import qrcode from "./vendor/qrcode.js";

const SVG = "http://www.w3.org/2000/svg";
/** Light modules around the code: the 4 the QR specification asks for. */
const QUIET_ZONE = 4;

/**
 * `text` (ASCII, such as an otpauth URI) as an SVG QR code of error
 * correction level M, `label` its accessible name.
 */
export function qrSvg(text, label) {
  const code = qrcode(0, "M");
  code.addData(text, "Byte");
  code.make();
  const count = code.getModuleCount();
  const size = count + 2 * QUIET_ZONE;
  const dark = [];
  for (let row = 0; row < count; row++) {
    for (let col = 0; col < count; col++) {
      if (code.isDark(row, col)) dark.push(`M${col + QUIET_ZONE} ${row + QUIET_ZONE}h1v1h-1z`);
    }
  }
  const svg = document.createElementNS(SVG, "svg");
  for (const [name, value] of Object.entries({
    viewBox: `0 0 ${size} ${size}`,
    width: String(size * 5),
    height: String(size * 5),
    role: "img",
    "aria-label": label,
    "shape-rendering": "crispEdges",
  })) {
    svg.setAttribute(name, value);
  }
  const background = document.createElementNS(SVG, "rect");
  for (const [name, value] of Object.entries({ width: String(size), height: String(size), fill: "#fff" })) {
    background.setAttribute(name, value);
  }
  const modules = document.createElementNS(SVG, "path");
  modules.setAttribute("d", dark.join(""));
  modules.setAttribute("fill", "#000");
  svg.append(background, modules);
  return svg;
}
