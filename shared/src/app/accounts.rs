//! Sign up (docs/API.md, Routes: `POST /members`).

use secrecy::SecretString;

use super::IdempotencyClaim;
use crate::domain::{Member, MemberId, Nickname, Password, PasswordHash, Username, now};
use crate::error::ApiError;
use crate::hashing::{EngineError, HashError, Hashing, Tier, UNPEPPERED_MAX_BYTES, Verification};

use super::throttle::{self, Refusal};
use super::{App, ClientAddress};

#[derive(Debug)]
pub struct SignUp {
    /// The request's `Idempotency-Key` claim, if it came with one.
    pub idempotency: Option<IdempotencyClaim>,
    pub username: Username,
    pub password: Password,
    pub nickname: Nickname,
    pub client: ClientAddress,
}

/// Without a pepper bcrypt reads 72 bytes at most: a longer password is
/// refused rather than silently truncated (docs/API.md, Field rules).
pub(super) fn check_length(hashing: &Hashing, tier: Tier, password: &Password) -> Result<(), ApiError> {
    if !hashing.engine().policy(tier).peppered && password.byte_len() > UNPEPPERED_MAX_BYTES {
        return Err(ApiError::validation(format!(
            "password must be at most {UNPEPPERED_MAX_BYTES} bytes"
        )));
    }
    Ok(())
}

/// A password checked against what is stored (`None`: an unknown user,
/// checked against the dummy hash), at the same cost whatever the cause of a
/// mismatch. A stored hash that cannot be checked (malformed, or made under a
/// pepper no longer configured) and a password too long to have been stored
/// are mismatches after a dummy verify. A password that NFKC changed is also
/// tried as typed (hashes stored before normalization) and then rehashed.
/// Only an overloaded gate is an error: no verdict.
pub(super) async fn check_password(
    hashing: &Hashing,
    tier: Tier,
    password: &Password,
    stored: Option<&PasswordHash>,
) -> Result<Verification, ApiError> {
    let mismatch = Verification {
        matched: false,
        needs_rehash: false,
    };
    let too_long = !hashing.engine().policy(tier).peppered && password.byte_len() > UNPEPPERED_MAX_BYTES;
    let forms = std::iter::once(password.secret()).chain(password.as_typed());
    // The dummy verify of a password too long to have been stored: the same
    // work on a placeholder (bcrypt would refuse the password itself, and
    // the login would answer 400 uncounted instead of 401).
    let placeholder = SecretString::from("x".repeat(UNPEPPERED_MAX_BYTES));
    let dummy_form = |form: &SecretString| if too_long { placeholder.clone() } else { form.clone() };
    let mut verdict = mismatch;
    for (i, form) in forms.enumerate() {
        let outcome = match stored.filter(|_| !too_long) {
            Some(hash) => hashing.verify(tier, form.clone(), hash.as_str().to_owned()).await,
            None => hashing.verify_dummy(dummy_form(form)).await.map(|()| mismatch),
        };
        verdict = match outcome {
            Ok(v) => v,
            Err(HashError::Overloaded(o)) => return Err(HashError::Overloaded(o).into()),
            Err(HashError::Engine(e)) => {
                if !matches!(e, EngineError::PasswordTooLong { .. }) {
                    tracing::warn!(error = %e, tier = %tier, "a stored password hash cannot be checked");
                }
                hashing.verify_dummy(dummy_form(form)).await?;
                mismatch
            }
        };
        if verdict.matched {
            // Matched as typed: store the normalized form's hash.
            verdict.needs_rehash |= i > 0;
            break;
        }
    }
    Ok(verdict)
}

impl App {
    /// Refused over the signup quota and for a taken username before any
    /// hashing; the store's conditional write still decides races.
    pub async fn sign_up(&self, command: SignUp) -> Result<Member, ApiError> {
        let hashing = self.hashing()?;
        check_length(hashing, Tier::Member, &command.password)?;
        let keys = throttle::signup_keys(&self.limits, &command.client.0);
        let reservation = throttle::reserve(&*self.store, &keys, Refusal::RateLimited).await?;
        let created = async {
            if self.store.member_credentials(&command.username).await?.is_some() {
                return Err(ApiError::UsernameTaken);
            }
            let hash = hashing.hash(Tier::Member, command.password.secret().clone()).await?;
            let member = Member {
                id: MemberId::generate().into_inner(),
                username: command.username.as_str().to_owned(),
                nickname: command.nickname.as_str().to_owned(),
                created_at: now(),
            };
            let done = super::completion(command.idempotency.as_ref(), &member)?;
            self.store
                .create_member(&member, &PasswordHash::new(hash), done.as_ref())
                .await?;
            Ok(member)
        }
        .await;
        match created {
            // A taken username is an answer: it stays counted (it bounds
            // probing usernames through signup too).
            Ok(_) | Err(ApiError::UsernameTaken) => {}
            Err(_) => throttle::forgive(&*self.store, reservation).await,
        }
        created
    }
}
