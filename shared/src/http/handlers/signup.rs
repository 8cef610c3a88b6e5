//! signup: `POST /members`.

use axum::extract::State;
use secrecy::SecretString;
use serde::Deserialize;

use super::{Created, created};
use crate::app::signup::SignUp;
use crate::domain::{Member, Nickname, Password, Username};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::client_ip::ClientIp;
use crate::http::conventions::PowHeader;
use crate::http::idempotency::Idempotent;
use crate::http::input::{Body, required};

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct SignUpRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::username, required = true))]
    username: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::member_password, required = true))]
    password: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::nickname, required = true))]
    nickname: Option<String>,
}

/// Signs up a name `ADMIN_USERNAMES` reserves (docs/API.md, Hardening).
const ADMIN_ENROLL_TOKEN: &str = "admin-enroll-token";

pub(crate) async fn signup(
    State(state): State<AppState>,
    headers: http::HeaderMap,
    Idempotent(idempotency): Idempotent,
    ClientIp(client): ClientIp,
    PowHeader(pow): PowHeader,
    Body(r): Body<SignUpRequest>,
) -> Result<Created<Member>, ApiError> {
    let command = SignUp {
        idempotency,
        username: Username::parse(required("username", r.username)?)?,
        password: Password::member(required("password", r.password)?)?,
        nickname: Nickname::parse(required("nickname", r.nickname)?)?,
        client,
        admin_enroll_token: admin_enroll_token(&headers),
        pow,
    };
    state.app.sign_up(command).await.map(created)
}

/// The `Admin-Enroll-Token` header (signup, and a listed admin's first TOTP enrollment).
pub(crate) fn admin_enroll_token(headers: &http::HeaderMap) -> Option<SecretString> {
    headers
        .get(ADMIN_ENROLL_TOKEN)
        .and_then(|value| value.to_str().ok())
        .map(|token| SecretString::from(token.to_owned()))
}
