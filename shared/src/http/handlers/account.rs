//! account: the `/members/me` routes (docs/API.md, Accounts).

use axum::Json;
use axum::extract::State;
use http::StatusCode;
use serde::Deserialize;

use crate::app::account::{ChangePassword, DeleteAccount};
use crate::app::totp::{ConfirmTotp, EndTotp, RecoveryCodes, StartTotp, TotpCode, TotpEnrollment};
use crate::domain::{COMMENTS_PAGE, CommentPage, Me, Page, Password};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::auth::AuthMember;
use crate::http::client_ip::ClientIp;
use crate::http::input::{Body, required};
use crate::http::paths::{DEFAULT_POSTS_PAGE, PageQuery};

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct ChangePasswordRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::login_password, required = true))]
    current_password: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::member_password, required = true))]
    new_password: Option<String>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct DeleteAccountRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::login_password, required = true))]
    password: Option<String>,
    /// True: every post and comment goes, and every like is withdrawn.
    /// False: they stay, shown as written by a deleted member.
    #[cfg_attr(feature = "openapi", schema(value_type = bool, required = true))]
    delete_content: Option<bool>,
}

pub(crate) async fn me(State(state): State<AppState>, AuthMember(member): AuthMember) -> Result<Json<Me>, ApiError> {
    state.app.me(&member).await.map(Json)
}

pub(crate) async fn my_posts(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    page: PageQuery,
) -> Result<Json<Page>, ApiError> {
    let limit = page.limit(DEFAULT_POSTS_PAGE)?;
    state
        .app
        .my_posts(&member, limit, page.cursor.as_deref())
        .await
        .map(Json)
}

pub(crate) async fn my_comments(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    page: PageQuery,
) -> Result<Json<CommentPage>, ApiError> {
    let limit = page.limit(COMMENTS_PAGE)?;
    state
        .app
        .my_comments(&member, limit, page.cursor.as_deref())
        .await
        .map(Json)
}

pub(crate) async fn change_password(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    Body(r): Body<ChangePasswordRequest>,
) -> Result<StatusCode, ApiError> {
    let command = ChangePassword {
        member,
        current: Password::attempt_in("current_password", required("current_password", r.current_password)?)?,
        new: Password::member_in("new_password", required("new_password", r.new_password)?)?,
        client,
    };
    state.app.change_password(command).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn end_sessions(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
) -> Result<StatusCode, ApiError> {
    state.app.end_sessions(&member).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn delete_account(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    Body(r): Body<DeleteAccountRequest>,
) -> Result<StatusCode, ApiError> {
    let command = DeleteAccount {
        member,
        password: Password::attempt(required("password", r.password)?)?,
        delete_content: r
            .delete_content
            .ok_or_else(|| ApiError::invalid("delete_content", "is required (true or false)"))?,
        client,
    };
    state.app.delete_account(command).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct ConfirmTotpRequest {
    /// The 6-digit code the authenticator app shows for the new secret.
    #[cfg_attr(feature = "openapi", schema(value_type = String, required = true, min_length = 1, max_length = 64, example = "123456"))]
    code: Option<String>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct EndTotpRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::login_password, required = true))]
    password: Option<String>,
    /// A TOTP code or a recovery code: required while TOTP is on (not for an enrollment still waiting).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, min_length = 1, max_length = 64, example = "123456"))]
    code: Option<String>,
}

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct StartTotpRequest {
    /// The member's current password.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::login_password, required = true))]
    password: Option<String>,
}

/// `POST /members/me/totp`.
pub(crate) async fn start_totp(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    headers: http::HeaderMap,
    Body(r): Body<StartTotpRequest>,
) -> Result<(NoStore, Json<TotpEnrollment>), ApiError> {
    let command = StartTotp {
        member,
        password: Password::attempt(required("password", r.password)?)?,
        admin_enroll_token: super::signup::admin_enroll_token(&headers),
        client,
    };
    state.app.start_totp(command).await.map(|e| (NO_STORE, Json(e)))
}

/// An answer carrying a secret is kept by no cache.
type NoStore = [(http::header::HeaderName, &'static str); 1];
const NO_STORE: NoStore = [(http::header::CACHE_CONTROL, "no-store")];

/// `POST /members/me/totp/confirm`.
pub(crate) async fn confirm_totp(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    Body(r): Body<ConfirmTotpRequest>,
) -> Result<(NoStore, Json<RecoveryCodes>), ApiError> {
    let command = ConfirmTotp {
        member,
        code: TotpCode::parse("code", required("code", r.code)?)?,
        client,
    };
    state
        .app
        .confirm_totp(command)
        .await
        .map(|codes| (NO_STORE, Json(codes)))
}

/// `DELETE /members/me/totp`.
pub(crate) async fn end_totp(
    State(state): State<AppState>,
    AuthMember(member): AuthMember,
    ClientIp(client): ClientIp,
    Body(r): Body<EndTotpRequest>,
) -> Result<StatusCode, ApiError> {
    let command = EndTotp {
        member,
        password: Password::attempt(required("password", r.password)?)?,
        code: r.code.map(|code| TotpCode::parse("code", code)).transpose()?,
        client,
    };
    state.app.end_totp(command).await?;
    Ok(StatusCode::NO_CONTENT)
}
