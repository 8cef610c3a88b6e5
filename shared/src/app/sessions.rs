//! Log in (docs/API.md, Routes: `POST /sessions`; Throttling and quotas).

use crate::domain::{Member, Password, PasswordHash, Username};
use crate::error::ApiError;
use crate::hashing::{Tier, Verification};

use super::accounts::check_length;
use super::tokens::TOKEN_TTL_SECS;
use super::{App, ClientAddress, throttle};

pub struct LogIn {
    pub username: Username,
    pub password: Password,
    pub client: ClientAddress,
}

/// A signed-in session: the bearer token and who it names.
#[derive(Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Session {
    pub token: String,
    pub token_type: &'static str,
    pub expires_in: u64,
    pub member: Member,
}

/// Redacted: the token is a credential.
impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("token", &"..")
            .field("member", &self.member)
            .finish_non_exhaustive()
    }
}

impl App {
    /// Throttled per username and per client address before any hashing; an
    /// unknown username costs a member verify too, so timing reveals nothing.
    pub async fn log_in(&self, command: LogIn) -> Result<Session, ApiError> {
        let hashing = self.hashing()?;
        let tokens = self.tokens()?;
        check_length(hashing, Tier::Member, &command.password)?;
        let keys = throttle::login_keys(&self.throttle, command.username.as_str(), &command.client.0);
        let reservation = throttle::reserve(&*self.store, &keys).await?;
        let password = command.password.secret();

        let checked = async {
            let credentials = self.store.member_credentials(&command.username).await?;
            let verdict = match &credentials {
                Some(c) => {
                    hashing
                        .verify(Tier::Member, password.clone(), c.password_hash.as_str().to_owned())
                        .await?
                }
                None => {
                    hashing.verify_dummy(password.clone()).await?;
                    Verification {
                        matched: false,
                        needs_rehash: false,
                    }
                }
            };
            Ok::<_, ApiError>(credentials.filter(|_| verdict.matched).map(|c| (c, verdict)))
        }
        .await;
        let (credentials, verdict) = match checked {
            Ok(Some(matched)) => matched,
            // A failure: the reservation stays counted.
            Ok(None) => return Err(ApiError::InvalidCredentials),
            // No verdict (store or hashing unavailable): not a failure.
            Err(e) => {
                throttle::forgive(&*self.store, reservation).await;
                return Err(e);
            }
        };
        throttle::forgive(&*self.store, reservation).await;
        if verdict.needs_rehash {
            self.upgrade_member_hash(&command.username, &credentials.password_hash, &command.password)
                .await;
        }
        let token = tokens.issue(&credentials.member, throttle::unix_now().max(0) as u64)?;
        Ok(Session {
            token,
            token_type: "Bearer",
            expires_in: TOKEN_TTL_SECS,
            member: credentials.member,
        })
    }

    /// Stores a hash under the member tier's current policy. Best effort: the
    /// login already succeeded, and the next one will try again.
    async fn upgrade_member_hash(&self, username: &Username, old: &PasswordHash, password: &Password) {
        let Ok(hashing) = self.hashing() else { return };
        match hashing.hash(Tier::Member, password.secret().clone()).await {
            Ok(new) => match self
                .store
                .replace_password_hash(username, old, &PasswordHash::new(new))
                .await
            {
                Ok(_) => tracing::info!(tier = "member", "password hash upgraded to the current policy"),
                Err(e) => tracing::warn!(error = %e, "password hash upgrade not stored"),
            },
            Err(e) => tracing::warn!(error = %e, "password hash upgrade skipped"),
        }
    }
}
