// README's curl walkthrough, through the client @hey-api/openapi-ts
// generates from docs/openapi.json (its fetch client): the steps of
// scripts/openapi_client_walkthrough.steps, in order, as the Python
// walkthrough's are. Every answer is asserted: status, typed body, headers;
// an error through its typed body (`result.error?.error.code`), which only
// compiles while every error response of the document has the Error body.
// scripts/openapi-client generates the client beside it, type-checks both
// with `tsc --strict` and runs the output with node:
//
//   node walkthrough.js http://127.0.0.1:3000 scripts/openapi_client_walkthrough.steps

import { readFileSync } from "node:fs";
import { createHmac, randomUUID } from "node:crypto";

import { createClient, createConfig, type Client } from "./community-boards-client/client";
import {
  blockGuest,
  blockMember,
  changePassword,
  confirmTotp,
  createBan,
  createGuestComment,
  createGuestPost,
  createMember,
  createMemberComment,
  createMemberPost,
  createSession,
  deleteBan,
  deleteGuestPost,
  deleteMe,
  deleteMemberComment,
  deleteMemberPost,
  deleteSessions,
  deleteTotp,
  dislikePost,
  getBoard,
  getChallenge,
  getComment,
  getHealth,
  getMe,
  getPost,
  getPostByNumber,
  getUnreadCount,
  likePost,
  listBans,
  listBlocks,
  listBoards,
  listComments,
  listModerationLog,
  listMyComments,
  listMyPosts,
  listNotifications,
  listPosts,
  listReports,
  listRevisions,
  putBoard,
  recategorizePost,
  reportPost,
  resolveReport,
  markNotificationsRead,
  startTotp,
  unbestPost,
  unblockGuest,
  unblockMember,
  undislikePost,
  unlikePost,
  updateGuestPost,
  voteAsGuest,
} from "./community-boards-client";
// The document's `Error` schema, named apart from JavaScript's Error.
import type {
  Error as ApiError,
  Author,
  BoardRequest,
  Comment,
  GuestPostRequest,
  NotificationKind,
  Post,
  SignUpRequest,
  Unread,
  Vote,
  VoteState,
} from "./community-boards-client";

// scripts/openapi-client starts the server with it (an unclaimed admin
// name is reserved for a signup that carries it).
const ADMIN_ENROLL_TOKEN = "walkthrough-admin-token";
// A guest elsewhere: scripts/openapi-client trusts the loopback as a
// proxy (TRUSTED_PROXIES), so this X-Forwarded-For is the guest's address,
// not the one every post of the walkthrough is written from (nobody votes
// on a post written from their own address).
const GUEST_VOTER_ADDRESS = "198.51.100.7";
// A well-formed member id (a ULID) that names nobody.
const NO_MEMBER_ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
// Notifications follow their text off the request path, within 5 s
// (docs/API.md): a step that waits for one polls the unread count this long.
const NOTIFICATION_WAIT_MS = 10_000;

let checks = 0;
// The walkthrough's steps (the .steps file) and how many have begun.
const steps: string[] = [];
let begun = 0;

/** The bytes of an RFC 4648 base32 text (what `secret` is), padding optional. */
function base32Bytes(text: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text.toUpperCase().replace(/=+$/, "")) {
    const digit = alphabet.indexOf(char);
    if (digit < 0) {
      throw new Error(`not base32: ${JSON.stringify(char)}`);
    }
    value = (value << 5) | digit;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >>> bits) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/** RFC 6238 as authenticator apps compute it (the server's parameters,
 * docs/API.md): HMAC-SHA-1 of the 30-second step `atSeconds` falls in, 6 digits. */
function totpCode(secret: string, atSeconds: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atSeconds / 30)));
  const digest = createHmac("sha1", base32Bytes(secret)).update(counter).digest();
  const offset = digest[digest.length - 1]! & 0x0f;
  const value = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(value % 1_000_000).padStart(6, "0");
}

/** A check of the step begun last failed (any other exception is the next step's request). */
class StepFailure extends Error {}

function check(condition: unknown, what: string): asserts condition {
  if (!condition) {
    throw new StepFailure(what);
  }
  checks += 1;
}

/** The next step of the .steps file is `what`: the walkthrough is the same for every client. */
function begin(what: string): void {
  const expected = steps[begun] ?? "(no more steps)";
  begun += 1;
  if (what !== expected) {
    throw new StepFailure(`the steps file names ${JSON.stringify(expected)}, the walkthrough ran ${JSON.stringify(what)}`);
  }
}

/** What every SDK function answers (the fetch client's `fields` style). */
type Answer<Data, Failure> = { response: Response } & (
  | { data: Data; error: undefined }
  | { data: undefined; error: Failure }
);

/** Step `what` answered `status` with the request id header. (The fetch
 * client answers a network failure with no `response` and the failure as
 * `error`, whatever its type says.) */
function expectStatus(response: Response | undefined, status: number, what: string, error?: unknown): void {
  begin(what);
  check(response !== undefined, `${what}: no answer: ${String(error)}`);
  check(response.status === status, `${what}: ${response.status}, expected ${status}`);
  check(response.headers.get("x-request-id"), `${what}: no x-request-id`);
}

/** Step `what` answered `status` with the request id header; returns the typed body. */
function expect<Data, Failure>(answer: Answer<Data, Failure>, status: number, what: string): Data {
  expectStatus(answer.response, status, what, answer.error);
  check(answer.error === undefined, `${what}: an error body ${JSON.stringify(answer.error)}`);
  return answer.data as Data;
}

/** Step `what` answered `status` and the error `code`; returns the typed error body. */
function expectError<Data>(answer: Answer<Data, ApiError>, status: number, code: string, what: string): ApiError {
  expectStatus(answer.response, status, what, answer.error);
  // Typed: `error` is the document's Error, so this compiles under --strict.
  const answered: string | undefined = answer.error?.error.code;
  check(answered === code, `${what}: code ${answered}, expected ${code}`);
  check(answer.error?.error.message, `${what}: no message`);
  return answer.error;
}

/** A header of docs/API.md the answer must carry. */
function header(response: Response, name: string, what: string): string {
  const value = response.headers.get(name);
  check(value !== null, `${what}: no ${name} header`);
  return value;
}

/** A HEAD, served beside every GET though the document leaves it out: plain fetch. */
async function head(base: string, path: string, what: string): Promise<Response> {
  const response = await fetch(`${base}${path}`, { method: "HEAD" });
  expectStatus(response, 200, what);
  check((await response.arrayBuffer()).byteLength === 0, `${what}: a body`);
  return response;
}

async function walk(base: string): Promise<void> {
  const client = createClient(createConfig({ baseUrl: base }));
  const bearer = (token: string): Client => createClient(createConfig({ baseUrl: base, auth: token }));

  // The request id is a header of the client, not an argument of each call.
  const tagged = createClient(createConfig({ baseUrl: base, headers: { "X-Request-Id": "walkthrough-1" } }));
  const answered = await getHealth({ client: tagged });
  check(expect(answered, 200, "getHealth with an X-Request-Id").status === "ok", "getHealth: status ok");
  const echoed = answered.response.headers.get("x-request-id");
  check(echoed === "walkthrough-1", `a tidy X-Request-Id is echoed, got ${echoed}`);
  await head(base, "/health", "HEAD /health");

  // Sign up (idempotent: the same key answers the same member again) and log in.
  const key = randomUUID();
  const signup: SignUpRequest = { username: "kim", password: "correct horse", nickname: "Kim" };
  const enrolled = { "Idempotency-Key": key, "Admin-Enroll-Token": ADMIN_ENROLL_TOKEN };
  const created = await createMember({ client, body: signup, headers: enrolled });
  const member = expect(created, 201, "createMember");
  check(member.username === "kim" && member.nickname === "Kim", `createMember: ${JSON.stringify(member)}`);
  check(!created.response.headers.has("idempotent-replayed"), "createMember: a first answer is not a replay");
  const replay = await createMember({ client, body: signup, headers: enrolled });
  check(expect(replay, 201, "createMember replayed").id === member.id, "the replay answers the same member");
  check(replay.response.headers.get("idempotent-replayed") === "true", "createMember replayed: Idempotent-Replayed");
  expectError(
    await createMember({ client, body: signup, headers: { "Idempotency-Key": randomUUID() } }),
    409,
    "username_taken",
    "createMember again",
  );
  const wrong = await createSession({ client, body: { username: "kim", password: "wrong horse" } });
  expectError(wrong, 401, "invalid_credentials", "createSession with a wrong password");
  header(wrong.response, "www-authenticate", "createSession 401");
  const session = expect(
    await createSession({ client, body: { username: "kim", password: "correct horse" } }),
    200,
    "createSession",
  );
  check(session.member.id === member.id && session.token, "createSession: a token for kim");
  let kim = bearer(session.token);
  // A second member, to vote on kim's posts: nobody votes on their own.
  const second: SignUpRequest = { username: "park", password: "park's horse", nickname: "Park" };
  expect(await createMember({ client, body: second }), 201, "createMember of a second member");
  const parkSession = expect(
    await createSession({ client, body: { username: "park", password: "park's horse" } }),
    200,
    "createSession of the second member",
  );
  const park = bearer(parkSession.token);
  const parkId = parkSession.member.id;

  // A member post, a comment (read back at its Location), a like (by the other member).
  const postCreated = await createMemberPost({
    client: kim,
    path: { slug: "free" },
    body: { title: "Hello", body: "First post" },
    headers: { "Idempotency-Key": randomUUID() },
  });
  const post = expect(postCreated, 201, "createMemberPost");
  check(post.title === "Hello" && post.body === "First post" && post.view_count === 0, `createMemberPost: ${JSON.stringify(post)}`);
  // The board's first post, with no category, not best, no dislikes.
  check(
    post.number === 1 && post.category === null && post.best === false && post.dislike_count === 0,
    `createMemberPost v4 fields: ${JSON.stringify(post)}`,
  );
  const postLocation = header(postCreated.response, "location", "createMemberPost");
  check(postLocation === `/boards/free/posts/${post.id}`, `createMemberPost: Location ${postLocation}`);
  const firstEtag = header(postCreated.response, "etag", "createMemberPost");
  const commented = await createMemberComment({
    client: kim,
    path: { slug: "free", post_id: post.id },
    body: { body: "first!" },
  });
  const comment = expect(commented, 201, "createMemberComment");
  check(comment.body === "first!" && comment.post_id === post.id, `createMemberComment: ${JSON.stringify(comment)}`);
  const commentLocation = header(commented.response, "location", "createMemberComment");
  check(
    commentLocation === `/boards/free/posts/${post.id}/comments/${comment.id}`,
    `createMemberComment: Location ${commentLocation}`,
  );
  const shown = expect(
    await getComment({ client, path: { slug: "free", post_id: post.id, comment_id: comment.id } }),
    200,
    "getComment at the comment's Location",
  );
  check(shown.id === comment.id && shown.body === "first!", `getComment: ${JSON.stringify(shown)}`);
  for (const attempt of ["likePost", "likePost again"]) {
    const liked = expect(await likePost({ client: park, path: { slug: "free", post_id: post.id } }), 200, attempt);
    check(
      liked.liked && !liked.disliked && liked.like_count === 1 && liked.dislike_count === 0,
      `${attempt}: ${JSON.stringify(liked)}`,
    );
  }
  expectError(
    await likePost({ client: kim, path: { slug: "free", post_id: post.id } }),
    403,
    "forbidden",
    "likePost of one's own post",
  );
  const anonymous = await createMemberPost({ client, path: { slug: "free" }, body: { title: "No", body: "token" } });
  expectError(anonymous, 401, "unauthorized", "createMemberPost without a token");
  header(anonymous.response, "www-authenticate", "createMemberPost 401");

  // Read it (counts the view; a HEAD does not) and list the board.
  const read = await getPost({ client, path: { slug: "free", post_id: post.id } });
  const detail = expect(read, 200, "getPost");
  check(detail.view_count === 1 && detail.like_count === 1, `getPost counts: ${JSON.stringify(detail)}`);
  check(
    detail.number === 1 && detail.category === null && detail.best === false,
    `getPost v4 fields: ${JSON.stringify(detail)}`,
  );
  // `my_vote` only with a token.
  check(!("my_vote" in detail), `getPost without a token: my_vote ${JSON.stringify(detail.my_vote)}`);
  check(JSON.stringify(detail.comments.map((c) => c.body)) === '["first!"]', "getPost comments");
  const etag = header(read.response, "etag", "getPost");
  check(etag === firstEtag, "a view and a like leave the ETag as it was");
  const peek = await head(base, `/boards/free/posts/${post.id}`, "HEAD of the post");
  check(peek.headers.get("etag") === etag, "HEAD of the post: the GET's ETag");
  const again = expect(await getPost({ client, path: { slug: "free", post_id: post.id } }), 200, "getPost after the HEAD");
  check(again.view_count === 2, "the HEAD counted no view");
  const page = expect(await listPosts({ client, path: { slug: "free" }, query: { limit: 10 } }), 200, "listPosts");
  check(page.posts.length === 1 && page.posts[0]?.id === post.id, `listPosts: ${JSON.stringify(page.posts)}`);
  expectError(await listPosts({ client, path: { slug: "nowhere" } }), 404, "not_found", "listPosts of no board");

  // A guest post, a wrong password, then the right one.
  const guest: GuestPostRequest = { nickname: "Lee", password: "1234", title: "Hi", body: "from a guest" };
  const guestCreated = await createGuestPost({
    client,
    path: { slug: "free" },
    body: guest,
    headers: { "Idempotency-Key": randomUUID() },
  });
  const guestPost = expect(guestCreated, 201, "createGuestPost");
  check(guestPost.author.nickname === "Lee", `createGuestPost: ${JSON.stringify(guestPost.author)}`);
  check(guestPost.number === 2, `createGuestPost: the board's second post, number ${guestPost.number}`);
  // A write under a quota says what is left of it.
  const pacing = header(guestCreated.response, "ratelimit", "createGuestPost");
  check(pacing.startsWith('"creates";r='), `createGuestPost: RateLimit ${pacing}`);
  const guestLocation = header(guestCreated.response, "location", "createGuestPost");
  check(guestLocation === `/boards/free/posts/${guestPost.id}`, `createGuestPost: Location ${guestLocation}`);
  const guestEtag = header(guestCreated.response, "etag", "createGuestPost");
  const guestPath = { slug: "free", post_id: guestPost.id };
  expectError(
    await updateGuestPost({ client, path: guestPath, body: { password: "0000", title: "Hi", body: "edited" } }),
    403,
    "wrong_password",
    "updateGuestPost with a wrong password",
  );
  const edited = await updateGuestPost({
    client,
    path: guestPath,
    body: { password: "1234", title: "Hi", body: "edited" },
    headers: { "If-Match": guestEtag },
  });
  check(expect(edited, 200, "updateGuestPost").body === "edited", "updateGuestPost: the edited post");
  const newEtag = header(edited.response, "etag", "updateGuestPost");
  check(newEtag !== guestEtag, "an edit changes the ETag");
  expectError(
    await updateGuestPost({
      client,
      path: guestPath,
      body: { password: "1234", title: "Hi", body: "stale" },
      headers: { "If-Match": guestEtag },
    }),
    412,
    "precondition_failed",
    "updateGuestPost with a stale If-Match",
  );
  // The edit kept the version it replaced; and a proof-of-work challenge to solve.
  const history = expect(await listRevisions({ client, path: guestPath }), 200, "listRevisions of the edited guest post");
  const revisionTexts = JSON.stringify(history.revisions.map((r) => [r.title, r.body]));
  check(revisionTexts === '[["Hi","from a guest"]]', `listRevisions: ${revisionTexts}`);
  const challenge = expect(await getChallenge({ client }), 200, "getChallenge");
  check(
    challenge.algorithm === "SHA-256" && challenge.maxnumber > 0 && challenge.salt.endsWith("&"),
    `getChallenge: ${JSON.stringify(challenge)}`,
  );
  const guestComment = expect(
    await createGuestComment({
      client,
      path: { slug: "free", post_id: post.id },
      body: { nickname: "Lee", password: "1234", body: "a guest comment" },
    }),
    201,
    "createGuestComment",
  );
  const comments = expect(
    await listComments({ client, path: { slug: "free", post_id: post.id } }),
    200,
    "listComments",
  );
  check(
    JSON.stringify(comments.comments.map((c) => c.id)) === JSON.stringify([comment.id, guestComment.id]),
    `listComments: ${JSON.stringify(comments.comments)}`,
  );

  await notificationsAndBlocks(base, kim, member.id, park, parkId, post, comment, guestPost.author, guestComment);

  const signedInWithTotp = await staffTotp(base, client, kim);
  kim = signedInWithTotp.kim;
  const recoveryCodes = signedInWithTotp.recoveryCodes;

  // Moderation: kim is the admin (ADMIN_USERNAMES), signed in
  // with TOTP, as staff routes require by default. Anyone reports the
  // guest post; the second report joins the first; kim bans its writer
  // through it (shown by tag, never the address), then lifts the ban and
  // resolves the report; the public log shows both.
  const author = guestPost.author;
  check(author.kind === "guest", `a guest post's author: ${JSON.stringify(author)}`);
  const tag = author.tag;
  check(typeof tag === "string" && tag.length === 8, `a guest author carries a tag: ${JSON.stringify(author)}`);
  const report = expect(
    await reportPost({ client, path: guestPath, body: { reason: "spam" } }),
    201,
    "reportPost",
  );
  const joined = expect(
    await reportPost({ client, path: guestPath, body: { reason: "spam too" } }),
    200,
    "reportPost again",
  );
  check(joined.id === report.id, "a second report of a post joins its open report");
  const reports = expect(await listReports({ client: kim, path: { slug: "free" } }), 200, "listReports");
  check(
    reports.reports.length === 1 && reports.reports[0]?.id === report.id && reports.reports[0]?.reporters === 1,
    `listReports: ${JSON.stringify(reports.reports)}`,
  );
  const ban = expect(
    await createBan({
      client: kim,
      path: { slug: "free" },
      body: { post_id: guestPost.id, reason: "spam", duration_s: 3600 },
    }),
    201,
    "createBan",
  );
  check(ban.target.kind === "guest" && ban.target.tag === tag, `createBan: the guest is named by its tag: ${JSON.stringify(ban.target)}`);
  expectError(
    await createGuestPost({ client, path: { slug: "free" }, body: guest }),
    403,
    "banned",
    "createGuestPost banned",
  );
  const bans = expect(await listBans({ client: kim, path: { slug: "free" } }), 200, "listBans");
  check(bans.bans.length === 1 && bans.bans[0]?.id === ban.id, `listBans: ${JSON.stringify(bans.bans)}`);
  expectStatus((await deleteBan({ client: kim, path: { slug: "free", ban_id: ban.id } })).response, 204, "deleteBan");
  expectStatus(
    (await resolveReport({ client: kim, path: { slug: "free", report_id: report.id } })).response,
    204,
    "resolveReport",
  );
  const log = expect(await listModerationLog({ client, path: { slug: "free" } }), 200, "listModerationLog");
  check(
    JSON.stringify(log.entries.map((e) => e.action)) === '["unban","ban"]',
    `listModerationLog: ${JSON.stringify(log.entries)}`,
  );

  const deleted = await deleteGuestPost({ client, path: guestPath, body: { password: "1234" } });
  expectStatus(deleted.response, 204, "deleteGuestPost");
  expectError(await getPost({ client, path: guestPath }), 404, "not_found", "getPost of the deleted guest post");

  // Errors name the field and the rule.
  const invalid = expectError(
    await createMember({ client, body: { username: "x", password: "pw", nickname: "n" } }),
    400,
    "validation_failed",
    "createMember with a short username",
  );
  check(invalid.error.message.includes("username"), `the message names the field: ${invalid.error.message}`);
  // ... and say it as a typed field, to place the error by.
  const field: string | undefined = invalid.error.field;
  check(field === "username", `the error's field: ${field}`);
  // A password on the bundled blocklist is refused at signup.
  const common = expectError(
    await createMember({ client, body: { username: "choi", password: "password123", nickname: "Choi" } }),
    400,
    "validation_failed",
    "createMember with a common password",
  );
  check(common.error.field === "password", `createMember with a common password: field ${common.error.field}`);
  check(common.error.message.includes("too common"), `createMember with a common password: ${common.error.message}`);

  // Unlike, then the member's own deletes.
  const postPath = { slug: "free", post_id: post.id };
  const unliked = expect(await unlikePost({ client: park, path: postPath }), 200, "unlikePost");
  check(!unliked.liked && !unliked.disliked && unliked.like_count === 0, `unlikePost: ${JSON.stringify(unliked)}`);
  expectStatus(
    (await deleteMemberComment({ client: kim, path: { ...postPath, comment_id: comment.id } })).response,
    204,
    "deleteMemberComment",
  );
  expectStatus((await deleteMemberPost({ client: kim, path: postPath })).response, 204, "deleteMemberPost");
  expectError(await getPost({ client, path: postPath }), 404, "not_found", "getPost of the deleted member post");

  await boardsV4(base, client, kim, park);

  // The member's own account: who and what roles, their posts and
  // comments, a new password (every earlier token stops), sign-out
  // everywhere, and leaving with the content kept as a deleted member's.
  const me = expect(await getMe({ client: kim }), 200, "getMe");
  check(me.username === "kim" && me.roles.admin && me.roles.moderates.length === 0, `getMe: ${JSON.stringify(me)}`);
  const mine = expect(
    await createMemberPost({ client: kim, path: { slug: "free" }, body: { title: "mine", body: "kept" } }),
    201,
    "createMemberPost of mine",
  );
  expect(
    await createMemberComment({ client: kim, path: { slug: "free", post_id: mine.id }, body: { body: "and mine" } }),
    201,
    "createMemberComment of mine",
  );
  const myPosts = expect(await listMyPosts({ client: kim }), 200, "listMyPosts");
  check(myPosts.posts.length === 1 && myPosts.posts[0]?.id === mine.id, `listMyPosts: ${JSON.stringify(myPosts.posts)}`);
  const myComments = expect(await listMyComments({ client: kim }), 200, "listMyComments");
  check(
    myComments.comments.length === 1 && myComments.comments[0]?.post_id === mine.id,
    `listMyComments: ${JSON.stringify(myComments)}`,
  );
  const changed = await changePassword({
    client: kim,
    body: { current_password: "correct horse", new_password: "battery staple" },
  });
  expectStatus(changed.response, 204, "changePassword");
  expectError(await getMe({ client: kim }), 401, "unauthorized", "getMe with a token from before the change");

  const logIn = async (password: string, what: string, totp?: string): Promise<Client> => {
    const session = expect(await createSession({ client, body: { username: "kim", password, totp } }), 200, what);
    return bearer(session.token);
  };
  // TOTP stays on through a password change: a recovery code signs
  // in (the TOTP steps up to the next one are spent), another turns it off.
  kim = await logIn("battery staple", "createSession with the new password", recoveryCodes[1]);
  expectStatus(
    (await deleteTotp({ client: kim, body: { password: "battery staple", code: recoveryCodes[2] } })).response,
    204,
    "deleteTotp",
  );
  expectStatus((await deleteSessions({ client: kim })).response, 204, "deleteSessions");
  expectError(await getMe({ client: kim }), 401, "unauthorized", "getMe after signing out everywhere");
  kim = await logIn("battery staple", "createSession again");
  const left = await deleteMe({ client: kim, body: { password: "battery staple", delete_content: false } });
  expectStatus(left.response, 204, "deleteMe");
  const kept = expect(
    await getPost({ client, path: { slug: "free", post_id: mine.id } }),
    200,
    "getPost of a deleted member",
  );
  check(
    kept.author.kind === "deleted_member" && kept.author.nickname === "deleted member",
    JSON.stringify(kept.author),
  );
  expectError(
    await createMember({
      client,
      body: { username: "kim", password: "a new kim horse", nickname: "K" },
      headers: { "Admin-Enroll-Token": ADMIN_ENROLL_TOKEN },
    }),
    409,
    "username_taken",
    "createMember with a deleted member's username",
  );
}

/** Step `what`: the unread count, polled (up to NOTIFICATION_WAIT_MS)
 * until it reaches `atLeast`, for notifications come off the request path;
 * the last answer is the step's. Answers the count. */
async function unreadOnceArrived(kim: Client, atLeast: number, what: string): Promise<number> {
  const deadline = Date.now() + NOTIFICATION_WAIT_MS;
  for (;;) {
    const answer = await getUnreadCount({ client: kim });
    const arrived = answer.data !== undefined && answer.data.unread >= atLeast;
    if (arrived || answer.data === undefined || Date.now() > deadline) {
      const unread: Unread = expect(answer, 200, what);
      return unread.unread;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A guest author's tag (a check of the step begun last). */
function guestTag(author: Author, what: string): string {
  check(author.kind === "guest" && typeof author.tag === "string", `${what}: ${JSON.stringify(author)}`);
  return author.tag;
}

/** Notifications and blocks. The guest's comment on kim's post has
 * notified kim already; park replies to kim's comment, naming kim: one
 * notification, of the strongest kind that applies (a reply). kim pages
 * through them, marks the older read, blocks park and the guest (by tag)
 * and reads the board without them; park's next comment does not notify
 * kim, a guest elsewhere's does; kim reads everything and unblocks both. */
async function notificationsAndBlocks(
  base: string,
  kim: Client,
  kimId: string,
  park: Client,
  parkId: string,
  post: Post,
  comment: Comment,
  guestAuthor: Author,
  guestComment: Comment,
): Promise<void> {
  const tag = guestTag(guestAuthor, "a guest author carries a tag");
  check(tag.length === 8, `a guest author's tag: ${tag}`);
  check(
    guestTag(guestComment.author, "the guest's comment") === tag,
    `the guest's comment, from the same address: ${JSON.stringify(guestComment.author)}`,
  );
  const postPath = { slug: "free", post_id: post.id };
  const welcome = "@kim welcome aboard";
  const reply = expect(
    await createMemberComment({ client: park, path: postPath, body: { body: welcome, parent_id: comment.id } }),
    201,
    "createMemberComment replying with a mention",
  );
  check(reply.parent_id === comment.id && reply.body === welcome, `createMemberComment: ${JSON.stringify(reply)}`);
  let unread = await unreadOnceArrived(kim, 2, "getUnreadCount until the notifications arrive");
  check(unread === 2, `getUnreadCount: ${unread}, expected 2 (the guest's comment, park's reply)`);

  // Newest first, a page at a time.
  const first = expect(
    await listNotifications({ client: kim, query: { limit: 1 } }),
    200,
    "listNotifications with a limit",
  );
  const newest = first.notifications[0];
  check(
    first.notifications.length === 1 && newest !== undefined && typeof first.next_cursor === "string",
    `listNotifications: ${JSON.stringify(first)}`,
  );
  // Typed: `kind` is one of the document's kinds.
  const newestKind: NotificationKind = newest.kind;
  check(newestKind === "reply", `a reply that names kim notifies once, as a reply: ${JSON.stringify(newest)}`);
  check(
    newest.board === "free" && newest.post_id === post.id && newest.comment_id === reply.id &&
      newest.excerpt === welcome && newest.read === false,
    `listNotifications: ${JSON.stringify(newest)}`,
  );
  check(
    newest.actor.kind === "member" && newest.actor.member_id === parkId && newest.actor.nickname === "Park",
    `listNotifications: actor ${JSON.stringify(newest.actor)}`,
  );
  const last = expect(
    await listNotifications({ client: kim, query: { limit: 1, cursor: first.next_cursor } }),
    200,
    "listNotifications at the next cursor",
  );
  const older = last.notifications[0];
  check(
    last.notifications.length === 1 && older !== undefined && last.next_cursor === null,
    `listNotifications, the last page: ${JSON.stringify(last)}`,
  );
  check(older.kind === "comment" && older.id < newest.id, `the guest's comment, older: ${JSON.stringify(older)}`);
  check(
    older.board === "free" && older.post_id === post.id && older.comment_id === guestComment.id &&
      older.excerpt === "a guest comment" && older.read === false,
    `listNotifications at the next cursor: ${JSON.stringify(older)}`,
  );
  check(
    older.actor.kind === "guest" && older.actor.nickname === "Lee" && older.actor.tag === tag,
    `listNotifications at the next cursor: actor ${JSON.stringify(older.actor)}`,
  );
  const marked = expect(
    await markNotificationsRead({ client: kim, body: { up_to: older.id } }),
    200,
    "markNotificationsRead up to the older one",
  );
  check(marked.unread === 1, `markNotificationsRead: unread ${marked.unread}, expected 1`);
  const refusedMark = expectError(
    await markNotificationsRead({ client: kim, body: { up_to: "the older one" } }),
    400,
    "validation_failed",
    "markNotificationsRead with an up_to that is no id",
  );
  check(refusedMark.error.field === "up_to", `markNotificationsRead: the error's field ${refusedMark.error.field}`);

  // kim blocks park (twice: the same) and the guest by tag; not themself, nor nobody.
  for (const attempt of ["blockMember", "blockMember again"]) {
    const blocked = await blockMember({ client: kim, path: { member_id: parkId } });
    expectStatus(blocked.response, 204, attempt, blocked.error);
    check((await blocked.response.clone().text()) === "", `${attempt}: a body`);
  }
  const refusedSelf = expectError(
    await blockMember({ client: kim, path: { member_id: kimId } }),
    400,
    "validation_failed",
    "blockMember of oneself",
  );
  check(refusedSelf.error.field === "member_id", `blockMember of oneself: the error's field ${refusedSelf.error.field}`);
  expectError(
    await blockMember({ client: kim, path: { member_id: NO_MEMBER_ID } }),
    404,
    "not_found",
    "blockMember of no member",
  );
  const blockedGuest = await blockGuest({ client: kim, path: { tag } });
  expectStatus(blockedGuest.response, 204, "blockGuest", blockedGuest.error);
  // 8 characters, but 1, 8 and 0 are no letters of a tag.
  const refusedTag = expectError(
    await blockGuest({ client: kim, path: { tag: "12345678" } }),
    400,
    "validation_failed",
    "blockGuest of no tag",
  );
  check(refusedTag.error.field === "tag", `blockGuest of no tag: the error's field ${refusedTag.error.field}`);
  const blocks = expect(await listBlocks({ client: kim }), 200, "listBlocks");
  check(
    JSON.stringify(blocks.members.map((m) => [m.id, m.nickname])) === JSON.stringify([[parkId, "Park"]]),
    `listBlocks: members ${JSON.stringify(blocks.members)}`,
  );
  check(
    JSON.stringify(blocks.guests.map((g) => g.tag)) === JSON.stringify([tag]),
    `listBlocks: guests ${JSON.stringify(blocks.guests)}`,
  );

  // With kim's token the board leaves them out: the guest's post, their comments.
  const page = expect(
    await listPosts({ client: kim, path: { slug: "free" } }),
    200,
    "listPosts with the blocker's token",
  );
  check(
    JSON.stringify(page.posts.map((p) => p.id)) === JSON.stringify([post.id]),
    `listPosts without the guest's post: ${JSON.stringify(page.posts)}`,
  );
  const detail = expect(await getPost({ client: kim, path: postPath }), 200, "getPost with the blocker's token");
  check(
    JSON.stringify(detail.comments.map((c) => c.id)) === JSON.stringify([comment.id]),
    `getPost without their comments: ${JSON.stringify(detail.comments)}`,
  );
  const filtered = expect(
    await listComments({ client: kim, path: postPath }),
    200,
    "listComments with the blocker's token",
  );
  check(
    JSON.stringify(filtered.comments.map((c) => c.id)) === JSON.stringify([comment.id]),
    `listComments without theirs: ${JSON.stringify(filtered.comments)}`,
  );

  // park, blocked, notifies kim no more; a guest elsewhere (another tag)
  // does. Notifications follow their texts in order: once the guest's has
  // come, park's would have.
  const again = expect(
    await createMemberComment({ client: park, path: postPath, body: { body: "@kim still there?" } }),
    201,
    "createMemberComment by a blocked member",
  );
  const elsewhere = createClient(createConfig({ baseUrl: base, headers: { "X-Forwarded-For": GUEST_VOTER_ADDRESS } }));
  const other = expect(
    await createGuestComment({
      client: elsewhere,
      path: postPath,
      body: { nickname: "Moon", password: "5678", body: "hello from elsewhere" },
    }),
    201,
    "createGuestComment from elsewhere",
  );
  const otherTag = guestTag(other.author, "a guest elsewhere's comment");
  check(otherTag !== tag, `a guest elsewhere has a tag of its own: ${JSON.stringify(other.author)}`);
  unread = await unreadOnceArrived(kim, 2, "getUnreadCount until the next notification arrives");
  check(unread === 2, `getUnreadCount: ${unread}, expected 2 (park's reply, the guest elsewhere's comment)`);
  const all = expect(await listNotifications({ client: kim }), 200, "listNotifications after the blocks");
  const shown = JSON.stringify(all.notifications.map((n) => [n.kind, n.comment_id, n.read]));
  const expected = JSON.stringify([
    ["comment", other.id, false],
    ["reply", reply.id, false],
    ["comment", guestComment.id, true],
  ]);
  check(shown === expected, `listNotifications: ${shown}, expected ${expected} (none of ${again.id})`);
  const actor = all.notifications[0]?.actor;
  check(
    actor?.kind === "guest" && actor.nickname === "Moon" && actor.tag === otherTag,
    `listNotifications: actor ${JSON.stringify(actor)}`,
  );
  check(all.next_cursor === null, `listNotifications: next_cursor ${JSON.stringify(all.next_cursor)}`);
  const markedAll = expect(await markNotificationsRead({ client: kim, body: {} }), 200, "markNotificationsRead of all");
  check(markedAll.unread === 0, `markNotificationsRead of all: unread ${markedAll.unread}`);
  const left = expect(await getUnreadCount({ client: kim }), 200, "getUnreadCount after reading");
  check(left.unread === 0, `getUnreadCount after reading: ${left.unread}`);

  // Unblocking (again: the same) brings them back.
  for (const attempt of ["unblockMember", "unblockMember again"]) {
    const unblocked = await unblockMember({ client: kim, path: { member_id: parkId } });
    expectStatus(unblocked.response, 204, attempt, unblocked.error);
  }
  const unblockedGuest = await unblockGuest({ client: kim, path: { tag } });
  expectStatus(unblockedGuest.response, 204, "unblockGuest", unblockedGuest.error);
  const none = expect(await listBlocks({ client: kim }), 200, "listBlocks after unblocking");
  check(none.members.length === 0 && none.guests.length === 0, `listBlocks after unblocking: ${JSON.stringify(none)}`);
  const everything = expect(
    await listComments({ client: kim, path: postPath }),
    200,
    "listComments with the blocker's token after unblocking",
  );
  check(
    JSON.stringify(everything.comments.map((c) => c.id)) ===
      JSON.stringify([comment.id, guestComment.id, reply.id, again.id, other.id]),
    `listComments after unblocking: ${JSON.stringify(everything.comments)}`,
  );
}

/** Staff sign in with TOTP: the server keeps STAFF_REQUIRE_TOTP at its
 * default (on), so kim's staff routes answer `403 totp_required` until kim
 * enrolls. The app's part is totpCode. Answers kim signed in with a code,
 * for the moderation that follows, and the recovery codes. */
async function staffTotp(base: string, client: Client, kim: Client): Promise<{ kim: Client; recoveryCodes: string[] }> {
  const bearer = (token: string): Client => createClient(createConfig({ baseUrl: base, auth: token }));
  expectError(
    await listReports({ client: kim, path: { slug: "free" } }),
    403,
    "totp_required",
    "listReports before enrolling in TOTP",
  );
  // An enrollment needs the password, and an admin's first one the enroll token.
  expectError(
    await startTotp({ client: kim, body: { password: "correct horse" } }),
    403,
    "forbidden",
    "startTotp of an admin without Admin-Enroll-Token",
  );
  const enrollment = expect(
    await startTotp({
      client: kim,
      body: { password: "correct horse" },
      headers: { "Admin-Enroll-Token": ADMIN_ENROLL_TOKEN },
    }),
    200,
    "startTotp",
  );
  const uri = new URL(enrollment.otpauth_uri);
  check(
    uri.protocol === "otpauth:" && uri.host === "totp",
    `startTotp: otpauth_uri ${enrollment.otpauth_uri}`,
  );
  check(uri.searchParams.get("secret") === enrollment.secret, `startTotp: the URI's secret ${uri.search}`);
  // The code of the current step: it is spent by confirming.
  const codes = expect(
    await confirmTotp({ client: kim, body: { code: totpCode(enrollment.secret, Date.now() / 1000) } }),
    200,
    "confirmTotp",
  );
  const recoveryCodes = codes.recovery_codes;
  check(
    new Set(recoveryCodes).size === 10 && recoveryCodes.every((code) => code.length > 0),
    `confirmTotp: ${JSON.stringify(recoveryCodes)}`,
  );

  const logIn = (totp?: string) => createSession({ client, body: { username: "kim", password: "correct horse", totp } });
  expectError(await logIn(), 401, "totp_required", "createSession without a TOTP code");
  // A step is accepted once and the current one is spent: the next step's
  // code, within the one step of drift the server allows.
  const session = expect(
    await logIn(totpCode(enrollment.secret, Date.now() / 1000 + 30)),
    200,
    "createSession with a TOTP code",
  );
  check(session.member.username === "kim" && session.token, `createSession with a TOTP code: ${JSON.stringify(session)}`);
  const recovered = expect(await logIn(recoveryCodes[0]), 200, "createSession with a recovery code");
  check(recovered.member.username === "kim" && recovered.token, "createSession with a recovery code: a token for kim");
  expectError(await logIn(recoveryCodes[0]), 401, "invalid_credentials", "createSession with a spent recovery code");
  return { kim: bearer(session.token), recoveryCodes };
}

/** Boards, categories, votes and best posts: kim (an admin) opens a
 * board with categories and a best-post threshold of 2; park writes on it;
 * kim votes both ways; a guest elsewhere casts the vote that makes the post
 * best; kim recategorizes it and takes it out of the best posts. */
async function boardsV4(base: string, client: Client, kim: Client, park: Client): Promise<void> {
  const slug = "walkthrough";
  const categories = ["정보", "질문"];
  const opening: BoardRequest = { name: "Walkthrough", categories, best_likes: 2 };
  const openedAnswer = await putBoard({ client: kim, path: { slug }, body: opening });
  const opened = expect(openedAnswer, 201, "putBoard opening a board");
  check(
    opened.slug === slug && opened.name === "Walkthrough" && opened.description === "",
    `putBoard: ${JSON.stringify(opened)}`,
  );
  // Typed: `best_likes` is a number or null.
  const threshold: number | null = opened.best_likes;
  check(JSON.stringify(opened.categories) === JSON.stringify(categories) && threshold === 2, `putBoard: ${JSON.stringify(opened)}`);
  check(
    opened.dislikes === "shown" && opened.guest_writes && !opened.lock_after_comments && opened.post_count === 0,
    `putBoard: ${JSON.stringify(opened)}`,
  );
  const location = header(openedAnswer.response, "location", "putBoard");
  check(location === `/boards/${slug}`, `putBoard: Location ${location}`);
  const boards = expect(await listBoards({ client }), 200, "listBoards").boards;
  check(
    JSON.stringify(boards.map((b) => b.slug)) === JSON.stringify(["free", "notice", "qna", slug]),
    `listBoards: slug order: ${JSON.stringify(boards)}`,
  );
  const seeded = boards.filter((b) => b.slug !== slug);
  check(
    seeded.every((b) => b.name === b.slug && b.best_likes === 10 && b.categories.length === 0),
    `seeded: ${JSON.stringify(seeded)}`,
  );
  check(JSON.stringify(boards[3]) === JSON.stringify(opened), `listBoards: the board as opened: ${JSON.stringify(boards[3])}`);
  expectError(
    await putBoard({ client: park, path: { slug }, body: { name: "Mine" } }),
    403,
    "forbidden",
    "putBoard by a member who is not staff",
  );
  const described = "Boards through generated clients";
  const changed = expect(
    await putBoard({ client: kim, path: { slug }, body: { ...opening, description: described } }),
    200,
    "putBoard changing it",
  );
  check(
    changed.description === described && changed.created_at === opened.created_at,
    `putBoard: ${JSON.stringify(changed)}`,
  );
  const refusedBoard = expectError(
    await putBoard({ client: kim, path: { slug }, body: { name: "Walkthrough", categories: ["정보", "Tip", "TIP"] } }),
    400,
    "validation_failed",
    "putBoard with a duplicate category",
  );
  check(refusedBoard.error.field === "categories", `putBoard: the error's field ${refusedBoard.error.field}`);

  // park writes on it, once with a category; a category it lacks is refused.
  const first = expect(
    await createMemberPost({
      client: park,
      path: { slug },
      body: { title: "A tip", body: "with a category", category: "정보" },
    }),
    201,
    "createMemberPost with a category",
  );
  // Typed: `category` is a string or null.
  const category: string | null = first.category;
  check(category === "정보" && first.number === 1 && first.best === false, `createMemberPost: ${JSON.stringify(first)}`);
  const refusedPost = expectError(
    await createMemberPost({ client: park, path: { slug }, body: { title: "No", body: "such category", category: "잡담" } }),
    400,
    "validation_failed",
    "createMemberPost with a category the board lacks",
  );
  check(refusedPost.error.field === "category", `createMemberPost: the error's field ${refusedPost.error.field}`);
  const second = expect(
    await createMemberPost({ client: park, path: { slug }, body: { title: "Plain", body: "no category" } }),
    201,
    "createMemberPost without a category",
  );
  // The refused create took no number.
  check(second.category === null && second.number === 2, `createMemberPost: ${JSON.stringify(second)}`);
  const board = expect(await getBoard({ client, path: { slug } }), 200, "getBoard");
  check(board.post_count === 2 && board.description === described, `getBoard: ${JSON.stringify(board)}`);
  check(
    JSON.stringify(board.categories) === JSON.stringify(categories) && board.best_likes === 2,
    `getBoard: ${JSON.stringify(board)}`,
  );
  const numbered = expect(
    await getPostByNumber({ client, path: { slug, number: String(first.number) } }),
    200,
    "getPostByNumber",
  );
  check(numbered.id === first.id && numbered.view_count === 1, `getPostByNumber: ${JSON.stringify(numbered)}`);
  const listed = expect(
    await listPosts({ client, path: { slug }, query: { category: "정보" } }),
    200,
    "listPosts with a category",
  );
  check(
    listed.posts.length === 1 && listed.posts[0]?.id === first.id,
    `listPosts ?category=정보: ${JSON.stringify(listed.posts)}`,
  );

  // kim votes: a like, a dislike that withdraws it, the dislike withdrawn,
  // the like again.
  const postPath = { slug, post_id: first.id };
  const voted = (
    answer: Answer<VoteState, ApiError>,
    what: string,
    liked: boolean,
    disliked: boolean,
    likes: number,
    dislikes: number,
  ): void => {
    const state = expect(answer, 200, what);
    // Typed: `dislike_count` may be absent (a board that hides dislikes).
    const dislikeCount: number | null | undefined = state.dislike_count;
    check(
      state.liked === liked && state.disliked === disliked && state.like_count === likes && dislikeCount === dislikes,
      `${what}: ${JSON.stringify(state)}`,
    );
  };
  voted(await likePost({ client: kim, path: postPath }), "likePost on the new board", true, false, 1, 0);
  voted(await dislikePost({ client: kim, path: postPath }), "dislikePost", false, true, 0, 1);
  const mine = expect(await getPost({ client: kim, path: postPath }), 200, "getPost with a token");
  // Typed: `my_vote` is a Vote, null or absent.
  const myVote: Vote | null | undefined = mine.my_vote;
  check(myVote === "dislike", `getPost with a token: my_vote ${JSON.stringify(myVote)}`);
  check(mine.like_count === 0 && mine.dislike_count === 1, `getPost with a token: ${JSON.stringify(mine)}`);
  voted(await undislikePost({ client: kim, path: postPath }), "undislikePost", false, false, 0, 0);
  voted(await likePost({ client: kim, path: postPath }), "likePost after undisliking", true, false, 1, 0);

  // A guest elsewhere likes it: the score reaches best_likes (2), and the
  // post is best. A second vote from there, either way, is refused.
  const guest = createClient(createConfig({ baseUrl: base, headers: { "X-Forwarded-For": GUEST_VOTER_ADDRESS } }));
  voted(await voteAsGuest({ client: guest, path: postPath, body: { vote: "like" } }), "voteAsGuest", true, false, 2, 0);
  expectError(
    await voteAsGuest({ client: guest, path: postPath, body: { vote: "dislike" } }),
    409,
    "already_voted",
    "voteAsGuest again",
  );
  const best = expect(await listPosts({ client, path: { slug }, query: { best: true } }), 200, "listPosts with best");
  check(
    best.posts.length === 1 && best.posts[0]?.id === first.id && best.posts[0]?.best === true,
    `listPosts ?best=true: ${JSON.stringify(best.posts)}`,
  );

  // Staff recategorize it and take it out of the best posts for good.
  const moved = expect(
    await recategorizePost({ client: kim, path: postPath, body: { category: "질문" } }),
    200,
    "recategorizePost",
  );
  check(
    moved.id === first.id && moved.category === "질문" && moved.best === true,
    `recategorizePost: ${JSON.stringify(moved)}`,
  );
  const relisted = expect(
    await listPosts({ client, path: { slug }, query: { category: "질문" } }),
    200,
    "listPosts with the new category",
  );
  check(
    relisted.posts.length === 1 && relisted.posts[0]?.id === first.id,
    `listPosts ?category=질문: ${JSON.stringify(relisted.posts)}`,
  );
  expectStatus((await unbestPost({ client: kim, path: postPath })).response, 204, "unbestPost");
  const unbested = expect(
    await listPosts({ client, path: { slug }, query: { best: true } }),
    200,
    "listPosts with best after unbestPost",
  );
  check(unbested.posts.length === 0, `listPosts ?best=true after unbestPost: ${JSON.stringify(unbested.posts)}`);
  const log = expect(await listModerationLog({ client, path: { slug } }), 200, "listModerationLog of the new board");
  const actions = JSON.stringify(log.entries.map((e) => e.action));
  check(actions === '["unbest","recategorize","board_settings","board_settings"]', `the board's log: ${actions}`);
}

async function main(base: string, stepsFile: string): Promise<void> {
  for (const line of readFileSync(stepsFile, "utf8").split("\n")) {
    if (line.trim() && !line.startsWith("#")) {
      steps.push(line.trim());
    }
  }
  const total = steps.length;
  // The walkthrough's authenticator app against RFC 6238's own vectors
  // (appendix B, SHA-1, the 6 low digits), before any step relies on it.
  const rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"; // base32 of "12345678901234567890"
  for (const [at, code] of [[59, "287082"], [1111111109, "081804"], [20000000000, "353130"]] as const) {
    if (totpCode(rfcSecret, at) !== code) {
      console.log(`openapi-client (typescript): totpCode at ${at} is ${totpCode(rfcSecret, at)}, RFC 6238 says ${code}`);
      process.exit(1);
    }
  }
  try {
    await walk(base);
  } catch (failure) {
    // A failed check is the step begun last's; anything else (a client or
    // network error) came from the next step's request.
    const step = failure instanceof StepFailure ? begun : begun + 1;
    const name = steps[step - 1] ?? "(beyond the steps file)";
    const message = failure instanceof Error ? failure.message : String(failure);
    console.log(`openapi-client (typescript): ${step - 1}/${total} steps passed; step ${step} (${name}) failed: ${message}`);
    process.exit(1);
  }
  if (begun !== total) {
    console.log(`openapi-client (typescript): ${begun}/${total} steps passed; not run: ${JSON.stringify(steps.slice(begun))}`);
    process.exit(1);
  }
  console.log(`openapi-client (typescript): ${begun}/${total} steps passed (${checks} checks)`);
}

const [base, stepsFile] = process.argv.slice(2);
if (!base || !stepsFile) {
  console.error("usage: node walkthrough.js <base url> <steps file>");
  process.exit(2);
}
void main(base, stepsFile);
