//! moderation: the staff routes and reports (docs/API.md, Roles and
//! moderation). The moderators list and the log are `read`'s (`read.rs`).

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde::Deserialize;

use super::{Created, DoneOnce, created};
use crate::app::Answer;
use crate::app::boards::{PutBoard, PutOutcome};
use crate::app::moderation::{BanBy, BanCommand, ModPage, Removal, ReportCommand};
use crate::domain::{
    Ban, BanDuration, BanPage, BanScope, Board, BoardDescription, BoardName, CommentId, DislikePolicy, MemberId,
    PostId, PostSummary, Reason, ReportPage, Reported,
};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::auth::{AuthMember, MaybeMember};
use crate::http::client_ip::ClientIp;
use crate::http::conventions::PowHeader;
use crate::http::idempotency::Idempotent;
use crate::http::input::{Body, required};
use crate::http::paths::{
    BanPath, BestPath, BoardMemberPath, BoardPath, CommentPath, DEFAULT_V3_PAGE, PageQuery, PostPath, ReportPath,
    SlugPath,
};

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct ReasonRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::reason, required = true))]
    reason: Option<String>,
}

/// Exactly one of `member_id`, `post_id`, `comment_id`.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct BanRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::ulid))]
    member_id: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::ulid))]
    post_id: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::ulid))]
    comment_id: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::reason, required = true))]
    reason: Option<String>,
    /// 60 to 31,536,000 seconds; absent or null: permanent.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::duration_s))]
    duration_s: Option<i64>,
    /// How wide the address part reaches: `address` (default: the IPv4
    /// address or the IPv6 /64) or `range` (the IPv4 /24 or the IPv6 /48).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::domain::BanScope>))]
    scope: Option<String>,
}

/// `"address"`, `"range"`, or absent.
fn scope(value: Option<&str>) -> Result<Option<BanScope>, ApiError> {
    match value {
        None => Ok(None),
        Some("address") => Ok(Some(BanScope::Address)),
        Some("range") => Ok(Some(BanScope::Range)),
        Some(_) => Err(ApiError::invalid("scope", r#"must be "address" or "range""#)),
    }
}

fn reason(r: Option<String>) -> Result<Reason, ApiError> {
    Reason::parse(required("reason", r)?)
}

/// An id in a body: one that is not an id names nothing that can be banned.
fn body_id<T>(field: &str, value: &str, parse: fn(&str) -> Result<T, ApiError>) -> Result<T, ApiError> {
    parse(value).map_err(|_| ApiError::invalid(field, "must be an id (a ULID)"))
}

impl BanRequest {
    fn by(&self) -> Result<BanBy, ApiError> {
        match (&self.member_id, &self.post_id, &self.comment_id) {
            (Some(id), None, None) => body_id("member_id", id, MemberId::parse).map(BanBy::Member),
            (None, Some(id), None) => body_id("post_id", id, PostId::parse).map(BanBy::Post),
            (None, None, Some(id)) => body_id("comment_id", id, CommentId::parse).map(BanBy::Comment),
            // About three fields at once: none of them is the one to fix.
            _ => Err(ApiError::invalid_request(
                "exactly one of member_id, post_id and comment_id must be given",
            )),
        }
    }
}

pub(crate) async fn appoint(
    State(state): State<AppState>,
    AuthMember(admin): AuthMember,
    BoardMemberPath(board, member): BoardMemberPath,
) -> Result<StatusCode, ApiError> {
    state.app.appoint_moderator(&admin, &board, &member).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn dismiss(
    State(state): State<AppState>,
    AuthMember(admin): AuthMember,
    BoardMemberPath(board, member): BoardMemberPath,
) -> Result<StatusCode, ApiError> {
    state.app.dismiss_moderator(&admin, &board, &member).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn remove_post(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    AuthMember(staff): AuthMember,
    PostPath(post): PostPath,
    Body(r): Body<ReasonRequest>,
) -> Result<DoneOnce, ApiError> {
    let removal = Removal {
        idempotency,
        post,
        comment: None,
        reason: reason(r.reason)?,
    };
    state.app.remove(&staff, removal).await.map(DoneOnce)
}

pub(crate) async fn remove_comment(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    AuthMember(staff): AuthMember,
    CommentPath(key): CommentPath,
    Body(r): Body<ReasonRequest>,
) -> Result<DoneOnce, ApiError> {
    let removal = Removal {
        idempotency,
        post: key.post,
        comment: Some(key.comment),
        reason: reason(r.reason)?,
    };
    state.app.remove(&staff, removal).await.map(DoneOnce)
}

pub(crate) async fn ban(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    AuthMember(staff): AuthMember,
    BoardPath(board): BoardPath,
    Body(r): Body<BanRequest>,
) -> Result<Created<Ban>, ApiError> {
    let command = BanCommand {
        idempotency,
        board,
        by: r.by()?,
        reason: reason(r.reason)?,
        duration: BanDuration::parse(r.duration_s)?,
        scope: scope(r.scope.as_deref())?,
    };
    state.app.ban(&staff, command).await.map(created)
}

pub(crate) async fn list_bans(
    State(state): State<AppState>,
    AuthMember(staff): AuthMember,
    BoardPath(board): BoardPath,
    page: PageQuery,
) -> Result<Json<BanPage>, ApiError> {
    let page = ModPage {
        board,
        limit: page.limit(DEFAULT_V3_PAGE)?,
        cursor: page.cursor,
    };
    state.app.list_bans(&staff, page).await.map(Json)
}

pub(crate) async fn unban(
    State(state): State<AppState>,
    AuthMember(staff): AuthMember,
    BanPath(board, ban): BanPath,
) -> Result<StatusCode, ApiError> {
    state.app.unban(&staff, &board, &ban).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `201` for the target's first report, `200` with the same report after.
pub(crate) struct ReportAnswer(Answer<Reported>);

impl IntoResponse for ReportAnswer {
    fn into_response(self) -> Response {
        match self.0 {
            Answer::Created(Reported::Opened(report)) => (StatusCode::CREATED, Json(report)).into_response(),
            Answer::Created(Reported::Joined(report)) => Json(report.for_reporter()).into_response(),
            Answer::Replayed(answer) => crate::http::idempotency::replay(answer),
        }
    }
}

async fn report(
    state: &AppState,
    command: ReportCommand,
    member: Option<crate::app::SignedIn>,
) -> Result<ReportAnswer, ApiError> {
    state.app.report(member.as_ref(), command).await.map(ReportAnswer)
}

pub(crate) async fn report_post(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    MaybeMember(member): MaybeMember,
    ClientIp(client): ClientIp,
    PostPath(post): PostPath,
    PowHeader(pow): PowHeader,
    Body(r): Body<ReasonRequest>,
) -> Result<ReportAnswer, ApiError> {
    let command = ReportCommand {
        idempotency,
        client,
        post,
        comment: None,
        reason: reason(r.reason)?,
        pow,
    };
    report(&state, command, member).await
}

pub(crate) async fn report_comment(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    MaybeMember(member): MaybeMember,
    ClientIp(client): ClientIp,
    CommentPath(key): CommentPath,
    PowHeader(pow): PowHeader,
    Body(r): Body<ReasonRequest>,
) -> Result<ReportAnswer, ApiError> {
    let command = ReportCommand {
        idempotency,
        client,
        post: key.post,
        comment: Some(key.comment),
        reason: reason(r.reason)?,
        pow,
    };
    report(&state, command, member).await
}

pub(crate) async fn list_reports(
    State(state): State<AppState>,
    AuthMember(staff): AuthMember,
    BoardPath(board): BoardPath,
    page: PageQuery,
) -> Result<Json<ReportPage>, ApiError> {
    let page = ModPage {
        board,
        limit: page.limit(DEFAULT_V3_PAGE)?,
        cursor: page.cursor,
    };
    state.app.list_reports(&staff, page).await.map(Json)
}

pub(crate) async fn resolve_report(
    State(state): State<AppState>,
    Idempotent(idempotency): Idempotent,
    AuthMember(staff): AuthMember,
    ReportPath(board, report): ReportPath,
) -> Result<DoneOnce, ApiError> {
    state
        .app
        .resolve_report(&staff, &board, &report, idempotency)
        .await
        .map(DoneOnce)
}

/// `PUT /boards/{slug}`: a board's name and rules. Absent fields
/// take their defaults (docs/API.md, Boards).
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct BoardRequest {
    /// 1-40 characters after trimming, the title's rules.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::board_name, required = true, nullable = false))]
    name: Option<String>,
    /// 0-500 characters; default `""`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::board_description))]
    description: Option<String>,
    /// At most 20, each 1-12 characters (no comma), unique after NFKC and
    /// case folding; default none.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::board_categories))]
    categories: Option<Vec<String>>,
    /// 1-10,000, or null for no best posts; default 10.
    #[serde(default, deserialize_with = "crate::http::input::absent_or_null")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<u32>, nullable, minimum = 1, maximum = 10000))]
    best_likes: Option<Option<i64>>,
    /// `shown` (default), `hidden` or `off`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::domain::DislikePolicy>))]
    dislikes: Option<String>,
    /// Default true.
    #[serde(default)]
    guest_writes: Option<bool>,
    /// Default false.
    #[serde(default)]
    lock_after_comments: Option<bool>,
}

fn dislike_policy(value: Option<&str>) -> Result<DislikePolicy, ApiError> {
    match value {
        None | Some("shown") => Ok(DislikePolicy::Shown),
        Some("hidden") => Ok(DislikePolicy::Hidden),
        Some("off") => Ok(DislikePolicy::Off),
        Some(_) => Err(ApiError::invalid("dislikes", r#"must be "shown", "hidden" or "off""#)),
    }
}

/// A board created (`201` with its `Location`) or changed (`200`).
pub(crate) enum BoardPut {
    Created(Board),
    Updated(Board),
}

impl IntoResponse for BoardPut {
    fn into_response(self) -> Response {
        match self {
            BoardPut::Created(board) => {
                let location = http::HeaderValue::from_str(&format!("/boards/{}", board.slug));
                let mut response = (StatusCode::CREATED, Json(board)).into_response();
                if let Ok(location) = location {
                    response.headers_mut().insert(http::header::LOCATION, location);
                }
                response
            }
            BoardPut::Updated(board) => Json(board).into_response(),
        }
    }
}

/// Admins open a board; admins and its moderators set its rules.
pub(crate) async fn put_board(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    SlugPath(slug): SlugPath,
    Body(r): Body<BoardRequest>,
) -> Result<BoardPut, ApiError> {
    let put = PutBoard {
        name: BoardName::parse(required("name", r.name)?)?,
        description: BoardDescription::parse(r.description.unwrap_or_default())?,
        categories: r.categories.unwrap_or_default(),
        best_likes: r.best_likes,
        dislikes: dislike_policy(r.dislikes.as_deref())?,
        guest_writes: r.guest_writes.unwrap_or(true),
        lock_after_comments: r.lock_after_comments.unwrap_or(false),
    };
    match state.app.put_board(&member, &slug, put).await? {
        PutOutcome::Created(board) => Ok(BoardPut::Created(board)),
        PutOutcome::Updated(board) => Ok(BoardPut::Updated(board)),
    }
}

/// `{"category"}`: null, or one of the board's categories.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct CategoryRequest {
    #[serde(default, deserialize_with = "crate::http::input::absent_or_null")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::category, required = true))]
    category: Option<Option<String>>,
}

/// Staff change a post's category.
pub(crate) async fn recategorize(
    State(state): State<AppState>,
    AuthMember(staff): AuthMember,
    PostPath(key): PostPath,
    Body(r): Body<CategoryRequest>,
) -> Result<Json<PostSummary>, ApiError> {
    let category = r
        .category
        .ok_or_else(|| ApiError::invalid("category", "is required (null for none)"))?;
    state.app.recategorize(&staff, &key, category).await.map(Json)
}

/// Staff take a post out of the best posts, for good.
pub(crate) async fn unbest(
    State(state): State<AppState>,
    AuthMember(staff): AuthMember,
    BestPath(key): BestPath,
) -> Result<StatusCode, ApiError> {
    state.app.unbest(&staff, &key).await?;
    Ok(StatusCode::NO_CONTENT)
}
