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

/// A new member password against the member password rules
/// (docs/API.md, Passwords and staff sign-in), before any hash: at least
/// `MEMBER_PASSWORD_MIN` code points after NFKC (15 under
/// `PASSWORD_POLICY=nist` without `second_factor`), not on the bundled
/// blocklist, not the member's username or nickname (`context`). No
/// composition rule. `400 validation_failed` naming `field`.
#[cfg(feature = "passwords")]
pub(super) fn check_new_password(
    settings: &super::PasswordSettings,
    field: &str,
    password: &Password,
    context: &[&str],
    second_factor: bool,
) -> Result<(), ApiError> {
    let min = settings.member_min(second_factor);
    if skeleton(password).is_empty() {
        return Err(ApiError::invalid(
            field,
            format_args!(
                "must be {min}-{} characters that show: spaces and invisible characters alone are no password",
                crate::domain::fields::PASSWORD_MAX
            ),
        ));
    }
    if password.code_points() < min {
        let why = if min > settings.member_min {
            " (a password that is the only factor: turn on TOTP for the shorter minimum)"
        } else {
            ""
        };
        return Err(ApiError::invalid(
            field,
            format_args!("must be {min}-{}{why} characters", crate::domain::fields::PASSWORD_MAX),
        ));
    }
    match weakness(password, context) {
        Some(PasswordWarning::TooCommon) => Err(ApiError::invalid(field, "is too common: choose another")),
        Some(PasswordWarning::Personal) => Err(ApiError::invalid(
            field,
            "is too common: it is your username or nickname",
        )),
        _ => Ok(()),
    }
}

/// What a login tells a member about the password that let them
/// in (docs/API.md, Passwords and staff sign-in): they keep signing in,
/// and are asked to change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
// Only a login (`totp`'s functions) tells it; signup uses the checks.
#[cfg_attr(not(feature = "totp"), allow(dead_code, unreachable_pub))]
#[cfg(feature = "passwords")]
pub enum PasswordWarning {
    /// On the blocklist of common and breached passwords.
    TooCommon,
    /// The member's own username or nickname.
    Personal,
    /// Shorter than `PASSWORD_POLICY=nist` asks of a password that is the only factor.
    TooShort,
}

/// What a password is checked against the blocklist as (docs/API.md, Third
/// audit), beside the password as typed: after NFKC, without format,
/// control and invisible characters (ZWSP, the Hangul fillers), trimmed,
/// inner whitespace collapsed to one space, and every other character
/// taken to the ASCII it is confusable with (Unicode TR39's skeleton:
/// Cyrillic `а` is `a`), lower-cased. `password123 `, `pass\u{200B}word123`
/// and `раssword123` are all `password123`.
#[cfg(feature = "passwords")]
pub(super) fn skeleton(password: &Password) -> String {
    use secrecy::ExposeSecret as _;
    use unicode_normalization::UnicodeNormalization as _;
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};
    let hidden = |c: char| {
        matches!(c.general_category(), GeneralCategory::Format | GeneralCategory::Control) && !c.is_whitespace()
            || crate::domain::fields::RENDERS_AS_NOTHING
                .iter()
                .any(|(first, last)| (*first..=*last).contains(&c))
    };
    let shown: String = password
        .secret()
        .expose_secret()
        .nfkc()
        .filter(|c| !hidden(*c))
        .collect();
    let collapsed = shown.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .chars()
        .flat_map(|c| {
            let plain: String = if c.is_ascii() {
                c.to_string()
            } else {
                unicode_security::skeleton(&c.to_string()).collect()
            };
            if plain.is_ascii() { plain } else { c.to_string() }
                .chars()
                .collect::<Vec<_>>()
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether the password is on the blocklist or is one of `context`, as
/// NFKC and lower case compare them.
#[cfg(feature = "passwords")]
pub(super) fn weakness(password: &Password, context: &[&str]) -> Option<PasswordWarning> {
    use secrecy::ExposeSecret as _;
    use unicode_normalization::UnicodeNormalization as _;
    let typed = password.secret().expose_secret();
    let plain = skeleton(password);
    if crate::domain::fields::blocklist::is_common(typed) || crate::domain::fields::blocklist::is_common(&plain) {
        return Some(PasswordWarning::TooCommon);
    }
    let fold = |s: &str| -> String { s.nfkc().flat_map(char::to_lowercase).collect() };
    let folded = fold(typed);
    context
        .iter()
        .any(|word| !word.is_empty() && (fold(word) == folded || fold(word) == plain))
        .then_some(PasswordWarning::Personal)
}
