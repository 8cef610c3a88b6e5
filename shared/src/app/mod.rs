//! The application: one function per use case (docs/DESIGN.md, Layout),
//! typed commands in and typed results out. Throttling, authorization,
//! hashing and rehash are decided here, so their rules are tested without
//! HTTP; the HTTP adapter only parses requests into commands and results into
//! responses.

pub mod accounts;
pub mod guest;
pub mod likes;
pub mod posts;
pub mod throttle;
pub mod tokens;

use std::sync::Arc;

use crate::domain::{Author, MemberId, PostKey};
use crate::error::ApiError;
use crate::hashing::Hashing;
use crate::store::Store;
use throttle::ThrottlePolicy;
use tokens::JwtKeys;

pub use crate::domain::Boards;

/// The client address a request came from (docs/API.md, Client address):
/// what failure limits are counted per.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAddress(pub String);

/// The member a verified bearer token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    pub id: MemberId,
    pub nickname: String,
}

impl SignedIn {
    fn author(&self) -> Author {
        Author::Member {
            member_id: self.id.as_str().to_owned(),
            nickname: self.nickname.clone(),
        }
    }
}

/// What the use cases run on, built once per process (per cold start on
/// Lambda) by [`crate::wiring`]. A function that hashes no password has no
/// [`Hashing`]; one that handles no token has no [`JwtKeys`].
#[derive(Clone)]
pub struct App {
    pub store: Arc<dyn Store>,
    hashing: Option<Hashing>,
    tokens: Option<Arc<JwtKeys>>,
    pub boards: Boards,
    pub throttle: ThrottlePolicy,
}

impl App {
    pub fn new(
        store: Arc<dyn Store>,
        hashing: Option<Hashing>,
        tokens: Option<JwtKeys>,
        boards: Boards,
        throttle: ThrottlePolicy,
    ) -> Self {
        App {
            store,
            hashing,
            tokens: tokens.map(Arc::new),
            boards,
            throttle,
        }
    }

    /// Present in functions that hash passwords; a route that hashes is only
    /// mounted where it is, so its absence is a wiring bug.
    pub fn hashing(&self) -> Result<&Hashing, ApiError> {
        self.hashing
            .as_ref()
            .ok_or_else(|| ApiError::Internal("this function was built without password hashing".into()))
    }

    pub fn tokens(&self) -> Result<&JwtKeys, ApiError> {
        self.tokens
            .as_deref()
            .ok_or_else(|| ApiError::Internal("this function was built without a JWT key".into()))
    }

    /// The member a bearer token names, or `401 unauthorized`.
    pub fn verify_token(&self, token: &str) -> Result<SignedIn, ApiError> {
        let claims = self.tokens()?.verify(token)?;
        Ok(SignedIn {
            id: claims.member_id()?,
            nickname: claims.nickname,
        })
    }

    fn not_found_post(&self) -> ApiError {
        ApiError::not_found("post")
    }

    /// The post must exist on its board.
    async fn require_post(&self, key: &PostKey) -> Result<crate::domain::Guard, ApiError> {
        self.store.post_guard(key).await?.ok_or_else(|| self.not_found_post())
    }
}
