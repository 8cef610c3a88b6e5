//! The password checks every use case shares: signup and password change
//! check a new password's length, sign-in, password change and guest writes
//! verify one against what is stored (docs/API.md, Field rules; Throttling
//! and quotas).

use secrecy::SecretString;

use crate::domain::{Password, PasswordHash};
use crate::error::ApiError;
use crate::hashing::{EngineError, HashError, Hashing, Tier, UNPEPPERED_MAX_BYTES, Verification};

/// Without a pepper bcrypt reads 72 bytes at most: a longer password is
/// refused rather than silently truncated (docs/API.md, Field rules).
/// `field` is the body's name for it (`new_password`).
pub(super) fn check_length(hashing: &Hashing, tier: Tier, field: &str, password: &Password) -> Result<(), ApiError> {
    if !hashing.engine().policy(tier).peppered && password.byte_len() > UNPEPPERED_MAX_BYTES {
        return Err(ApiError::invalid(
            field,
            format_args!("must be at most {UNPEPPERED_MAX_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// A password checked against what is stored (`None`: an unknown user,
/// checked against the dummy hash) with exactly one verify, whatever the
/// cause of a mismatch: every counted failure costs one hash (docs/API.md,
/// Throttling and quotas). A stored hash that cannot be checked (malformed,
/// or made under a pepper no longer configured) and a password too long to
/// have been stored are mismatches after a dummy verify. A v1 hash (made
/// before NFKC normalization, which only v1 pepper ids tell) is checked
/// against the password as typed, and rehashed normalized when it matches.
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
    let Some(hash) = stored.filter(|_| !too_long) else {
        hashing.verify_dummy(dummy_form(password, too_long)).await?;
        return Ok(mismatch);
    };
    let form = match password.as_typed() {
        Some(typed) if hashing.engine().made_before_normalization(hash.as_str()) => typed,
        _ => password.secret(),
    };
    match hashing.verify(tier, form.clone(), hash.as_str().to_owned()).await {
        Ok(verdict) => Ok(verdict),
        Err(HashError::Overloaded(o)) => Err(HashError::Overloaded(o).into()),
        Err(HashError::Engine(e)) => {
            if !matches!(e, EngineError::PasswordTooLong { .. }) {
                tracing::warn!(error = %e, tier = %tier, "a stored password hash cannot be checked");
            }
            hashing.verify_dummy(dummy_form(password, too_long)).await?;
            Ok(mismatch)
        }
    }
}

/// What a dummy verify checks: the password, or for one too long to have
/// been stored a placeholder of the same work (bcrypt would refuse the
/// password itself, and the login would answer 400 uncounted, not 401).
fn dummy_form(password: &Password, too_long: bool) -> SecretString {
    if too_long {
        SecretString::from("x".repeat(UNPEPPERED_MAX_BYTES))
    } else {
        password.secret().clone()
    }
}
