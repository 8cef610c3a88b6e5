// The API client every page uses: one place that knows the contract's
// conventions (docs/API.md), so the pages only say what they want.
//
// - Requests go to one origin only: the page's own, or API_ORIGIN as the
//   deployment wrote it in config.js. No query parameter and no storage
//   can change it (a link that could would send the reader's token and
//   password to whoever wrote it), and a base URL an older client kept in
//   localStorage is removed on load.
// - The bearer token lives in sessionStorage: it survives a reload of the
//   tab but not the tab, is never shared with other tabs or sent anywhere
//   but the Authorization header, and never appears in a URL. localStorage
//   would keep it for anyone who opens the browser later; memory alone
//   would sign the member out on every reload.
// - Every create carries an Idempotency-Key and is retried with the same key
//   on 503 and 409 request_in_progress after Retry-After, so a retry never
//   creates twice.
// - Edits send If-Match with the ETag the page was shown: 412 means someone
//   changed the post meanwhile.
// - An anonymous write the server answers `428 pow_required` is sent
//   again with the challenge that came with it solved (X-Pow), in a Web
//   Worker (pow.js), at most twice; `powEvents` says while it solves.
// - The session also remembers whether the member's TOTP is on: no
//   route says so, but a login needs a code exactly when it is, and this
//   tab's own enrollment or removal changes it. TOTP secrets and recovery
//   codes are never stored: the page shows them and forgets them.
// - Images go by XMLHttpRequest (fetch reports no upload progress) to
//   the URL their grant names, only at the API's origin or UPLOAD_ORIGIN,
//   without the bearer token; image URLs are shown only from the page's
//   origin, the API's or MEDIA_ORIGIN (config.js, and the CSP, say which).

import { API_ORIGIN, MEDIA_ORIGIN, UPLOAD_ORIGIN } from "./config.js";
import { solve } from "./pow.js";

const TOKEN = "community-boards.session";

// Left by clients before v4, which took the API's address from `?api=`.
try {
  localStorage.removeItem("api-base");
} catch {
  // Storage disabled: nothing was kept either.
}

/** "" (this page's origin) or the configured origin, checked to be one. */
function apiOrigin(configured, name = "API_ORIGIN") {
  if (!configured) return "";
  const url = new URL(configured);
  // http only on this machine (a local static host in front of a local server).
  if (url.protocol !== "https:" && url.hostname !== "127.0.0.1" && url.hostname !== "localhost") {
    throw new Error(`config.js: ${name} must be https (it is ${configured})`);
  }
  if (url.href !== `${url.origin}/`) {
    throw new Error(`config.js: ${name} must be an origin only, without a path (it is ${configured})`);
  }
  return url.origin;
}

export const API_BASE = apiOrigin(API_ORIGIN);
// The API's origin, which the API's relative URLs (`/media/...`) are of.
const API_AT = API_BASE || location.origin;
const IMAGE_ORIGINS = [location.origin, API_AT, apiOrigin(MEDIA_ORIGIN, "MEDIA_ORIGIN")].filter(Boolean);
const UPLOAD_ORIGINS = [API_AT, apiOrigin(UPLOAD_ORIGIN, "UPLOAD_ORIGIN")].filter(Boolean);

/** A URL the API gave, made absolute at the API's origin; null unless it is at one of `origins`. */
function at(url, origins) {
  try {
    const resolved = new URL(url, API_AT);
    return origins.includes(resolved.origin) ? resolved.href : null;
  } catch {
    return null;
  }
}

/** An image's `url` or `thumbnail_url` as the page may show it, or null (an origin not configured). */
export const mediaUrl = (url) => (url ? at(url, IMAGE_ORIGINS) : null);

export const session = {
  get() {
    const raw = sessionStorage.getItem(TOKEN);
    return raw ? JSON.parse(raw) : null;
  },
  set(value) {
    sessionStorage.setItem(TOKEN, JSON.stringify(value));
  },
  /** Changes some of the session's fields (`{totp: true}`), if there is one. */
  update(fields) {
    const current = this.get();
    if (current) this.set({ ...current, ...fields });
  },
  clear() {
    sessionStorage.removeItem(TOKEN);
  },
};

/**
 * An answer that was not a success: the contract's code, the one input it
 * is about (`field`, docs/API.md Conventions) and the English message,
 * which pages never parse: they show Korean text chosen by code and field.
 */
export class ApiError extends Error {
  constructor(status, code, message, retryAfter, field = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
    this.field = field;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * "solving" and "solved" events around each proof of work, for a page to
 * say "확인 중" meanwhile (the API client itself draws nothing).
 */
export const powEvents = new EventTarget();

/** Solves in a worker, so the page stays responsive; on the page where no worker starts. */
function solveInWorker(challenge) {
  let worker;
  try {
    worker = new Worker(new URL("./pow.js", import.meta.url), { type: "module" });
  } catch {
    return solve(challenge);
  }
  return new Promise((resolve) => {
    worker.onmessage = (message) => {
      worker.terminate();
      resolve(message.data.number);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      worker.terminate();
      resolve(solve(challenge));
    };
    worker.postMessage({ challenge: challenge.challenge, salt: challenge.salt, maxnumber: challenge.maxnumber });
  });
}

/**
 * The X-Pow header for a 428's challenge: base64 of ALTCHA's payload JSON,
 * or null where it cannot be solved (another algorithm, no number fits).
 */
async function proofOfWork(challenge) {
  if (challenge.algorithm !== "SHA-256") return null;
  powEvents.dispatchEvent(new Event("solving"));
  try {
    const number = await solveInWorker(challenge);
    if (number === null || number === undefined) return null;
    const { algorithm, salt, signature } = challenge;
    // All ASCII (hex, digits and the salt's `?expires=...&`): btoa takes it as it is.
    return btoa(JSON.stringify({ algorithm, challenge: challenge.challenge, number, salt, signature }));
  } finally {
    powEvents.dispatchEvent(new Event("solved"));
  }
}

/** A request answered 428 is solved and sent again at most this often. */
const POW_ATTEMPTS = 2;

function newKey() {
  return crypto.randomUUID();
}

/**
 * One request. `body` is sent as JSON; `key` adds an Idempotency-Key and
 * retries on 503 / 409 request_in_progress (at most `retries` times, after
 * Retry-After); `ifMatch` adds If-Match; a 428 with a challenge is solved
 * and sent again with X-Pow (the same key: a refused write claimed none).
 * Answers `{status, body, headers}` or throws ApiError.
 */
export async function request(method, path, { body, key, ifMatch, retries = 3, auth = true, headers: extra } = {}) {
  const headers = { accept: "application/json", ...extra };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (key) headers["idempotency-key"] = key;
  if (ifMatch) headers["if-match"] = ifMatch;
  const current = session.get();
  if (auth && current) headers.authorization = `Bearer ${current.token}`;
  let retried = 0;
  let solved = 0;
  for (;;) {
    let response;
    try {
      response = await fetch(API_BASE + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      // No answer at all: a create with its key is safe to send again.
      if (key && retried < retries) {
        retried++;
        await sleep(1000);
        continue;
      }
      throw new ApiError(0, "network", "the server could not be reached; try again", 0);
    }
    const text = await response.text();
    const json = text ? JSON.parse(text) : null;
    if (response.ok) return { status: response.status, body: json, headers: response.headers };
    const retryAfter = Number(response.headers.get("retry-after") || 0);
    const code = json?.error?.code || "unknown";
    if (response.status === 428 && code === "pow_required" && json?.challenge && solved < POW_ATTEMPTS) {
      solved++;
      const proof = await proofOfWork(json.challenge);
      if (proof) {
        headers["x-pow"] = proof;
        continue;
      }
    }
    const retryable = response.status === 503 || code === "request_in_progress";
    if (retryable && (key || method === "GET") && retried < retries) {
      retried++;
      await sleep(Math.max(1, retryAfter) * 1000);
      continue;
    }
    if (response.status === 401 && current && code === "unauthorized") {
      // Signed out elsewhere, expired or revoked: forget the token.
      session.clear();
    }
    throw new ApiError(
      response.status,
      code,
      json?.error?.message || response.statusText,
      retryAfter,
      json?.error?.field ?? null,
    );
  }
}

/** A create: one Idempotency-Key for all its retries. */
export function create(path, body) {
  return request("POST", path, { body, key: newKey() });
}

// ------------------------------------------------------------- images

/** The types a board takes (docs/API.md, Images), as a grant declares them. */
export const IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/** An upload stopped by its page (the image removed from the form before it was done). */
const stopped = () => new DOMException("the upload was stopped", "AbortError");

/**
 * Sends `file` as its grant's `upload` says: a PUT of the bytes with
 * `headers` (the server's own URL), or a multipart POST of every `fields`
 * entry in order and then the file as the last part, `file` (S3's presigned
 * POST). No token goes with it: the grant is in the URL or the fields.
 */
function sendFile(upload, file, onProgress, signal) {
  const url = at(upload.url, UPLOAD_ORIGINS);
  if (!url) {
    return Promise.reject(new ApiError(0, "upload_origin", `the upload URL is at no configured origin: ${upload.url}`, 0));
  }
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(upload.method, url);
    xhr.upload.addEventListener("progress", (e) => e.lengthComputable && onProgress(e.loaded / e.total));
    xhr.addEventListener("load", () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve();
        return;
      }
      // The server answers JSON, S3 XML: either way the file did not arrive.
      reject(new ApiError(xhr.status, "upload_failed", xhr.responseText.slice(0, 200), 0));
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, "network", "the upload could not be sent", 0)));
    xhr.addEventListener("abort", () => reject(stopped()));
    signal?.addEventListener("abort", () => xhr.abort());
    if (upload.method === "POST") {
      const form = new FormData();
      for (const [name, value] of Object.entries(upload.fields || {})) form.append(name, value);
      form.append("file", file);
      xhr.send(form);
    } else {
      for (const [name, value] of Object.entries(upload.headers || {})) xhr.setRequestHeader(name, value);
      xhr.send(file);
    }
  });
}

/** How long an upload's check is awaited before the page gives up on it. */
const CHECK_FOR_MS = 120_000;

/** `GET /media/{id}` until its check is done (ready or rejected), sooner at first. */
async function checked(id, signal) {
  const deadline = Date.now() + CHECK_FOR_MS;
  for (let wait = 200; ; wait = Math.min(wait * 1.5, 2000)) {
    if (signal?.aborted) throw stopped();
    const { body } = await request("GET", `/media/${encodeURIComponent(id)}`);
    if (body.status !== "pending") return body;
    if (Date.now() > deadline) throw new ApiError(0, "check_timeout", "the image's check did not finish", 0);
    await sleep(wait);
  }
}

/**
 * One image onto `board`: a grant (a guest's when signed out, with its
 * proof of work as any anonymous write), the file sent where the grant
 * says (`onProgress(0..1)`), then its check awaited (`onChecking()`).
 * Answers `GET /media/{id}`: `ready` with url, thumbnail_url, width and
 * height, or `rejected` with its reason. `signal` stops it.
 */
export async function uploadImage(board, file, { onProgress = () => {}, onChecking = () => {}, signal } = {}) {
  const { body: grant } = await create(`/boards/${board}/media`, { content_type: file.type, bytes: file.size });
  if (signal?.aborted) throw stopped();
  await sendFile(grant.upload, file, onProgress, signal);
  onChecking();
  return checked(grant.id, signal);
}

/** A post's or comment's body with its images (`media`) when it has any. */
const withMedia = (body, media) => (media && media.length ? { ...body, media } : body);

/** Where a block of `{member_id}` or `{tag}` (a guest's) lives. */
function blockPath(who) {
  return who.member_id
    ? `/members/me/blocks/members/${encodeURIComponent(who.member_id)}`
    : `/members/me/blocks/guests/${encodeURIComponent(who.tag)}`;
}

export const api = {
  signup: (username, password, nickname) => create("/members", { username, password, nickname }),
  /**
   * Signs in; `totp` is a code or a recovery code, sent only once the
   * API asked for one (401 totp_required). Answers the session, whose
   * `password_warning` says when the password breaks today's rules.
   */
  async login(username, password, totp) {
    const sent = totp ? { username, password, totp } : { username, password };
    const { body } = await request("POST", "/sessions", { body: sent, auth: false });
    session.set({ token: body.token, member: body.member, totp: Boolean(totp) });
    return body;
  },
  me: () => request("GET", "/members/me").then((r) => r.body),
  // Boards are resources: names, categories and rules come from the API.
  boards: () => request("GET", "/boards").then((r) => r.body.boards),
  board: (board) => request("GET", `/boards/${board}`).then((r) => r.body),
  /** Creates (admins, 201) or replaces the rules of (staff, 200) a board: `created` says which. */
  putBoard: (board, settings) =>
    request("PUT", `/boards/${board}`, { body: settings }).then((r) => ({ ...r.body, created: r.status === 201 })),
  /** A page of a board: `filter` is {category, best}, each optional; they combine. */
  posts: (board, cursor, filter = {}) => {
    const query = new URLSearchParams();
    if (filter.category) query.set("category", filter.category);
    if (filter.best) query.set("best", "true");
    if (cursor) query.set("cursor", cursor);
    const search = query.toString();
    return request("GET", `/boards/${board}/posts${search ? `?${search}` : ""}`).then((r) => r.body);
  },
  post: (board, id) =>
    request("GET", `/boards/${board}/posts/${id}`).then((r) => ({ ...r.body, etag: r.headers.get("etag") })),
  postByNumber: (board, number) =>
    request("GET", `/boards/${board}/posts/by-number/${number}`).then((r) => ({
      ...r.body,
      etag: r.headers.get("etag"),
    })),
  comments: (board, id, cursor) =>
    request("GET", `/boards/${board}/posts/${id}/comments?cursor=${encodeURIComponent(cursor)}`).then(
      (r) => r.body,
    ),
  // `category`: null or one of the board's categories.
  // `media`: ids of ready images, at most 20 on a post and 1 on a comment.
  createPost: (board, title, body, category = null, media = []) =>
    create(`/boards/${board}/posts`, withMedia({ title, body, category }, media)).then((r) => r.body),
  createGuestPost: (board, nickname, password, title, body, category = null, media = []) =>
    create(`/boards/${board}/posts/guest`, withMedia({ nickname, password, title, body, category }, media)).then(
      (r) => r.body,
    ),
  // An edit's `media` replaces the post's images (an empty list drops them all).
  editPost: (board, id, title, body, category, etag, media) =>
    request("PUT", `/boards/${board}/posts/${id}`, { body: { title, body, category, media }, ifMatch: etag }).then(
      (r) => ({ ...r.body, etag: r.headers.get("etag") }),
    ),
  editGuestPost: (board, id, password, title, body, category, etag, media) =>
    request("PUT", `/boards/${board}/posts/${id}/guest`, {
      body: { password, title, body, category, media },
      ifMatch: etag,
    }).then((r) => ({ ...r.body, etag: r.headers.get("etag") })),
  deletePost: (board, id) => request("DELETE", `/boards/${board}/posts/${id}`),
  deleteGuestPost: (board, id, password) =>
    request("DELETE", `/boards/${board}/posts/${id}/guest`, { body: { password } }),
  comment: (board, id, body, parentId, media = []) =>
    create(`/boards/${board}/posts/${id}/comments`, withMedia({ body, parent_id: parentId || null }, media)).then(
      (r) => r.body,
    ),
  guestComment: (board, id, nickname, password, body, parentId, media = []) =>
    create(
      `/boards/${board}/posts/${id}/comments/guest`,
      withMedia({ nickname, password, body, parent_id: parentId || null }, media),
    ).then((r) => r.body),
  deleteComment: (board, id, commentId) => request("DELETE", `/boards/${board}/posts/${id}/comments/${commentId}`),
  deleteGuestComment: (board, id, commentId, password) =>
    request("DELETE", `/boards/${board}/posts/${id}/comments/${commentId}/guest`, { body: { password } }),
  like: (board, id) => request("PUT", `/boards/${board}/posts/${id}/like`).then((r) => r.body),
  unlike: (board, id) => request("DELETE", `/boards/${board}/posts/${id}/like`).then((r) => r.body),
  // A member's dislike excludes their like (and the reverse); a guest votes once, never withdrawn.
  dislike: (board, id) => request("PUT", `/boards/${board}/posts/${id}/dislike`).then((r) => r.body),
  undislike: (board, id) => request("DELETE", `/boards/${board}/posts/${id}/dislike`).then((r) => r.body),
  guestVote: (board, id, vote) =>
    request("POST", `/boards/${board}/posts/${id}/votes/guest`, { body: { vote }, auth: false }).then((r) => r.body),
  recategorize: (board, id, category) =>
    request("PUT", `/boards/${board}/posts/${id}/category`, { body: { category } }).then((r) => r.body),
  unbest: (board, id) => request("DELETE", `/boards/${board}/best/${id}`),
  // TOTP: start an enrollment with the current password (and, for an admin
  // ADMIN_USERNAMES lists, the deployment's enroll token): `{secret,
  // otpauth_uri}`; confirm it with a code (answers the recovery codes, this
  // once); end it.
  startTotp: (password, enrollToken) =>
    request("POST", "/members/me/totp", {
      body: { password },
      headers: enrollToken ? { "Admin-Enroll-Token": enrollToken } : undefined,
    }).then((r) => r.body),
  confirmTotp: (code) =>
    request("POST", "/members/me/totp/confirm", { body: { code } }).then((r) => r.body.recovery_codes),
  endTotp: (password, code) => request("DELETE", "/members/me/totp", { body: code ? { password, code } : { password } }),
  changePassword: (current_password, new_password) =>
    request("PUT", "/members/me/password", { body: { current_password, new_password } }),
  signOutEverywhere: () => request("DELETE", "/members/me/sessions"),
  deleteAccount: (password, delete_content) =>
    request("DELETE", "/members/me", { body: { password, delete_content } }),
  myPosts: (cursor) =>
    request("GET", `/members/me/posts${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`).then((r) => r.body),
  myComments: (cursor) =>
    request("GET", `/members/me/comments${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`).then(
      (r) => r.body,
    ),
  removePost: (board, id, reason) => create(`/boards/${board}/posts/${id}/remove`, { reason }),
  removeComment: (board, id, commentId, reason) =>
    create(`/boards/${board}/posts/${id}/comments/${commentId}/remove`, { reason }),
  ban: (board, target, reason, duration_s) => create(`/boards/${board}/bans`, { ...target, reason, duration_s }),
  bans: (board) => request("GET", `/boards/${board}/bans`).then((r) => r.body),
  unban: (board, banId) => request("DELETE", `/boards/${board}/bans/${banId}`),
  report: (board, id, reason, commentId) =>
    create(`/boards/${board}/posts/${id}${commentId ? `/comments/${commentId}` : ""}/reports`, { reason }),
  reports: (board) => request("GET", `/boards/${board}/reports`).then((r) => r.body),
  resolve: (board, reportId) => request("POST", `/boards/${board}/reports/${reportId}/resolve`, { key: newKey() }),
  /** The versions an edit replaced, newest first: `[{title, body, edited_at}]`. */
  revisions: (board, id) => request("GET", `/boards/${board}/posts/${id}/revisions`).then((r) => r.body.revisions),
  // Notifications: a page of 20 newest first, the unread count (the
  // badge's poll) and marking read (`upTo`: that id and every older one;
  // absent: all). The mark creates nothing: no Idempotency-Key.
  notifications: (cursor) =>
    request(
      "GET",
      `/members/me/notifications?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    ).then((r) => r.body),
  unread: () => request("GET", "/members/me/notifications/unread").then((r) => r.body.unread),
  markRead: (upTo) =>
    request("POST", "/members/me/notifications/read", { body: upTo ? { up_to: upTo } : {} }).then(
      (r) => r.body.unread,
    ),
  // Blocks: a member by id, a guest by tag (`{member_id}` or `{tag}`).
  blocks: () => request("GET", "/members/me/blocks").then((r) => r.body),
  block: (who) => request("PUT", blockPath(who)),
  unblock: (who) => request("DELETE", blockPath(who)),
  modlog: (board, cursor) =>
    request("GET", `/boards/${board}/modlog${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`).then(
      (r) => r.body,
    ),
};
