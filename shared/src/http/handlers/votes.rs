//! like: a member's and a guest's votes on a post (docs/API.md, Votes and best posts).

use axum::Json;
use axum::extract::State;
use serde::Deserialize;

use crate::domain::{Vote, VoteChange, VoteState};
use crate::error::ApiError;
use crate::http::AppState;
use crate::http::auth::AuthMember;
use crate::http::client_ip::ClientIp;
use crate::http::conventions::PowHeader;
use crate::http::input::{Body, required};
use crate::http::paths::PostPath;

/// `PUT`/`DELETE .../like` and `.../dislike`: one handler per change.
macro_rules! vote_handler {
    ($name:ident, $change:expr) => {
        pub(crate) async fn $name(
            State(state): State<AppState>,
            AuthMember(member): AuthMember,
            ClientIp(client): ClientIp,
            PostPath(key): PostPath,
        ) -> Result<Json<VoteState>, ApiError> {
            state
                .app
                .member_vote(&member, &client, &key, $change)
                .await
                .map(Json)
        }
    };
}

vote_handler!(like, VoteChange::Like);
vote_handler!(unlike, VoteChange::Unlike);
vote_handler!(dislike, VoteChange::Dislike);
vote_handler!(undislike, VoteChange::Undislike);

/// `{"vote": "like" | "dislike"}` of a guest.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct GuestVoteRequest {
    #[cfg_attr(feature = "openapi", schema(value_type = crate::domain::Vote, required = true))]
    vote: Option<String>,
}

/// A guest's vote: once per post per client address key.
pub(crate) async fn guest_vote(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    PostPath(key): PostPath,
    PowHeader(pow): PowHeader,
    Body(r): Body<GuestVoteRequest>,
) -> Result<Json<VoteState>, ApiError> {
    let vote = match required("vote", r.vote)?.as_str() {
        "like" => Vote::Like,
        "dislike" => Vote::Dislike,
        _ => return Err(ApiError::invalid("vote", r#"must be "like" or "dislike""#)),
    };
    state
        .app
        .guest_vote(&client, &key, vote, pow.as_deref())
        .await
        .map(Json)
}
