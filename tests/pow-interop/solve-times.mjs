// What a proof-of-work challenge costs to solve, per difficulty: in headless
// Chromium (altcha-lib's own v1 Web Worker, as a page solves it off the main
// thread) beside the native solver of the load tool (`load solve-times`, one
// thread). Prints a Markdown table and the difficulty whose browser mean is
// closest to the target.
//
//   node tests/pow-interop/solve-times.mjs   (scripts/pow-solve-times sets
//     ALTCHA_LIB_DIR, PUPPETEER_MODULES, CHROMIUM, LOAD_BIN, MAXNUMBERS,
//     BROWSER_CHALLENGES, NATIVE_CHALLENGES, TARGET_MS)

import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { cpus, loadavg } from "node:os";
import { join, normalize } from "node:path";
import { pathToFileURL } from "node:url";

const altchaDir = process.env.ALTCHA_LIB_DIR;
const pkg = JSON.parse(readFileSync(join(altchaDir, "package.json"), "utf8"));
const exported = (name) => {
  const entry = pkg.exports?.[name];
  const file = typeof entry === "string" ? entry : entry?.import ?? entry?.default;
  if (!file) throw new Error(`altcha-lib ${pkg.version} has no ${name} export`);
  return file;
};
const altcha = await import(pathToFileURL(join(altchaDir, exported("./v1"))).href);
// The folder of the v1 worker: it imports its siblings (index.js, helpers.js).
const workerFile = normalize(exported("./v1/worker"));
const workerFolder = workerFile.slice(0, workerFile.lastIndexOf("/"));
const workerName = workerFile.slice(workerFile.lastIndexOf("/") + 1);

const puppeteer = createRequire(`${process.env.PUPPETEER_MODULES}/`)("puppeteer-core");
const maxnumbers = (process.env.MAXNUMBERS || "10000,20000,50000,100000,200000,500000").split(",").map(Number);
const browserChallenges = Number(process.env.BROWSER_CHALLENGES || 50);
const nativeChallenges = Number(process.env.NATIVE_CHALLENGES || 200);
const targetMs = Number(process.env.TARGET_MS || 200);
const log = (...a) => console.error("[pow-solve-times]", ...a);

/** Challenges as the server makes them: the number uniform in 0..=maxnumber. */
async function challenges(maxnumber, count) {
  const made = [];
  for (let i = 0; i < count; i++) {
    made.push(
      await altcha.createChallenge({
        hmacKey: "solve-times-key",
        maxnumber,
        number: randomInt(0, maxnumber + 1),
        expires: new Date(Date.now() + 600_000),
      }),
    );
  }
  return made;
}

/** Whether `number` is the one hidden in `challenge`. */
async function isSolution(challenge, number) {
  if (typeof number !== "number") return false;
  const again = await altcha.createChallenge({ hmacKey: "solve-times-key", number, salt: challenge.salt, maxnumber: challenge.maxnumber });
  return again.challenge === challenge.challenge;
}

/**
 * CPU seconds of the browser's whole process tree so far (renderer, its
 * worker and WebCrypto threads, the rest idle), from /proc: what a solve
 * costs the device, apart from whatever else the machine was doing.
 */
function browserCpuSeconds(rootPid) {
  const parents = new Map();
  const used = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(entry), Number(fields[1]));
      used.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {}
  }
  let total = 0;
  for (const [pid, seconds] of used) {
    for (let p = pid; p > 1; p = parents.get(p) ?? 0) {
      if (p === rootPid) {
        total += seconds;
        break;
      }
    }
  }
  return total;
}

function summary(tookMs) {
  const sorted = [...tookMs].sort((a, b) => a - b);
  const rank = (q) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length))) - 1];
  return {
    mean_ms: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    p50_ms: rank(0.5),
    p90_ms: rank(0.9),
    max_ms: sorted[sorted.length - 1],
  };
}

// The page: one worker from altcha-lib's v1 worker script, kept for every
// challenge; each is timed on the page from the message sent to the answer.
const page = `<!doctype html><meta charset="utf-8"><title>solve times</title>
<script type="module">
const worker = new Worker("/altcha/${workerName}", { type: "module" });
function solve(c) {
  return new Promise((resolve) => {
    const started = performance.now();
    worker.onmessage = (m) => resolve({ number: m.data && m.data.number, ms: performance.now() - started });
    worker.postMessage({ type: "work", payload: { algorithm: c.algorithm, challenge: c.challenge, salt: c.salt, start: 0, max: c.maxnumber } });
  });
}
window.solve = solve;
window.ready = true;
</script>`;

const site = createServer((request, response) => {
  const path = new URL(request.url, "http://x").pathname;
  if (path === "/") {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
    return;
  }
  const file = /^\/altcha\/([a-z]+\.js)$/.exec(path);
  if (!file) {
    response.writeHead(404).end();
    return;
  }
  try {
    const body = readFileSync(join(altchaDir, workerFolder, file[1]));
    response.writeHead(200, { "content-type": "text/javascript" }).end(body);
  } catch {
    response.writeHead(404).end();
  }
});
await new Promise((resolve) => site.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${site.address().port}`;

const loadBefore = loadavg().map((l) => l.toFixed(2)).join(" ");
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu"],
});
const browserVersion = await browser.version();
const browserPid = browser.process().pid;
const rows = [];
try {
  const tab = await browser.newPage();
  await tab.goto(origin, { waitUntil: "load" });
  await tab.waitForFunction("window.ready === true");
  // A warm-up: the worker's first solves run before the JIT has the loop.
  for (const c of await challenges(20000, 5)) await tab.evaluate((c) => window.solve(c), c);
  for (const maxnumber of maxnumbers) {
    const solved = [];
    const list = await challenges(maxnumber, browserChallenges);
    const cpuBefore = browserCpuSeconds(browserPid);
    // One evaluation per challenge: a solve of 500,000 tries takes seconds.
    for (const c of list) {
      const answer = await tab.evaluate((c) => window.solve(c), c);
      if (!(await isSolution(c, answer.number))) {
        throw new Error(`the browser answered ${answer.number} for ${JSON.stringify(c)}`);
      }
      solved.push(answer);
    }
    const cpuMs = (browserCpuSeconds(browserPid) - cpuBefore) * 1000;
    const tries = solved.reduce((sum, s) => sum + s.number + 1, 0);
    const times = summary(solved.map((s) => s.ms));
    times.cpu_us_per_try = (cpuMs / tries) * 1000;
    // The mean solve at this CPU cost per try: what an idle device would wait at best.
    times.cpu_mean_ms = (cpuMs / tries) * (maxnumber / 2 + 1);
    log(
      `browser, maxnumber ${maxnumber}: mean ${times.mean_ms.toFixed(1)} ms over ${solved.length}, CPU ${times.cpu_us_per_try.toFixed(2)} µs a try`,
    );
    rows.push({ maxnumber, browser: times });
  }
} finally {
  await browser.close();
  site.close();
}

// The native side: the load tool's solver, release build, one thread.
const native = execFileSync(
  process.env.LOAD_BIN,
  ["solve-times", "--json", "--challenges", String(nativeChallenges), "--maxnumbers", maxnumbers.join(",")],
  { encoding: "utf8" },
)
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line));
for (const row of rows) row.native = native.find((n) => n.maxnumber === row.maxnumber);

// Solve time grows with maxnumber (a uniform number: maxnumber/2 tries on
// average). The difficulty for the target: between the two measured
// difficulties whose browser means bracket it, on the line through them
// (a fit through every mean lets one run on a busy machine pull it all);
// and at the browser's CPU per try, averaged over the difficulties.
function interpolated() {
  const sorted = [...rows].sort((a, b) => a.maxnumber - b.maxnumber);
  for (let i = 1; i < sorted.length; i++) {
    const [low, high] = [sorted[i - 1], sorted[i]];
    if (low.browser.mean_ms <= targetMs && targetMs <= high.browser.mean_ms) {
      const share = (targetMs - low.browser.mean_ms) / (high.browser.mean_ms - low.browser.mean_ms);
      return Math.round((low.maxnumber + share * (high.maxnumber - low.maxnumber)) / 1000) * 1000;
    }
  }
  return null;
}
const forTarget = interpolated();
const cpuPerTryUs = rows.reduce((sum, r) => sum + r.browser.cpu_us_per_try, 0) / rows.length;
const nativePerTryUs = rows.reduce((sum, r) => sum + r.native.us_per_try, 0) / rows.length;
const forTargetAtCpu = Math.round((2 * targetMs * 1000) / cpuPerTryUs / 1000) * 1000;
const closest = rows.reduce((best, r) =>
  Math.abs(r.browser.mean_ms - targetMs) < Math.abs(best.browser.mean_ms - targetMs) ? r : best,
);

const f = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
let out = `Proof-of-work solve times (ALTCHA v1, SHA-256, the number uniform in 0..=maxnumber): `;
out += `${browserVersion} headless, altcha-lib ${pkg.version}'s v1 Web Worker (wall time on the page, message to answer; CPU: the browser's processes over the batch, per try), ${browserChallenges} challenges per difficulty; `;
out += `native: the load tool's solver, release build, one thread (a solve: its tries times one try's CPU time, measured over the batch), ${nativeChallenges} challenges per difficulty. `;
out += `CPU: ${cpus()[0]?.model ?? "unknown"} (${cpus().length} cores); load average before ${loadBefore}, `;
out += `after ${loadavg().map((l) => l.toFixed(2)).join(" ")}.\n\n`;
out += "| maxnumber | browser mean ms | browser P90 ms | browser CPU µs a try | browser mean at that CPU ms | native mean ms | native P90 ms | native CPU µs a try | browser / native (CPU a try) |\n";
out += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
for (const r of rows) {
  out += `| ${r.maxnumber.toLocaleString("en")} | ${f(r.browser.mean_ms)} | ${f(r.browser.p90_ms)} | ${r.browser.cpu_us_per_try.toFixed(2)} | ${f(r.browser.cpu_mean_ms)} `;
  out += `| ${f(r.native.mean_ms)} | ${f(r.native.p90_ms)} | ${r.native.us_per_try.toFixed(3)} | ${(r.browser.cpu_us_per_try / r.native.us_per_try).toFixed(0)}x |\n`;
}
out += `\nOne try's CPU: ${cpuPerTryUs.toFixed(2)} µs in the browser, ${nativePerTryUs.toFixed(3)} µs native `;
out += `(${(cpuPerTryUs / nativePerTryUs).toFixed(0)}x), averaged over the difficulties. A browser mean of ${targetMs} ms is maxnumber `;
out += forTarget === null ? "outside the measured wall means" : `≈ ${forTarget.toLocaleString("en")} by the wall means here`;
out += `, ≈ ${forTargetAtCpu.toLocaleString("en")} by the browser's CPU per try (an idle machine's best case); `;
out += `of those measured, ${closest.maxnumber.toLocaleString("en")} is closest (browser mean ${f(closest.browser.mean_ms)} ms).\n`;
console.log(out);
