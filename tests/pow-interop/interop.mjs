// The server's proof of work against the reference ALTCHA library
// (altcha-lib's `v1` export), both ways: challenges the server issues are
// solved by altcha-lib and accepted; challenges altcha-lib creates with the
// server's key are accepted, with another key or expired they are refused;
// a solution is accepted once; with POW=auto the free writes come first.
//
//   node tests/pow-interop/interop.mjs   (scripts/pow-interop sets SERVER_BIN
//                                         and ALTCHA_LIB_DIR: altcha-lib's folder)

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const log = (...a) => console.log("[pow-interop]", ...a);

/** altcha-lib's `v1` export, found through its package.json as an import would. */
async function loadAltchaV1(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const entry = pkg.exports?.["./v1"];
  const file = typeof entry === "string" ? entry : entry?.import ?? entry?.default;
  if (!file) throw new Error(`altcha-lib ${pkg.version} has no ./v1 export`);
  return { version: pkg.version, v1: await import(pathToFileURL(join(dir, file)).href) };
}

const { version: altchaVersion, v1: altcha } = await loadAltchaV1(process.env.ALTCHA_LIB_DIR);

// A fixed 40-byte test key: altcha-lib takes it as a string, the server as
// the bytes of the same string.
const POW_KEY = "pow-interop-test-key-0123456789abcdefghi";
if (Buffer.byteLength(POW_KEY) !== 40) throw new Error("the test key must be 40 bytes");

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** The real server on SQLite in a fresh data directory, with `pow` settings. */
async function startServer(pow) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "pow-interop-"));
  const env = {
    ...process.env,
    PORT: String(port),
    BIND: "127.0.0.1",
    DATA_DIR: dataDir,
    MEMBER_TIER: "bcrypt:4",
    GUEST_TIER: "bcrypt:4",
    HASH_FLOOR_OVERRIDE: "1",
    POW_KEY,
    RUST_LOG: "warn",
    ...pow,
  };
  delete env.TABLE_NAME;
  delete env.DYNAMODB_ENDPOINT;
  let output = "";
  const server = spawn(process.env.SERVER_BIN, [], { env, stdio: ["ignore", "pipe", "pipe"] });
  server.stdout.on("data", (d) => (output += d));
  server.stderr.on("data", (d) => (output += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}):\n${output}`);
    try {
      if ((await fetch(`${base}/health`)).ok) {
        const stop = () => {
          server.kill();
          rmSync(dataDir, { recursive: true, force: true });
        };
        return { base, stop, output: () => output };
      }
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  server.kill();
  throw new Error(`the server did not answer /health within 20 s:\n${output}`);
}

let passed = 0;
let checks = 0;
function check(name, ok, detail) {
  checks++;
  if (!ok) {
    throw new Error(`FAILED: ${name}${detail === undefined ? "" : `\n  ${typeof detail === "string" ? detail : JSON.stringify(detail)}`}`);
  }
  passed++;
  log(`ok: ${name}`);
}

async function call(base, method, path, body, headers = {}) {
  const response = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  return { status: response.status, body: json, text };
}

let postNumber = 0;
function guestPost(base, headers = {}) {
  postNumber++;
  return call(
    base,
    "POST",
    "/boards/free/posts/guest",
    { nickname: "interop", password: "interop-pw", title: `interop ${postNumber}`, body: "a post with proof of work" },
    headers,
  );
}

/** altcha-lib's solver on a challenge; the X-Pow value its widget would send. */
async function solveToHeader(challenge) {
  const { promise } = altcha.solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber);
  const solution = await promise;
  if (!solution) throw new Error(`altcha-lib found no solution for ${JSON.stringify(challenge)}`);
  const payload = {
    algorithm: challenge.algorithm,
    challenge: challenge.challenge,
    number: solution.number,
    salt: challenge.salt,
    signature: challenge.signature,
    took: solution.took,
  };
  return { payload, header: btoa(JSON.stringify(payload)) };
}

/** The five fields of a challenge, each of the shape ALTCHA v1 gives it. */
function challengeShapeProblems(challenge, maxnumber) {
  const problems = [];
  const fields = ["algorithm", "challenge", "salt", "signature", "maxnumber"];
  if (!challenge || typeof challenge !== "object") return ["no challenge object"];
  for (const f of fields) if (!(f in challenge)) problems.push(`no ${f}`);
  if (challenge.algorithm !== "SHA-256") problems.push(`algorithm ${challenge.algorithm}`);
  if (!/^[0-9a-f]{64}$/.test(challenge.challenge)) problems.push(`challenge ${challenge.challenge}`);
  if (!/^[0-9a-f]{64}$/.test(challenge.signature)) problems.push(`signature ${challenge.signature}`);
  const salt = /^[0-9a-f]{24}\?expires=(\d+)&$/.exec(challenge.salt ?? "");
  if (!salt) problems.push(`salt ${challenge.salt}`);
  else {
    const inSeconds = Number(salt[1]) - Date.now() / 1000;
    if (inSeconds < 590 || inSeconds > 610) problems.push(`expires in ${inSeconds.toFixed(0)} s, not 10 minutes`);
  }
  if (challenge.maxnumber !== maxnumber) problems.push(`maxnumber ${challenge.maxnumber}, not ${maxnumber}`);
  return problems;
}

function isPowRequired(response) {
  return (
    response.status === 428 &&
    response.body?.error?.code === "pow_required" &&
    challengeShapeProblems(response.body.challenge, MAXNUMBER).length === 0
  );
}

// A difficulty the interop solves quickly in Node; the default is measured
// in a browser (scripts/pow-solve-times).
const MAXNUMBER = 50000;

const started = Date.now();
log(`altcha-lib ${altchaVersion} (v1) against ${process.env.SERVER_BIN}`);

{
  const server = await startServer({ POW: "always", POW_MAXNUMBER: String(MAXNUMBER) });
  try {
    const { base } = server;

    // (a) A challenge the server issues, solved by altcha-lib: accepted once.
    const issued = await call(base, "GET", "/challenge");
    check("GET /challenge answers 200", issued.status === 200, issued.text);
    check("the challenge has ALTCHA v1's five fields", challengeShapeProblems(issued.body, MAXNUMBER).length === 0, {
      problems: challengeShapeProblems(issued.body, MAXNUMBER),
      challenge: issued.body,
    });
    const solved = await solveToHeader(issued.body);
    check(
      "altcha-lib's verifySolution accepts the server's signature",
      (await altcha.verifySolution(solved.payload, POW_KEY)) === true,
      solved.payload,
    );
    const accepted = await guestPost(base, { "x-pow": solved.header });
    check("a guest post with altcha-lib's solution of the server's challenge is 201", accepted.status === 201, accepted.text);
    const replayed = await guestPost(base, { "x-pow": solved.header });
    check("the same X-Pow again is 428 pow_required with a fresh challenge", isPowRequired(replayed), replayed.text);
    check(
      "the fresh challenge is another one",
      replayed.body.challenge.challenge !== issued.body.challenge || replayed.body.challenge.salt !== issued.body.salt,
      replayed.body.challenge,
    );

    // The client's own flow: the 428's challenge, solved, lets the write through.
    const retried = await guestPost(base, { "x-pow": (await solveToHeader(replayed.body.challenge)).header });
    check("the 428's challenge, solved by altcha-lib, is accepted", retried.status === 201, retried.text);

    // (b) altcha-lib's own challenge under the server's key: accepted.
    const inFiveMinutes = new Date(Date.now() + 5 * 60 * 1000);
    const own = await altcha.createChallenge({ hmacKey: POW_KEY, expires: inFiveMinutes, maxnumber: 50000 });
    const ownAccepted = await guestPost(base, { "x-pow": (await solveToHeader(own)).header });
    check("altcha-lib's createChallenge with the server's key, solved, is 201", ownAccepted.status === 201, ownAccepted.text);

    // (c) The same with another key: a forged signature.
    const forged = await altcha.createChallenge({
      hmacKey: "not-the-server-key-0123456789abcdefghijk",
      expires: inFiveMinutes,
      maxnumber: 50000,
    });
    const forgedAnswer = await guestPost(base, { "x-pow": (await solveToHeader(forged)).header });
    check("a challenge signed with another key is 428", isPowRequired(forgedAnswer), forgedAnswer.text);

    // (d) The server's key, but expired.
    const expired = await altcha.createChallenge({
      hmacKey: POW_KEY,
      expires: new Date(Date.now() - 60 * 1000),
      maxnumber: 50000,
    });
    const expiredAnswer = await guestPost(base, { "x-pow": (await solveToHeader(expired)).header });
    check("an expired challenge is 428", isPowRequired(expiredAnswer), expiredAnswer.text);

    // A wrong number for a right challenge.
    const another = await call(base, "GET", "/challenge");
    const wrong = await solveToHeader(another.body);
    const wrongPayload = { ...wrong.payload, number: (wrong.payload.number + 1) % (MAXNUMBER + 1) };
    const wrongAnswer = await guestPost(base, { "x-pow": btoa(JSON.stringify(wrongPayload)) });
    check("a number that does not solve the challenge is 428", isPowRequired(wrongAnswer), wrongAnswer.text);
    // ...and the right number of that challenge still works (the wrong try did not spend it).
    const rightAnswer = await guestPost(base, { "x-pow": wrong.header });
    check("the right number of that challenge is then 201", rightAnswer.status === 201, rightAnswer.text);

    // (e) No X-Pow at all.
    const missing = await guestPost(base);
    check("a guest post without X-Pow is 428 pow_required", missing.status === 428, missing.text);
    check(
      "its body's challenge has the five fields",
      isPowRequired(missing),
      { problems: challengeShapeProblems(missing.body?.challenge, MAXNUMBER), body: missing.body },
    );
    const garbage = await guestPost(base, { "x-pow": "not base64 at all!" });
    check("an X-Pow that is not base64 JSON is 428", isPowRequired(garbage), garbage.text);

    // A signup is an anonymous write; the member's own writes need nothing.
    const username = `interop_${Date.now().toString(36)}`;
    const member = { username, password: "a long interop passphrase 7f3k", nickname: "interop" };
    const signupRefused = await call(base, "POST", "/members", member);
    check("a signup without X-Pow is 428", isPowRequired(signupRefused), signupRefused.text);
    const signup = await call(base, "POST", "/members", member, {
      "x-pow": (await solveToHeader(signupRefused.body.challenge)).header,
    });
    check("a signup with altcha-lib's solution is 201", signup.status === 201, signup.text);
    const session = await call(base, "POST", "/sessions", { username, password: member.password });
    check("the member logs in", session.status === 200, session.text);
    const memberPost = await call(
      base,
      "POST",
      "/boards/free/posts",
      { title: "a member post", body: "members never solve" },
      { authorization: `Bearer ${session.body?.token}` },
    );
    check("a member post without X-Pow is 201 under POW=always", memberPost.status === 201, memberPost.text);
  } catch (error) {
    console.error(`[pow-interop] the POW=always server's output:\n${server.output()}`);
    throw error;
  } finally {
    server.stop();
  }
}

{
  const server = await startServer({ POW: "auto", POW_FREE_WRITES: "2", POW_MAXNUMBER: String(MAXNUMBER) });
  try {
    const { base } = server;
    for (const n of [1, 2]) {
      const free = await guestPost(base);
      check(`POW=auto POW_FREE_WRITES=2: guest post ${n} without X-Pow is 201`, free.status === 201, free.text);
    }
    const third = await guestPost(base);
    check("POW=auto POW_FREE_WRITES=2: the third is 428 pow_required", isPowRequired(third), third.text);
    const solved = await guestPost(base, { "x-pow": (await solveToHeader(third.body.challenge)).header });
    check("POW=auto: the third, with the 428's challenge solved, is 201", solved.status === 201, solved.text);
  } catch (error) {
    console.error(`[pow-interop] the POW=auto server's output:\n${server.output()}`);
    throw error;
  } finally {
    server.stop();
  }
}

log(`${passed}/${checks} checks passed in ${((Date.now() - started) / 1000).toFixed(1)} s (altcha-lib ${altchaVersion})`);
