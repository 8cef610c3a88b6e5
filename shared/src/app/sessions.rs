//! Log in (docs/API.md, Routes: `POST /sessions`; Throttling and quotas).

use crate::domain::{Member, MemberId, Password, PasswordHash, Username};
use crate::error::ApiError;
use crate::hashing::{Hashing, Tier};

use super::passwords::{PasswordWarning, check_password, weakness};
use super::throttle::Refusal;
use super::tokens::TOKEN_TTL_SECS;
use super::totp::TotpCode;
use super::{App, ClientAddress, throttle};

#[derive(Debug)]
pub struct LogIn {
    pub username: Username,
    pub password: Password,
    /// A TOTP code or a recovery code: required while TOTP is on.
    pub totp: Option<TotpCode>,
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
    /// Present when the password that signed in breaks today's
    /// member password rules: `too_common` (on the blocklist), `personal`
    /// (the username or nickname), `too_short` (under
    /// `PASSWORD_POLICY=nist`, without TOTP). The login still succeeds;
    /// change the password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_warning: Option<PasswordWarning>,
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
    /// Throttled per username and address, per address and per username
    /// before any hashing. Every failure, whatever its cause (unknown user,
    /// wrong password, a stored hash that can no longer be checked, a
    /// password too long to have been stored), answers the same
    /// `invalid_credentials` after the same hashing work, and is counted.
    /// Every check also counts against the address's password checks,
    /// and a success against the username's successful logins: right
    /// passwords cannot be looped for free either.
    pub async fn log_in(&self, command: LogIn) -> Result<Session, ApiError> {
        let hashing = self.hashing()?.for_client(&command.client.0);
        let tokens = self.tokens()?;
        let failure_keys = throttle::login_keys(&self.limits, command.username.as_str(), &command.client.0);
        let success_keys = throttle::login_success_keys(&self.limits, command.username.as_str());
        let keys: Vec<_> = failure_keys
            .iter()
            .chain(&success_keys)
            .chain(&throttle::password_check_keys(&self.limits, &command.client.0))
            .cloned()
            .collect();
        // One round trip counts them all; what stays counted depends on the verdict.
        let mut checks = throttle::reserve(&*self.store, &keys, Refusal::TooManyAttempts).await?;
        let failures = checks.take(&failure_keys);
        let success = checks.take(&success_keys);

        let credentials = match self.store.member_credentials(&command.username).await {
            Ok(credentials) => credentials,
            // No verdict (store unavailable): nothing is counted.
            Err(e) => {
                throttle::forgive_all(&*self.store, [failures, success, checks]).await;
                return Err(e.into());
            }
        };
        let stored = credentials.as_ref().map(|c| &c.password_hash);
        let verdict = match check_password(&hashing, Tier::Member, &command.password, stored).await {
            Ok(verdict) => verdict,
            // No verdict: nothing is counted, but a shed (503) counts as a check.
            Err(e) => {
                throttle::settle_unchecked(&*self.store, &e, checks, [failures, success]).await;
                return Err(e);
            }
        };
        let Some(credentials) = credentials.filter(|_| verdict.matched) else {
            // A failure: counted as a failure and a check, not as a success.
            throttle::forgive(&*self.store, success).await;
            return Err(ApiError::InvalidCredentials { field: None });
        };
        // The second factor, once the password matched: without a code
        // `401 totp_required` (the check stays counted as a success, which
        // bounds looping on it); a wrong or spent one is a failed login.
        if let Some(totp) = credentials.totp.as_ref().filter(|t| t.confirmed) {
            let Some(code) = &command.totp else {
                throttle::forgive(&*self.store, failures).await;
                return Err(ApiError::TotpRequired);
            };
            let member_id = MemberId::from_stored(credentials.member.id.clone());
            match self.second_factor(&member_id, &command.username, totp, code).await {
                Ok(true) => {}
                Ok(false) => {
                    throttle::forgive(&*self.store, success).await;
                    return Err(ApiError::InvalidCredentials { field: None });
                }
                Err(e) => {
                    throttle::forgive_all(&*self.store, [failures, success]).await;
                    return Err(e);
                }
            }
        }
        throttle::forgive(&*self.store, failures).await;
        if verdict.needs_rehash {
            self.upgrade_member_hash(
                &hashing,
                &command.username,
                &credentials.password_hash,
                &command.password,
            )
            .await;
        }
        let token = tokens.issue(
            &credentials.member,
            credentials.session_epoch,
            throttle::unix_now().max(0) as u64,
        )?;
        let second_factor = credentials.totp.as_ref().is_some_and(|t| t.confirmed);
        let context = [
            credentials.member.username.as_str(),
            credentials.member.nickname.as_str(),
        ];
        let password_warning = weakness(&command.password, &context).or_else(|| {
            (command.password.code_points() < self.passwords.member_min(second_factor))
                .then_some(PasswordWarning::TooShort)
        });
        Ok(Session {
            token,
            token_type: "Bearer",
            expires_in: TOKEN_TTL_SECS,
            member: credentials.member,
            password_warning,
        })
    }

    /// Stores a hash under the member tier's current policy. Best effort: the
    /// login already succeeded, and the next one will try again.
    async fn upgrade_member_hash(
        &self,
        hashing: &Hashing,
        username: &Username,
        old: &PasswordHash,
        password: &Password,
    ) {
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
