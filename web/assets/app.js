// The reference client's pages: a hash router (`#/b/free`, `#/b/free/p/<id>`,
// ...) over the API client (api.js). Every page is rebuilt from the API on
// navigation; nothing is cached but the session.

import { api, ApiError, session } from "./api.js";
import { BOARDS } from "./config.js";
import { h, when } from "./dom.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");

// ---------------------------------------------------------------- helpers

const boardName = (slug) => BOARDS.find((b) => b.slug === slug)?.name || slug;
const go = (hash) => {
  if (location.hash === hash) route();
  else location.hash = hash;
};
const me = () => session.get()?.member || null;

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
};

/** Korean for every error code of docs/API.md (Errors). */
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
};

/**
 * An error in Korean, from its code and the field it names: the field's
 * rules for a refused input, the code's text otherwise. A ban keeps the
 * server's detail (until when, and the staff's reason) after the Korean.
 */
function describe(error) {
  if (!(error instanceof ApiError)) return String(error);
  if (error.code === "invalid_credentials" && error.field) return "비밀번호가 맞지 않습니다.";
  if ((error.code === "validation_failed" || error.code === "malformed_json") && FIELD_RULES[error.field]) {
    return FIELD_RULES[error.field];
  }
  const text = CODES[error.code] || `오류가 났습니다 (${error.status} ${error.code}).`;
  return error.code === "banned" ? `${text} (${error.message})` : text;
}

/**
 * A form: `fields` are [name, label, {type, value, rows, options}]; on
 * submit `action(values)` runs; an ApiError's message is shown beside the
 * field it names, else above the button; a 429 counts down its Retry-After
 * with the button disabled.
 */
function form(fields, submitLabel, action, { id } = {}) {
  const errors = {};
  const inputs = {};
  const general = h("p", { class: "error", role: "alert" });
  const button = h("button", { type: "submit" }, submitLabel);
  const rows = fields.map(([name, label, options = {}]) => {
    let input;
    if (options.type === "textarea") {
      input = h("textarea", { name, rows: options.rows || 6, required: options.optional ? null : true });
      input.value = options.value || "";
    } else if (options.type === "select") {
      input = h("select", { name }, options.options.map(([value, text]) => h("option", { value }, text)));
    } else if (options.type === "checkbox") {
      input = h("input", { type: "checkbox", name });
    } else {
      input = h("input", {
        name,
        type: options.type || "text",
        autocomplete: options.autocomplete || "off",
        required: options.optional ? null : true,
      });
      input.value = options.value || "";
    }
    inputs[name] = input;
    errors[name] = h("span", { class: "field-error", "data-field": name });
    return h("label", { class: options.type === "checkbox" ? "check" : null }, h("span", {}, label), input, errors[name]);
  });
  const element = h("form", { class: "form", id }, rows, general, button);
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    for (const slot of [general, ...Object.values(errors)]) slot.textContent = "";
    const values = {};
    for (const [name, input] of Object.entries(inputs)) values[name] = input.type === "checkbox" ? input.checked : input.value;
    button.disabled = true;
    try {
      await action(values);
      button.disabled = false;
    } catch (error) {
      const field = error instanceof ApiError ? error.field : null;
      const slot = field && errors[field] ? errors[field] : general;
      slot.textContent = describe(error);
      if (error instanceof ApiError && error.status === 429 && error.retryAfter > 0) {
        countdown(general, button, error.retryAfter);
      } else {
        button.disabled = false;
      }
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
  return { title, children: [h("h1", {}, title), ...children] };
}

function failure(error) {
  return { title: "오류", children: [h("p", { class: "error", role: "alert" }, describe(error)), h("a", { href: "#/" }, "처음으로")] };
}

/** Shows `view` unless another navigation began meanwhile (its answer arrived late). */
function show(view, seq) {
  if (!view || seq !== routeSeq) return;
  document.title = `${view.title} · 커뮤니티 보드`;
  main.replaceChildren(...view.children);
  // Which navigation is on screen (tests wait for it; nothing reads it otherwise).
  document.body.dataset.route = location.hash;
}

function renderNav() {
  const member = me();
  nav.replaceChildren(
    h("a", { href: "#/", class: "brand" }, "커뮤니티 보드"),
    h(
      "span",
      { class: "boards" },
      BOARDS.map((b) => h("a", { href: `#/b/${b.slug}` }, b.name)),
    ),
    member
      ? h(
          "span",
          { class: "who" },
          h("a", { href: "#/account" }, `${member.nickname} 님`),
          h(
            "button",
            {
              class: "link",
              onclick: () => {
                session.clear();
                go("#/");
              },
            },
            "로그아웃",
          ),
        )
      : h("span", { class: "who" }, h("a", { href: "#/login" }, "로그인"), h("a", { href: "#/signup" }, "회원가입")),
  );
}

/** Whether the signed-in member is staff of `board` (admin, or its moderator). */
let roles = null;
async function isStaff(board) {
  if (!me()) return false;
  if (!roles) {
    try {
      roles = (await api.me()).roles;
    } catch {
      return false;
    }
  }
  return roles.admin || roles.moderates.includes(board);
}

// ------------------------------------------------------------------ pages

async function boardPage(board, cursor) {
  const data = await api.posts(board, cursor);
  const rows = data.posts.map((p) =>
    h(
      "li",
      { class: "post-row" },
      h("a", { href: `#/b/${board}/p/${p.id}`, class: "title" }, p.title),
      h(
        "span",
        { class: "meta" },
        author(p.author),
        h("span", {}, when(p.created_at)),
        h("span", { title: "조회" }, `조회 ${p.view_count}`),
        h("span", { title: "추천" }, `추천 ${p.like_count}`),
        h("span", { title: "댓글" }, `댓글 ${p.comment_count}`),
      ),
    ),
  );
  return page(
    boardName(board),
    h(
      "p",
      { class: "actions" },
      h("a", { href: `#/b/${board}/write`, class: "button" }, "글쓰기"),
      h("a", { href: `#/b/${board}/log` }, "관리 기록"),
      (await isStaff(board)) ? h("a", { href: `#/b/${board}/mod` }, "관리") : null,
    ),
    rows.length ? h("ul", { class: "posts" }, rows) : h("p", { class: "empty" }, "아직 글이 없습니다."),
    data.next_cursor
      ? h("p", {}, h("a", { href: `#/b/${board}?cursor=${encodeURIComponent(data.next_cursor)}`, class: "button" }, "다음 페이지"))
      : null,
  );
}

function writePage(board) {
  const member = me();
  const fields = member
    ? [
        ["title", "제목"],
        ["body", "내용", { type: "textarea", rows: 10 }],
      ]
    : [
        ["nickname", "닉네임"],
        ["password", "비밀번호 (고치거나 지울 때 필요)", { type: "password", autocomplete: "new-password" }],
        ["title", "제목"],
        ["body", "내용", { type: "textarea", rows: 10 }],
      ];
  return page(
    `${boardName(board)} · 글쓰기`,
    member ? null : h("p", { class: "hint" }, "손님으로 씁니다. 로그인하면 회원으로 쓸 수 있습니다."),
    form(fields, "올리기", async (v) => {
      const post = member
        ? await api.createPost(board, v.title, v.body)
        : await api.createGuestPost(board, v.nickname, v.password, v.title, v.body);
      go(`#/b/${board}/p/${post.id}`);
    }, { id: "write" }),
  );
}

function commentView(board, postId, comment, staff, replies) {
  const member = me();
  const mine = member && comment.author.member_id === member.id;
  const slot = h("div", { class: "inline" });
  const actions = h(
    "span",
    { class: "comment-actions" },
    comment.parent_id
      ? null
      : h("button", { class: "link", onclick: () => slot.replaceChildren(commentForm(board, postId, comment.id)) }, "답글"),
    mine
      ? h("button", {
          class: "link",
          onclick: async () => {
            try {
              await api.deleteComment(board, postId, comment.id);
              route();
            } catch (e) {
              slot.replaceChildren(h("p", { class: "error" }, describe(e)));
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
    { class: comment.parent_id ? "comment reply" : "comment", id: `c-${comment.id}` },
    h("div", { class: "meta" }, author(comment.author), h("span", {}, when(comment.created_at))),
    h("p", { class: "text" }, comment.body),
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

function commentForm(board, postId, parentId) {
  const member = me();
  const fields = member
    ? [["body", parentId ? "답글" : "댓글", { type: "textarea", rows: 3 }]]
    : [
        ["nickname", "닉네임"],
        ["password", "비밀번호", { type: "password", autocomplete: "new-password" }],
        ["body", parentId ? "답글" : "댓글", { type: "textarea", rows: 3 }],
      ];
  return form(fields, parentId ? "답글 달기" : "댓글 달기", async (v) => {
    if (member) await api.comment(board, postId, v.body, parentId);
    else await api.guestComment(board, postId, v.nickname, v.password, v.body, parentId);
    route();
  }, { id: parentId ? `reply-${parentId}` : "comment" });
}

async function postPage(board, id) {
  const post = await api.post(board, id);
  const member = me();
  const staff = await isStaff(board);
  const mine = member && post.author.member_id === member.id;
  const slot = h("div", { class: "inline" });
  const likes = h("span", { class: "likes" }, `추천 ${post.like_count}`);
  const like = member
    ? h("button", {
        onclick: async (event) => {
          const liked = event.target.dataset.liked === "true";
          const state = liked ? await api.unlike(board, id) : await api.like(board, id);
          event.target.dataset.liked = String(state.liked);
          event.target.textContent = state.liked ? "추천 취소" : "추천";
          likes.textContent = `추천 ${state.like_count}`;
        },
        "data-liked": "false",
      }, "추천")
    : null;
  const actions = h(
    "p",
    { class: "actions" },
    like,
    likes,
    mine ? h("a", { href: `#/b/${board}/p/${id}/edit`, class: "button" }, "고치기") : null,
    mine
      ? h("button", {
          onclick: async () => {
            try {
              await api.deletePost(board, id);
              go(`#/b/${board}`);
            } catch (e) {
              slot.replaceChildren(h("p", { class: "error" }, describe(e)));
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
        const reply = commentView(board, id, c, staff);
        if (parent) parent.append(reply);
        else list.append(reply);
      } else {
        const replies = h("ul", { class: "replies" });
        byParent.set(c.id, replies);
        const item = commentView(board, id, c, staff);
        item.append(replies);
        list.append(item);
      }
    }
  };
  addComments(post.comments);
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
  showMore(post.comments_next_cursor);
  return page(
    post.title,
    h(
      "p",
      { class: "meta" },
      h("a", { href: `#/b/${board}` }, boardName(board)),
      author(post.author),
      h("span", {}, when(post.created_at)),
      h("span", {}, `조회 ${post.view_count}`),
    ),
    h("div", { class: "body", id: "post-body" }, post.body),
    actions,
    slot,
    h("h2", {}, `댓글 ${post.comment_count}`),
    list,
    more,
    commentForm(board, id),
  );
}

async function editPage(board, id) {
  const post = await api.post(board, id);
  const guest = post.author.kind === "guest";
  const fields = [
    ...(guest ? [["password", "비밀번호", { type: "password" }]] : []),
    ["title", "제목", { value: post.title }],
    ["body", "내용", { type: "textarea", rows: 10, value: post.body }],
  ];
  return page(
    "글 고치기",
    form(fields, "고치기", async (v) => {
      // If-Match: the version this page showed; 412 if it changed since.
      if (guest) await api.editGuestPost(board, id, v.password, v.title, v.body, post.etag);
      else await api.editPost(board, id, v.title, v.body, post.etag);
      go(`#/b/${board}/p/${id}`);
    }, { id: "edit" }),
  );
}

function loginPage() {
  return page(
    "로그인",
    form(
      [
        ["username", "아이디", { autocomplete: "username" }],
        ["password", "비밀번호", { type: "password", autocomplete: "current-password" }],
      ],
      "로그인",
      async (v) => {
        await api.login(v.username, v.password);
        roles = null;
        renderNav();
        go(`#/b/${BOARDS[0].slug}`);
      },
      { id: "login" },
    ),
  );
}

function signupPage() {
  return page(
    "회원가입",
    form(
      [
        ["username", "아이디 (영문 소문자, 숫자, _)", { autocomplete: "username" }],
        ["nickname", "닉네임"],
        ["password", "비밀번호 (8자 이상)", { type: "password", autocomplete: "new-password" }],
      ],
      "가입하기",
      async (v) => {
        await api.signup(v.username, v.password, v.nickname);
        await api.login(v.username, v.password);
        roles = null;
        renderNav();
        go(`#/b/${BOARDS[0].slug}`);
      },
      { id: "signup" },
    ),
  );
}

async function accountPage() {
  if (!me()) return go("#/login");
  const account = await api.me();
  roles = account.roles;
  const [posts, comments] = await Promise.all([api.myPosts(), api.myComments()]);
  const status = h("p", { class: "ok", role: "status" });
  return page(
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
        ["new_password", "새 비밀번호", { type: "password", autocomplete: "new-password" }],
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
      posts.posts.map((p) => h("li", {}, h("a", { href: `#/b/${p.board}/p/${p.id}` }, p.title), " ", h("span", { class: "meta" }, when(p.created_at)))),
    ),
    h("h2", {}, "내가 쓴 댓글"),
    h("ul", { class: "comments" }, comments.comments.map((c) => h("li", {}, h("span", { class: "text" }, c.body), " ", h("span", { class: "meta" }, when(c.created_at))))),
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
}

/** Whom a ban or log entry names: a member, a deleted one, or a guest's tag (v4: with a range's scope). */
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
  };
  const t = e.target;
  const target = t.kind === "post" ? t.title : t.kind === "comment" ? "댓글" : banned(t);
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
  const log = await api.modlog(board);
  return page(
    `${boardName(board)} · 관리 기록`,
    log.entries.length ? h("ul", { class: "log" }, log.entries.map(logEntry)) : h("p", { class: "empty" }, "기록이 없습니다."),
  );
}

async function moderationPage(board) {
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

// ----------------------------------------------------------------- router

let routeSeq = 0;

async function view(parts, cursor) {
  if (parts.length === 0) return go(`#/b/${BOARDS[0].slug}`);
  if (parts[0] === "login") return loginPage();
  if (parts[0] === "signup") return signupPage();
  if (parts[0] === "account") return await accountPage();
  if (parts[0] === "b" && parts[1]) {
    const board = parts[1];
    if (parts.length === 2) return await boardPage(board, cursor);
    if (parts[2] === "write") return writePage(board);
    if (parts[2] === "log") return await logPage(board);
    if (parts[2] === "mod") return await moderationPage(board);
    if (parts[2] === "p" && parts[3] && parts[4] === "edit") return await editPage(board, parts[3]);
    if (parts[2] === "p" && parts[3]) return await postPage(board, parts[3]);
  }
  return failure(new Error("없는 페이지입니다."));
}

async function route() {
  const seq = ++routeSeq;
  renderNav();
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const cursor = new URLSearchParams(query || "").get("cursor");
  const parts = path.split("/").filter(Boolean);
  let shown;
  try {
    shown = await view(parts, cursor);
  } catch (error) {
    shown = failure(error);
  }
  show(shown, seq);
}

window.addEventListener("hashchange", route);
route();
