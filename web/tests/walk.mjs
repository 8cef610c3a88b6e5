// The reference web client in a real browser (Debian's chromium, headless,
// driven by puppeteer-core): every flow of issues 29, 41, 42, 43, 44 and 45 against the real
// server on one store, with screenshots of the main pages at a phone and a
// desktop width, no console error the walk did not expect, and no serious or
// critical axe-core violation on the main pages.
//
//   node web/tests/walk.mjs   (scripts/web-test sets SERVER_BIN, CHROMIUM,
//                              STORE=sqlite|dynamodb, SCREENSHOTS,
//                              WEB_TEST_MODULES: puppeteer-core, axe-core, jsqr)

import { spawn } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { deflateSync } from "node:zlib";

// puppeteer-core and axe-core live in the cache (scripts/web-test), not beside this file.
const modules = createRequire(`${process.env.WEB_TEST_MODULES}/`);
const puppeteer = modules("puppeteer-core");
const axeSource = readFileSync(modules.resolve("axe-core/axe.min.js"), "utf8");
const axeVersion = modules("axe-core/package.json").version;
// Reads the TOTP enrollment's QR code back from what the page drew.
const jsQR = modules("jsqr");

const store = process.env.STORE || "sqlite";
// CROSS_ORIGIN=1: the page comes from another origin (a static server
// started here, as S3 + CloudFront would serve it, with config.js's
// API_ORIGIN written at deploy time and the CSP naming that origin) and
// reaches the API over CORS, as against API Gateway.
const crossOrigin = process.env.CROSS_ORIGIN === "1";
const screenshots = process.env.SCREENSHOTS || "";
const here = new URL(".", import.meta.url).pathname;
const log = (...a) => console.log(`[web-test ${store}]`, ...a);
// Edit history and edit locks: walked on both stores.
const historyOnThisStore = true;

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * The web/ folder as a static host would serve it (no API there), deployed
 * for the API at `apiOrigin`: config.js names it, and the site's policy
 * lets the page connect to it alone (docs/deploy.md, The web client).
 * Uploads go to `uploadOrigin` (an S3 bucket's, played by the walk),
 * which config.js and the policy's `connect-src` name too; images come
 * from the API's origin (its relative `/media/files/...`), which `img-src`
 * names, as server/src/web.rs writes the policy from config.js.
 */
async function startStaticSite(apiOrigin, origin, uploadOrigin) {
  const port = Number(new URL(origin).port);
  const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css" };
  const policy =
    `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: ${apiOrigin}; ` +
    `connect-src ${apiOrigin} ${uploadOrigin}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'`;
  const site = createHttpServer((request, response) => {
    const path = new URL(request.url, "http://x").pathname;
    const file = path === "/" ? "index.html" : path.slice(1);
    if (!/^(index\.html|assets\/(vendor\/)?[a-z]+\.(js|css))$/.test(file)) {
      response.writeHead(404).end();
      return;
    }
    let body = readFileSync(join(here, "..", file), "utf8");
    if (file === "assets/config.js") {
      const deployed = body
        .replace(/^export const API_ORIGIN = .*$/m, `export const API_ORIGIN = "${apiOrigin}";`)
        .replace(/^export const UPLOAD_ORIGIN = .*$/m, `export const UPLOAD_ORIGIN = "${uploadOrigin}";`);
      if (!deployed.includes(apiOrigin) || !deployed.includes(uploadOrigin)) {
        throw new Error("config.js has no API_ORIGIN or UPLOAD_ORIGIN line to set");
      }
      body = deployed;
    }
    response.writeHead(200, { "content-type": types[file.slice(file.lastIndexOf("."))], "content-security-policy": policy });
    response.end(body);
  });
  await new Promise((resolve) => site.listen(port, "127.0.0.1", resolve));
  return { site, origin };
}

/**
 * A hostile origin a link may name: it answers every request as an API
 * would (CORS open, 200 JSON) and counts them. The client must send it none.
 */
async function startAttacker() {
  const port = await freePort();
  const seen = [];
  const site = createHttpServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    response.writeHead(200, {
      "content-type": "application/json",
      "access-control-allow-origin": "*",
      "access-control-allow-headers": "*",
      "access-control-allow-methods": "*",
    });
    response.end("{}");
  });
  await new Promise((resolve) => site.listen(port, "127.0.0.1", resolve));
  return { site, seen, origin: `http://127.0.0.1:${port}` };
}

/**
 * An S3 bucket's presigned POST, played for the cross-origin walk (as
 * on AWS, where a grant names the bucket): it takes the multipart form the
 * page sends, records its parts' names in order, and hands the file on to
 * the server's own upload URL (which the walk's grant put in a field), so
 * that the server checks it as S3's event would have it checked. CORS as a
 * bucket would be configured: XMLHttpRequest's upload events need a preflight.
 */
async function startFakeS3(apiBase) {
  const port = await freePort();
  const posts = [];
  const cors = {
    "access-control-allow-origin": "*",
    "access-control-allow-methods": "POST",
    "access-control-allow-headers": "*",
  };
  const site = createHttpServer(async (request, response) => {
    if (request.method === "OPTIONS") {
      response.writeHead(204, cors).end();
      return;
    }
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    try {
      const form = await new Response(Buffer.concat(chunks), { headers: { "content-type": request.headers["content-type"] } }).formData();
      const parts = [...form.keys()];
      posts.push(parts);
      const file = form.get("file");
      const sent = await fetch(apiBase + form.get("x-walk-forward"), {
        method: "PUT",
        headers: { "content-type": form.get("Content-Type") },
        body: Buffer.from(await file.arrayBuffer()),
      });
      response.writeHead(sent.ok ? 204 : 403, cors).end();
    } catch (error) {
      posts.push([`error: ${error.message}`]);
      response.writeHead(400, cors).end();
    }
  });
  await new Promise((resolve) => site.listen(port, "127.0.0.1", resolve));
  return { site, posts, origin: `http://127.0.0.1:${port}` };
}

/** A PNG of `width` x `height` pixels of noise (big enough for several upload progress events), made here. */
function noisePng(width, height) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes) => {
    let c = 0xffffffff;
    for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(type, 4, "ascii");
    data.copy(out, 8);
    out.writeUInt32BE(crc(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  let seed = 45;
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width * 3; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      // A gradient under the noise, so the thumbnail shows something.
      rows[row + 1 + x] = ((x % 3 === 0 ? x / 3 : y) * 255) / Math.max(width, height) / 2 + (seed >> 24);
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", deflateSync(rows)), chunk("IEND", Buffer.alloc(0))]);
}

const ADMIN_ENROLL_TOKEN = "walk-admin-enroll-token";

/**
 * TOTP as an authenticator app computes it (RFC 6238: HMAC-SHA-1,
 * 6 digits, 30-second steps) from the base32 secret the page shows. The
 * server accepts each step once and one step of drift: the walk uses
 * successive steps (now, then the next) and recovery codes after that,
 * and never waits for the clock.
 */
function base32Bytes(text) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const bytes = [];
  let bits = 0;
  let value = 0;
  for (const c of text.replace(/[\s=]/g, "").toUpperCase()) {
    const index = alphabet.indexOf(c);
    if (index < 0) throw new Error(`not base32: ${text}`);
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >> bits) & 0xff);
    }
  }
  return Buffer.from(bytes);
}
function totpCode(secret, step) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac("sha1", base32Bytes(secret)).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}
const currentStep = () => Math.floor(Date.now() / 1000 / 30);
let lastTotpStep = 0;
/** The code of the first step not used yet (now, or the next while now is spent: one step ahead is accepted). */
function nextTotpCode(secret) {
  const step = Math.max(lastTotpStep + 1, currentStep());
  if (step > currentStep() + 1) throw new Error("no TOTP step left to use without waiting: use a recovery code");
  lastTotpStep = step;
  return totpCode(secret, step);
}
/** Six digits that are no code of the steps around now. */
function wrongTotpCode(secret) {
  const near = new Set([-2, -1, 0, 1, 2].map((d) => totpCode(secret, currentStep() + d)));
  let n = Number(totpCode(secret, currentStep()));
  do n = (n + 1) % 1_000_000;
  while (near.has(String(n).padStart(6, "0")));
  return String(n).padStart(6, "0");
}

async function startServer(corsOrigin) {
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    BIND: "127.0.0.1",
    DATA_DIR: mkdtempSync(join(tmpdir(), "web-test-")),
    ADMIN_USERNAMES: "admin_kim",
    // An unclaimed admin name is reserved for a signup with the token.
    ADMIN_ENROLL_TOKEN,
    MEMBER_TIER: "bcrypt:4",
    GUEST_TIER: "bcrypt:4",
    HASH_FLOOR_OVERRIDE: "1",
    // The walk makes some 90 posts and comments from one address; the login
    // limits stay at their defaults (the 429 flow needs them).
    LIMIT_CREATES_ADDRESS: "1000/10m",
    LIMIT_CREATES_MEMBER: "1000/10m",
    // Every anonymous write needs a solved challenge (at the default
    // difficulty): the browser's guest posts, comments, votes, reports and
    // signups all go through the client's proof of work, and so do the
    // walk's own anonymous writes from node (apiClient).
    POW: "always",
    RUST_LOG: "warn",
    AWS_REGION: process.env.AWS_REGION || "us-east-1",
    CORS_ORIGINS: corsOrigin || "",
  };
  if (store === "dynamodb") {
    if (!process.env.DYNAMODB_ENDPOINT) throw new Error("STORE=dynamodb needs DYNAMODB_ENDPOINT (scripts/web-test starts DynamoDB Local)");
    env.TABLE_NAME = `web-${Date.now().toString(36)}`;
  } else {
    delete env.TABLE_NAME;
    delete env.DYNAMODB_ENDPOINT;
  }
  const server = spawn(process.env.SERVER_BIN, [], { env, stdio: ["ignore", "inherit", "inherit"] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return { server, base };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the server did not start");
}

/**
 * An ALTCHA v1 challenge solved in node (the walk's own anonymous writes;
 * the browser solves its own in web/assets/pow.js): the X-Pow header.
 */
function solveInNode({ algorithm, challenge, salt, signature, maxnumber }) {
  for (let number = 0; number <= maxnumber; number++) {
    if (createHash("sha256").update(salt + number).digest("hex") === challenge) {
      return Buffer.from(JSON.stringify({ algorithm, challenge, number, salt, signature })).toString("base64");
    }
  }
  throw new Error(`no number up to ${maxnumber} solves the challenge`);
}

/**
 * `send(headers)` answers `{status, text}`; a 428 with a challenge is
 * solved and sent again (at most twice), as the web client does.
 */
async function withPow(send, headers) {
  for (let solved = 0; ; solved++) {
    const answer = await send(headers);
    const challenge = answer.status === 428 && solved < 2 ? JSON.parse(answer.text).challenge : null;
    if (!challenge) return answer;
    headers = { ...headers, "x-pow": solveInNode(challenge) };
  }
}

/** The API straight from node: to seed pages (many posts) and to change a post behind the page's back. */
function apiClient(base) {
  return async (method, path, body, token, extra = {}) => {
    const headers = { "content-type": "application/json", ...extra };
    if (token) headers.authorization = `Bearer ${token}`;
    if (method === "POST") headers["idempotency-key"] = crypto.randomUUID();
    const r = await withPow(async (h) => {
      const response = await fetch(base + path, { method, headers: h, body: body ? JSON.stringify(body) : undefined });
      return { status: response.status, text: await response.text() };
    }, headers);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.text ? JSON.parse(r.text) : null;
  };
}

/**
 * The API from another client address (a second loopback address): a guest
 * cannot vote on a post written from their own address, and every other
 * request of the walk comes from 127.0.0.1.
 */
function apiClientFrom(base, localAddress) {
  return async (method, path, body) => {
    const url = new URL(base + path);
    const headers = { "content-type": "application/json" };
    if (method === "POST") headers["idempotency-key"] = crypto.randomUUID();
    const send = (h) =>
      new Promise((resolve, reject) => {
        const sent = httpRequest(
          { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: h, localAddress },
          (response) => {
            let text = "";
            response.setEncoding("utf8");
            response.on("data", (chunk) => (text += chunk));
            response.on("end", () => resolve({ status: response.statusCode, text }));
          },
        );
        sent.on("error", reject);
        sent.end(body ? JSON.stringify(body) : undefined);
      });
    const r = await withPow(send, headers);
    if (r.status >= 300) throw new Error(`${method} ${path} from ${localAddress}: ${r.status} ${r.text}`);
    return r.text ? JSON.parse(r.text) : null;
  };
}

// The server first: a deployed static site is configured with its origin.
const corsOrigin = crossOrigin ? `http://127.0.0.1:${await freePort()}` : "";
const { server, base } = await startServer(corsOrigin);
const fakeS3 = crossOrigin ? await startFakeS3(base) : null;
const staticSite = crossOrigin ? await startStaticSite(base, corsOrigin, fakeS3.origin) : null;
const pageBase = staticSite ? staticSite.origin : base;
const attacker = await startAttacker();
log(crossOrigin ? `pages from ${pageBase}, the API at ${base} over CORS` : `pages and API at ${base}`);
const call = apiClient(base);
const callFromElsewhere = apiClientFrom(base, "127.0.0.2");
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--lang=ko-KR"],
});
const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  log(ok ? "ok  " : "FAIL", what);
};

// Console errors: any is a failure, except the browser's own "Failed to load
// resource" line for an answer a step asked for (a 403, 412 or 429 the page
// is meant to show), and a 428: with POW=always every anonymous write is
// answered one first (whether the client then solved it, each step checks).
let expected = [];
const consoleErrors = [];
async function expecting(statuses, step) {
  expected = statuses;
  try {
    await step();
  } finally {
    expected = [];
  }
}
function watch(page) {
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const text = message.text();
    const status = /status of (\d{3})/.exec(text)?.[1];
    if (status && (expected.includes(Number(status)) || status === "428")) return;
    consoleErrors.push(text);
  });
  page.on("pageerror", (error) => consoleErrors.push(`page error: ${error.message}`));
  page.on("dialog", async (dialog) => {
    consoleErrors.push(`a dialog opened (script ran?): ${dialog.message()}`);
    await dialog.dismiss();
  });
}

const page = await browser.newPage();
watch(page);
await page.setViewport({ width: 1280, height: 900 });

// Proof of work, as the browser does it: each API request that carries
// X-Pow (preflights aside), how long from each 428 to its solved retry, the
// Web Workers the page starts, and every text a live region showed (a
// recorder installed in every document before the page's own scripts).
const powRequests = [];
const powTimes = [];
const challenged = new Map();
let workers = 0;
page.on("response", (r) => {
  if (r.status() !== 428) return;
  challenged.set(`${r.request().method()} ${r.url()}`, Date.now());
  // A solution the server refused: the client's solving or its header is wrong.
  if (r.request().headers()["x-pow"]) {
    r.text().then((t) => failures.push(`a solved X-Pow was refused at ${r.url()}: ${t}`), () => {});
  }
});
page.on("request", (r) => {
  if (r.method() === "OPTIONS" || !r.headers()["x-pow"]) return;
  const at = `${r.method()} ${r.url()}`;
  powRequests.push(at);
  if (challenged.has(at)) powTimes.push(Date.now() - challenged.get(at));
  challenged.delete(at);
});
page.on("workercreated", () => workers++);
await page.evaluateOnNewDocument(() => {
  window.__liveTexts = [];
  new MutationObserver(() => {
    for (const region of document.querySelectorAll("[aria-live], [role=status], [role=alert]")) {
      const said = region.textContent.trim();
      if (said && window.__liveTexts.at(-1) !== said) window.__liveTexts.push(said);
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
});
/** Whether a live region said "확인 중" since the page loaded, then forgets what was said. */
const saidSolving = () =>
  page.evaluate(() => {
    const said = window.__liveTexts.some((t) => t.startsWith("확인 중"));
    window.__liveTexts = [];
    return said;
  });

const text = (selector) => page.$eval(selector, (e) => e.textContent);
const visit = async (hash, selector, query = "") => {
  // A fresh load each time, as a reader opening a link (the session stays:
  // sessionStorage is the tab's).
  await page.goto("about:blank");
  await page.goto(`${pageBase}/${query}${hash}`, { waitUntil: "domcontentloaded" });
  await rendered();
  if (selector) await page.waitForSelector(selector, { timeout: 10000 });
};
/** Until the page for the current address is on screen (app.js marks it). */
const rendered = () =>
  page.waitForFunction(() => document.body.dataset.route === location.hash && location.hash !== "", { timeout: 10000 });
async function fill(formId, values) {
  for (const [name, value] of Object.entries(values)) {
    const input = await page.$(`#${formId} [name=${name}]`);
    if (typeof value === "boolean") {
      const checked = await input.evaluate((e) => e.checked);
      if (checked !== value) await input.click();
    } else {
      await input.evaluate((e) => (e.value = ""));
      await input.type(value);
    }
  }
}
const submit = (formId) => page.click(`#${formId} button[type=submit]`);
const waitText = (selector, pattern, timeout = 10000) =>
  page.waitForFunction(
    (s, p) => [...document.querySelectorAll(s)].some((e) => new RegExp(p).test(e.textContent)),
    { timeout },
    selector,
    pattern,
  );
const token = () => page.evaluate(() => JSON.parse(sessionStorage.getItem("community-boards.session") || "null")?.token);

/**
 * axe-core on the page as it is (run by the DevTools protocol, which the
 * page's CSP does not govern): any violation of impact serious or critical
 * fails the walk and is printed; the others are counted.
 */
async function accessible(what) {
  await page.evaluate(axeSource);
  const { violations } = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ["violations"] }));
  const grave = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  for (const v of grave) {
    const where = v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ");
    log(`axe-core ${v.impact} ${v.id}: ${v.help} (${v.nodes.length}: ${where})`);
  }
  const minor = violations.filter((v) => !grave.includes(v)).map((v) => `${v.id} ${v.impact}`);
  check(
    grave.length === 0,
    `axe-core ${axeVersion}: no serious or critical violation on ${what}${minor.length ? ` (minor: ${minor.join(", ")})` : ""}`,
  );
}
const atPhoneWidth = async (step) => {
  await page.setViewport({ width: 390, height: 844 });
  try {
    await step();
  } finally {
    await page.setViewport({ width: 1280, height: 900 });
  }
};
/** Clicks the first element of `selector` whose text is `label`. */
async function clickText(selector, label) {
  for (const e of await page.$$(selector)) {
    if ((await e.evaluate((x) => x.textContent.trim())) === label) return e.click();
  }
  throw new Error(`no ${selector} says ${label}`);
}
const texts = (selector) => page.$$eval(selector, (es) => es.map((e) => e.textContent.trim()));
/** Signs in through the login page; `totp`: the code or recovery code its second step asks for. */
const signIn = async (username, password, nickname, totp) => {
  await page.evaluate(() => sessionStorage.clear());
  await visit("#/login", "#login");
  await fill("login", { username, password });
  if (totp) await askedForCode();
  if (totp) await fill("login", { totp });
  await submit("login");
  await waitText("nav", `${nickname} 님`);
};
/** Submits the login and waits for its code field (401 totp_required), the button free again. */
const askedForCode = () =>
  expecting([401], async () => {
    await submit("login");
    await page.waitForSelector("#login [name=totp]", { visible: true });
    await page.waitForFunction(() => !document.querySelector("#login button[type=submit]").disabled);
  });
const logOut = async () => {
  await clickText("nav button", "로그아웃");
  await waitText("nav", "로그인");
};

/**
 * The QR code an SVG on the page draws, read back: the SVG as an
 * image on a canvas (8 pixels a module), its pixels decoded by jsQR.
 */
async function readQr(selector) {
  const { size, pixels } = await page.$eval(selector, async (svg) => {
    const size = Number(svg.getAttribute("viewBox").split(" ")[2]) * 8;
    const image = new Image();
    image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(new XMLSerializer().serializeToString(svg))}`;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = size;
    const context = canvas.getContext("2d");
    context.imageSmoothingEnabled = false;
    context.drawImage(image, 0, 0, size, size);
    return { size, pixels: Array.from(context.getImageData(0, 0, size, size).data) };
  });
  return jsQR(Uint8ClampedArray.from(pixels), size, size)?.data ?? null;
}

async function shoot(name) {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  for (const [width, height, label] of [
    [1280, 900, "desktop"],
    [390, 844, "phone"],
  ]) {
    await page.setViewport({ width, height });
    await page.screenshot({ path: join(screenshots, `${name}-${label}.png`), fullPage: false });
  }
  await page.setViewport({ width: 1280, height: 900 });
}

try {
  // -- first render of an empty board, timed
  const started = Date.now();
  await visit("#/b/free", ".empty, .board-list");
  const firstRender = Date.now() - started;
  const paint = await page.evaluate(
    () => performance.getEntriesByName("first-contentful-paint")[0]?.startTime || 0,
  );
  log(`first render of the board: ${firstRender} ms (first contentful paint ${paint.toFixed(0)} ms)`);

  // -- a TOTP code computed here is RFC 6238's (its test vector: the
  // ASCII secret 12345678901234567890 at 59 s, SHA-1, truncated to 6 digits)
  check(totpCode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", 1) === "287082", "the walk's TOTP codes are RFC 6238's (its test vector)");

  // -- signup: an error beside the field it names, then success
  await visit("#/signup", "#signup");
  // The password's hint follows its length as it is typed, and asks
  // for no kinds of characters (NIST SP 800-63B-4: no composition rules).
  const passwordHintText = () => text("#signup [name=password] ~ .field-hint");
  await fill("signup", { password: "abc" });
  const shortHint = await passwordHintText();
  await fill("signup", { password: "긴 문장 하나로 만든 비밀번호" });
  const longHint = await passwordHintText();
  check(
    shortHint.includes("지금 3자") && shortHint.includes("5자 더") && longHint.includes("지금 16자") && longHint.includes("충분"),
    `the signup's password hint counts characters as they are typed (${shortHint} / ${longHint})`,
  );
  check(
    ![shortHint, longHint].some((t) => /대문자|소문자|특수|숫자|기호/.test(t)),
    "the hint asks for no uppercase, digits or symbols (no composition rules)",
  );
  await expecting([400], async () => {
    await fill("signup", { username: "kim", nickname: "김철수", password: "short" });
    await submit("signup");
    await page.waitForFunction(() => document.querySelector('#signup [data-field=password]').textContent.length > 0);
  });
  // Placed by the answer's `field`, in Korean: the English message is never shown.
  const shortPassword = await text("#signup [data-field=password]");
  check(
    shortPassword === "8자 이상 256자 이하로 입력해 주세요." && !/[a-z]{4}/.test(shortPassword),
    `a short password's Korean message is shown beside the password field, with the server's minimum (${shortPassword})`,
  );
  // The blocklist and the member's own words, each in Korean beside the field.
  await expecting([400], async () => {
    await fill("signup", { password: "qwerty123" });
    await submit("signup");
    await waitText("#signup [data-field=password]", "너무 흔한 비밀번호");
  });
  check(
    (await text("#signup [data-field=password]")).startsWith("너무 흔한 비밀번호입니다") &&
      (await text("#signup .error")) === "",
    "a blocklisted password (qwerty123) is refused in Korean beside the password field",
  );
  await expecting([400], async () => {
    await fill("signup", { nickname: "철수의비밀번호야", password: "철수의비밀번호야" });
    await submit("signup");
    await waitText("#signup [data-field=password]", "아이디나 닉네임");
  });
  check(
    (await text("#signup [data-field=password]")) === "아이디나 닉네임과 같은 비밀번호는 쓸 수 없습니다.",
    "a password equal to the nickname is refused in Korean beside the password field",
  );
  await fill("signup", { nickname: "김철수" });
  await expecting([400], async () => {
    await fill("signup", { username: "Kim!", password: "password-123" });
    await submit("signup");
    await page.waitForFunction(() => document.querySelector("#signup [data-field=username]").textContent.length > 0);
  });
  check(
    (await text("#signup [data-field=username]")).includes("아이디는") && (await text("#signup [data-field=password]")) === "",
    "a refused username is explained in Korean beside the username field only",
  );
  await fill("signup", { username: "kim" });
  await fill("signup", { password: "password-123" });
  await submit("signup");
  await waitText("nav", "김철수 님");
  check(true, "signup signs the new member in");
  check(
    powRequests.includes(`POST ${base}/members`) && (await saidSolving()),
    "the signup was answered 428, solved (확인 중 in a live region) and sent again with X-Pow",
  );
  check(!(await page.evaluate(() => location.href)).includes("token"), "no token in the URL");

  // -- a hostile link: `?api=` naming another origin, and a base URL the
  // client before v4 kept in localStorage. The token must never leave for
  // it: not on the link's page, not at sign-in, not on a later plain visit.
  const requested = [];
  page.on("request", (r) => /^https?:/.test(r.url()) && requested.push(r.url()));
  await page.evaluate((origin) => localStorage.setItem("api-base", origin), attacker.origin);
  const hostileLink = `?api=${encodeURIComponent(attacker.origin)}`;
  await visit("#/account", "#password", hostileLink);
  check((await text("main")).includes("kim"), "a hostile ?api= link's account page shows the member's own account");
  check((await page.evaluate(() => localStorage.getItem("api-base"))) === null, "a stale stored API base is removed on load");
  await page.evaluate(() => sessionStorage.clear());
  await visit("#/login", "#login", hostileLink);
  await fill("login", { username: "kim", password: "password-123" });
  await submit("login");
  await waitText("nav", "김철수 님");
  await visit("#/account", "#password");
  const leftForAttacker = requested.filter((url) => url.startsWith(attacker.origin));
  const origins = [...new Set(requested.map((url) => new URL(url).origin))];
  check(
    attacker.seen.length === 0 && leftForAttacker.length === 0,
    `no request leaves for a hostile ?api= origin (${attacker.seen.length} reached it; the page asked ${origins.join(", ")})`,
  );
  check(
    origins.every((origin) => origin === pageBase || origin === base),
    "every request goes to the page's own origin or the configured API origin",
  );

  // -- the admin page: an admin opens a board with categories where
  // only members write, then sets the rules of an existing one
  await call("POST", "/members", { username: "admin_kim", password: "password-123", nickname: "관리자" }, null, {
    "admin-enroll-token": ADMIN_ENROLL_TOKEN,
  });
  await signIn("admin_kim", "password-123", "관리자");
  await visit("#/admin", "#open-board");
  check((await texts("nav a")).includes("게시판 관리"), "an admin's bar links the admin page");

  // -- staff need TOTP (STAFF_REQUIRE_TOTP, on by default): the admin's
  // first action is refused with a link to the account page's 2단계 인증
  await expecting([403], async () => {
    await fill("open-board", { slug: "game", name: "게임 갤러리" });
    await submit("open-board");
    await waitText("#open-board .error", "2단계 인증");
  });
  check(
    (await text("#open-board .error")).startsWith("관리 기능을 쓰려면 먼저 2단계 인증(TOTP)을 켜야 합니다.") &&
      (await page.$$('#open-board .error a[href="#/account/totp"]')).length === 1,
    "staff without TOTP are refused (403 totp_required) in Korean, with a link to turn it on",
  );
  await page.click('#open-board .error a[href="#/account/totp"]');
  await page.waitForFunction(() => location.hash === "#/account/totp");
  await rendered();
  await page.waitForSelector("#totp-start");
  check(
    (await page.evaluate(() => document.activeElement?.id)) === "totp" && (await text("#totp-status")).startsWith("꺼져 있습니다"),
    "the link opens the account page at its 2단계 인증 section, which says TOTP is off",
  );
  // Enrollment asks for the password and, of a listed admin, the enroll token.
  await expecting([403], async () => {
    await fill("totp-start", { password: "password-123", enroll_token: "not-the-token" });
    await submit("totp-start");
    await waitText("#totp-start [data-field=enroll_token]", "관리자 등록 토큰이 맞지 않습니다");
  });
  check((await page.$$("#totp-qr")).length === 0, "an admin's enrollment without the deployment's enroll token starts nothing, said beside its field");
  // Enrollment: a QR code of the otpauth URI, the secret as text, a code to confirm.
  await fill("totp-start", { password: "password-123", enroll_token: ADMIN_ENROLL_TOKEN });
  await submit("totp-start");
  await page.waitForSelector("#totp-qr svg path");
  const totpSecret = (await text("#totp-secret")).replace(/\s/g, "");
  const otpauth = await page.$eval("a.otpauth", (a) => a.getAttribute("href"));
  check(
    /^[A-Z2-7]{32}$/.test(totpSecret) && otpauth.startsWith("otpauth://totp/") && otpauth.includes(`secret=${totpSecret}`),
    `enrollment shows the secret as text, in groups of four, and its otpauth URI (${otpauth.replace(totpSecret, "…")})`,
  );
  const qrModules = await page.$eval("#totp-qr svg path", (p) => (p.getAttribute("d").match(/M/g) || []).length);
  const decoded = await readQr("#totp-qr svg");
  check(
    qrModules > 200 && decoded === otpauth,
    `the QR code is drawn as an SVG (${qrModules} dark modules) and reads back as the otpauth URI (jsQR: ${decoded ? "same" : decoded})`,
  );
  check(
    (await page.$eval("#totp-qr svg", (svg) => svg.getAttribute("role") === "img" && svg.getAttribute("aria-label").length > 0)),
    "the QR code is an image with a Korean name for screen readers",
  );
  await accessible("the TOTP enrollment");
  await shoot("totp-enroll");
  await expecting([401], async () => {
    await fill("totp-confirm", { code: wrongTotpCode(totpSecret) });
    await submit("totp-confirm");
    await waitText("#totp-confirm [data-field=code]", "코드가 맞지 않습니다");
  });
  check((await page.$$("#totp-recovery")).length === 0, "a wrong code confirms nothing, said beside the code field");
  await fill("totp-confirm", { code: nextTotpCode(totpSecret) });
  await submit("totp-confirm");
  await page.waitForSelector("#totp-recovery .recovery-codes li");
  const recoveryCodes = await texts("#totp-recovery .recovery-codes li");
  check(
    recoveryCodes.length === 10 &&
      new Set(recoveryCodes).size === 10 &&
      recoveryCodes.every((c) => /^[a-z2-7]{5}-[a-z2-7]{5}$/.test(c)) &&
      (await text("#totp-recovery .warning")).includes("한 번만 보여 드립니다"),
    `the right code turns TOTP on and shows 10 recovery codes once, with a warning to save them (${recoveryCodes[0]} …)`,
  );
  // The file as the browser saves it (into a folder of the walk's own).
  const downloads = mkdtempSync(join(tmpdir(), "web-test-downloads-"));
  const devtools = await page.createCDPSession();
  await devtools.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: downloads });
  await page.click("#totp-download");
  const savedName = await page.$eval("#totp-download", (a) => a.getAttribute("download"));
  let savedText = "";
  for (let i = 0; i < 100 && !savedText; i++) {
    await new Promise((r) => setTimeout(r, 100));
    if (existsSync(join(downloads, savedName))) savedText = readFileSync(join(downloads, savedName), "utf8");
  }
  await devtools.send("Browser.setDownloadBehavior", { behavior: "default" });
  check(
    savedName.endsWith(".txt") && recoveryCodes.every((c) => savedText.includes(c)),
    `텍스트 파일로 저장 saves the ten codes as a text file (${savedName}, ${savedText.length} characters)`,
  );
  await browser.defaultBrowserContext().overridePermissions(pageBase, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
  await page.click("#totp-copy");
  await waitText("#totp-recovery .ok", "복사");
  const copied = await page.evaluate(() => navigator.clipboard.readText().catch(() => ""));
  check(
    (await text("#totp-recovery .ok")) === "복사했습니다." && recoveryCodes.every((c) => copied.includes(c)),
    "복사하기 puts the ten codes on the clipboard",
  );
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
  check(
    !stored.includes(totpSecret) && !recoveryCodes.some((c) => stored.includes(c)),
    "neither the secret nor a recovery code is kept in localStorage or sessionStorage",
  );
  await accessible("the recovery codes");
  await shoot("totp-recovery");
  await page.click("#totp-saved");
  await page.waitForSelector("#totp-remove");
  check(
    (await text("#totp-status")).startsWith("켜져 있습니다") && (await page.$$("#totp-recovery")).length === 0,
    "once saved, the codes are gone from the page and the section says TOTP is on, with its removal",
  );
  await visit("#/admin", "#open-board");
  await expecting([400], async () => {
    await fill("open-board", { slug: "game", name: "게임 갤러리", categories: "일반, 정보, 열두 자를 훌쩍 넘는 말머리", best_likes: "1" });
    await page.select("#open-board [name=dislikes]", "shown");
    await fill("open-board", { guest_writes: false });
    await submit("open-board");
    await page.waitForFunction(() => document.querySelector("#open-board [data-field=categories]").textContent.length > 0);
  });
  check(
    (await text("#open-board [data-field=categories]")).startsWith("말머리는") && (await text("#open-board [data-field=name]")) === "",
    "a category over 12 characters is refused in Korean beside the categories field",
  );
  await fill("open-board", { categories: "일반, 정보\n질문" });
  await submit("open-board");
  await page.waitForFunction(() => location.hash === "#/b/game");
  await rendered();
  const game = await call("GET", "/boards/game");
  check(
    (await text("h1")) === "게임 갤러리" &&
      game.guest_writes === false &&
      game.best_likes === 1 &&
      game.categories.join() === "일반,정보,질문",
    "the admin opens a board with three categories, best at 1 like, members only (201)",
  );
  check((await texts("nav .boards a")).some((t) => t.startsWith("게임 갤러리")), "the new board is in the board switcher");
  check((await texts(".tab-row.categories .tab")).join() === "전체,일반,정보,질문", "its list has a tab per category");
  await visit("#/admin", "#open-board");
  await fill("open-board", { slug: "free", name: "덮어쓰기" });
  await submit("open-board");
  await waitText("#open-board [data-field=slug]", "이미 있는 게시판");
  check((await call("GET", "/boards/free")).name === "free", "opening a board at an existing address is refused before any request");
  await visit("#/admin/free", "#board-settings");
  await fill("board-settings", { name: "자유게시판", description: "아무 이야기나 자유롭게 나누는 곳", categories: "일반\n정보\n질문", best_likes: "2" });
  await submit("board-settings");
  await page.waitForFunction(() => location.hash === "#/b/free");
  await rendered();
  const free = await call("GET", "/boards/free");
  check(
    (await text("h1")) === "자유게시판" && free.best_likes === 2 && free.guest_writes && free.categories.length === 3,
    "the admin changes an existing board's name, categories and best rule (200)",
  );
  // Where someone else commented, a post is locked for its author.
  await call("PUT", "/boards/qna", { name: "질문과 답변", categories: ["질문", "답변"], lock_after_comments: true }, await token());
  await call("PUT", "/boards/notice", { name: "공지사항", dislikes: "off" }, await token());
  await visit("#/admin", "#open-board");
  check((await text(".board-admin")).includes("회원만 글쓰기"), "the admin page lists each board's rules in words");
  await accessible("the admin page");
  await shoot("admin");

  // -- the login's TOTP step: the password alone asks for a code; a
  // wrong one is said beside the field; the next step's code signs in
  await logOut();
  await visit("#/login", "#login");
  check(
    (await page.$eval("#login [name=totp]", (e) => e.closest("label").hidden)),
    "the login shows no code field until the API asks for one",
  );
  await fill("login", { username: "admin_kim", password: "password-123" });
  await askedForCode();
  check(
    (await text("#login [data-field=totp]")).startsWith("2단계 인증을 켠 계정입니다") &&
      (await page.$eval("#login [name=totp]", (e) => e.closest("label").textContent)).includes("인증 앱의 6자리 코드 또는 복구 코드") &&
      (await page.evaluate(() => document.activeElement?.name)) === "totp",
    "a member with TOTP on is asked for the code (401 totp_required): the field appears, focused, with a Korean label",
  );
  await accessible("the login's code step");
  await shoot("login-totp");
  await expecting([401], async () => {
    await fill("login", { totp: wrongTotpCode(totpSecret) });
    await submit("login");
    await waitText("#login [data-field=totp]", "코드가 맞지 않습니다");
  });
  check(
    (await text("#login .error")) === "" && !(await token()),
    "a wrong code is refused, said beside the code field (not as a wrong password)",
  );
  await fill("login", { totp: nextTotpCode(totpSecret) });
  await submit("login");
  await waitText("nav", "관리자 님");
  await visit("#/account", "#totp-status");
  check(
    (await text("#totp-status")).startsWith("켜져 있습니다"),
    "the app's next code signs in, and the account page knows TOTP is on",
  );
  // A recovery code signs in once.
  await logOut();
  await signIn("admin_kim", "password-123", "관리자", recoveryCodes[0].toUpperCase());
  const reused = await fetch(`${base}/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin_kim", password: "password-123", totp: recoveryCodes[0] }),
  });
  check(reused.status === 401, "a recovery code signs in (typed in any case), once: its second use is refused");

  // -- a login whose password the API warns about (made up in the
  // browser: a new password on the blocklist is refused, so no member of
  // the walk has one): a Korean notice with a way to change it
  await page.evaluate(() => sessionStorage.clear());
  const warn = async (request) => {
    if (request.isInterceptResolutionHandled()) return;
    if (request.method() === "POST" && request.url() === `${base}/sessions`) {
      const real = await fetch(`${base}/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: request.postData() });
      const session = { ...(await real.json()), password_warning: "too_common" };
      request.respond({
        status: real.status,
        headers: { "access-control-allow-origin": pageBase },
        contentType: "application/json",
        body: JSON.stringify(session),
      });
      return;
    }
    request.continue();
  };
  await page.setRequestInterception(true);
  page.on("request", warn);
  await signIn("kim", "password-123", "김철수");
  // The page it lands on first: a request paused after the handler leaves would wait forever.
  await page.waitForSelector("#password-warning");
  await rendered();
  page.off("request", warn);
  await page.setRequestInterception(false);
  check(
    (await text("#password-warning")).startsWith("이 비밀번호는 유출되었거나 너무 흔한 비밀번호입니다") &&
      (await page.$$('#password-warning a[href="#/account"]')).length === 1,
    "a login's password_warning (too_common) is said in Korean on the next page, with a link to change the password",
  );
  await visit("#/b/free", ".board-list, .empty");
  check((await page.$$("#password-warning")).length === 0, "the notice is shown once");

  // -- a member post with Korean text; like; comment; reply
  await visit("#/b/free/write", "#write");
  await page.select("#write [name=category]", "정보");
  await fill("write", { title: "안녕하세요, 첫 글입니다", body: "가나다라마바사 아자차카타파하. 줄바꿈이\n있는 본문입니다." });
  await submit("write");
  await page.waitForSelector("#post-body");
  check((await text("h1")) === "안녕하세요, 첫 글입니다", "the member post shows its Korean title");
  const memberPostUrl = page.url();
  const memberPostId = memberPostUrl.split("/p/")[1];
  const memberPostNumber = (await call("GET", `/boards/free/posts/${memberPostId}`)).number;
  check(
    (await text(".post-number")) === `${memberPostNumber}번 글` && (await text("#post-category")) === "[정보]",
    `the post shows its number and category (${await text(".post-number")} ${await text("#post-category")})`,
  );
  check(
    await page.$$eval(".vote", (bs) => bs.length === 2 && bs.every((b) => b.disabled)),
    "a member's own post offers no vote (추천 and 비추천 disabled)",
  );
  await page.click(".post-number");
  await page.waitForFunction(() => location.hash.includes("/n/"));
  await rendered();
  check((await text("h1")) === "안녕하세요, 첫 글입니다", "the post's number links to it (GET .../posts/by-number/{number})");
  await page.goto(memberPostUrl);
  await rendered();
  await fill("comment", { body: "첫 댓글" });
  await submit("comment");
  await waitText(".comment .text", "첫 댓글");
  await page.click(".comment .comment-actions button");
  await page.waitForSelector("form[id^=reply-]");
  const replyForm = await page.$eval("form[id^=reply-]", (f) => f.id);
  await fill(replyForm, { body: "답글입니다" });
  await submit(replyForm);
  await waitText(".replies .text", "답글입니다");
  check(true, "a reply shows under its comment");
  // A member deletes their own reply, then a post of theirs.
  const replyDelete = await page.$$(".replies .comment-actions button");
  for (const b of replyDelete) if ((await b.evaluate((e) => e.textContent)) === "삭제") await b.click();
  await page.waitForFunction(() => !document.querySelector(".replies .comment"));
  check(true, "a member deletes their own comment");
  await visit("#/b/free/write", "#write");
  await fill("write", { title: "곧 지울 글", body: "지울 본문" });
  await submit("write");
  await page.waitForSelector("#post-body");
  const doomed = await page.$$(".actions button");
  for (const b of doomed) if ((await b.evaluate((e) => e.textContent)) === "지우기") await b.click();
  await page.waitForFunction(() => location.hash === "#/b/free");
  await rendered();
  check(!(await text("main")).includes("곧 지울 글"), "a member deletes their own post");

  // -- 412: the post changes behind the edit page's back
  await visit(`#/b/free/p/${memberPostId}/edit`, "#edit");
  await call("PUT", `/boards/free/posts/${memberPostId}`, { title: "다른 곳에서 고친 제목", body: "다른 내용" }, await token());
  await expecting([412], async () => {
    await fill("edit", { title: "내가 고친 제목" });
    await submit("edit");
    await waitText("#edit .error", "다른 사람이 그사이");
  });
  check(true, "an edit of a changed post says someone changed it (412)");
  await visit(`#/b/free/p/${memberPostId}/edit`, "#edit");
  await fill("edit", { title: "안녕하세요, 고친 글입니다" });
  await submit("edit");
  await page.waitForSelector("#post-body");
  await waitText("h1", "고친 글입니다");
  check(true, "the member edits the post again from its new version");

  // -- edit history: a post edited once says 수정됨 by its date, which
  // opens the version the edit replaced (as text); on another board than
  // free, whose pages the walk counts later
  await visit("#/b/notice/write", "#write");
  const firstBody = "고치기 전 본문 <b>굵게</b>\n둘째 줄";
  await fill("write", { title: "고치기 전 제목", body: firstBody });
  await submit("write");
  await page.waitForSelector("#post-body");
  const editedId = page.url().split("/p/")[1];
  check((await page.$$(".meta .edited")).length === 0, "a post never edited says nothing of edits");
  await visit(`#/b/notice/p/${editedId}/edit`, "#edit");
  await fill("edit", { title: "고친 뒤 제목", body: "고친 뒤 본문" });
  await submit("edit");
  await waitText("#post-body", "고친 뒤 본문");
  if (historyOnThisStore) {
    await page.waitForSelector(".meta .edited");
    check(
      (await text(".meta .edited")) === "수정됨" && (await page.$eval("#revisions", (e) => e.hidden)),
      "an edited post says 수정됨 by its date, its history closed",
    );
    await page.click(".meta .edited");
    await page.waitForSelector("#revisions .revision");
    const revisions = await page.$$eval("#revisions .revision", (items) =>
      items.map((li) => ({
        title: li.querySelector(".revision-title").textContent,
        body: li.querySelector(".revision-body").textContent,
        time: li.querySelector("time").getAttribute("datetime"),
        markup: li.querySelectorAll("b").length,
      })),
    );
    check(
      revisions.length === 1 &&
        revisions[0].title === "고치기 전 제목" &&
        revisions[0].body === firstBody &&
        revisions[0].markup === 0 &&
        !Number.isNaN(Date.parse(revisions[0].time)) &&
        (await page.$eval(".meta .edited", (b) => b.getAttribute("aria-expanded"))) === "true",
      `수정됨 opens one earlier version: its title, time and body as text (${JSON.stringify(revisions)})`,
    );
    await accessible("a post with its edit history open");
    await shoot("history");

    // -- a locked post: someone else commented on the author's post on a
    // board with lock_after_comments, so its edit and delete are refused (409)
    await visit("#/b/qna/write", "#write");
    check(
      (await text("main")).includes("다른 사람이 댓글을 단 글을 고치거나 지울 수 없습니다"),
      "the write page of a board with lock_after_comments says so",
    );
    await fill("write", { title: "잠길 질문", body: "답이 달리면 고칠 수 없습니다" });
    await submit("write");
    await page.waitForSelector("#post-body");
    const lockedId = page.url().split("/p/")[1];
    await call("POST", `/boards/qna/posts/${lockedId}/comments/guest`, { nickname: "답하는 손님", password: "pw-3333", body: "답입니다" });
    await visit(`#/b/qna/p/${lockedId}/edit`, "#edit");
    await expecting([409], async () => {
      await fill("edit", { title: "고치려는 질문" });
      await submit("edit");
      await waitText("#edit .error", "다른 사람이 댓글을 단 글은 고치거나 지울 수 없습니다");
    });
    check(true, "the edit of a post someone else commented on is refused beside the form in Korean (409 locked)");
    await visit(`#/b/qna/p/${lockedId}`, "#post-body");
    await expecting([409], async () => {
      await clickText(".actions button", "지우기");
      await waitText(".inline .error", "다른 사람이 댓글을 단 글은 고치거나 지울 수 없습니다");
    });
    check(
      (await call("GET", `/boards/qna/posts/${lockedId}`)).title === "잠길 질문",
      "so is its delete, and the post stays as it was",
    );
  }

  // -- images (issue 45), on the notice board (free's pages are
  // counted later): a member picks a PNG made here in the write form; its
  // progress bar fills, then the server's thumbnail shows. On the
  // cross-origin walk the grant is made S3's (a presigned POST to a bucket
  // the walk plays, named by config.js's UPLOAD_ORIGIN): the form's parts
  // go in order with the file last. A file that is not an image is refused
  // with the server's reason; an upload URL at an origin config.js does
  // not name is never sent to. Posted, the image shows in the post (lazy,
  // width and height from the API) linking to the file; the list marks the
  // post; the edit starts with it; a comment takes one.
  const imageDir = mkdtempSync(join(tmpdir(), "web-test-images-"));
  const photo = join(imageDir, "photo.png");
  writeFileSync(photo, noisePng(320, 200));
  const notImage = join(imageDir, "not-an-image.png");
  writeFileSync(notImage, "이것은 그림이 아니라 글자입니다.\n".repeat(20));
  const hostileUpload = join(imageDir, "elsewhere.png");
  writeFileSync(hostileUpload, noisePng(16, 16));
  const grantOf = async (request) => {
    const headers = {};
    for (const name of ["authorization", "content-type", "idempotency-key", "x-pow"]) {
      if (request.headers()[name]) headers[name] = request.headers()[name];
    }
    const real = await fetch(request.url(), { method: "POST", headers, body: request.postData() });
    return { status: real.status, grant: await real.json() };
  };
  const grantAnswer = (request, status, body) =>
    request.respond({ status, headers: { "access-control-allow-origin": pageBase }, contentType: "application/json", body: JSON.stringify(body) });
  // Grants of photo.png's size are made S3's (cross-origin walk); elsewhere.png's name the hostile origin.
  const photoBytes = statSync(photo).size;
  if (new Set([photo, notImage, hostileUpload].map((f) => statSync(f).size)).size !== 3) throw new Error("the walk's files must differ in size");
  const regrant = async (request) => {
    if (request.isInterceptResolutionHandled()) return;
    if (request.method() !== "POST" || !/\/boards\/[^/]+\/media$/.test(request.url())) {
      request.continue();
      return;
    }
    const declared = JSON.parse(request.postData()).bytes;
    if (declared === photoBytes && fakeS3) {
      const { status, grant } = await grantOf(request);
      const put = new URL(grant.upload.url, base);
      const fields = {
        key: `uploads/${grant.id}`,
        "Content-Type": grant.upload.headers["Content-Type"],
        policy: Buffer.from(JSON.stringify({ walk: true })).toString("base64"),
        "x-amz-algorithm": "AWS4-HMAC-SHA256",
        "x-amz-signature": "walk",
        "x-walk-forward": put.pathname + put.search,
      };
      grantAnswer(request, status, { ...grant, upload: { method: "POST", url: `${fakeS3.origin}/`, fields } });
    } else if (declared === statSync(hostileUpload).size) {
      const { status, grant } = await grantOf(request);
      grantAnswer(request, status, { ...grant, upload: { ...grant.upload, url: `${attacker.origin}/upload` } });
    } else {
      request.continue();
    }
  };
  await page.setRequestInterception(true);
  page.on("request", regrant);
  await visit("#/b/notice/write", "#write");
  const chooser = await page.$("#write input[type=file]");
  check(
    (await chooser.evaluate((e) => e.multiple && e.accept === "image/jpeg,image/png,image/gif,image/webp")) &&
      (await page.$eval("#write .media-picker label", (l) => l.control?.type === "file")),
    "the write form has a labelled file picker for the four image types, several at once",
  );
  // Every value the progress bars and the items' states take, as they take them.
  await page.evaluate(() => {
    window.__progress = [];
    window.__states = [];
    new MutationObserver((changes) => {
      for (const c of changes) {
        if (c.target.localName === "progress") window.__progress.push(Number(c.target.getAttribute("value")));
        if (c.attributeName === "data-state") window.__states.push(c.target.dataset.state);
      }
    }).observe(document.querySelector("#write"), { subtree: true, attributes: true, attributeFilter: ["value", "data-state"] });
  });
  await fill("write", { title: "사진 한 장", body: "사진을 붙인 글입니다" });
  // Sent at 128 KiB/s (DevTools' throttling), so that the bar has steps to show.
  await page.emulateNetworkConditions({ download: -1, upload: 128 * 1024, latency: 0 });
  await chooser.uploadFile(photo);
  await page.waitForSelector("#write .media-item[data-state=ready] .media-thumb img", { timeout: 30000 });
  await page.emulateNetworkConditions(null);
  await page.waitForFunction(() => {
    const img = document.querySelector("#write .media-thumb img");
    return img.complete && img.naturalWidth > 0;
  });
  const sending = await page.evaluate(() => ({ progress: window.__progress, states: window.__states }));
  check(
    sending.progress.at(-1) === 100 &&
      sending.progress.some((v) => v > 0 && v < 100) &&
      sending.progress.every((v, i) => i === 0 || v >= sending.progress[i - 1]) &&
      sending.states.join() === "sending,checking,ready" &&
      (await page.$$("#write .media-item progress")).length === 0,
    `a chosen PNG uploads with its progress bar filling to 100, then is checked, then ready (bar ${sending.progress.join(" ")}; ${sending.states.join(" → ")})`,
  );
  check(
    (await page.$eval("#write .media-thumb img", (img) => img.naturalWidth === 320 && img.alt === "photo.png 미리보기")) &&
      (await text("#write .media-item .media-status")) === "올렸습니다.",
    "the form shows the server's thumbnail (320 wide) of the uploaded image, with its name",
  );
  if (fakeS3) {
    check(
      fakeS3.posts.length === 1 &&
        fakeS3.posts[0].join() === "key,Content-Type,policy,x-amz-algorithm,x-amz-signature,x-walk-forward,file",
      `an S3 grant is sent as a multipart POST to UPLOAD_ORIGIN: every field in order, the file last (${fakeS3.posts.map((p) => p.join(" ")).join("; ")})`,
    );
  }
  await chooser.uploadFile(notImage);
  await page.waitForSelector("#write .media-item[data-state=refused]", { timeout: 30000 });
  const refusal = await text("#write .media-item[data-state=refused] .media-status");
  check(
    refusal === "이미지를 올릴 수 없습니다: the file is not an image" &&
      (await text("#write .media-note")).includes(refusal),
    `a file that is not an image is refused with the server's reason, said in the picker's status (${refusal})`,
  );
  await chooser.uploadFile(hostileUpload);
  await waitText("#write .media-item[data-state=refused] .media-status", "설정되지 않은 곳");
  check(
    attacker.seen.length === 0,
    "an upload URL at an origin config.js does not name is refused, and nothing is sent there",
  );
  await accessible("the write form with an uploaded image and two refused");
  await page.$eval("#write .media-picker", (e) => e.scrollIntoView());
  await shoot("image-upload");
  for (let left = 2; left > 0; left--) {
    await page.click("#write .media-item[data-state=refused] .media-remove");
    await page.waitForFunction((n) => document.querySelectorAll("#write .media-item[data-state=refused]").length === n - 1, {}, left);
  }
  check(
    (await page.$$("#write .media-item")).length === 1 && (await page.evaluate(() => document.activeElement?.type)) === "file",
    "빼기 takes a refused file off the form, and the focus goes back to the picker",
  );
  page.off("request", regrant);
  await page.setRequestInterception(false);
  await submit("write");
  await page.waitForSelector("#post-media img");
  const imagePostId = page.url().split("/p/")[1];
  const imagePost = await call("GET", `/boards/notice/posts/${imagePostId}`);
  const attached = imagePost.media?.[0];
  const shown = await page.$eval("#post-media a", (a) => {
    const img = a.querySelector("img");
    return { href: a.href, src: img.src, loading: img.getAttribute("loading"), width: img.getAttribute("width"), height: img.getAttribute("height"), alt: img.alt };
  });
  const fileUrl = attached ? new URL(attached.url, base).href : "";
  check(
    imagePost.media.length === 1 &&
      attached.width === 320 &&
      attached.height === 200 &&
      shown.src === fileUrl &&
      shown.href === fileUrl &&
      shown.loading === "lazy" &&
      shown.width === "320" &&
      shown.height === "200" &&
      shown.alt.length > 0,
    `the post shows its image: lazy, with the API's width and height, linking to the file (${JSON.stringify(shown)})`,
  );
  await page.$eval("#post-media img", (img) => img.scrollIntoView());
  await page.waitForFunction(() => document.querySelector("#post-media img").complete && document.querySelector("#post-media img").naturalWidth > 0);
  check(
    (await page.$eval("#post-media img", (img) => img.naturalWidth === 320 && img.getBoundingClientRect().width <= document.querySelector("main").clientWidth)),
    "the image loads from the media origin the policy allows, no wider than the page",
  );
  await atPhoneWidth(async () => {
    const fits = await page.$eval("#post-media img", (img) => Math.round(img.getBoundingClientRect().width / img.getBoundingClientRect().height * 10));
    check(fits === 16, `at a phone's width the image keeps its aspect (max-width 100%, height auto: ${fits / 10})`);
  });
  // A comment with one image: its picker takes one file at a time.
  const commentChooser = await page.$("#comment input[type=file]");
  check(!(await commentChooser.evaluate((e) => e.multiple)), "the comment form's picker takes one image");
  await commentChooser.uploadFile(photo);
  await page.waitForSelector("#comment .media-item[data-state=ready]", { timeout: 30000 });
  check(
    (await page.$eval("#comment input[type=file]", (e) => e.disabled)),
    "with its one image the comment's picker takes no more",
  );
  await fill("comment", { body: "댓글에도 사진" });
  await submit("comment");
  await page.waitForSelector(".comment .media img");
  const commentImage = await page.$eval(".comment .media img", (img) => ({ loading: img.getAttribute("loading"), width: img.getAttribute("width"), height: img.getAttribute("height") }));
  const apiComment = (await call("GET", `/boards/notice/posts/${imagePostId}`)).comments.find((c) => c.body === "댓글에도 사진");
  check(
    apiComment?.media?.length === 1 && commentImage.loading === "lazy" && commentImage.width === "320" && commentImage.height === "200",
    `a comment with one image shows it, lazy with its width and height (${JSON.stringify(commentImage)})`,
  );
  await accessible("a post and a comment with images");
  await page.evaluate(() => scrollTo(0, 0));
  await shoot("image-post");
  await visit("#/b/notice", ".board-list");
  const marked = await page.$eval(`.post-row[data-number="${imagePost.number}"] .subject`, (td) => {
    const mark = td.querySelector(".has-image");
    return mark && { title: mark.title, said: mark.textContent.trim() };
  });
  const unmarked = await page.$$eval(".post-row", (rows) => rows.filter((tr) => !tr.querySelector(".has-image")).length);
  check(
    marked?.title === "이미지 1개" && marked.said === "이미지 1개" && unmarked === (await page.$$(".post-row")).length - 1,
    `the board list marks the post with an image (${JSON.stringify(marked)}), and only it`,
  );
  await visit(`#/b/notice/p/${imagePostId}/edit`, "#edit");
  await page.waitForSelector("#edit .media-item[data-state=ready] .media-thumb img");
  check(
    (await page.$$("#edit .media-item")).length === 1 && (await text("#edit .media-item .media-status")) === "붙어 있습니다.",
    "the edit form starts with the post's image",
  );
  await fill("edit", { body: "사진을 붙인 글입니다 (고침)" });
  await submit("edit");
  await waitText("#post-body", "고침");
  check(
    (await call("GET", `/boards/notice/posts/${imagePostId}`)).media.map((m) => m.id).join() === attached.id,
    "an edit keeps the image the form kept",
  );
  await visit(`#/b/notice/p/${imagePostId}/edit`, "#edit");
  await page.waitForSelector("#edit .media-item .media-remove");
  await page.click("#edit .media-item .media-remove");
  await submit("edit");
  await page.waitForSelector("#post-body");
  await rendered();
  check(
    (await page.$$("#post-media")).length === 0 && (await call("GET", `/boards/notice/posts/${imagePostId}`)).media.length === 0,
    "an image taken off in the edit form leaves the post",
  );

  // -- the account page
  await visit("#/account", "#password");
  check((await text("main")).includes("안녕하세요") || (await text("main")).includes("다른 곳에서 고친 제목"), "the account page lists the member's posts");
  check(
    (await text("#totp-status")).startsWith("꺼져 있습니다") &&
      (await page.$$("#totp-start")).length === 1 &&
      !(await text("#totp")).includes("null") &&
      (await page.$eval("#totp .hint[hidden]", (p) => p.textContent)).startsWith("운영자는"),
    "a member's account page has its 2단계 인증 section: off, with the start (the staff note hidden)",
  );
  await accessible("the account page");
  await shoot("account");

  // -- sign out; a guest post titled with markup renders as text
  await page.evaluate(() => sessionStorage.clear());
  const hostile = "<img src=x onerror=alert(1)>";
  await visit("#/b/free/write", "#write");
  const powBefore = powRequests.length;
  const workersBefore = workers;
  await fill("write", { nickname: "지나가던 손님", password: "guest-pw-1", title: hostile, body: "<script>alert(2)</script> 본문" });
  await submit("write");
  await page.waitForSelector("#post-body");
  const guestPostId = page.url().split("/p/")[1];
  // Proof of work: the post was refused (428), solved in a worker and sent again.
  check(
    powRequests.slice(powBefore).join() === `POST ${base}/boards/free/posts/guest` && workers > workersBefore,
    `the guest post was sent again once with a solved X-Pow, solved in a Web Worker (${powRequests.length - powBefore} with X-Pow, ${workers - workersBefore} workers)`,
  );
  check(await saidSolving(), "while it solved, a live region said 확인 중");
  check((await text("h1")) === hostile, "a hostile title shows as its characters");
  check((await page.$$("main img")).length === 0, "no img element was made from it");
  check((await text("#post-body")).startsWith("<script>"), "a body with a script tag shows as text");
  check((await text(".author.guest .badge")).startsWith("손님 #"), "a guest post shows the guest tag");

  // -- guest comment, wrong password, right password
  const powBeforeComment = powRequests.length;
  await fill("comment", { nickname: "손님2", password: "pw-2222", body: "손님 댓글" });
  await submit("comment");
  await waitText(".comment .text", "손님 댓글");
  check(
    powRequests.slice(powBeforeComment).join() === `POST ${base}/boards/free/posts/${guestPostId}/comments/guest` &&
      (await saidSolving()),
    "a guest comment is solved (확인 중) and sent again with X-Pow",
  );
  const guestDelete = await page.$$(".comment .comment-actions button");
  for (const b of guestDelete) if ((await b.evaluate((e) => e.textContent)) === "삭제") await b.click();
  const deleteForm = ".comment .inline form";
  await page.waitForSelector(deleteForm);
  await expecting([403], async () => {
    await page.type(`${deleteForm} [name=password]`, "wrong-pw");
    await page.click(`${deleteForm} button[type=submit]`);
    await waitText(`${deleteForm} [data-field=password]`, "비밀번호가 맞지 않습니다");
  });
  check(true, "a wrong guest password says so beside the password field");
  await page.$eval(`${deleteForm} [name=password]`, (e) => (e.value = ""));
  await page.type(`${deleteForm} [name=password]`, "pw-2222");
  await page.click(`${deleteForm} button[type=submit]`);
  await page.waitForFunction(() => ![...document.querySelectorAll(".comment .text")].some((e) => e.textContent === "손님 댓글"));
  check(true, "the guest comment is deleted with its password");

  // -- guest edit with its password; it adds an image, whose grant
  // (an anonymous write) is solved first, as a guest post is
  await visit(`#/b/free/p/${guestPostId}/edit`, "#edit");
  const powBeforeImage = powRequests.length;
  await (await page.$("#edit input[type=file]")).uploadFile(photo);
  await page.waitForSelector("#edit .media-item[data-state=ready]", { timeout: 30000 });
  check(
    powRequests.slice(powBeforeImage).join() === `POST ${base}/boards/free/media` && (await saidSolving()),
    "a guest's image grant is solved (확인 중 in the picker's status) and sent again with X-Pow",
  );
  await fill("edit", { password: "guest-pw-1", body: "고친 손님 글" });
  await submit("edit");
  await waitText("#post-body", "고친 손님 글");
  check(
    (await page.$$("#post-media img")).length === 1,
    "a guest edits a post with its password (If-Match from the page), adding an image",
  );

  // -- a second guest post whose first attempt answers 503 (made up in the
  // browser): the client waits Retry-After and sends it again with the same
  // Idempotency-Key; then it is deleted with its password
  await visit("#/b/free/write", "#write");
  const keys = [];
  const shed = (request) => {
    if (request.isInterceptResolutionHandled()) return;
    if (request.method() === "POST" && request.url().endsWith("/boards/free/posts/guest")) {
      keys.push(request.headers()["idempotency-key"]);
      if (keys.length === 1) {
        request.respond({
          status: 503,
          headers: { "retry-after": "1", "access-control-allow-origin": pageBase, "access-control-expose-headers": "retry-after" },
          contentType: "application/json",
          body: JSON.stringify({ error: { code: "unavailable", message: "hashing capacity unavailable; retry later" } }),
        });
        return;
      }
    }
    request.continue();
  };
  await page.setRequestInterception(true);
  page.on("request", shed);
  await expecting([503], async () => {
    await fill("write", { nickname: "손님3", password: "guest-pw-3", title: "손님이 지울 글", body: "본문" });
    await submit("write");
    await page.waitForSelector("#post-body", { timeout: 15000 });
  });
  page.off("request", shed);
  await page.setRequestInterception(false);
  // Three attempts: the made-up 503, the server's 428, the solved one.
  check(
    keys.length === 3 && keys[0] && keys.every((k) => k === keys[0]),
    `a create answered 503 is sent again after Retry-After with the same Idempotency-Key, and again with its challenge solved (${keys.length} attempts)`,
  );
  for (const b of await page.$$(".actions button")) if ((await b.evaluate((e) => e.textContent)) === "지우기") await b.click();
  await page.waitForSelector(".inline form [name=password]");
  await page.type(".inline form [name=password]", "guest-pw-3");
  await page.click(".inline form button[type=submit]");
  await page.waitForFunction(() => location.hash === "#/b/free");
  await rendered();
  check(!(await text("main")).includes("손님이 지울 글"), "a guest deletes a post with its password");
  await visit(`#/b/free/p/${guestPostId}`, "#post-body");

  // -- report it as an anonymous reader
  const report = await page.$$(".actions button");
  for (const b of report) if ((await b.evaluate((e) => e.textContent)) === "신고") await b.click();
  await page.waitForSelector(".inline form [name=reason]");
  await page.type(".inline form [name=reason]", "스팸 같아요");
  const powBeforeReport = powRequests.length;
  await page.click(".inline form button[type=submit]");
  await waitText(".inline .ok", "신고했습니다");
  check(
    powRequests.slice(powBeforeReport).join() === `POST ${base}/boards/free/posts/${guestPostId}/reports`,
    "a reader reports a post (with a solved X-Pow)",
  );

  // -- paging: 25 more posts in categories, 55 comments on one, a guest's
  // post from another address; two members' likes make two posts 개념글
  const seed = await call("POST", "/members", { username: "seeder", password: "password-123", nickname: "씨앗" });
  const seedToken = (await call("POST", "/sessions", { username: "seeder", password: "password-123" })).token;
  const categoryOf = (i) => [null, "일반", "정보", "질문"][i % 4];
  const seeded = [];
  for (let i = 1; i <= 25; i++) {
    seeded[i] = await call("POST", "/boards/free/posts", { title: `페이지 글 ${i}`, body: "본문", category: categoryOf(i) }, seedToken);
  }
  for (let i = 1; i <= 55; i++) await call("POST", `/boards/free/posts/${memberPostId}/comments`, { body: `댓글 ${i}` }, seedToken);
  const elsewhere = await callFromElsewhere("POST", "/boards/free/posts/guest", {
    nickname: "먼 손님",
    password: "guest-pw-9",
    title: "다른 곳에서 쓴 손님 글",
    body: "추천해 주세요",
    category: "일반",
  });
  const kimToken = (await call("POST", "/sessions", { username: "kim", password: "password-123" })).token;
  const adminToken = (await call("POST", "/sessions", { username: "admin_kim", password: "password-123", totp: recoveryCodes[1] })).token;
  for (const i of [18, 25]) {
    for (const voter of [kimToken, adminToken]) await call("PUT", `/boards/free/posts/${seeded[i].id}/like`, undefined, voter);
  }
  // A few comments and likes elsewhere, as a board has (and its screenshot shows).
  for (const [i, n] of [[25, 3], [22, 1], [17, 12]]) {
    for (let k = 1; k <= n; k++) await call("POST", `/boards/free/posts/${seeded[i].id}/comments`, { body: `의견 ${k}` }, kimToken);
  }
  for (const i of [24, 21]) await call("PUT", `/boards/free/posts/${seeded[i].id}/like`, undefined, adminToken);
  check(Boolean(seed.id) && (await call("GET", `/boards/free/posts/${seeded[18].id}`)).best, "seeded 26 posts and 55 comments; two likes made two posts 개념글");
  await visit("#/b/free", ".board-list");
  check((await page.$$(".post-row")).length === 20, "a board page shows 20 posts");
  check(
    (await texts(".board-list thead th")).join() === "번호,말머리,제목,글쓴이,작성일,조회,추천",
    "the list's columns: 번호, 말머리, 제목, 글쓴이, 작성일, 조회, 추천",
  );
  const firstRow = await page.$eval(".post-row", (tr) => ({
    number: tr.querySelector(".num").textContent,
    category: tr.querySelector(".cat").textContent,
    tag: tr.querySelector(".writer .tag")?.textContent,
    date: tr.querySelector(".date").textContent,
  }));
  check(
    firstRow.number === String(elsewhere.number) && firstRow.category === "일반" && /^\([a-z2-7]{8}\)$/.test(firstRow.tag || ""),
    `the newest row shows its number, category and the guest's tag (${JSON.stringify(firstRow)})`,
  );
  check(/^\d\d:\d\d$/.test(firstRow.date), `a post of today shows its time only (${firstRow.date})`);
  const bestRow = await page.$eval(`.post-row[data-number="${seeded[25].number}"]`, (tr) => tr.className + " " + tr.querySelector(".num").textContent);
  check(bestRow.includes("best") && bestRow.includes("★"), `a 개념글 row carries its mark (${bestRow})`);
  await accessible("the board list (desktop)");
  await atPhoneWidth(() => accessible("the board list (phone)"));
  await shoot("board");
  await page.click(".pager a.next");
  await page.waitForFunction(() => /[?&]c=/.test(location.hash));
  await rendered();
  const secondPage = page.url();
  check(
    (await page.$$(".post-row")).length === 8 && (await text(".pager [aria-current]")).replace(/\D/g, "") === "2",
    "the next page shows the rest (28 in all) as page 2",
  );
  const memberRow = await page.$eval(`.post-row[data-number="${memberPostNumber}"] .subject`, (td) => td.textContent);
  check(memberRow.includes("[56]"), `a title carries its comment count (${memberRow})`);
  await page.click(".pager a.prev");
  await page.waitForFunction(() => !/[?&]c=/.test(location.hash));
  await rendered();
  check(
    (await page.$$(".post-row")).length === 20 && (await text(".pager [aria-current]")).replace(/\D/g, "") === "1",
    "previous goes back to page 1",
  );
  await page.evaluate(() => history.back());
  await page.waitForFunction(() => /[?&]c=/.test(location.hash));
  await rendered();
  check((await page.$$(".post-row")).length === 8, "the browser's back button returns to page 2");
  await visit(new URL(secondPage).hash, ".board-list");
  check(
    (await page.$$(".post-row")).length === 8 && (await text(".pager [aria-current]")).replace(/\D/g, "") === "2",
    "a reload keeps page 2 (its cursors are in the address)",
  );
  // Tabs: a category, then 개념글 within it, then every 개념글.
  await visit("#/b/free", ".board-list");
  await clickText(".tab-row.categories .tab", "정보");
  await page.waitForFunction(() => location.hash.includes("category="));
  await rendered();
  const info = await texts(".post-row .cat");
  check(info.length === 7 && info.every((c) => c === "정보"), `the 정보 tab lists only its 7 posts (${info.length})`);
  await clickText(".tab-row .tab", "개념글");
  await page.waitForFunction(() => location.hash.includes("best=1"));
  await rendered();
  check(
    (await texts(".post-row .subject .title")).join() === "페이지 글 18",
    "개념글 within 정보 lists its one best post",
  );
  await clickText(".tab-row.categories .tab", "전체");
  await page.waitForFunction(() => location.hash.includes("best=1") && !location.hash.includes("category="));
  await rendered();
  check(
    (await texts(".post-row .subject .title")).join() === "페이지 글 25,페이지 글 18",
    "the 개념글 tab lists every best post, newest first",
  );

  // -- a guest votes once; a second vote says it counted already
  await visit(`#/b/free/p/${elsewhere.id}`, ".votes");
  check(
    (await page.$$(".vote")).length === 2 && (await page.$$(".vote[aria-pressed]")).length === 0,
    "a guest sees 추천 and 비추천 (votes that are not toggles)",
  );
  const powBeforeVote = powRequests.length;
  await page.click(".vote.like");
  await waitText(".vote-note", "추천했습니다");
  check(
    powRequests.slice(powBeforeVote).join() === `POST ${base}/boards/free/posts/${elsewhere.id}/votes/guest` &&
      (await saidSolving()),
    "a guest's vote is solved (확인 중 in the vote's status) and sent again with X-Pow",
  );
  check(
    (await text(".vote.like .count")) === "1" && (await page.$$eval(".vote", (bs) => bs.every((b) => b.disabled))),
    "a guest's 추천 counts and the buttons rest",
  );
  await visit(`#/b/free/p/${elsewhere.id}`, ".votes");
  await expecting([409], async () => {
    await page.click(".vote.dislike");
    await waitText(".vote-note", "이미 이 글에 추천이나 비추천을 했습니다");
  });
  check(
    (await text(".vote.like .count")) === "1" && (await text(".vote.dislike .count")) === "0",
    "a second guest vote says so in Korean (409 already_voted) and counts nothing",
  );
  // -- a member's 추천 then 비추천: the vote moves, then is withdrawn
  await signIn("kim", "password-123", "김철수");
  const voted = seeded[7];
  await visit(`#/b/free/p/${voted.id}`, ".votes");
  const voteState = () =>
    page.$$eval(".vote", (bs) => bs.map((b) => `${b.getAttribute("aria-pressed")}:${b.querySelector(".count").textContent}`).join(" "));
  check((await voteState()) === "false:0 false:0", "a member's vote buttons are toggles, none pressed");
  await page.click(".vote.like");
  await page.waitForFunction(() => document.querySelector(".vote.like").getAttribute("aria-pressed") === "true");
  check((await voteState()) === "true:1 false:0", "추천 counts and shows pressed");
  await page.click(".vote.dislike");
  await page.waitForFunction(() => document.querySelector(".vote.dislike").getAttribute("aria-pressed") === "true");
  check((await voteState()) === "false:0 true:1", "비추천 moves the vote: 추천 0 and released, 비추천 1 and pressed");
  await page.click(".vote.dislike");
  await page.waitForFunction(() => document.querySelector(".vote.dislike").getAttribute("aria-pressed") === "false");
  check((await voteState()) === "false:0 false:0", "pressing 비추천 again withdraws it");
  await page.click(".vote.like");
  await page.waitForFunction(() => document.querySelector(".vote.like").getAttribute("aria-pressed") === "true");
  await visit(`#/b/free/p/${voted.id}`, ".votes");
  check((await voteState()) === "true:1 false:0", "a reload shows the member's vote (my_vote)");
  await fill("comment", { body: "좋은 정보 감사합니다" });
  await submit("comment");
  await waitText(".comment .text", "좋은 정보 감사합니다");
  await accessible("a post");
  await shoot("post");

  // -- a member writes in the members-only board with a category
  await visit("#/b/game/write", "#write");
  await page.select("#write [name=category]", "정보");
  await fill("write", { title: "공략 정보 모음", body: "회원만 쓰는 게시판의 글" });
  await submit("write");
  await page.waitForSelector("#post-body");
  const gamePostId = page.url().split("/p/")[1];
  check(
    (await text("#post-category")) === "[정보]" && (await text(".post-number")) === "1번 글",
    "a member writes in the new board with a category (its post number 1)",
  );
  await visit("#/b/game", ".board-list");
  check((await texts(".post-row .cat")).join() === "정보", "the new board's list shows the post's category");
  await page.evaluate(() => sessionStorage.clear());
  await visit(`#/b/game/p/${gamePostId}`, ".votes");
  check(
    (await page.$$(".vote")).length === 0 && (await text(".votes .sign-in")).includes("로그인"),
    "where guests cannot write, a guest sees the counts and a sign-in hint instead of vote buttons",
  );
  await visit("#/b/game/write", ".sign-in");
  check((await page.$$("#write")).length === 0, "where guests cannot write, the write page asks a guest to sign in");
  const notice = await call("POST", "/boards/notice/posts", { title: "공지", body: "비추천 없는 게시판" }, adminToken);
  await visit(`#/b/notice/p/${notice.id}`, ".votes");
  check(
    (await page.$$(".vote.like")).length === 1 && (await page.$$(".vote.dislike")).length === 0,
    "where dislikes are off, there is 추천 and no 비추천",
  );

  await visit(`#/b/free/p/${memberPostId}`, "#post-body");
  const before = (await page.$$(".comments .comment")).length;
  await page.click("#more-comments");
  await page.waitForFunction((n) => document.querySelectorAll(".comments .comment").length > n, {}, before);
  check((await page.$$(".comments .comment")).length === 56, "more comments load past the first 50 (56 in all)");

  // -- notifications and blocks (issue 44): 박민수 comments on 이영희's
  // post, replies to her comment and mentions @writer_lee (in a post, and in
  // a comment past the first 50 of another post), a guest comments too; the
  // badge counts them, the page lists them and leads to the comment, 모두
  // 읽음 clears the badge. Notifications come off the request path within
  // seconds: the walk waits for the count rather than expecting it at once.
  const lee = await call("POST", "/members", { username: "writer_lee", password: "password-123", nickname: "이영희" });
  const park = await call("POST", "/members", { username: "talker_park", password: "password-123", nickname: "박민수" });
  const leeToken = (await call("POST", "/sessions", { username: "writer_lee", password: "password-123" })).token;
  const parkToken = (await call("POST", "/sessions", { username: "talker_park", password: "password-123" })).token;
  const leePost = await call("POST", "/boards/free/posts", { title: "알림을 받을 글", body: "댓글을 기다립니다" }, leeToken);
  const onLeePost = `/boards/free/posts/${leePost.id}/comments`;
  const parkComment = await call("POST", onLeePost, { body: "좋은 글이네요" }, parkToken);
  const leeComment = await call("POST", onLeePost, { body: "감사합니다" }, leeToken);
  const parkReply = await call("POST", onLeePost, { body: "천만에요, 더 써 주세요", parent_id: leeComment.id }, parkToken);
  const parkPost = await call("POST", "/boards/free/posts", { title: "질문 있어요", body: "@writer_lee 님 의견이 궁금합니다" }, parkToken);
  // The 57th comment of a post: past the first page of its comments.
  const farMention = await call("POST", `/boards/free/posts/${memberPostId}/comments`, { body: "@writer_lee 여기도 봐 주세요" }, parkToken);
  const guestComment = await callFromElsewhere("POST", `${onLeePost}/guest`, { nickname: "지나가는 손님", password: "pw-4444", body: "손님도 한마디" });
  const unreadOf = async (t) => (await call("GET", "/members/me/notifications/unread", undefined, t)).unread;
  /** Until `count` unread notifications are there for `t` (they come within 5 s: 15 s before giving up). */
  const unreadReaches = async (t, count) => {
    const deadline = Date.now() + 15000;
    let n = await unreadOf(t);
    while (n < count && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      n = await unreadOf(t);
    }
    return n;
  };
  const arrived = await unreadReaches(leeToken, 5);
  check(arrived === 5, `five notifications reach 이영희 off the request path (unread ${arrived})`);

  const unreadAsked = [];
  page.on("request", (r) => r.method() === "GET" && r.url().endsWith("/members/me/notifications/unread") && unreadAsked.push(r.url()));
  await signIn("writer_lee", "password-123", "이영희");
  await page.waitForSelector("#unread-count");
  check(
    (await text("#unread-count")) === "5" && (await text("#notifications-link")).includes("읽지 않은 알림 5개"),
    `the bar shows the unread count as a badge (${await text("#notifications-link")})`,
  );
  // One ask per load: navigations within the page do not ask again (at most every 30 s).
  await visit("#/b/free", ".board-list");
  unreadAsked.length = 0;
  await visit("#/b/free", ".board-list");
  await page.waitForSelector("#unread-count");
  await clickText(".post-row .title", "알림을 받을 글");
  await page.waitForFunction(() => location.hash.includes("/p/"));
  await rendered();
  await page.click("#notifications-link");
  await page.waitForFunction(() => location.hash === "#/notifications");
  await rendered();
  check(unreadAsked.length === 1, `a load and two navigations ask the unread count once (${unreadAsked.length})`);
  // A tab loaded hidden asks nothing until it is shown (the Page Visibility API, made hidden here).
  const hidden = await page.evaluateOnNewDocument(() => {
    let state = "hidden";
    Object.defineProperty(Document.prototype, "visibilityState", { configurable: true, get: () => state });
    window.__showTab = () => {
      state = "visible";
      document.dispatchEvent(new Event("visibilitychange"));
    };
  });
  unreadAsked.length = 0;
  await visit("#/b/free", ".board-list");
  const askedWhileHidden = unreadAsked.length;
  await page.evaluate(() => window.__showTab());
  await page.waitForSelector("#unread-count");
  await page.removeScriptToEvaluateOnNewDocument(hidden.identifier);
  check(
    askedWhileHidden === 0 && unreadAsked.length === 1 && (await text("#unread-count")) === "5",
    `a hidden tab asks nothing; shown, it asks at once (${askedWhileHidden} while hidden, then ${unreadAsked.length})`,
  );
  await visit("#/notifications", ".notification");

  const notificationRows = () =>
    page.$$eval(".notification", (items) =>
      items.map((li) => ({
        kind: li.dataset.kind,
        label: li.querySelector(".kind").textContent,
        actor: li.querySelector(".actor").textContent,
        excerpt: li.querySelector(".excerpt").textContent,
        unread: li.classList.contains("unread") && Boolean(li.querySelector(".new-mark")),
        href: li.querySelector("a").getAttribute("href"),
        at: li.querySelector("time").getAttribute("datetime"),
      })),
    );
  const rows = await notificationRows();
  const byExcerpt = Object.fromEntries(rows.map((r) => [r.excerpt, r]));
  const guestTag = guestComment.author.tag;
  check(
    rows.length === 5 &&
      rows.every((r, i) => i === 0 || Date.parse(rows[i - 1].at) >= Date.parse(r.at)) &&
      rows.every((r) => r.unread),
    `the notifications page lists the five, newest first, each marked unread (${rows.map((r) => r.kind).join(", ")})`,
  );
  const expectedRows = [
    ["좋은 글이네요", "comment", "댓글", "박민수", `#/b/free/p/${leePost.id}?comment=${parkComment.id}`],
    ["천만에요, 더 써 주세요", "reply", "답글", "박민수", `#/b/free/p/${leePost.id}?comment=${parkReply.id}`],
    ["@writer_lee 님 의견이 궁금합니다", "mention", "멘션", "박민수", `#/b/free/p/${parkPost.id}`],
    ["@writer_lee 여기도 봐 주세요", "mention", "멘션", "박민수", `#/b/free/p/${memberPostId}?comment=${farMention.id}`],
    ["손님도 한마디", "comment", "댓글", `지나가는 손님(손님 #${guestTag})`, `#/b/free/p/${leePost.id}?comment=${guestComment.id}`],
  ];
  const mismatched = expectedRows.filter(([excerpt, kind, label, actor, href]) => {
    const r = byExcerpt[excerpt];
    return !r || r.kind !== kind || r.label !== label || r.actor !== actor || r.href !== href;
  });
  check(
    mismatched.length === 0,
    `each says its kind in Korean (댓글, 답글, 멘션), who, the excerpt, and links to the post with the comment (wrong: ${JSON.stringify(mismatched.map((m) => byExcerpt[m[0]] || m[0]))})`,
  );
  await accessible("the notifications page");
  await atPhoneWidth(() => accessible("the notifications page (phone)"));
  await shoot("notifications");

  // A notification leads to its comment, read on past the first 50 where it is, in view and focused.
  await page.click(`.notification a[href$="${farMention.id}"]`);
  await page.waitForFunction(() => location.hash.includes("comment="));
  await rendered();
  const landed = await page.evaluate(() => {
    const e = document.activeElement;
    const box = e.getBoundingClientRect();
    return { id: e.id, target: e.classList.contains("target"), inView: box.top >= 0 && box.top < innerHeight, comments: document.querySelectorAll(".comments .comment").length };
  });
  check(
    landed.id === `c-${farMention.id}` && landed.target && landed.inView && landed.comments === 57,
    `a notification's link shows its comment past the first page of comments, in view and focused (${JSON.stringify(landed)})`,
  );
  await page.evaluate(() => history.back());
  await page.waitForFunction(() => location.hash === "#/notifications");
  await rendered();
  await page.click(`.notification[data-kind=reply] a`);
  await page.waitForFunction(() => location.hash.includes("comment="));
  await rendered();
  check(
    (await page.evaluate(() => document.activeElement.id)) === `c-${parkReply.id}` &&
      (await text(`#c-${parkReply.id} .text`)) === "천만에요, 더 써 주세요",
    "the reply's notification shows the reply under 이영희's comment",
  );

  // 18 more comments make 23 unread: a page of 20 and "더 보기" for the rest; then 모두 읽음.
  for (let i = 1; i <= 18; i++) await call("POST", onLeePost, { body: `덧글 ${i}` }, parkToken);
  const more = await unreadReaches(leeToken, 23);
  await visit("#/notifications", ".notification");
  check(
    more === 23 && (await page.$$(".notification")).length === 20 && (await text("#unread-count")) === "23",
    `23 unread: the badge says 23 and the page shows 20 (${more} unread, ${(await page.$$(".notification")).length} shown)`,
  );
  await page.click("#more-notifications");
  await page.waitForFunction(() => document.querySelectorAll(".notification").length > 20);
  check(
    (await page.$$(".notification")).length === 23 && (await page.$$("#more-notifications")).length === 0,
    "더 보기 reads the next page by next_cursor (23 in all, no more after)",
  );
  await page.click("#mark-all-read");
  await page.waitForFunction(() => !document.querySelector("#unread-count"));
  check(
    (await page.$$(".notification.unread, .notification .new-mark")).length === 0 &&
      (await unreadOf(leeToken)) === 0 &&
      (await text("main [role=status]")).includes("모두 읽음"),
    "모두 읽음 marks them all read: the badge goes at once, the marks too, the API counts 0",
  );
  await visit("#/notifications", ".notification");
  check(
    (await page.$$("#unread-count")).length === 0 && (await page.$$(".notification.unread")).length === 0,
    "read they stay, after a reload",
  );

  // -- blocks: 이영희 blocks 박민수 from his comment's name, and the
  // guest from theirs; their comments and 박민수's post leave her pages
  // (and no one else's); the account page lists both, and unblocking
  // brings 박민수 back
  await visit(`#/b/free/p/${leePost.id}`, "#post-body");
  check((await page.$$("main > .meta button.author-name")).length === 0, "no block menu on one's own name");
  await page.click(`#c-${parkComment.id} button.author-name`);
  await page.waitForSelector(`#c-${parkComment.id} .author-menu:not([hidden]) button.block`);
  check(
    (await page.$eval(`#c-${parkComment.id} button.author-name`, (b) => b.getAttribute("aria-expanded"))) === "true",
    "a comment author's name opens a menu with 차단",
  );
  await accessible("a post with a comment author's block menu open");
  await shoot("block-menu");
  // The limit's refusal (made up in the browser: 500 blocks are many to make) is said in the menu.
  const refuse = (request) => {
    if (request.isInterceptResolutionHandled()) return;
    if (request.method() === "PUT" && request.url().includes("/members/me/blocks/members/")) {
      request.respond({
        status: 400,
        headers: { "access-control-allow-origin": pageBase },
        contentType: "application/json",
        body: JSON.stringify({ error: { code: "validation_failed", message: "cannot be blocked: you block 500 already", field: "member_id" } }),
      });
      return;
    }
    request.continue();
  };
  await page.setRequestInterception(true);
  page.on("request", refuse);
  await expecting([400], async () => {
    await page.click(`#c-${parkComment.id} .author-menu button.block`);
    await waitText(`#c-${parkComment.id} .author-menu .error`, "500명까지");
  });
  page.off("request", refuse);
  await page.setRequestInterception(false);
  check(true, "a refused block (400 validation_failed, the limit) is said in Korean in the menu");
  await page.click(`#c-${parkComment.id} .author-menu button.block`);
  await page.waitForFunction((id) => !document.getElementById(`c-${id}`), {}, parkComment.id);
  const shownTexts = await texts(".comments .comment > .text");
  check(
    !shownTexts.some((t) => t === "좋은 글이네요" || t.startsWith("천만에요") || t.startsWith("덧글")) &&
      shownTexts.includes("감사합니다") &&
      shownTexts.includes("손님도 한마디"),
    `after 차단 the page is read again without 박민수's comments and replies (${shownTexts.join(" / ")})`,
  );
  const anonymousView = await call("GET", `/boards/free/posts/${leePost.id}`);
  check(
    anonymousView.comments.some((c) => c.id === parkComment.id),
    "a block is 이영희's alone: an anonymous reader still sees 박민수's comment",
  );
  await page.click(`#c-${guestComment.id} button.author-name`);
  await page.click(`#c-${guestComment.id} .author-menu button.block`);
  await page.waitForFunction((id) => !document.getElementById(`c-${id}`), {}, guestComment.id);
  check(true, "a guest is blocked by tag from their comment's name, and their comment leaves the page");
  await visit("#/b/free", ".board-list");
  check(!(await texts(".post-row .title")).includes("질문 있어요"), "the board list leaves out the blocked member's post");
  await visit(`#/b/free/p/${parkPost.id}`, "#post-body");
  await page.click("main > .meta button.author-name");
  check(
    (await text("main > .meta .author-menu button")) === "차단 해제",
    "a blocked author's own post (opened by its address) offers 차단 해제",
  );

  await visit("#/account/blocks", ".block-list");
  const blockRows = await page.$$eval(".block-list li", (items) =>
    items.map((li) => `${li.dataset.member || li.dataset.tag}=${li.querySelector(".blocked-who").textContent}`),
  );
  check(
    blockRows.join() === `${park.id}=박민수,${guestTag}=손님 #${guestTag}` &&
      (await page.evaluate(() => document.activeElement.id)) === "blocks",
    `the account page's blocks list shows the member by nickname (never the username) and the guest's tag (${blockRows.join(", ")})`,
  );
  await accessible("the account page's blocks list");
  await shoot("blocks");
  await page.click(`.block-list li[data-member="${park.id}"] .unblock`);
  await page.waitForFunction((id) => !document.querySelector(`.block-list li[data-member="${id}"]`), {}, park.id);
  check((await call("GET", "/members/me/blocks", undefined, leeToken)).members.length === 0, "차단 해제 on the account page unblocks");
  await visit(`#/b/free/p/${leePost.id}`, "#post-body");
  check(
    (await page.$$(`#c-${parkComment.id}`)).length === 1 && (await page.$$(`#c-${guestComment.id}`)).length === 0,
    "unblocked, 박민수's comments are back; the guest still blocked stays out",
  );
  await page.evaluate(() => sessionStorage.clear());

  // -- 429 with its countdown: six wrong logins for one username
  await visit("#/login", "#login");
  await expecting([401, 429], async () => {
    for (let i = 0; i < 6; i++) {
      await fill("login", { username: "kim", password: `wrong-password-${i}` });
      await submit("login");
      await page.waitForFunction(() => document.querySelector("#login .error").textContent.length > 0);
      if (i < 5) await page.waitForFunction(() => !document.querySelector("#login button").disabled);
    }
    await waitText("#login .error", "초 후에 다시 시도하세요");
  });
  check(await page.$eval("#login button", (b) => b.disabled), "429 shows its wait and holds the button");

  // -- staff: an admin removes the hostile post with a reason and bans its writer
  await signIn("admin_kim", "password-123", "관리자", recoveryCodes[2]);
  // staff recategorize a post and take one out of 개념글
  await visit(`#/b/game/p/${gamePostId}`, "#recategorize");
  await page.select("#recategorize [name=category]", "질문");
  await submit("recategorize");
  await waitText("#post-category", "질문");
  check((await call("GET", `/boards/game/posts/${gamePostId}`)).category === "질문", "staff change a post's category (PUT .../category)");
  await visit(`#/b/free/p/${seeded[25].id}`, "#unbest");
  await page.click("#unbest");
  await page.waitForFunction(() => !document.querySelector("#unbest") && document.querySelector("#post-body"));
  const stillBest = (await call("GET", "/boards/free/posts?best=true")).posts.map((p) => p.title);
  check(stillBest.join() === "페이지 글 18", `staff take a post out of 개념글 (left: ${stillBest.join()})`);
  await visit("#/b/game/log", ".log");
  check(
    (await text(".log")).includes("말머리 변경") && (await text(".log")).includes("게시판 규칙"),
    "the board's log shows the recategorization and its opening",
  );
  await visit("#/b/free/mod", ".reports, .empty");
  check((await text("main")).includes("스팸 같아요"), "the reports queue shows the report");
  await shoot("moderation");
  await visit(`#/b/free/p/${guestPostId}`, "#post-body");
  const staffButtons = await page.$$(".staff button");
  await staffButtons[1].click(); // 차단
  await page.waitForSelector(".inline form [name=duration_s]");
  await page.type(".inline form [name=reason]", "도배");
  await page.select(".inline form [name=duration_s]", "86400");
  await page.click(".inline form button[type=submit]");
  await waitText(".inline .ok", "차단했습니다");
  check(true, "staff ban the writer of a post for a day");
  await (await page.$$(".staff button"))[0].click(); // 관리자 삭제
  await page.waitForSelector(".inline form [name=reason]");
  await page.type(".inline form [name=reason]", "운영 원칙 위반");
  await page.click(".inline form button[type=submit]");
  await page.waitForFunction(() => location.hash === "#/b/free");
  await visit("#/b/free/log", ".log");
  const logText = await text(".log");
  check(logText.includes("글 삭제") && logText.includes("운영 원칙 위반") && logText.includes("차단"), "the moderation log shows the removal and the ban");
  check(logText.includes(hostile), "the log shows the removed post's title as text");
  await visit("#/b/free/mod", ".bans");
  check((await text(".bans")).includes("도배"), "the bans list shows the ban");
  await page.click(".bans button");
  await page.waitForFunction(() => !document.querySelector(".bans"));
  check(true, "staff lift the ban");

  // -- the admin turns TOTP off with the password and a recovery code:
  // the password alone signs in again, and staff routes refuse again
  await visit("#/account/totp", "#totp-remove");
  await fill("totp-remove", { password: "password-123", code: recoveryCodes[3] });
  await submit("totp-remove");
  await page.waitForSelector("#totp-start");
  check((await text("#totp-status")).startsWith("2단계 인증을 껐습니다"), "TOTP is removed with the password and a recovery code");
  const passwordOnly = await call("POST", "/sessions", { username: "admin_kim", password: "password-123" });
  const refusedStaff = await fetch(`${base}/boards/free/bans`, { headers: { authorization: `Bearer ${passwordOnly.token}` } });
  check(
    Boolean(passwordOnly.token) && refusedStaff.status === 403 && (await refusedStaff.json()).error.code === "totp_required",
    "after removal the password alone signs in, and staff routes answer 403 totp_required again",
  );

  // -- account: password change, sign out everywhere, delete keeping content
  await page.evaluate(() => sessionStorage.clear());
  await visit("#/login", "#login");
  await fill("login", { username: "seeder", password: "password-123" });
  await submit("login");
  await waitText("nav", "씨앗 님");
  await visit("#/account", "#password");
  await expecting([401], async () => {
    await fill("password", { current_password: "not-my-password", new_password: "password-456" });
    await submit("password");
    await page.waitForFunction(() => document.querySelector("#password [data-field=current_password]").textContent.length > 0);
  });
  check(
    (await text("#password [data-field=current_password]")) === "비밀번호가 맞지 않습니다.",
    "a wrong current password is said in Korean beside that field (401 invalid_credentials, field current_password)",
  );
  await expecting([400], async () => {
    await fill("password", { current_password: "password-123", new_password: "password1234" });
    await submit("password");
    await waitText("#password [data-field=new_password]", "너무 흔한");
  });
  check(
    (await text("#password [data-field=new_password]")).startsWith("너무 흔한 비밀번호입니다") &&
      (await text("#password [name=new_password] ~ .field-hint")).includes("지금 12자"),
    "a blocklisted new password is refused in Korean beside the new password field, whose hint counts it",
  );
  await fill("password", { current_password: "password-123", new_password: "password-456" });
  await submit("password");
  await page.waitForSelector("#login");
  await fill("login", { username: "seeder", password: "password-456" });
  await submit("login");
  await waitText("nav", "씨앗 님");
  check(true, "a password change signs out and the new password signs in");
  const oldToken = await token();
  await visit("#/account", "#everywhere");
  await page.click("#everywhere");
  await page.waitForSelector("#login");
  const stale = await fetch(`${base}/members/me`, { headers: { authorization: `Bearer ${oldToken}` } });
  check(stale.status === 401, "sign out everywhere ends the session's token");
  await fill("login", { username: "seeder", password: "password-456" });
  await submit("login");
  await waitText("nav", "씨앗 님");
  await visit("#/account", "#delete-account");
  await fill("delete-account", { password: "password-456", delete_content: false });
  await submit("delete-account");
  await waitText("nav", "로그인");
  await visit("#/b/free", ".board-list");
  check((await text(".board-list")).includes("탈퇴한 회원"), "a deleted member's kept posts show as 'deleted member'");

  // -- page weight
  const files = ["index.html", "assets/app.js", "assets/api.js", "assets/dom.js", "assets/pow.js", "assets/config.js", "assets/style.css"];
  const bytes = files.reduce((sum, f) => sum + statSync(join(here, "..", f)).size, 0);
  log(`page weight: ${bytes} bytes of HTML, CSS and JS (${files.length} files, uncompressed)`);
  const enrollment = ["assets/qr.js", "assets/vendor/qrcode.js"].reduce((sum, f) => sum + statSync(join(here, "..", f)).size, 0);
  log(`loaded only when a TOTP enrollment starts: ${enrollment} bytes (qr.js and the vendored qrcode-generator)`);
  const sorted = [...powTimes].sort((a, b) => a - b);
  log(
    `proof of work: ${powRequests.length} browser requests with X-Pow; from a 428 to its solved retry ` +
      `median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms over ${sorted.length}`,
  );
} catch (error) {
  failures.push(`the walk stopped: ${error.stack || error}`);
  log("FAIL", error.stack || error);
  if (screenshots) await page.screenshot({ path: join(screenshots, `failure-${store}.png`) }).catch(() => {});
} finally {
  await browser.close();
  server.kill();
  staticSite?.site.close();
  fakeS3?.site.close();
  attacker.site.close();
}

for (const e of consoleErrors) failures.push(`console: ${e}`);
if (failures.length) {
  console.error(`[web-test ${store}] ${failures.length} failures:\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("every flow passed, console clean");
