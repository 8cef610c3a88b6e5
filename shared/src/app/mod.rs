//! The application: one function per use case (docs/DESIGN.md, Layout),
//! typed commands in and typed results out. Throttling, authorization,
//! hashing and rehash are decided here, so their rules are tested without
//! HTTP; the HTTP adapter only parses requests into commands and results into
//! responses.

#[cfg(feature = "hashing")]
pub mod accounts;
#[cfg(feature = "hashing")]
mod errors;
#[cfg(feature = "hashing")]
pub mod guest;
mod idempotency;
pub mod likes;
pub mod posts;
#[cfg(all(feature = "hashing", feature = "tokens"))]
pub mod sessions;
mod settings;
pub mod throttle;
#[cfg(feature = "tokens")]
pub mod tokens;

use std::sync::Arc;

use crate::domain::{Author, MemberId, PostKey};
use crate::error::ApiError;
#[cfg(feature = "hashing")]
use crate::hashing::Hashing;
use crate::store::Store;
use throttle::{Limits, Refusal};
#[cfg(feature = "tokens")]
use tokens::JwtKeys;

pub use crate::domain::Boards;
pub use idempotency::{Answer, ClaimOutcome, IdempotencyClaim, IdempotencyKey, KeyOwner, RememberedAnswer};
pub use settings::AppSettings;

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
    pub fn author(&self) -> Author {
        Author::Member {
            member_id: self.id.as_str().to_owned(),
            nickname: self.nickname.clone(),
        }
    }
}

/// What the use cases run on, built once per process (per cold start on
/// Lambda) by the composition root. A function that hashes no password has
/// no [`Hashing`]; one that handles no token has no [`JwtKeys`]. The store
/// is private: the use cases are its only door.
#[derive(Clone)]
pub struct App {
    store: Arc<dyn Store>,
    #[cfg(feature = "hashing")]
    hashing: Option<Hashing>,
    #[cfg(feature = "tokens")]
    tokens: Option<Arc<JwtKeys>>,
    pub boards: Boards,
    pub limits: Limits,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("boards", &self.boards)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl App {
    /// An application without hashing or tokens: add them with
    /// [`App::with_hashing`] and [`App::with_tokens`] where the routes use them.
    pub fn new(store: Arc<dyn Store>, settings: AppSettings) -> Self {
        App {
            store,
            #[cfg(feature = "hashing")]
            hashing: None,
            #[cfg(feature = "tokens")]
            tokens: None,
            boards: settings.boards,
            limits: settings.limits,
        }
    }

    /// The store itself, for tests that seed or inspect it (feature
    /// `test-support`, never in a deployed build): requests reach the store
    /// only through the use cases.
    #[cfg(feature = "test-support")]
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    #[cfg(feature = "hashing")]
    pub fn with_hashing(mut self, hashing: Hashing) -> Self {
        self.hashing = Some(hashing);
        self
    }

    #[cfg(feature = "tokens")]
    pub fn with_tokens(mut self, tokens: JwtKeys) -> Self {
        self.tokens = Some(Arc::new(tokens));
        self
    }

    #[cfg(feature = "hashing")]
    /// Present in functions that hash passwords; a route that hashes is only
    /// mounted where it is, so its absence is a wiring bug.
    pub fn hashing(&self) -> Result<&Hashing, ApiError> {
        self.hashing
            .as_ref()
            .ok_or_else(|| ApiError::Internal("this function was built without password hashing".into()))
    }

    #[cfg(feature = "tokens")]
    pub fn tokens(&self) -> Result<&JwtKeys, ApiError> {
        self.tokens
            .as_deref()
            .ok_or_else(|| ApiError::Internal("this function was built without a JWT key".into()))
    }

    #[cfg(feature = "tokens")]
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

    /// Counts one create against the write quotas (docs/API.md, Throttling
    /// and quotas), before any hashing; `429 rate_limited` over a quota.
    async fn reserve_create(
        &self,
        client: &ClientAddress,
        member: Option<&SignedIn>,
    ) -> Result<throttle::Reservation, ApiError> {
        let keys = throttle::create_keys(&self.limits, &client.0, member.map(|m| m.id.as_str()));
        throttle::reserve(&*self.store, &keys, Refusal::RateLimited).await
    }

    /// A create's quota counts stay only for what it created: a failure,
    /// and a replay (it wrote nothing), give them back.
    async fn keep_only_if_created<T>(&self, created: &Result<Answer<T>, ApiError>, reservation: throttle::Reservation) {
        if !matches!(created, Ok(Answer::Created(_))) {
            throttle::forgive(&*self.store, reservation).await;
        }
    }

    /// The post must exist on its board.
    async fn require_post(&self, key: &PostKey) -> Result<crate::domain::Guard, ApiError> {
        self.store.post_guard(key).await?.ok_or_else(|| self.not_found_post())
    }
}

/// The idempotency record a create writes with its item, when it holds a key.
pub(crate) fn completion<T: serde::Serialize>(
    claim: Option<&IdempotencyClaim>,
    created: &T,
) -> Result<Option<crate::store::Completion>, ApiError> {
    claim.map(|claim| claim.complete(created)).transpose()
}
