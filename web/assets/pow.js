// Proof of work for anonymous writes (docs/API.md, Proof of work for
// anonymous writes): an ALTCHA v1 challenge is solved by finding the
// number n in 0..=maxnumber with hex(SHA-256(salt + n)) === challenge.
//
// Written here rather than vendored from altcha-lib (2.8.0, MIT): its v1
// worker needs three of its files (worker.js, index.js, helpers.js, 13 KB,
// most of it the server's side: challenges, HMAC, verification), for a loop
// of a few lines. This one asks WebCrypto for a batch of digests at a time
// and compares bytes, not hex strings as the library does (which cost about
// half as much again in headless Chromium). What api.js sends is the
// library's v1 payload, which the server reads (shared/src/app/pow/altcha.rs).
//
// This file is both a module the page imports (`solve`, the fallback where
// no worker can start) and the module worker api.js starts, so the loop is
// written once; in a worker it answers each `{challenge, salt, maxnumber}`
// message with `{number}` (null: no number solves it).

/** Digests asked for at once: enough to keep WebCrypto busy, few enough to stop soon after the answer. */
const BATCH = 1000;

function bytesOfHex(hex) {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.substr(i * 2, 2), 16);
  return bytes;
}

function same(digest, target) {
  const bytes = new Uint8Array(digest);
  if (bytes.length !== target.length) return false;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== target[i]) return false;
  return true;
}

/** The number from 0 to `maxnumber` whose salted SHA-256 is `challenge`, or null. */
export async function solve({ challenge, salt, maxnumber }) {
  const target = bytesOfHex(challenge.toLowerCase());
  const encoder = new TextEncoder();
  for (let start = 0; start <= maxnumber; start += BATCH) {
    const end = Math.min(maxnumber, start + BATCH - 1);
    const digests = [];
    for (let n = start; n <= end; n++) digests.push(crypto.subtle.digest("SHA-256", encoder.encode(salt + n)));
    const found = (await Promise.all(digests)).findIndex((digest) => same(digest, target));
    if (found >= 0) return start + found;
  }
  return null;
}

// In a worker (no document): solve what the page sends.
if (typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope) {
  self.onmessage = async (message) => {
    self.postMessage({ number: await solve(message.data) });
  };
}
