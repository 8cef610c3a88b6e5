//! login: `POST /sessions`.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;

use crate::app::sessions::{LogIn, Session};
use crate::app::totp::TotpCode;
use crate::domain::{Password, Username};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::client_ip::ClientIp;
use crate::http::input::{Body, required};

#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct LogInRequest {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::username, required = true))]
    username: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::http::schema::login_password, required = true))]
    password: Option<String>,
    /// Required while the member's TOTP is on: the app's 6-digit
    /// code, or one of the recovery codes (each works once).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, min_length = 1, max_length = 64, example = "123456"))]
    totp: Option<String>,
}

pub(crate) async fn login(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    Body(r): Body<LogInRequest>,
) -> Result<Json<Session>, ApiError> {
    let command = LogIn {
        username: Username::parse(required("username", r.username)?)?,
        password: Password::attempt(required("password", r.password)?)?,
        totp: r.totp.map(|code| TotpCode::parse("totp", code)).transpose()?,
        client,
    };
    state.app.log_in(command).await.map(Json)
}
