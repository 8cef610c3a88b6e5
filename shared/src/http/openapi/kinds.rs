//! What a route's kind implies for its operation: its security, its tag
//! and its parameters, read from its function, method and path.

use serde_json::Value;

use super::parameter_ref;
use crate::function::Function;
use crate::http::Route;

/// Members' and staff routes, and a member's own (`/members/me`, some
/// of them served by `read`): a bearer token.
pub(super) fn takes_bearer(route: &Route) -> bool {
    matches!(
        route.function,
        Function::MemberWrite | Function::Like | Function::Moderation | Function::Account
    ) && !bearer_optional(route)
        && !route.path.ends_with("/votes/guest")
        || route.path.starts_with("/members/me")
}

/// Reports: anyone, with a bearer token or without; board pages
/// and post details, where a token adds `my_vote` and shows staff the
/// dislikes a board hides, and these and comment pages leave out whom the
/// member blocks.
pub(super) fn bearer_optional(route: &Route) -> bool {
    let report = route.function == Function::Moderation
        && route.path.ends_with("/reports")
        && route.method == http::Method::POST;
    let read = route.function == Function::Read
        && (route.path.ends_with("/posts")
            || route.path.ends_with("/posts/{post_id}")
            || route.path.ends_with("/comments")
            || route.path.ends_with("/by-number/{number}"));
    // An upload grant: anonymous is a guest's.
    let grant = route.function == Function::Media && route.method == http::Method::POST;
    report || read || grant
}

/// Every write on a board is checked for bans (not a member's own
/// notifications and blocks, which `member-write` serves too).
pub(super) fn checks_bans(route: &Route) -> bool {
    matches!(
        route.function,
        Function::MemberWrite | Function::Like | Function::GuestPost | Function::GuestComment
    ) && !route.path.starts_with("/members/me")
        || (route.function == Function::Media && route.method == http::Method::POST)
}

/// Routes a board may close to guests (`guest_writes` false: `403`).
pub(super) fn guest_write(route: &Route) -> bool {
    matches!(
        route.function,
        Function::GuestPost | Function::GuestComment | Function::Media
    ) && route.method == http::Method::POST
        || route.path.ends_with("/votes/guest")
}

/// Writes anyone may make without an account, which may need a
/// proof of work (`X-Pow`, `428 pow_required`): guest posts, comments and
/// votes, reports, signups, upload grants.
pub(super) fn anonymous_write(route: &Route) -> bool {
    route.method == http::Method::POST
        && (matches!(
            route.function,
            Function::GuestPost | Function::GuestComment | Function::Signup | Function::Media
        ) || route.path.ends_with("/votes/guest")
            || (route.function == Function::Moderation && route.path.ends_with("/reports")))
}

/// The tag of an operation: the resource its path names last.
pub(super) fn tag(path: &str) -> &'static str {
    if path.starts_with("/members/me") {
        return "account";
    }
    if path == "/boards" || path == "/boards/{slug}" {
        return "boards";
    }
    let resource = path
        .split('/')
        .rfind(|segment| !segment.is_empty() && !segment.starts_with('{') && *segment != "guest");
    match resource {
        Some("members") => "members",
        Some("sessions") => "sessions",
        Some("posts") => "posts",
        Some("comments") => "comments",
        Some("like" | "dislike" | "votes") => "likes",
        Some("by-number") => "posts",
        Some("moderators" | "modlog" | "remove" | "bans" | "reports" | "resolve" | "category" | "best") => "moderation",
        Some("health") => "health",
        Some("revisions") => "posts",
        Some("challenge") => "challenges",
        Some("media") => "media",
        _ => panic!("{path} has no tag in openapi.rs"),
    }
}

pub(super) const TAGS: &[(&str, &str)] = &[
    ("boards", "Boards and their rules"),
    ("members", "Member accounts"),
    ("sessions", "Logging in: the bearer token of the member routes"),
    ("posts", "A board's posts, by members and by guests"),
    ("comments", "A post's comments, by members and by guests"),
    (
        "likes",
        "Votes on posts: members' likes and dislikes, and guests' votes",
    ),
    (
        "moderation",
        "Moderators, removals, bans, reports and the public moderation log",
    ),
    (
        "account",
        "A member's own account: password, sessions, their posts and comments, deletion; TOTP, notifications and blocks",
    ),
    (
        "challenges",
        "Proof of work (ALTCHA) for anonymous writes: the challenge to solve",
    ),
    ("health", "Liveness of a deployment"),
    ("media", "Images: upload grants and the state of an upload"),
];

/// An operation's parameters: its path's, a page's `limit` and `cursor`, the
/// headers its kind reads (`codes`: the codes it answers). Not the
/// `X-Request-Id` every operation reads: `info.description` says it once.
pub(super) fn route_parameters(route: &Route, codes: &[&str]) -> Vec<Value> {
    let mut parameters: Vec<Value> = [
        ("{slug}", "Slug"),
        ("{post_id}", "PostId"),
        ("{comment_id}", "CommentId"),
        ("{member_id}", "MemberId"),
        ("{ban_id}", "BanId"),
        ("{report_id}", "ReportId"),
        ("{number}", "PostNumber"),
        ("{tag}", "GuestTag"),
        ("{media_id}", "MediaId"),
        ("{revision}", "RevisionNumber"),
    ]
    .iter()
    .filter(|(segment, _)| route.path.contains(segment))
    .map(|(_, name)| parameter_ref(name))
    .collect();
    if route.method == http::Method::GET && route.path.ends_with("/posts") {
        parameters.push(parameter_ref("Limit"));
        parameters.push(parameter_ref("Cursor"));
        if route.function == Function::Read {
            parameters.push(parameter_ref("Category"));
            parameters.push(parameter_ref("Best"));
        }
    }
    if route.method == http::Method::GET && route.path.ends_with("/revisions") {
        parameters.push(parameter_ref("RevisionLimit"));
        parameters.push(parameter_ref("Cursor"));
    }
    if route.method == http::Method::GET && route.path.ends_with("/comments") {
        parameters.push(parameter_ref("CommentLimit"));
        parameters.push(parameter_ref("Cursor"));
    }
    if route.method == http::Method::GET
        && ["/bans", "/reports", "/modlog", "/notifications"]
            .iter()
            .any(|end| route.path.ends_with(end))
    {
        parameters.push(parameter_ref("ListLimit"));
        parameters.push(parameter_ref("Cursor"));
    }
    if route.takes_idempotency_key() {
        parameters.push(parameter_ref("IdempotencyKey"));
    }
    if codes.contains(&"precondition_failed") {
        parameters.push(parameter_ref("IfMatch"));
    }
    if codes.contains(&"pow_required") {
        parameters.push(parameter_ref("XPow"));
    }
    if route.doc.operation_id == "createMember" || route.doc.operation_id == "startTotp" {
        parameters.push(parameter_ref("AdminEnrollToken"));
    }
    parameters
}
