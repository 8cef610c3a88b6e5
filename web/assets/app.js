// The reference client's pages: a hash router (`#/b/free`, `#/b/free/p/<id>`,
// ...) over the API client (api.js). Every page is rebuilt from the API on
// navigation; nothing is kept but the session, the list of boards (names
// and rules, read again on every board page) and the member's roles.

import { api, ApiError, IMAGE_TYPES, mediaUrl, powEvents, session, uploadImage } from "./api.js";
import { h, listDate, when } from "./dom.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");

// ---------------------------------------------------------------- helpers

const go = (hash) => {
  if (location.hash === hash) route();
  else location.hash = hash;
};
const me = () => session.get()?.member || null;

// Boards are resources: `GET /boards` names them and says their rules
// (categories, dislikes, guest writes), so nothing about them is configured here.
let boards = null;
async function loadBoards(fresh = false) {
  if (!boards || fresh) boards = await api.boards();
  return boards;
}
const boardInfo = (slug) => boards?.find((b) => b.slug === slug) || null;
const boardName = (slug) => boardInfo(slug)?.name || slug;

/** The board's settings; "없는 게시판" when the API has no such board. */
async function requireBoard(slug, fresh = false) {
  await loadBoards(fresh);
  if (!boardInfo(slug) && !fresh) await loadBoards(true);
  const info = boardInfo(slug);
  if (!info) throw new ApiError(404, "no_board", "no such board", 0);
  return info;
}

/** The signed-in member's roles (`GET /members/me`), read once per sign-in. */
let roles = null;
async function loadRoles() {
  if (!me()) {
    roles = null;
    return null;
  }
  if (!roles) {
    try {
      roles = (await api.me()).roles;
    } catch {
      return null;
    }
  }
  return roles;
}

/** Whether the signed-in member is staff of `board` (admin, or its moderator). */
async function isStaff(board) {
  const r = await loadRoles();
  return Boolean(r && (r.admin || r.moderates.includes(board)));
}

// The unread badge: `GET /members/me/notifications/unread` once on
// load, then at most every 30 s while the tab is visible (Page Visibility
// API: a hidden tab asks nothing, and asks at once on coming back if its
// last answer is older than that). Marking read answers the new count,
// which the badge shows at once.
const UNREAD_EVERY_MS = 30_000;
const unread = { count: 0, member: null, askedAt: 0, timer: null };

/** Starts, keeps or stops the poll for whoever is signed in now; called on every navigation. */
function pollUnread() {
  clearTimeout(unread.timer);
  unread.timer = null;
  const member = me();
  if (member?.id !== unread.member) {
    unread.member = member?.id ?? null;
    unread.askedAt = 0;
    showUnread(0);
  }
  if (!member || document.visibilityState === "hidden") return;
  unread.timer = setTimeout(askUnread, Math.max(0, unread.askedAt + UNREAD_EVERY_MS - Date.now()));
}

async function askUnread() {
  unread.timer = null;
  const asker = unread.member;
  unread.askedAt = Date.now();
  try {
    const count = await api.unread();
    if (unread.member === asker) showUnread(count);
  } catch {
    // Kept as it was: the next poll asks again (a 401 has signed the tab out).
  }
  pollUnread();
}

/** The badge's count, changed in place (the bar is not rebuilt under a reader's focus). */
function showUnread(count) {
  unread.count = count;
  nav.querySelector("#notifications-link")?.replaceChildren(...unreadLinkText());
}

function unreadLinkText() {
  if (!unread.count) return ["알림"];
  const shown = unread.count > 99 ? "99+" : String(unread.count);
  return [
    "알림",
    h("span", { class: "unread-badge", id: "unread-count", "aria-hidden": "true" }, shown),
    srOnly(` (읽지 않은 알림 ${unread.count}개)`),
  ];
}

document.addEventListener("visibilitychange", pollUnread);

/** Text for screen readers only (a column's label where the layout drops it). */
const srOnly = (text) => h("span", { class: "sr-only" }, text);

/** The author as the board shows it: nickname, and what kind of writer. */
function author(a) {
  if (a.kind === "deleted_member") return h("span", { class: "author deleted" }, "탈퇴한 회원");
  if (a.kind === "guest")
    return h(
      "span",
      { class: "author guest" },
      a.nickname,
      h("span", { class: "badge", title: "손님: 같은 곳에서 쓴 글은 같은 태그" }, a.tag ? `손님 #${a.tag}` : "손님"),
    );
  return h("span", { class: "author member" }, a.nickname, h("span", { class: "badge member" }, "회원"));
}

/** The author in a board list: a guest's tag in brackets after the nickname, as Korean boards show it. */
function listAuthor(a) {
  if (a.kind === "deleted_member") return h("span", { class: "author deleted" }, "탈퇴한 회원");
  if (a.kind === "guest")
    return h(
      "span",
      { class: "author guest" },
      a.nickname,
      a.tag ? h("span", { class: "tag", title: "손님: 같은 곳에서 쓴 글은 같은 태그" }, `(${a.tag})`) : null,
    );
  return h("span", { class: "author member" }, a.nickname, h("span", { class: "member-mark", title: "회원" }, srOnly("(회원)")));
}

/**
 * Whom a signed-in member can block through this author: another
 * member (by id) or a guest with a tag; null for oneself, a deleted member
 * or a guest without a tag.
 */
function blockTarget(a) {
  const member = me();
  if (!member) return null;
  if (a.kind === "member" && a.member_id && a.member_id !== member.id) return { member_id: a.member_id };
  if (a.kind === "guest" && a.tag) return { tag: a.tag };
  return null;
}

/** The blocks as sets, for the author menus to say 차단 or 차단 해제. */
function blockSets(list) {
  return { members: new Set(list.members.map((m) => m.id)), guests: new Set(list.guests.map((g) => g.tag)) };
}

function isBlocked(blocks, target) {
  return target.member_id ? blocks.members.has(target.member_id) : blocks.guests.has(target.tag);
}

/** Why a block was refused, in Korean: the limit (the one refusal a menu can meet), or a member gone. */
function blockRefusal(error) {
  if (error instanceof ApiError && error.code === "validation_failed") {
    return [
      "차단은 회원과 손님을 합쳐 500명까지 할 수 있습니다. ",
      h("a", { href: "#/account/blocks" }, "내 계정의 차단 목록"),
      "에서 먼저 풀어 주세요.",
    ];
  }
  if (error instanceof ApiError && error.code === "not_found") return ["탈퇴했거나 없는 회원입니다."];
  return explain(error);
}

let menuSeq = 0;

/**
 * The author of a post or comment with a small menu on the name for a
 * signed-in member: 차단 or 차단 해제 (PUT or DELETE
 * /members/me/blocks/...), then the page is read again, without the
 * blocked author's comments. A disclosure button (aria-expanded), not an
 * ARIA menu: one or two plain buttons need no arrow-key handling.
 */
function authorWithMenu(a, blocks) {
  const target = blocks && blockTarget(a);
  if (!target) return author(a);
  const blocked = isBlocked(blocks, target);
  const id = `author-menu-${++menuSeq}`;
  const who = a.kind === "guest" ? `${a.nickname} (손님 #${a.tag})` : a.nickname;
  const error = h("p", { class: "error", role: "alert" });
  const act = h(
    "button",
    {
      type: "button",
      class: blocked ? "unblock" : "block",
      onclick: async () => {
        act.disabled = true;
        error.textContent = "";
        try {
          if (blocked) await api.unblock(target);
          else await api.block(target);
          route();
        } catch (e) {
          error.replaceChildren(...blockRefusal(e));
          act.disabled = false;
        }
      },
    },
    blocked ? "차단 해제" : "차단",
  );
  const panel = h(
    "div",
    { class: "author-menu", id, hidden: true },
    h("p", { class: "hint" }, blocked ? `${who} 님을 차단했습니다. 풀면 글과 댓글이 다시 보입니다.` : "차단하면 이 사람의 글과 댓글이 보이지 않고, 알림도 오지 않습니다."),
    act,
    error,
  );
  const toggle = h(
    "button",
    {
      type: "button",
      class: "author-name",
      "aria-expanded": "false",
      "aria-controls": id,
      onclick: () => {
        panel.hidden = !panel.hidden;
        toggle.setAttribute("aria-expanded", String(!panel.hidden));
      },
    },
    author(a),
    srOnly(" 메뉴"),
  );
  // Escape puts the menu away, back on its button.
  const close = (event) => {
    if (event.key !== "Escape" || panel.hidden) return;
    panel.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    toggle.focus();
  };
  return h("span", { class: blocked ? "author-with-menu blocked" : "author-with-menu", onkeydown: close }, toggle, panel);
}

/** A sign-in hint where the board takes nothing from guests. */
function signInHint(why) {
  return h(
    "p",
    { class: "hint sign-in" },
    why,
    " ",
    h("a", { href: "#/login" }, "로그인"),
    "하거나 ",
    h("a", { href: "#/signup" }, "회원가입"),
    "해 주세요.",
  );
}

/**
 * What each field's rules are (docs/API.md, Field rules), shown when the
 * API refuses that field: `field` says which, the English message is never
 * read.
 */
const FIELD_RULES = {
  username: "아이디는 영문 소문자, 숫자, _ 로 3-30자여야 합니다.",
  password: "비밀번호 길이가 맞지 않습니다 (회원 8-256자, 손님 4-256자).",
  current_password: "지금 비밀번호를 1-256자로 입력해 주세요.",
  new_password: "새 비밀번호는 8-256자여야 합니다.",
  nickname: "닉네임은 1-30자이고 보이지 않는 문자나 제어 문자, 금지어를 쓸 수 없습니다.",
  title: "제목은 1-200자이고 제어 문자, 방향 제어 문자, 금지어를 쓸 수 없습니다.",
  body: "내용이 비었거나 너무 깁니다 (글 20,000자, 댓글 2,000자). 제어 문자와 금지어는 쓸 수 없습니다.",
  reason: "이유는 1-500자이고 제어 문자와 금지어를 쓸 수 없습니다.",
  duration_s: "기간은 1분에서 1년 사이이거나 영구여야 합니다.",
  delete_content: "글과 댓글을 지울지 골라 주세요.",
  scope: "차단 범위가 올바르지 않습니다.",
  parent_id: "답글을 달 댓글이 이 글의 댓글이 아닙니다.",
  post_id: "이 글의 작성자는 차단할 수 없습니다 (탈퇴했거나 기록이 없습니다).",
  comment_id: "이 댓글의 작성자는 차단할 수 없습니다 (탈퇴했거나 기록이 없습니다).",
  member_id: "회원을 찾을 수 없습니다.",
  cursor: "페이지 주소가 올바르지 않습니다. 첫 페이지부터 다시 보세요.",
  limit: "한 페이지 개수는 1-100이어야 합니다.",
  // Boards, categories and votes.
  slug: "게시판 주소는 영문 소문자, 숫자, - 로 1-40자여야 합니다.",
  name: "게시판 이름은 1-40자이고 제어 문자, 방향 제어 문자, 금지어를 쓸 수 없습니다.",
  description: "설명은 500자까지 쓸 수 있습니다.",
  categories: "말머리는 20개까지, 각각 1-12자이고 서로 달라야 합니다 (쉼표는 쓸 수 없습니다).",
  best_likes: "개념글 기준은 1-10,000 사이의 수이거나 비워 두어야 합니다 (개념글 없음).",
  dislikes: "비추천 설정을 목록에서 골라 주세요.",
  guest_writes: "손님 글쓰기 허용 여부를 골라 주세요.",
  lock_after_comments: "댓글 잠금 여부를 골라 주세요.",
  category: "말머리를 이 게시판의 말머리 중에서 골라 주세요.",
  vote: "추천 또는 비추천만 할 수 있습니다.",
  best: "개념글 보기 주소가 올바르지 않습니다.",
  // Images.
  media: "이미지를 다시 올려 주세요: 이 게시판에 올려 확인이 끝난 이미지만, 글에 20개, 댓글에 1개까지 붙일 수 있습니다.",
  content_type: "JPEG, PNG, GIF, WebP 이미지만 올릴 수 있습니다.",
  bytes: "이미지 파일이 비었거나 너무 큽니다 (20MB까지).",
  // TOTP.
  code: "인증 앱의 6자리 코드나 복구 코드를 입력해 주세요.",
  totp: "인증 앱의 6자리 코드나 복구 코드를 입력해 주세요.",
};

/** A wrong credential, by the field it names: a password, or a TOTP code. */
const WRONG = {
  code: "코드가 맞지 않습니다. 인증 앱에 지금 나온 6자리 코드나 아직 쓰지 않은 복구 코드를 입력해 주세요.",
  totp: "코드가 맞지 않습니다. 인증 앱에 지금 나온 6자리 코드나 아직 쓰지 않은 복구 코드를 입력해 주세요.",
};

/** Korean for every error code of docs/API.md (Errors), and the client's own. */
const CODES = {
  malformed_json: "요청 형식이 올바르지 않습니다.",
  validation_failed: "입력값이 규칙에 맞지 않습니다.",
  unauthorized: "다시 로그인해 주세요.",
  invalid_credentials: "아이디 또는 비밀번호가 맞지 않습니다.",
  wrong_password: "비밀번호가 맞지 않습니다.",
  forbidden: "권한이 없습니다.",
  banned: "이 게시판에서 차단되었습니다.",
  not_found: "찾는 글이나 댓글이 없습니다. 지워졌을 수 있습니다.",
  method_not_allowed: "할 수 없는 요청입니다.",
  username_taken: "이미 쓰이는 아이디입니다.",
  request_in_progress: "같은 요청을 처리하고 있습니다. 잠시 후 다시 시도하세요.",
  precondition_failed: "다른 사람이 그사이 이 글을 고쳤습니다. 새로 불러와 다시 고쳐 주세요.",
  payload_too_large: "내용이 너무 깁니다.",
  unsupported_media_type: "요청 형식이 올바르지 않습니다.",
  idempotency_key_reused: "이미 보낸 요청과 다른 내용입니다. 새로 고쳐 다시 보내 주세요.",
  too_many_attempts: "비밀번호를 너무 많이 틀렸습니다.",
  rate_limited: "너무 자주 쓰고 있습니다.",
  unavailable: "서버가 바쁩니다. 잠시 후 다시 시도하세요.",
  internal: "서버 오류가 났습니다.",
  network: "서버에 연결할 수 없습니다. 잠시 후 다시 시도하세요.",
  already_voted: "이미 이 글에 추천이나 비추천을 했습니다 (손님은 글마다 한 번).",
  locked: "다른 사람이 댓글을 단 글은 고치거나 지울 수 없습니다 (이 게시판의 규칙).",
  totp_required: "2단계 인증을 켠 계정입니다. 인증 앱에 나온 6자리 코드를 입력해 주세요.",
  pow_required: "잠시 후 다시 시도하세요 (자동 입력 확인이 필요합니다).",
  no_board: "없는 게시판입니다.",
  board_exists: "이미 있는 게시판 주소입니다. 규칙을 바꾸려면 위 목록에서 고르세요.",
  // Images: the file's own trip, and what the client refuses itself.
  upload_failed: "파일을 보내지 못했습니다. 다시 골라 주세요.",
  upload_origin: "설정되지 않은 곳으로는 파일을 보내지 않습니다.",
  check_timeout: "이미지 확인이 끝나지 않았습니다. 잠시 후 다시 골라 주세요.",
};

/**
 * An error in Korean, from its code and the field it names: the field's
 * rules for a refused input, the code's text otherwise. A ban keeps the
 * server's detail (until when, and the staff's reason) after the Korean.
 */
function describe(error) {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  if (error.code === "invalid_credentials" && error.field) return WRONG[error.field] || "비밀번호가 맞지 않습니다.";
  if (error.code === "validation_failed" && (error.field === "password" || error.field === "new_password")) {
    const refused = passwordRefusal(error.message);
    if (refused) return refused;
  }
  if ((error.code === "validation_failed" || error.code === "malformed_json") && FIELD_RULES[error.field]) {
    return FIELD_RULES[error.field];
  }
  if (error.code === "totp_required" && error.status === 403) {
    return "관리 기능을 쓰려면 먼저 2단계 인증(TOTP)을 켜야 합니다.";
  }
  if (error.code === "totp_required" && error.status === 409) {
    return "이 회원은 아직 2단계 인증(TOTP)을 켜지 않아 운영자로 임명할 수 없습니다. 먼저 켜 달라고 해 주세요.";
  }
  if (error.code === "forbidden" && error.field === "enroll_token") {
    return "관리자 등록 토큰이 맞지 않습니다. 배포할 때 정한 ADMIN_ENROLL_TOKEN을 입력해 주세요.";
  }
  const text = CODES[error.code] || `오류가 났습니다 (${error.status} ${error.code}).`;
  return error.code === "banned" ? `${text} (${error.message})` : text;
}

/**
 * describe(), with the way forward where there is one: staff refused for
 * want of TOTP (403 totp_required) get a link to the account page's
 * 2단계 인증 section. Nodes, for `h` or `replaceChildren`.
 */
function explain(error) {
  const text = describe(error);
  if (error instanceof ApiError && error.code === "totp_required" && error.status === 403) {
    return [text, " ", h("a", { href: "#/account/totp", class: "totp-link" }, "내 계정에서 2단계 인증 켜기")];
  }
  return [text];
}

// ------------------------------------------------------- member passwords

/**
 * The member password minimum this client assumes (docs/API.md: 8 by
 * default); a refusal that names the server's own (MEMBER_PASSWORD_MIN, or
 * 15 under PASSWORD_POLICY=nist for a password alone) replaces it.
 */
let memberPasswordMin = 8;
const PASSWORD_MAX = 256;

/** Length as the API counts it: code points after NFKC. */
const passwordLength = (value) => [...value.normalize("NFKC")].length;

/**
 * Why the API refused a new member password, in Korean. The one place
 * a page reads the English message: code and field say that a password was
 * refused, only the message says whether as too short (with the minimum
 * this server asks), on the list of common passwords, or as the member's
 * own username or nickname (docs/API.md, Passwords and staff sign-in).
 */
function passwordRefusal(message) {
  if (/username or nickname/.test(message)) return "아이디나 닉네임과 같은 비밀번호는 쓸 수 없습니다.";
  if (/too common/.test(message)) {
    return "너무 흔한 비밀번호입니다. 유출되었거나 많이 쓰여 남이 짐작하기 쉬운 비밀번호 목록에 있습니다. 다른 비밀번호를 골라 주세요.";
  }
  const range = /must be (\d+)-(\d+)/.exec(message);
  if (range) {
    const alone = /only factor/.test(message) ? " 2단계 인증을 켜지 않은 계정의 기준입니다." : "";
    return `${range[1]}자 이상 ${range[2]}자 이하로 입력해 주세요.${alone}`;
  }
  const shorter = /shorter than (\d+) characters/.exec(message);
  if (shorter) {
    return `2단계 인증 없이 쓰기에는 짧은 비밀번호입니다 (${shorter[1]}자 이상). 먼저 비밀번호를 바꿔 주세요.`;
  }
  return null;
}

/**
 * What a new password's field says as it is typed: its length against
 * the rules, nothing about kinds of characters (NIST SP 800-63B-4 forbids
 * composition rules; the API has none).
 */
function passwordHint(value) {
  const n = passwordLength(value);
  const range = `${memberPasswordMin}-${PASSWORD_MAX}자`;
  if (n === 0) return `${range}. 글자 종류를 섞을 필요는 없습니다: 길고 남이 짐작하기 어려운 문장이 좋습니다.`;
  if (n < memberPasswordMin) return `지금 ${n}자: ${memberPasswordMin - n}자 더 필요합니다 (${range}).`;
  if (n > PASSWORD_MAX) return `지금 ${n}자: ${PASSWORD_MAX}자까지 쓸 수 있습니다.`;
  return `지금 ${n}자: 길이는 충분합니다. 흔한 비밀번호와 아이디·닉네임은 쓸 수 없습니다.`;
}

/** What a login's `password_warning` asks of the member, in Korean. */
const PASSWORD_WARNINGS = {
  too_common:
    "이 비밀번호는 유출되었거나 너무 흔한 비밀번호입니다. 다른 사람이 짐작하기 쉬우니 비밀번호를 바꿔 주세요.",
  personal: "비밀번호가 아이디나 닉네임과 같습니다. 다른 사람이 짐작하기 쉬우니 비밀번호를 바꿔 주세요.",
  too_short: "비밀번호가 이 사이트의 기준보다 짧습니다. 더 긴 비밀번호로 바꾸거나 2단계 인증을 켜 주세요.",
};

/** A notice for the next page shown (a login's password warning), then forgotten. */
let pendingNotice = null;

/**
 * While the API client solves a proof of work (an anonymous write answered
 * 428, docs/API.md v4), `slot` (a live region) says so; the answer stops it.
 */
function sayWhileSolving(slot) {
  const solving = () => (slot.textContent = "확인 중… 자동 등록 방지를 위해 잠시 계산합니다.");
  const solved = () => (slot.textContent = "");
  powEvents.addEventListener("solving", solving);
  powEvents.addEventListener("solved", solved);
  return () => {
    powEvents.removeEventListener("solving", solving);
    powEvents.removeEventListener("solved", solved);
  };
}

/**
 * A form: `fields` are [name, label, {type, value, rows, options, optional,
 * min, max, hint, hidden, inputmode, strength}]; on submit `action(values)`
 * runs; an ApiError's message is shown beside the field it names, else
 * above the button; a 429 counts down its Retry-After with the button
 * disabled. `strength`: a new member password, whose hint follows its
 * length as it is typed. `extra`: more of the form after the fields
 * (an image picker), which `action` reads itself.
 */
function form(fields, submitLabel, action, { id, inline, extra } = {}) {
  const errors = {};
  const inputs = {};
  const general = h("p", { class: "error", role: "alert" });
  const solving = h("p", { class: "pow-status", role: "status", "aria-live": "polite" });
  const button = h("button", { type: "submit" }, submitLabel);
  const strengths = {};
  const rows = fields.map(([name, label, options = {}]) => {
    let input;
    const described = options.hint || options.strength ? `${id || name}-${name}-hint` : null;
    if (options.type === "textarea") {
      input = h("textarea", { name, rows: options.rows || 6, required: options.optional ? null : true, "aria-describedby": described });
      input.value = options.value || "";
    } else if (options.type === "select") {
      input = h("select", { name }, options.options.map(([value, text]) => h("option", { value }, text)));
      if (options.value !== undefined) input.value = options.value;
    } else if (options.type === "checkbox") {
      input = h("input", { type: "checkbox", name, "aria-describedby": described });
      input.checked = Boolean(options.value);
    } else {
      input = h("input", {
        name,
        type: options.type || "text",
        autocomplete: options.autocomplete || "off",
        required: options.optional ? null : true,
        min: options.min,
        max: options.max,
        inputmode: options.inputmode,
        "aria-describedby": described,
      });
      input.value = options.value ?? "";
    }
    inputs[name] = input;
    errors[name] = h("span", { class: "field-error", "data-field": name, "aria-live": "polite" });
    const hint = options.hint || options.strength ? h("small", { class: "field-hint", id: described }, options.hint) : null;
    if (options.strength) {
      const follow = () => (hint.textContent = passwordHint(input.value));
      input.addEventListener("input", follow);
      follow();
      strengths[name] = follow;
    }
    return h(
      "label",
      { class: options.type === "checkbox" ? "check" : null, hidden: options.hidden },
      h("span", {}, label),
      input,
      hint,
      errors[name],
    );
  });
  const element = h("form", { class: inline ? "form inline-form" : "form", id }, rows, extra, general, solving, button);
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const slot of [general, ...Object.values(errors)]) slot.textContent = "";
    const values = {};
    for (const [name, input] of Object.entries(inputs)) values[name] = input.type === "checkbox" ? input.checked : input.value;
    button.disabled = true;
    const quiet = sayWhileSolving(solving);
    try {
      await action(values);
      button.disabled = false;
    } catch (error) {
      const field = error instanceof ApiError ? error.field : null;
      const slot = field && errors[field] ? errors[field] : general;
      slot.replaceChildren(...explain(error));
      // A length refusal names this server's minimum: the hint uses it from now on.
      const minimum = strengths[field] && /must be (\d+)-/.exec(error.message);
      if (minimum) {
        memberPasswordMin = Number(minimum[1]);
        strengths[field]();
      }
      if (error instanceof ApiError && error.status === 429 && error.retryAfter > 0) {
        countdown(general, button, error.retryAfter);
      } else {
        button.disabled = false;
      }
    } finally {
      quiet();
    }
  });
  return element;
}

/** 429: "N초 후에 다시 시도하세요", counted down, the button off meanwhile. */
function countdown(slot, button, seconds) {
  const message = slot.textContent;
  let left = seconds;
  const tick = () => {
    slot.textContent = `${message} — ${left}초 후에 다시 시도하세요.`;
    if (left-- <= 0) {
      clearInterval(timer);
      slot.textContent = message;
      button.disabled = false;
    }
  };
  const timer = setInterval(tick, 1000);
  tick();
}

/** A page to show: views build one, and the router shows it if it is still current. */
function page(title, ...children) {
  return { title, children: [h("h1", {}, title), ...children.filter((child) => child !== null && child !== undefined && child !== false)] };
}

function failure(error) {
  return { title: "오류", children: [h("p", { class: "error", role: "alert" }, explain(error)), h("a", { href: "#/" }, "처음으로")] };
}

/** Shows `view` unless another navigation began meanwhile (its answer arrived late). */
function show(view, seq) {
  if (!view || seq !== routeSeq) return;
  document.title = `${view.title} · 커뮤니티 보드`;
  renderNav();
  main.replaceChildren(...view.children);
  if (pendingNotice) {
    main.prepend(pendingNotice);
    pendingNotice = null;
  }
  // A page may name the part to show first (#/account/totp).
  if (view.focus) {
    view.focus.scrollIntoView();
    view.focus.focus();
  }
  // Which navigation is on screen (tests wait for it; nothing reads it otherwise).
  document.body.dataset.route = location.hash;
}

/** The top bar: the board switcher (name and how many posts), and the member's links. */
function renderNav() {
  const member = me();
  const here = /^#\/b\/([^/?]+)/.exec(location.hash)?.[1];
  const manages = member && roles && (roles.admin || roles.moderates.length > 0);
  nav.replaceChildren(
    h("a", { href: "#/", class: "brand" }, "커뮤니티 보드"),
    h(
      "span",
      { class: "boards" },
      (boards || []).map((b) =>
        h(
          "a",
          { href: `#/b/${b.slug}`, "aria-current": b.slug === here ? "page" : null },
          b.name,
          h("span", { class: "count" }, srOnly(" 글 "), String(b.post_count), srOnly("개")),
        ),
      ),
    ),
    member
      ? h(
          "span",
          { class: "who" },
          manages ? h("a", { href: "#/admin" }, "게시판 관리") : null,
          h(
            "a",
            {
              href: "#/notifications",
              id: "notifications-link",
              "aria-current": location.hash.startsWith("#/notifications") ? "page" : null,
            },
            unreadLinkText(),
          ),
          h("a", { href: "#/account" }, `${member.nickname} 님`),
          h(
            "button",
            {
              class: "link",
              onclick: () => {
                session.clear();
                roles = null;
                go("#/");
              },
            },
            "로그아웃",
          ),
        )
      : h("span", { class: "who" }, h("a", { href: "#/login" }, "로그인"), h("a", { href: "#/signup" }, "회원가입")),
  );
}

/** The 말머리 choices of a form: none, the board's, and the post's own if the board dropped it since. */
function categoryOptions(info, current = null) {
  const names = [...info.categories];
  if (current && !names.includes(current)) names.push(current);
  return [["", "말머리 없음"], ...names.map((c) => [c, c])];
}

// ----------------------------------------------------------- images

/** The largest file sent (docs/API.md: MEDIA_MAX_BYTES, 20 MiB by default; a server set lower refuses it itself). */
const IMAGE_MAX_BYTES = 20 * 1024 * 1024;
let pickerSeq = 0;

/**
 * The images of a post or comment form: a file picker (the four types,
 * several at once where `max` allows), each file uploaded as soon as it is
 * chosen with a progress bar, then its thumbnail once the server has checked
 * it, or the reason it was refused; each with a remove button. `current`:
 * the images the post has (an edit starts with them). `ids()` waits for the
 * uploads under way and answers the ready images' ids, in order.
 */
function imagePicker(board, { max, label, current = [] }) {
  const id = `images-${++pickerSeq}`;
  const items = [];
  const list = h("ul", { class: "media-items", "aria-label": "붙인 이미지" });
  const note = h("p", { class: "media-note", role: "status" });
  const input = h("input", {
    type: "file",
    id,
    accept: IMAGE_TYPES.join(","),
    multiple: max > 1,
    "aria-describedby": `${id}-hint`,
  });
  // Refused files stay on show with their reason, but take no place.
  const taken = () => items.filter((item) => item.state !== "refused").length;
  const roomLeft = () => (input.disabled = taken() >= max);
  const set = (item, state, said) => {
    item.state = state;
    item.element.dataset.state = state;
    item.status.textContent = said;
  };
  const remove = (item) => {
    item.controller?.abort();
    items.splice(items.indexOf(item), 1);
    item.element.remove();
    roomLeft();
    note.textContent = `${item.name}: 뺐습니다.`;
    input.focus();
  };
  const itemFor = (name) => {
    const item = { name, state: "sending", media: null, done: Promise.resolve() };
    item.thumb = h("span", { class: "media-thumb" });
    item.bar = h("progress", { max: "100", value: "0", "aria-label": `${name} 올리는 중` });
    item.status = h("span", { class: "media-status" });
    item.element = h(
      "li",
      { class: "media-item" },
      item.thumb,
      h("span", { class: "media-name" }, name),
      item.bar,
      item.status,
      h("button", { type: "button", class: "link media-remove", onclick: () => remove(item) }, "빼기", srOnly(`: ${name}`)),
    );
    items.push(item);
    list.append(item.element);
    return item;
  };
  const ready = (item, media, said = "올렸습니다.") => {
    item.media = media;
    item.bar.remove();
    const src = mediaUrl(media.thumbnail_url);
    if (src) item.thumb.replaceChildren(h("img", { src, alt: `${item.name} 미리보기` }));
    set(item, "ready", said);
  };
  const refuse = (item, why) => {
    item.bar.remove();
    set(item, "refused", `이미지를 올릴 수 없습니다: ${why}`);
    item.status.classList.add("error");
    note.textContent = `${item.name}: ${item.status.textContent}`;
    roomLeft();
  };
  const send = (file) => {
    const item = itemFor(file.name);
    set(item, "sending", "올리는 중…");
    if (!IMAGE_TYPES.includes(file.type)) return refuse(item, "JPEG, PNG, GIF, WebP 이미지만 올릴 수 있습니다.");
    if (file.size === 0 || file.size > IMAGE_MAX_BYTES) return refuse(item, "파일이 비었거나 20MB보다 큽니다.");
    item.controller = new AbortController();
    // A guest's grant may need a proof of work first: said in the picker's status.
    const quiet = sayWhileSolving(note);
    item.done = uploadImage(board, file, {
      signal: item.controller.signal,
      onProgress: (share) => (item.bar.value = Math.round(share * 100)),
      onChecking: () => set(item, "checking", "서버가 이미지를 살펴보는 중…"),
    }).then(
      (media) => {
        if (media.status === "ready") {
          ready(item, media);
          note.textContent = `${item.name}: 올렸습니다.`;
        } else refuse(item, media.reason || "이미지 확인을 통과하지 못했습니다.");
      },
      (error) => {
        if (error?.name !== "AbortError") refuse(item, describe(error));
      },
    );
    item.done.finally(quiet);
  };
  input.addEventListener("change", () => {
    const files = [...input.files];
    // Cleared, so that the same file can be chosen again after a refusal.
    input.value = "";
    const room = Math.max(0, max - taken());
    if (files.length > room) note.textContent = `이미지는 ${max}개까지 붙일 수 있습니다. ${files.length - room}개는 빼고 올립니다.`;
    for (const file of files.slice(0, room)) send(file);
    roomLeft();
  });
  current.forEach((media, i) => ready(itemFor(`붙어 있는 이미지 ${i + 1}`), media, "붙어 있습니다."));
  roomLeft();
  const element = h(
    "div",
    { class: "media-picker" },
    h("label", { for: id }, label),
    input,
    h(
      "small",
      { class: "field-hint", id: `${id}-hint` },
      `JPEG, PNG, GIF, WebP, 한 장에 20MB까지${max > 1 ? `, ${max}장까지` : ""}. 고르면 바로 올리고, 서버가 확인한 뒤 붙습니다.`,
    ),
    list,
    note,
  );
  return {
    element,
    async ids() {
      await Promise.all(items.map((item) => item.done));
      return items.filter((item) => item.media).map((item) => item.media.id);
    },
  };
}

/**
 * The images of a post or a comment, each at its own size as far as
 * the page is wide (width and height from the API, so the page does not
 * move as they load; lazy: only near the screen), linking to the file.
 */
function mediaGallery(media, what, attributes = {}) {
  if (!media?.length) return null;
  return h(
    "div",
    { class: "media", ...attributes },
    media.map((m, i) => {
      const src = mediaUrl(m.url);
      if (!src) return null;
      const alt = media.length > 1 ? `${what}에 붙은 이미지 ${i + 1}/${media.length}` : `${what}에 붙은 이미지`;
      // `loading` before `src`: set after it, the file would already be on its way.
      return h("a", { href: src, class: "media-link" }, h("img", { loading: "lazy", width: m.width, height: m.height, alt, src }));
    }),
  );
}

// ------------------------------------------------------------------ pages

/**
 * A board list's address: its view (전체글 or 개념글, a 말머리) and the
 * cursors of the pages before this one (`c`, one per page after the first),
 * so that a reload, the back button or a shared link shows the same page
 * with its page number and its way back.
 */
function boardHash(board, { best = false, category = null, stack = [] } = {}) {
  const query = new URLSearchParams();
  if (best) query.set("best", "1");
  if (category) query.set("category", category);
  for (const cursor of stack) query.append("c", cursor);
  const search = query.toString();
  return `#/b/${board}${search ? `?${search}` : ""}`;
}

/** One row of a board list: 번호, 말머리, 제목 [댓글수] and an image mark, 글쓴이, 작성일, 조회, 추천. */
function postRow(board, p, withCategory) {
  return h(
    "tr",
    { class: p.best ? "post-row best" : "post-row", "data-number": p.number },
    h("td", { class: "num" }, p.best ? h("span", { class: "best-mark", title: "개념글" }, srOnly("개념글 "), "★") : null, String(p.number)),
    withCategory ? h("td", { class: "cat" }, p.category || "") : null,
    h(
      "td",
      { class: "subject" },
      h("a", { href: `#/b/${board}/p/${p.id}`, class: "title" }, p.title),
      // `media_count` arrives with images; absent means none.
      p.media_count > 0
        ? h("span", { class: "has-image", title: `이미지 ${p.media_count}개` }, srOnly(` 이미지 ${p.media_count}개`))
        : null,
      p.comment_count > 0 ? h("span", { class: "reply-count", title: "댓글" }, srOnly(" 댓글 "), `[${p.comment_count}]`) : null,
    ),
    h("td", { class: "writer" }, listAuthor(p.author)),
    h("td", { class: "date" }, h("time", { datetime: p.created_at, title: when(p.created_at) }, listDate(p.created_at))),
    h("td", { class: "views" }, String(p.view_count)),
    h("td", { class: "likes" }, String(p.like_count)),
  );
}

/** Page numbers from the cursor stack: the first, the last few before this one, this one, and the next if there is one. */
function pager(board, view, stack, nextCursor) {
  const current = stack.length + 1;
  const to = (n) => boardHash(board, { ...view, stack: stack.slice(0, n - 1) });
  const numbers = [];
  for (let n = 1; n <= current; n++) {
    if (n > 1 && n < current - 7) {
      if (numbers.at(-1) !== "…") numbers.push("…");
      continue;
    }
    numbers.push(n);
  }
  const next = nextCursor ? boardHash(board, { ...view, stack: [...stack, nextCursor] }) : null;
  return h(
    "nav",
    { class: "pager", "aria-label": "페이지" },
    current > 1 ? h("a", { href: to(current - 1), class: "prev", rel: "prev" }, "이전") : null,
    numbers.map((n) =>
      n === "…"
        ? h("span", { class: "gap" }, "…")
        : n === current
          ? h("span", { class: "page", "aria-current": "page" }, srOnly("현재 "), String(n), srOnly("쪽"))
          : h("a", { href: to(n), class: "page" }, String(n), srOnly("쪽")),
    ),
    next ? h("a", { href: next, class: "page" }, String(current + 1), srOnly("쪽")) : null,
    next ? h("a", { href: next, class: "next", rel: "next" }, "다음") : null,
  );
}

async function boardPage(board, query) {
  const best = query.get("best") === "1";
  const category = query.get("category") || null;
  const stack = query.getAll("c");
  const view = { best, category };
  // The board and its page together; an unknown board says so rather than "no such post".
  const posts = api.posts(board, stack.at(-1) || null, view);
  posts.catch(() => {});
  const info = await requireBoard(board, true);
  const [data, staff] = await Promise.all([posts, isStaff(board)]);
  const categories = category && !info.categories.includes(category) ? [...info.categories, category] : info.categories;
  const withCategory = categories.length > 0 || data.posts.some((p) => p.category);
  const tab = (label, target, current) =>
    h("a", { href: target, class: "tab", "aria-current": current ? "true" : null }, label);
  const tabs = h(
    "nav",
    { class: "tabs", "aria-label": "글 목록 보기" },
    h(
      "div",
      { class: "tab-row" },
      tab("전체글", boardHash(board, { category }), !best),
      tab("개념글", boardHash(board, { best: true, category }), best),
    ),
    categories.length
      ? h(
          "div",
          { class: "tab-row categories" },
          h("span", { class: "tab-label" }, "말머리"),
          tab("전체", boardHash(board, { best }), !category),
          categories.map((c) => tab(c, boardHash(board, { best, category: c }), c === category)),
        )
      : null,
  );
  const pageNumber = stack.length + 1;
  const heading = [best ? "개념글" : "전체글", category, pageNumber > 1 ? `${pageNumber}쪽` : null].filter(Boolean).join(", ");
  const list = data.posts.length
    ? h(
        "table",
        { class: "board-list" },
        h("caption", { class: "sr-only" }, `${info.name} ${heading}`),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col", class: "num" }, "번호"),
            withCategory ? h("th", { scope: "col", class: "cat" }, "말머리") : null,
            h("th", { scope: "col", class: "subject" }, "제목"),
            h("th", { scope: "col", class: "writer" }, "글쓴이"),
            h("th", { scope: "col", class: "date" }, "작성일"),
            h("th", { scope: "col", class: "views" }, "조회"),
            h("th", { scope: "col", class: "likes" }, "추천"),
          ),
        ),
        h("tbody", {}, data.posts.map((p) => postRow(board, p, withCategory))),
      )
    : h("p", { class: "empty" }, best || category ? "이 보기에 맞는 글이 없습니다." : "아직 글이 없습니다.");
  return page(
    info.name,
    info.description ? h("p", { class: "description" }, info.description) : null,
    h(
      "p",
      { class: "actions" },
      h("a", { href: `#/b/${board}/write`, class: "button" }, "글쓰기"),
      h("span", { class: "hint" }, `글 ${info.post_count}개`),
      h("a", { href: `#/b/${board}/log` }, "관리 기록"),
      staff ? h("a", { href: `#/b/${board}/mod` }, "관리") : null,
      staff ? h("a", { href: `#/admin/${board}` }, "게시판 규칙") : null,
    ),
    tabs,
    list,
    pageNumber > 1 || data.next_cursor ? pager(board, view, stack, data.next_cursor) : null,
  );
}

async function writePage(board) {
  const info = await requireBoard(board);
  const member = me();
  const title = `${info.name} · 글쓰기`;
  if (!member && !info.guest_writes) return page(title, signInHint("이 게시판은 회원만 글을 쓸 수 있습니다."));
  const category = info.categories.length
    ? [["category", "말머리", { type: "select", options: categoryOptions(info), value: "" }]]
    : [];
  const fields = member
    ? [...category, ["title", "제목"], ["body", "내용", { type: "textarea", rows: 10 }]]
    : [
        ["nickname", "닉네임"],
        ["password", "비밀번호 (고치거나 지울 때 필요)", { type: "password", autocomplete: "new-password" }],
        ...category,
        ["title", "제목"],
        ["body", "내용", { type: "textarea", rows: 10 }],
      ];
  const images = imagePicker(board, { max: 20, label: "이미지" });
  return page(
    title,
    member ? null : h("p", { class: "hint" }, "손님으로 씁니다. 로그인하면 회원으로 쓸 수 있습니다."),
    info.lock_after_comments
      ? h("p", { class: "hint" }, "이 게시판에서는 다른 사람이 댓글을 단 글을 고치거나 지울 수 없습니다.")
      : null,
    form(fields, "올리기", async (v) => {
      const chosen = v.category || null;
      const media = await images.ids();
      const post = member
        ? await api.createPost(board, v.title, v.body, chosen, media)
        : await api.createGuestPost(board, v.nickname, v.password, v.title, v.body, chosen, media);
      go(`#/b/${board}/p/${post.id}`);
    }, { id: "write", extra: images.element }),
  );
}

function commentView(board, postId, comment, staff, replies, info, blocks) {
  const member = me();
  const mine = member && comment.author.member_id === member.id;
  const slot = h("div", { class: "inline" });
  const actions = h(
    "span",
    { class: "comment-actions" },
    comment.parent_id
      ? null
      : h("button", { class: "link", onclick: () => slot.replaceChildren(commentForm(board, postId, comment.id, info)) }, "답글"),
    mine
      ? h("button", {
          class: "link",
          onclick: async () => {
            try {
              await api.deleteComment(board, postId, comment.id);
              route();
            } catch (e) {
              slot.replaceChildren(h("p", { class: "error" }, explain(e)));
            }
          },
        }, "삭제")
      : null,
    comment.author.kind === "guest"
      ? h("button", {
          class: "link",
          onclick: () =>
            slot.replaceChildren(
              form([["password", "비밀번호", { type: "password" }]], "댓글 삭제", async (v) => {
                await api.deleteGuestComment(board, postId, comment.id, v.password);
                route();
              }),
            ),
        }, "삭제")
      : null,
    h("button", {
      class: "link",
      onclick: () =>
        slot.replaceChildren(
          form([["reason", "신고 이유"]], "신고", async (v) => {
            await api.report(board, postId, v.reason, comment.id);
            slot.replaceChildren(h("p", { class: "ok" }, "신고했습니다."));
          }),
        ),
    }, "신고"),
    staff ? staffControls(board, slot, { post_id: postId, comment_id: comment.id }) : null,
  );
  return h(
    "li",
    // tabindex: a notification's link focuses its comment (#/b/.../p/...?comment=<id>).
    { class: comment.parent_id ? "comment reply" : "comment", id: `c-${comment.id}`, tabindex: "-1" },
    h("div", { class: "meta" }, authorWithMenu(comment.author, blocks), h("span", {}, when(comment.created_at))),
    h("p", { class: "text" }, comment.body),
    mediaGallery(comment.media, "댓글"),
    actions,
    slot,
    replies && replies.length ? h("ul", { class: "replies" }, replies) : null,
  );
}

/** Staff: remove with a reason, or ban the writer for a while. */
function staffControls(board, slot, target) {
  const durations = [
    ["3600", "1시간"],
    ["86400", "1일"],
    ["604800", "7일"],
    ["2592000", "30일"],
  ];
  return h(
    "span",
    { class: "staff" },
    h("button", {
      class: "link danger",
      onclick: () =>
        slot.replaceChildren(
          form([["reason", "삭제 이유 (관리 기록에 남습니다)"]], "관리자 삭제", async (v) => {
            if (target.comment_id) await api.removeComment(board, target.post_id, target.comment_id, v.reason);
            else await api.removePost(board, target.post_id, v.reason);
            go(target.comment_id ? `#/b/${board}/p/${target.post_id}` : `#/b/${board}`);
          }),
        ),
    }, "관리자 삭제"),
    h("button", {
      class: "link danger",
      onclick: () =>
        slot.replaceChildren(
          form(
            [
              ["reason", "차단 이유"],
              ["duration_s", "기간", { type: "select", options: durations }],
            ],
            "쓴 사람 차단",
            async (v) => {
              const what = target.comment_id ? { comment_id: target.comment_id } : { post_id: target.post_id };
              await api.ban(board, what, v.reason, Number(v.duration_s));
              slot.replaceChildren(h("p", { class: "ok" }, "차단했습니다."));
            },
          ),
        ),
    }, "차단"),
  );
}

function commentForm(board, postId, parentId, info) {
  const member = me();
  if (!member && !info.guest_writes) return signInHint("이 게시판은 회원만 댓글을 쓸 수 있습니다.");
  const fields = member
    ? [["body", parentId ? "답글" : "댓글", { type: "textarea", rows: 3 }]]
    : [
        ["nickname", "닉네임"],
        ["password", "비밀번호", { type: "password", autocomplete: "new-password" }],
        ["body", parentId ? "답글" : "댓글", { type: "textarea", rows: 3 }],
      ];
  const image = imagePicker(board, { max: 1, label: "이미지 (한 장)" });
  return form(fields, parentId ? "답글 달기" : "댓글 달기", async (v) => {
    const media = await image.ids();
    if (member) await api.comment(board, postId, v.body, parentId, media);
    else await api.guestComment(board, postId, v.nickname, v.password, v.body, parentId, media);
    route();
  }, { id: parentId ? `reply-${parentId}` : "comment", extra: image.element });
}

/**
 * 추천 and 비추천. A member's buttons are toggles that show their vote
 * (`my_vote`, aria-pressed): pressing the other one moves the vote, pressing
 * the same one withdraws it. A guest votes once and for good where the board
 * takes guest writes, and is asked to sign in where it does not. No 비추천
 * where the board has dislikes off; its count only where the API gives it.
 */
function votePanel(board, info, post) {
  const member = me();
  const withDislikes = info.dislikes !== "off";
  const state = { vote: post.my_vote ?? null, likes: post.like_count, dislikes: post.dislike_count };
  const note = h("p", { class: "vote-note", role: "status" });
  const likeCount = h("span", { class: "count" });
  const dislikeCount = h("span", { class: "count" });
  const paint = () => {
    likeCount.textContent = String(state.likes);
    dislikeCount.textContent = state.dislikes === undefined ? "" : String(state.dislikes);
    if (member) {
      like.setAttribute("aria-pressed", String(state.vote === "like"));
      dislike?.setAttribute("aria-pressed", String(state.vote === "dislike"));
    }
  };
  const take = (s) => {
    state.likes = s.like_count;
    state.dislikes = s.dislike_count;
    if (member) state.vote = s.liked ? "like" : s.disliked ? "dislike" : null;
  };
  const buttons = () => [like, dislike].filter(Boolean);
  const press = (kind) => async () => {
    for (const b of buttons()) b.disabled = true;
    note.textContent = "";
    let done = false;
    const quiet = sayWhileSolving(note);
    try {
      if (member) {
        const withdraw = state.vote === kind;
        const call = kind === "like" ? (withdraw ? api.unlike : api.like) : withdraw ? api.undislike : api.dislike;
        take(await call(board, post.id));
      } else {
        take(await api.guestVote(board, post.id, kind));
        note.textContent = kind === "like" ? "추천했습니다." : "비추천했습니다.";
        done = true;
      }
    } catch (e) {
      if (e instanceof ApiError && e.code === "already_voted") done = true;
      note.textContent =
        e instanceof ApiError && e.code === "forbidden" ? "내가 쓴 글에는 추천하거나 비추천할 수 없습니다." : describe(e);
    } finally {
      quiet();
    }
    // A guest's vote is for good: once counted (or already), the buttons rest.
    for (const b of buttons()) b.disabled = done;
    paint();
  };
  // Where only members vote, a guest gets the counts and how to vote instead of buttons.
  const guestsAsked = !member && !info.guest_writes;
  const mine = member && post.author.member_id === member.id;
  const like = guestsAsked
    ? null
    : h("button", { type: "button", class: "vote like", onclick: press("like"), disabled: mine }, "추천 ", likeCount);
  const dislike =
    guestsAsked || !withDislikes
      ? null
      : h("button", { type: "button", class: "vote dislike", onclick: press("dislike"), disabled: mine }, "비추천 ", dislikeCount);
  paint();
  return h(
    "div",
    { class: "votes" },
    guestsAsked
      ? [
          h("span", { class: "vote-count" }, "추천 ", likeCount),
          withDislikes && state.dislikes !== undefined ? h("span", { class: "vote-count" }, "비추천 ", dislikeCount) : null,
          signInHint("이 게시판은 회원만 추천할 수 있습니다."),
        ]
      : [like, dislike],
    mine ? h("p", { class: "hint" }, "내가 쓴 글에는 추천하거나 비추천할 수 없습니다.") : null,
    !member && info.guest_writes ? h("p", { class: "hint" }, "손님은 글마다 한 번 추천하거나 비추천할 수 있고, 취소할 수 없습니다.") : null,
    note,
  );
}

/** Staff: change a post's 말머리, take it out of 개념글. */
function staffPostTools(board, info, post) {
  const status = h("p", { class: "ok", role: "status" });
  const recategorize =
    info.categories.length || post.category
      ? form(
          [["category", "말머리", { type: "select", options: categoryOptions(info, post.category), value: post.category || "" }]],
          "말머리 바꾸기",
          async (v) => {
            const summary = await api.recategorize(board, post.id, v.category || null);
            status.textContent = `말머리를 ${summary.category ? `'${summary.category}'(으)로` : "없음으로"} 바꿨습니다.`;
            document.querySelector("#post-category").textContent = summary.category ? `[${summary.category}]` : "";
          },
          { id: "recategorize", inline: true },
        )
      : null;
  const unbest = post.best
    ? h("button", {
        type: "button",
        id: "unbest",
        class: "danger",
        onclick: async (event) => {
          try {
            await api.unbest(board, post.id);
            route();
          } catch (e) {
            status.textContent = "";
            event.target.after(h("span", { class: "error" }, explain(e)));
          }
        },
      }, "개념글 해제")
    : null;
  if (!recategorize && !unbest) return null;
  return h("section", { class: "staff-tools", "aria-label": "운영 도구" }, h("h2", {}, "운영"), recategorize, unbest, status);
}

/**
 * "수정됨" beside an edited post's date: a button that opens the
 * versions its edits replaced (GET .../revisions, newest first), read when
 * first opened. Titles and bodies are text nodes, as everywhere.
 */
function editHistory(board, post) {
  if (!(post.revision_count > 0)) return { toggle: null, panel: null };
  const panel = h("section", { id: "revisions", class: "revisions", "aria-label": "수정 기록", hidden: true });
  let loaded = false;
  const toggle = h(
    "button",
    {
      type: "button",
      class: "link edited",
      "aria-expanded": "false",
      "aria-controls": "revisions",
      onclick: async () => {
        const open = panel.hidden;
        panel.hidden = !open;
        toggle.setAttribute("aria-expanded", String(open));
        if (!open || loaded) return;
        loaded = true;
        panel.replaceChildren(h("p", { class: "empty" }, "불러오는 중…"));
        try {
          const revisions = await api.revisions(board, post.id);
          panel.replaceChildren(
            h("h2", {}, `수정 기록 (이전 판 ${revisions.length}개)`),
            h(
              "ol",
              { class: "revision-list" },
              revisions.map((r) =>
                h(
                  "li",
                  { class: "revision" },
                  h("h3", { class: "revision-title" }, r.title),
                  h("p", { class: "meta" }, h("span", {}, h("time", { datetime: r.edited_at }, when(r.edited_at)), "에 쓴 판")),
                  h("div", { class: "body revision-body" }, r.body),
                ),
              ),
            ),
          );
        } catch (e) {
          loaded = false;
          panel.replaceChildren(h("p", { class: "error", role: "alert" }, explain(e)));
        }
      },
    },
    "수정됨",
  );
  return { toggle, panel };
}

/**
 * A post with its comments. `wanted`: the comment a notification
 * links to (`?comment=<id>`), read past the first page of comments if need
 * be, then scrolled to and focused. A signed-in member's blocks are
 * read beside the post, for the author menus.
 */
async function postPage(board, ref, byNumber = false, wanted = null) {
  const posted = byNumber ? api.postByNumber(board, ref) : api.post(board, ref);
  posted.catch(() => {});
  const blocking = me() ? api.blocks().then(blockSets, () => null) : Promise.resolve(null);
  const info = await requireBoard(board);
  const [post, staff, blocks] = await Promise.all([posted, isStaff(board), blocking]);
  const id = post.id;
  const member = me();
  const mine = member && post.author.member_id === member.id;
  const slot = h("div", { class: "inline" });
  const actions = h(
    "p",
    { class: "actions" },
    mine ? h("a", { href: `#/b/${board}/p/${id}/edit`, class: "button" }, "고치기") : null,
    mine
      ? h("button", {
          onclick: async () => {
            try {
              await api.deletePost(board, id);
              go(`#/b/${board}`);
            } catch (e) {
              slot.replaceChildren(h("p", { class: "error" }, explain(e)));
            }
          },
        }, "지우기")
      : null,
    post.author.kind === "guest" ? h("a", { href: `#/b/${board}/p/${id}/edit`, class: "button" }, "고치기") : null,
    post.author.kind === "guest"
      ? h("button", {
          onclick: () =>
            slot.replaceChildren(
              form([["password", "비밀번호", { type: "password" }]], "글 지우기", async (v) => {
                await api.deleteGuestPost(board, id, v.password);
                go(`#/b/${board}`);
              }),
            ),
        }, "지우기")
      : null,
    h("button", {
      onclick: () =>
        slot.replaceChildren(
          form([["reason", "신고 이유"]], "신고", async (v) => {
            await api.report(board, id, v.reason);
            slot.replaceChildren(h("p", { class: "ok" }, "신고했습니다."));
          }),
        ),
    }, "신고"),
    staff ? staffControls(board, slot, { post_id: id }) : null,
  );
  const list = h("ul", { class: "comments" });
  const byParent = new Map();
  const addComments = (comments) => {
    for (const c of comments) {
      if (c.parent_id) {
        const parent = byParent.get(c.parent_id);
        const reply = commentView(board, id, c, staff, null, info, blocks);
        if (parent) parent.append(reply);
        else list.append(reply);
      } else {
        const replies = h("ul", { class: "replies" });
        byParent.set(c.id, replies);
        const item = commentView(board, id, c, staff, null, info, blocks);
        item.append(replies);
        list.append(item);
      }
    }
  };
  addComments(post.comments);
  // The wanted comment may be further on: read on, a page at a time, as "댓글 더 보기" would (at most 20 pages).
  let cursor = post.comments_next_cursor;
  const wantedShown = () => wanted && list.querySelector(`[id="c-${CSS.escape(wanted)}"]`);
  for (let pages = 0; wanted && !wantedShown() && cursor && pages < 20; pages++) {
    const next = await api.comments(board, id, cursor);
    addComments(next.comments);
    cursor = next.next_cursor;
  }
  const target = wantedShown();
  target?.classList.add("target");
  const more = h("p");
  const showMore = (cursor) => {
    more.replaceChildren(
      cursor
        ? h("button", {
            id: "more-comments",
            onclick: async () => {
              const next = await api.comments(board, id, cursor);
              addComments(next.comments);
              showMore(next.next_cursor);
            },
          }, "댓글 더 보기")
        : "",
    );
  };
  showMore(cursor);
  const history = editHistory(board, post);
  const shown = page(
    post.title,
    h(
      "p",
      { class: "meta" },
      h("a", { href: `#/b/${board}` }, info.name),
      h("a", { href: `#/b/${board}/n/${post.number}`, class: "post-number" }, `${post.number}번 글`),
      h("span", { id: "post-category", class: "category" }, post.category ? `[${post.category}]` : ""),
      post.best ? h("span", { class: "badge best" }, "개념글") : null,
      authorWithMenu(post.author, blocks),
      h("span", {}, when(post.created_at)),
      history.toggle,
      h("span", {}, `조회 ${post.view_count}`),
    ),
    history.panel,
    h("div", { class: "body", id: "post-body" }, post.body),
    mediaGallery(post.media, "글", { id: "post-media" }),
    votePanel(board, info, post),
    actions,
    slot,
    staff ? staffPostTools(board, info, post) : null,
    h("h2", {}, `댓글 ${post.comment_count}`),
    wanted && !target
      ? h("p", { class: "hint", id: "comment-missing" }, "알림의 댓글을 찾을 수 없습니다. 지워졌거나 차단한 사람의 댓글일 수 있습니다.")
      : null,
    list,
    more,
    commentForm(board, id, null, info),
  );
  if (target) shown.focus = target;
  return shown;
}

async function editPage(board, id) {
  const [info, post] = await Promise.all([requireBoard(board), api.post(board, id)]);
  const guest = post.author.kind === "guest";
  // The 말머리 goes with the edit only where there is one to choose (absent: kept as it is).
  const withCategory = info.categories.length > 0 || Boolean(post.category);
  const fields = [
    ...(guest ? [["password", "비밀번호", { type: "password" }]] : []),
    ...(withCategory
      ? [["category", "말머리", { type: "select", options: categoryOptions(info, post.category), value: post.category || "" }]]
      : []),
    ["title", "제목", { value: post.title }],
    ["body", "내용", { type: "textarea", rows: 10, value: post.body }],
  ];
  const images = imagePicker(board, { max: 20, label: "이미지", current: post.media || [] });
  return page(
    "글 고치기",
    form(fields, "고치기", async (v) => {
      const category = withCategory ? v.category || null : undefined;
      // The images as the form has them now: the edit replaces the post's.
      const media = await images.ids();
      // If-Match: the version this page showed; 412 if it changed since.
      if (guest) await api.editGuestPost(board, id, v.password, v.title, v.body, category, post.etag, media);
      else await api.editPost(board, id, v.title, v.body, category, post.etag, media);
      go(`#/b/${board}/p/${id}`);
    }, { id: "edit", extra: images.element }),
  );
}
/**
 * Sign-in. A member with TOTP on is answered 401 totp_required: the
 * code field appears, and the same username and password go again with
 * the code (a wrong one is said beside it). A password the API warns about
 * (`password_warning`) is noted on the next page, with a link to change it.
 */
function loginPage() {
  // The username and password the API asked a code for: a code goes with those only.
  let asked = null;
  const element = form(
    [
      ["username", "아이디", { autocomplete: "username" }],
      ["password", "비밀번호", { type: "password", autocomplete: "current-password" }],
      [
        "totp",
        "인증 앱의 6자리 코드 또는 복구 코드",
        {
          optional: true,
          hidden: true,
          autocomplete: "one-time-code",
          hint: "휴대폰을 쓸 수 없으면 저장해 둔 복구 코드 하나를 입력하세요 (코드마다 한 번).",
        },
      ],
    ],
    "로그인",
    async (v) => {
      const code = v.totp.trim();
      const withCode = Boolean(code && asked && asked.username === v.username && asked.password === v.password);
      let answer;
      try {
        answer = await api.login(v.username, v.password, withCode ? code : undefined);
      } catch (error) {
        if (error instanceof ApiError && error.code === "totp_required") {
          asked = { username: v.username, password: v.password };
          codeInput.closest("label").hidden = false;
          codeInput.focus();
        } else if (withCode && error instanceof ApiError && error.code === "invalid_credentials") {
          // The password was right a moment ago: it is the code that is wrong.
          throw new ApiError(error.status, error.code, error.message, error.retryAfter, "totp");
        }
        throw error;
      }
      const warning = PASSWORD_WARNINGS[answer.password_warning];
      pendingNotice = warning
        ? h(
            "p",
            { class: "notice", id: "password-warning", role: "alert" },
            warning,
            " ",
            h("a", { href: "#/account" }, "내 계정에서 비밀번호 바꾸기"),
          )
        : null;
      roles = null;
      go("#/");
    },
    { id: "login" },
  );
  const codeInput = element.querySelector("[name=totp]");
  return page("로그인", element);
}

function signupPage() {
  return page(
    "회원가입",
    form(
      [
        ["username", "아이디 (영문 소문자, 숫자, _)", { autocomplete: "username" }],
        ["nickname", "닉네임"],
        ["password", "비밀번호", { type: "password", autocomplete: "new-password", strength: true }],
      ],
      "가입하기",
      async (v) => {
        await api.signup(v.username, v.password, v.nickname);
        await api.login(v.username, v.password);
        roles = null;
        go("#/");
      },
      { id: "signup" },
    ),
  );
}

async function accountPage(part) {
  if (!me()) return go("#/login");
  const account = await api.me();
  roles = account.roles;
  // The blocks list apart: if it cannot be read, the rest of the page still shows.
  const [posts, comments, blockList] = await Promise.all([
    api.myPosts(),
    api.myComments(),
    api.blocks().catch((error) => ({ error })),
  ]);
  const status = h("p", { class: "ok", role: "status" });
  const totp = totpSection(account);
  const blocks = blocksSection(blockList);
  const shown = page(
    "내 계정",
    h(
      "p",
      { class: "meta" },
      `${account.nickname} (${account.username})`,
      account.roles.admin ? h("span", { class: "badge" }, "관리자") : null,
      account.roles.moderates.length ? h("span", { class: "badge" }, `운영: ${account.roles.moderates.join(", ")}`) : null,
    ),
    status,
    h("h2", {}, "비밀번호 바꾸기"),
    form(
      [
        ["current_password", "지금 비밀번호", { type: "password", autocomplete: "current-password" }],
        ["new_password", "새 비밀번호", { type: "password", autocomplete: "new-password", strength: true }],
      ],
      "바꾸기",
      async (v) => {
        await api.changePassword(v.current_password, v.new_password);
        // Every session ends with a password change: sign in again.
        session.clear();
        renderNav();
        go("#/login");
      },
      { id: "password" },
    ),
    totp,
    h("h2", {}, "모든 기기에서 로그아웃"),
    h("p", {}, h("button", {
      id: "everywhere",
      onclick: async () => {
        await api.signOutEverywhere();
        session.clear();
        renderNav();
        go("#/login");
      },
    }, "모든 기기에서 로그아웃")),
    h("h2", {}, "내가 쓴 글"),
    h(
      "ul",
      { class: "posts" },
      posts.posts.map((p) =>
        h(
          "li",
          {},
          h("a", { href: `#/b/${p.board}/p/${p.id}` }, p.title),
          " ",
          h("span", { class: "meta" }, `${boardName(p.board)} ${p.number}번 · ${when(p.created_at)}`),
        ),
      ),
    ),
    h("h2", {}, "내가 쓴 댓글"),
    h("ul", { class: "comments" }, comments.comments.map((c) => h("li", {}, h("span", { class: "text" }, c.body), " ", h("span", { class: "meta" }, when(c.created_at))))),
    blocks,
    h("h2", {}, "탈퇴"),
    form(
      [
        ["password", "비밀번호", { type: "password", autocomplete: "current-password" }],
        ["delete_content", "쓴 글과 댓글도 지우기 (지우지 않으면 '탈퇴한 회원'으로 남습니다)", { type: "checkbox" }],
      ],
      "탈퇴하기",
      async (v) => {
        await api.deleteAccount(v.password, v.delete_content);
        session.clear();
        renderNav();
        go("#/");
      },
      { id: "delete-account" },
    ),
  );
  if (part === "totp") shown.focus = totp;
  if (part === "blocks") shown.focus = blocks;
  return shown;
}

/**
 * Whom the member blocks (`GET /members/me/blocks`), members and
 * guest tags, each with 차단 해제 (DELETE), after which it leaves the list.
 * Blocks are made from an author's name on a post or comment.
 */
function blocksSection(list) {
  const error = h("p", { class: "error", role: "alert" });
  const status = h("p", { class: "ok", role: "status" });
  const section = h(
    "section",
    { id: "blocks", class: "blocks", "aria-labelledby": "blocks-heading", tabindex: "-1" },
    h("h2", { id: "blocks-heading" }, "차단 목록"),
    h("p", { class: "hint" }, "차단한 사람의 글과 댓글은 보이지 않고, 알림도 오지 않습니다. 글이나 댓글의 작성자 이름을 눌러 차단할 수 있습니다 (500명까지)."),
  );
  if (list.error) {
    section.append(h("p", { class: "error", role: "alert" }, explain(list.error)));
    return section;
  }
  const empty = h("p", { class: "empty" }, "차단한 사람이 없습니다.");
  const row = (target, label, since) => {
    const item = h(
      "li",
      { "data-member": target.member_id || null, "data-tag": target.tag || null },
      h("span", { class: "blocked-who" }, label),
      since ? h("span", { class: "meta" }, since) : null,
      h("button", {
        type: "button",
        class: "link unblock",
        onclick: async (event) => {
          event.target.disabled = true;
          error.textContent = "";
          try {
            await api.unblock(target);
            item.remove();
            status.textContent = `${label} 차단을 풀었습니다.`;
            empty.hidden = section.querySelectorAll(".block-list li").length > 0;
          } catch (e) {
            error.replaceChildren(...explain(e));
            event.target.disabled = false;
          }
        },
      }, "차단 해제", srOnly(`: ${label}`)),
    );
    return item;
  };
  // A member whose account is gone has no name left to show.
  const memberLabel = (m) => m.nickname || "탈퇴한 회원";
  section.append(
    h(
      "ul",
      { class: "block-list" },
      list.members.map((m) => row({ member_id: m.id }, memberLabel(m), null)),
      list.guests.map((g) => row({ tag: g.tag }, `손님 #${g.tag}`, `${when(g.created_at)}에 차단`)),
    ),
    empty,
    status,
    error,
  );
  empty.hidden = list.members.length + list.guests.length > 0;
  return section;
}

/**
 * 2단계 인증 (TOTP; docs/API.md, Passwords and staff sign-in): start an
 * enrollment (a QR code of its otpauth URI, drawn here by the vendored
 * generator, and the secret as text), confirm it with a code, then the
 * recovery codes, shown this once (to copy or save as a file; never
 * stored); and removal with the password and a code.
 *
 * No route says whether TOTP is on: the session remembers what its login
 * found (a code was asked for or not) and what this tab did since. A
 * session that cannot know (TOTP turned on from another tab since) is
 * offered the start, and the API's "already on" (403) turns the section
 * to the removal.
 */
function totpSection(account) {
  const status = h("p", { id: "totp-status", role: "status" });
  const body = h("div", { class: "totp-body" });
  const staff = account.roles.admin || account.roles.moderates.length > 0;
  const section = h(
    "section",
    { id: "totp", class: "totp", "aria-labelledby": "totp-heading", tabindex: "-1" },
    h("h2", { id: "totp-heading" }, "2단계 인증 (TOTP)"),
    status,
    body,
  );
  // Revokes the recovery codes' file link when they are put away or the page is left.
  let forget = null;
  const render = (state, said = "") => {
    forget?.();
    forget = null;
    if (state === "on") {
      status.textContent = said || "켜져 있습니다. 로그인할 때 비밀번호와 함께 인증 앱의 코드를 입력합니다.";
      body.replaceChildren(
        h("h3", {}, "2단계 인증 끄기"),
        form(
          [
            ["password", "비밀번호", { type: "password", autocomplete: "current-password" }],
            ["code", "인증 앱의 6자리 코드 또는 복구 코드", { autocomplete: "one-time-code" }],
          ],
          "2단계 인증 끄기",
          async (v) => {
            await api.endTotp(v.password, v.code.trim());
            session.update({ totp: false });
            render("off", "2단계 인증을 껐습니다. 이제 비밀번호만으로 로그인합니다.");
          },
          { id: "totp-remove" },
        ),
      );
      return;
    }
    status.textContent = said || "꺼져 있습니다.";
    // Starting asks for the password (a stolen session alone cannot), and an
    // admin of the deployment's list also gives its enroll token.
    const fields = [["password", "비밀번호", { type: "password", autocomplete: "current-password" }]];
    if (account.roles.admin) {
      fields.push(["enroll_token", "관리자 등록 토큰 (배포의 ADMIN_ENROLL_TOKEN)", { type: "password", autocomplete: "off" }]);
    }
    body.replaceChildren(
      h(
        "p",
        { class: "hint" },
        "켜면 로그인할 때 비밀번호와 함께 휴대폰 인증 앱(Google Authenticator, Microsoft Authenticator, 1Password 등)에 나오는 6자리 코드를 입력합니다. 비밀번호가 새어 나가도 계정을 지킬 수 있습니다.",
      ),
      h("p", { class: "hint", hidden: !staff }, "운영자는 2단계 인증을 켜야 관리 기능을 쓸 수 있습니다."),
      form(fields, "2단계 인증 켜기", begin, { id: "totp-start" }),
    );
  };
  const begin = async (v) => {
    try {
      const [enrollment, { qrSvg }] = await Promise.all([api.startTotp(v.password, v.enroll_token), import("./qr.js")]);
      enroll(enrollment, qrSvg);
    } catch (e) {
      if (e instanceof ApiError && e.code === "forbidden" && /Admin-Enroll-Token/.test(e.message)) {
        throw new ApiError(e.status, e.code, e.message, 0, "enroll_token");
      }
      if (e instanceof ApiError && e.code === "forbidden") {
        session.update({ totp: true });
        render("on", "이미 켜져 있습니다. 새 휴대폰으로 옮기려면 먼저 끄고 다시 켜세요.");
        return;
      }
      throw e;
    }
  };
  const enroll = ({ secret, otpauth_uri }, qrSvg) => {
    status.textContent = "등록 중: 아직 켜지지 않았습니다. 앱에 나온 코드로 확인해야 켜집니다.";
    body.replaceChildren(
      h(
        "ol",
        { class: "steps" },
        h("li", {}, "휴대폰의 인증 앱에서 이 QR 코드를 찍으세요."),
        h("li", {}, "QR 코드를 찍을 수 없으면 아래 키를 앱에 직접 입력하세요 (시간 기준, 6자리)."),
        h("li", {}, "앱에 나온 6자리 코드를 입력해 확인하면 켜집니다."),
      ),
      h("figure", { class: "qr", id: "totp-qr" }, qrSvg(otpauth_uri, "인증 앱에 등록할 QR 코드")),
      h(
        "p",
        { class: "secret" },
        h("span", {}, "직접 입력할 키: "),
        // Groups of four, as apps show keys; spaces are ignored when typed.
        h("code", { id: "totp-secret" }, secret.replace(/(.{4})(?=.)/g, "$1 ")),
      ),
      h("p", {}, h("a", { href: otpauth_uri, class: "otpauth" }, "이 기기의 인증 앱에서 열기")),
      form(
        [["code", "앱에 나온 6자리 코드", { autocomplete: "one-time-code", inputmode: "numeric" }]],
        "확인하고 켜기",
        async (v) => {
          let codes;
          try {
            codes = await api.confirmTotp(v.code.trim());
          } catch (e) {
            if (e instanceof ApiError && e.code === "validation_failed" && /confirms nothing/.test(e.message)) {
              throw new Error("기다리는 등록이 없습니다 (다른 곳에서 바뀌었을 수 있습니다). 2단계 인증 켜기부터 다시 해 주세요.");
            }
            throw e;
          }
          session.update({ totp: true });
          recovery(codes);
        },
        { id: "totp-confirm" },
      ),
      h("p", {}, h("button", { type: "button", class: "link", onclick: () => render("off") }, "그만두기")),
    );
  };
  const recovery = (codes) => {
    status.textContent = "2단계 인증을 켰습니다.";
    const text = [
      `커뮤니티 보드 복구 코드 (${account.username})`,
      `${when(new Date().toISOString())}에 받은 코드입니다. 코드마다 한 번만 쓸 수 있습니다.`,
      "인증 앱을 쓸 수 없을 때 로그인 화면의 코드 칸에 이 중 하나를 입력하세요.",
      "",
      ...codes,
      "",
    ].join("\n");
    const file = URL.createObjectURL(new Blob([text], { type: "text/plain;charset=utf-8" }));
    const leave = () => forget?.();
    forget = () => {
      URL.revokeObjectURL(file);
      window.removeEventListener("hashchange", leave);
    };
    window.addEventListener("hashchange", leave);
    const said = h("p", { class: "ok", role: "status" });
    body.replaceChildren(
      h(
        "div",
        { class: "recovery", id: "totp-recovery" },
        h("h3", {}, "복구 코드"),
        h(
          "p",
          { class: "warning" },
          h("strong", {}, "지금 한 번만 보여 드립니다. "),
          "휴대폰을 잃어버리거나 인증 앱을 지우면 이 코드로만 로그인할 수 있습니다. 복사하거나 파일로 저장해 비밀번호 관리자나 안전한 곳에 두세요. 코드마다 한 번만 쓸 수 있습니다.",
        ),
        h("ol", { class: "recovery-codes" }, codes.map((c) => h("li", {}, h("code", {}, c)))),
        h(
          "p",
          { class: "actions" },
          h("button", {
            type: "button",
            id: "totp-copy",
            onclick: async () => {
              try {
                await navigator.clipboard.writeText(text);
                said.textContent = "복사했습니다.";
              } catch {
                said.textContent = "복사하지 못했습니다. 파일로 저장하거나 직접 적어 두세요.";
              }
            },
          }, "복사하기"),
          h("a", { href: file, download: "community-boards-recovery-codes.txt", class: "button", id: "totp-download" }, "텍스트 파일로 저장"),
          h("button", { type: "button", id: "totp-saved", onclick: () => render("on") }, "저장했습니다"),
        ),
        said,
      ),
    );
  };
  render(session.get()?.totp ? "on" : "off");
  return section;
}

/** Whom a ban or log entry names: a member, a deleted one, or a guest's tag (with a range's scope). */
function banned(t) {
  if (t.kind === "member") return t.scope === "range" ? `${t.nickname} (대역)` : t.nickname;
  if (t.kind === "deleted_member") return "탈퇴한 회원";
  return t.scope === "range" ? `손님 #${t.tag} (대역)` : `손님 #${t.tag}`;
}

function logEntry(e) {
  const actions = {
    remove_post: "글 삭제",
    remove_comment: "댓글 삭제",
    ban: "차단",
    unban: "차단 해제",
    add_moderator: "운영자 지정",
    remove_moderator: "운영자 해제",
    board_settings: "게시판 규칙",
    recategorize: "말머리 변경",
    unbest: "개념글 해제",
  };
  const t = e.target;
  const target =
    t.kind === "post" ? t.title : t.kind === "comment" ? "댓글" : t.kind === "board" ? boardName(t.slug) : banned(t);
  return h(
    "li",
    {},
    h("strong", {}, actions[e.action] || e.action),
    " ",
    h("span", {}, target),
    e.reason ? h("span", { class: "reason" }, ` — ${e.reason}`) : null,
    h("span", { class: "meta" }, " ", author(e.by), " ", when(e.at)),
  );
}

async function logPage(board) {
  const [log] = await Promise.all([api.modlog(board), requireBoard(board)]);
  return page(
    `${boardName(board)} · 관리 기록`,
    log.entries.length ? h("ul", { class: "log" }, log.entries.map(logEntry)) : h("p", { class: "empty" }, "기록이 없습니다."),
  );
}

async function moderationPage(board) {
  await requireBoard(board);
  if (!(await isStaff(board))) return failure(new Error("이 게시판의 운영자만 볼 수 있습니다."));
  const [reports, bans, log] = await Promise.all([api.reports(board), api.bans(board), api.modlog(board)]);
  return page(
    `${boardName(board)} · 관리`,
    h("h2", {}, "신고"),
    reports.reports.length
      ? h(
          "ul",
          { class: "reports" },
          reports.reports.map((r) =>
            h(
              "li",
              {},
              h("a", { href: `#/b/${board}/p/${r.target.post_id}` }, r.target.kind === "post" ? "글" : "댓글"),
              ` ${r.reason} (${r.reporters}명)`,
              h("button", {
                class: "link",
                onclick: async () => {
                  await api.resolve(board, r.id);
                  route();
                },
              }, "처리 완료"),
            ),
          ),
        )
      : h("p", { class: "empty" }, "열린 신고가 없습니다."),
    h("h2", {}, "차단"),
    bans.bans.length
      ? h(
          "ul",
          { class: "bans" },
          bans.bans.map((b) =>
            h(
              "li",
              {},
              banned(b.target),
              ` — ${b.reason}, `,
              b.expires_at ? `${when(b.expires_at)}까지` : "영구",
              h("button", {
                class: "link",
                onclick: async () => {
                  await api.unban(board, b.id);
                  route();
                },
              }, "해제"),
            ),
          ),
        )
      : h("p", { class: "empty" }, "차단된 사람이 없습니다."),
    h("h2", {}, "관리 기록"),
    h("ul", { class: "log" }, log.entries.map(logEntry)),
  );
}

// ------------------------------------------------------------ board rules

const DISLIKES = [
  ["shown", "받고, 수를 모두에게 보여 줌"],
  ["hidden", "받지만, 수는 운영자만 봄"],
  ["off", "받지 않음"],
];

/** The fields of a board's rules (docs/API.md, Boards), filled from `b` when it exists. */
function boardFields(b) {
  return [
    ...(b ? [] : [["slug", "주소", { hint: "영문 소문자, 숫자, - 로 1-40자. 게시판 주소가 되고, 나중에 바꿀 수 없습니다." }]]),
    ["name", "이름", { value: b?.name, hint: "1-40자" }],
    ["description", "설명", { type: "textarea", rows: 2, optional: true, value: b?.description, hint: "500자까지" }],
    [
      "categories",
      "말머리",
      {
        type: "textarea",
        rows: 2,
        optional: true,
        value: b?.categories.join(", "),
        hint: "쉼표나 줄바꿈으로 나눠 20개까지, 각 1-12자. 비우면 말머리 없음.",
      },
    ],
    [
      "best_likes",
      "개념글 기준",
      {
        type: "number",
        optional: true,
        min: 1,
        max: 10000,
        value: b ? (b.best_likes ?? "") : "10",
        hint: "추천 수에서 비추천 수를 뺀 값이 이만큼 되면 개념글이 됩니다. 비우면 개념글 없음.",
      },
    ],
    ["dislikes", "비추천", { type: "select", options: DISLIKES, value: b?.dislikes || "shown" }],
    ["guest_writes", "손님(비회원)도 글과 댓글을 쓰고 추천할 수 있음", { type: "checkbox", value: b ? b.guest_writes : true }],
    [
      "lock_after_comments",
      "다른 사람의 댓글이 달린 글은 글쓴이도 고치거나 지울 수 없음",
      { type: "checkbox", value: b ? b.lock_after_comments : false },
    ],
  ];
}

/** The form's values as the API's board settings: categories split on commas and lines, an empty best_likes as none. */
function boardSettings(v) {
  return {
    name: v.name,
    description: v.description,
    categories: v.categories
      .split(/[,\n]/)
      .map((c) => c.trim())
      .filter(Boolean),
    best_likes: v.best_likes.trim() === "" ? null : Number(v.best_likes),
    dislikes: v.dislikes,
    guest_writes: v.guest_writes,
    lock_after_comments: v.lock_after_comments,
  };
}

/** One line of a board's rules, in words. */
function rulesSummary(b) {
  return [
    b.categories.length ? `말머리 ${b.categories.join(", ")}` : "말머리 없음",
    b.best_likes === null ? "개념글 없음" : `개념글 ${b.best_likes}추천`,
    { shown: "비추천 보임", hidden: "비추천 수 숨김", off: "비추천 없음" }[b.dislikes],
    b.guest_writes ? "손님 글쓰기 허용" : "회원만 글쓰기",
    b.lock_after_comments ? "댓글 달리면 잠금" : null,
  ]
    .filter(Boolean)
    .join(" · ");
}

/**
 * The boards' rules: admins open boards (`PUT /boards/{slug}`, 201) and
 * change any board's rules; a moderator changes the rules of the boards
 * they run (200). Refused fields are shown beside themselves.
 */
async function adminPage(slug) {
  if (!me()) return go("#/login");
  const [r, list] = await Promise.all([loadRoles(), loadBoards(true)]);
  const runs = (list || []).filter((b) => r && (r.admin || r.moderates.includes(b.slug)));
  if (!r || (!r.admin && runs.length === 0)) return failure(new Error("관리자나 게시판 운영자만 볼 수 있습니다."));
  if (slug) {
    const b = runs.find((x) => x.slug === slug);
    if (!b) return failure(list.some((x) => x.slug === slug) ? new Error("이 게시판의 운영자만 규칙을 바꿀 수 있습니다.") : new ApiError(404, "no_board", "", 0));
    return page(
      `${b.name} · 게시판 규칙`,
      h("p", { class: "hint" }, `주소 /b/${b.slug} · 글 ${b.post_count}개 · `, h("a", { href: "#/admin" }, "게시판 관리로")),
      form(boardFields(b), "규칙 저장", async (v) => {
        await api.putBoard(b.slug, boardSettings(v));
        await loadBoards(true);
        go(`#/b/${b.slug}`);
      }, { id: "board-settings" }),
    );
  }
  return page(
    "게시판 관리",
    h("h2", {}, "게시판"),
    h(
      "ul",
      { class: "board-admin" },
      runs.map((b) =>
        h(
          "li",
          { "data-slug": b.slug },
          h("a", { href: `#/b/${b.slug}`, class: "name" }, b.name),
          h("span", { class: "hint" }, ` /b/${b.slug} · 글 ${b.post_count}개`),
          h("span", { class: "rules" }, rulesSummary(b)),
          h("a", { href: `#/admin/${b.slug}`, class: "edit" }, "규칙 바꾸기", srOnly(`: ${b.name}`)),
        ),
      ),
    ),
    r.admin ? h("h2", {}, "새 게시판 열기") : null,
    r.admin
      ? form(boardFields(null), "게시판 열기", async (v) => {
          const wanted = v.slug.trim();
          // A PUT on an existing slug replaces its rules: opening one must never do that.
          if ((await loadBoards(true)).some((b) => b.slug === wanted)) {
            throw new ApiError(409, "board_exists", "board exists", 0, "slug");
          }
          await api.putBoard(wanted, boardSettings(v));
          await loadBoards(true);
          go(`#/b/${wanted}`);
        }, { id: "open-board" })
      : null,
  );
}

// --------------------------------------------------------- notifications

const NOTIFICATION_KINDS = { comment: "댓글", reply: "답글", mention: "멘션" };
/** What happened, after the actor's name. */
function notificationSays(n) {
  if (n.kind === "comment") return " 님이 내 글에 댓글을 달았습니다";
  if (n.kind === "reply") return " 님이 내 댓글에 답글을 달았습니다";
  return n.comment_id ? " 님이 댓글에서 나를 언급했습니다" : " 님이 글에서 나를 언급했습니다";
}

/** Who wrote it, as a sentence names them: a guest with their tag. */
function actorName(a) {
  if (a.kind === "deleted_member") return "탈퇴한 회원";
  if (a.kind === "guest") return a.tag ? `${a.nickname}(손님 #${a.tag})` : `${a.nickname}(손님)`;
  return a.nickname;
}

/** Where a notification leads: its post, with the comment in view when it is about one. */
function notificationHref(n) {
  const post = `#/b/${encodeURIComponent(n.board)}/p/${encodeURIComponent(n.post_id)}`;
  return n.comment_id ? `${post}?comment=${encodeURIComponent(n.comment_id)}` : post;
}

function notificationItem(n) {
  return h(
    "li",
    { class: n.read ? "notification" : "notification unread", "data-kind": n.kind, "data-id": n.id },
    h(
      "a",
      { href: notificationHref(n), class: "notification-link" },
      h(
        "span",
        { class: "headline" },
        h("span", { class: `kind kind-${n.kind}` }, NOTIFICATION_KINDS[n.kind] || n.kind),
        n.read ? null : h("span", { class: "new-mark" }, "새 알림"),
        h("span", { class: "says" }, h("strong", { class: "actor" }, actorName(n.actor)), notificationSays(n)),
      ),
      h("span", { class: "excerpt" }, n.excerpt),
    ),
    h(
      "span",
      { class: "meta" },
      h("span", {}, boardName(n.board)),
      h("time", { datetime: n.created_at }, when(n.created_at)),
    ),
  );
}

/**
 * The member's notifications, 20 a page, newest first, "더 보기" for
 * the next (`next_cursor`). Opening the page marks nothing read: the
 * unread stay marked (and counted by the badge) until "모두 읽음", which
 * marks them all (`{}`), those on pages not yet shown and any that came
 * since too; a mark `up_to` the newest shown would as well mark read the
 * older unread ones on pages the member never opened.
 */
async function notificationsPage() {
  if (!me()) return go("#/login");
  const [first] = await Promise.all([api.notifications(), loadBoards()]);
  const list = h("ul", { class: "notifications", id: "notification-list" }, first.notifications.map(notificationItem));
  const status = h("p", { class: "ok", role: "status" });
  const error = h("p", { class: "error", role: "alert" });
  const more = h("p");
  const showMore = (cursor) =>
    more.replaceChildren(
      cursor
        ? h("button", {
            type: "button",
            id: "more-notifications",
            onclick: async (event) => {
              event.target.disabled = true;
              try {
                const next = await api.notifications(cursor);
                list.append(...next.notifications.map(notificationItem));
                showMore(next.next_cursor);
              } catch (e) {
                error.replaceChildren(...explain(e));
                event.target.disabled = false;
              }
            },
          }, "더 보기")
        : "",
    );
  showMore(first.next_cursor);
  const markAll = h(
    "button",
    {
      type: "button",
      id: "mark-all-read",
      onclick: async () => {
        markAll.disabled = true;
        error.textContent = "";
        try {
          const left = await api.markRead();
          showUnread(left);
          unread.askedAt = Date.now();
          for (const item of list.querySelectorAll(".notification.unread")) {
            item.classList.remove("unread");
            item.querySelector(".new-mark")?.remove();
          }
          status.textContent = "모두 읽음으로 표시했습니다.";
        } catch (e) {
          error.replaceChildren(...explain(e));
        }
        markAll.disabled = false;
      },
    },
    "모두 읽음",
  );
  return page(
    "알림",
    h(
      "p",
      { class: "actions" },
      markAll,
      h("span", { class: "hint" }, "내 글의 댓글, 내 댓글의 답글, 나를 언급한(@아이디) 글과 댓글을 알려 드립니다. 90일 동안 보관합니다."),
    ),
    status,
    error,
    first.notifications.length ? list : h("p", { class: "empty" }, "알림이 없습니다."),
    more,
  );
}

// ----------------------------------------------------------------- router

let routeSeq = 0;

async function view(parts, query) {
  if (parts.length === 0) {
    const first = (await loadBoards())[0];
    return first ? go(`#/b/${first.slug}`) : page("게시판이 없습니다");
  }
  if (parts[0] === "login") return loginPage();
  if (parts[0] === "signup") return signupPage();
  if (parts[0] === "account") return await accountPage(parts[1]);
  if (parts[0] === "notifications") return await notificationsPage();
  if (parts[0] === "admin") return await adminPage(parts[1]);
  if (parts[0] === "b" && parts[1]) {
    const board = parts[1];
    if (parts.length === 2) return await boardPage(board, query);
    if (parts[2] === "write") return await writePage(board);
    if (parts[2] === "log") return await logPage(board);
    if (parts[2] === "mod") return await moderationPage(board);
    if (parts[2] === "n" && /^\d+$/.test(parts[3] || "")) return await postPage(board, parts[3], true);
    if (parts[2] === "p" && parts[3] && parts[4] === "edit") return await editPage(board, parts[3]);
    if (parts[2] === "p" && parts[3]) return await postPage(board, parts[3], false, query.get("comment"));
  }
  return failure(new Error("없는 페이지입니다."));
}

async function route() {
  const seq = ++routeSeq;
  pollUnread();
  renderNav();
  const [path, search] = location.hash.replace(/^#/, "").split("?");
  const query = new URLSearchParams(search || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  // The bar needs the boards and the member's roles whatever the page: read once, beside the page's own reads.
  const bar = Promise.all([boards ? null : loadBoards(), loadRoles()]).catch(() => null);
  let shown;
  try {
    shown = await view(parts, query);
  } catch (error) {
    shown = failure(error);
  }
  await bar;
  show(shown, seq);
}

window.addEventListener("hashchange", route);
route();
