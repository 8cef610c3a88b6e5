//! TOTP, the second factor (docs/API.md, Passwords and staff
//! sign-in): RFC 6238 with SHA-1, 6 digits and 30-second steps (what
//! authenticator apps expect; totp-rs computes and compares the codes),
//! one step of drift either way, each step accepted once. An enrollment
//! takes effect only once a code from it is confirmed, so a mistyped secret
//! locks no one out. The secret is sealed with AES-256-GCM (aws-lc-rs,
//! already linked for TLS) under the TOTP key, bound to the member's id;
//! recovery codes are kept as HMAC-SHA-256 under a key derived from the
//! same. The store holds neither key (docs/security.md, TOTP).

use secrecy::{ExposeSecret as _, SecretString};

mod keys;

pub use keys::TotpKeys;
use keys::folded_recovery_code;

use super::throttle::{self, Refusal};
use super::{App, ClientAddress, SignedIn, revoked, username_of};
use crate::domain::{MemberId, Password, StoredTotp, TotpStart, Username};
use crate::error::ApiError;

/// Wrong codes in a row that stop an account's code checks for the rest
/// of [`CODE_GUESS_WINDOW_SECS`]: about 240 guesses a day at most, each
/// right with odds of 3 in a million (three steps are accepted).
pub const CODE_GUESSES: u64 = 10;
pub const CODE_GUESS_WINDOW_SECS: i64 = 3600;

/// Bytes of a new secret: RFC 4226 recommends 160 bits.
const SECRET_BYTES: usize = 20;
/// How many recovery codes a confirmation answers.
pub const RECOVERY_CODES: usize = 10;
/// Characters of a recovery code, base32 (5 bits each): 50 bits, hashed
/// under a key the store does not hold and tried under the login limits.
const RECOVERY_CODE_CHARS: usize = 10;
/// `POST /members/me/totp`: what an authenticator app is given.
#[derive(Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TotpEnrollment {
    /// The secret in base32, for typing into an app by hand.
    pub secret: String,
    /// The same as an `otpauth://totp/...` URI, for a QR code.
    pub otpauth_uri: String,
}

/// Redacted: the secret is a credential.
impl std::fmt::Debug for TotpEnrollment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TotpEnrollment").finish_non_exhaustive()
    }
}

/// `POST /members/me/totp/confirm`: the recovery codes, shown this once.
#[derive(Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecoveryCodes {
    /// Ten single-use codes, each good for one login (or for removing TOTP) in place of a TOTP code.
    pub recovery_codes: Vec<String>,
}

impl std::fmt::Debug for RecoveryCodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecoveryCodes").finish_non_exhaustive()
    }
}

/// A code as a member typed it: six digits from the app, or a recovery code.
#[derive(Clone)]
pub struct TotpCode(SecretString);

impl std::fmt::Debug for TotpCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TotpCode(..)")
    }
}

impl TotpCode {
    /// 1-64 characters; spaces around it are dropped.
    pub fn parse(field: &str, code: String) -> Result<Self, ApiError> {
        let code = code.trim();
        if code.is_empty() || code.chars().count() > 64 {
            return Err(ApiError::invalid(field, "must be a 6-digit code or a recovery code"));
        }
        Ok(TotpCode(SecretString::from(code.to_owned())))
    }

    /// Six digits, maybe typed with a space in the middle (as apps show them).
    fn digits(&self) -> Option<String> {
        let digits: String = self.0.expose_secret().chars().filter(|c| *c != ' ').collect();
        (digits.len() == 6 && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
    }
}

#[derive(Debug)]
pub struct ConfirmTotp {
    pub member: SignedIn,
    pub code: TotpCode,
    pub client: ClientAddress,
}

/// `POST /members/me/totp`: an enrollment asks for the current password
/// (a bearer token alone would let its thief lock the member out), and
/// a listed admin's first one for `Admin-Enroll-Token` too.
#[derive(Debug)]
pub struct StartTotp {
    pub member: SignedIn,
    pub password: Password,
    pub admin_enroll_token: Option<SecretString>,
    pub client: ClientAddress,
}

#[derive(Debug)]
pub struct EndTotp {
    pub member: SignedIn,
    pub password: Password,
    /// Required while TOTP is on (a TOTP code or a recovery code).
    pub code: Option<TotpCode>,
    pub client: ClientAddress,
}

fn unix_now() -> u64 {
    throttle::unix_now().max(0) as u64
}

impl App {
    pub fn with_totp(mut self, keys: TotpKeys) -> Self {
        self.totp = Some(std::sync::Arc::new(keys));
        self
    }

    fn totp_keys(&self) -> Result<&TotpKeys, ApiError> {
        self.totp
            .as_deref()
            .ok_or_else(|| ApiError::Internal("this function was built without a TOTP key".into()))
    }

    /// The totp-rs generator for a secret: SHA-1, 6 digits, 30 s, one step of drift.
    fn totp_for(&self, secret: Vec<u8>, username: &str) -> Result<totp_rs::Totp, ApiError> {
        totp_rs::Builder::new()
            .with_algorithm(totp_rs::Algorithm::SHA1)
            .with_digits(6)
            .with_step_duration(30)
            .with_skew(1)
            .with_secret(secret)
            .with_account_name(username)
            .with_issuer(Some(self.passwords.totp_issuer.as_str()))
            .build()
            .map_err(|e| ApiError::Internal(format!("a TOTP generator: {e}")))
    }

    /// `POST /members/me/totp`: a fresh secret, stored sealed and waiting
    /// for its first code; an earlier enrollment still waiting is replaced.
    /// While TOTP is on: `403 forbidden` (remove it first, with a code).
    pub async fn start_totp(&self, command: StartTotp) -> Result<TotpEnrollment, ApiError> {
        let keys = self.totp_keys()?;
        let member = &command.member;
        let username = username_of(member)?;
        let credentials = self
            .check_own_password(member, &username, ("password", &command.password), &command.client)
            .await?;
        // A listed admin is staff from their first sign-in: with the
        // password alone, whoever phished it would enroll their own
        // authenticator and act as admin (docs/API.md, Third audit).
        let on = credentials.totp.as_ref().is_some_and(|t| t.confirmed);
        if !on
            && self.is_listed_admin(&username)
            && !self.admin_enroll_token_matches(command.admin_enroll_token.as_ref())
        {
            return Err(ApiError::Forbidden(
                "an admin named in ADMIN_USERNAMES turns on TOTP only with the deployment's Admin-Enroll-Token header"
                    .into(),
            ));
        }
        let secret: [u8; SECRET_BYTES] = keys.random_bytes()?;
        let sealed = keys.seal(&secret, &member.id)?;
        match self.store.start_totp(&member.id, &username, &sealed).await? {
            TotpStart::Started => {}
            TotpStart::AlreadyOn => {
                return Err(ApiError::Forbidden(
                    "TOTP is on already: remove it (DELETE /members/me/totp with your password and a code) before enrolling again".into(),
                ));
            }
            TotpStart::NoAccount => return Err(revoked()),
        }
        let totp = self.totp_for(secret.to_vec(), username.as_str())?;
        Ok(TotpEnrollment {
            secret: totp.secret().to_base32(),
            otpauth_uri: totp
                .to_url()
                .map_err(|e| ApiError::Internal(format!("an otpauth URI: {e}")))?,
        })
    }

    /// `POST /members/me/totp/confirm`: a code from the waiting enrollment
    /// turns it on and answers the recovery codes, shown only now. A wrong
    /// code is `401 invalid_credentials` naming `code`, counted under the
    /// login limits.
    pub async fn confirm_totp(&self, command: ConfirmTotp) -> Result<RecoveryCodes, ApiError> {
        let keys = self.totp_keys()?;
        let username = username_of(&command.member)?;
        let failures = self.reserve_code_check(&username, &command.client).await?;
        let pending = self
            .store
            .member_credentials(&username)
            .await?
            .filter(|c| c.member.id == command.member.id.as_str())
            .ok_or_else(revoked)?
            .totp;
        let pending = match pending {
            Some(totp) if !totp.confirmed => totp,
            Some(_) => {
                throttle::forgive(&*self.store, failures).await;
                return Err(ApiError::Forbidden("TOTP is on already".into()));
            }
            None => {
                throttle::forgive(&*self.store, failures).await;
                return Err(ApiError::NotFound(
                    "no TOTP enrollment is waiting: start one with POST /members/me/totp".into(),
                ));
            }
        };
        let (secret, _) = keys
            .open(&pending.sealed_secret, &command.member.id)
            .ok_or_else(|| ApiError::Internal("a waiting TOTP secret opens under no TOTP key".into()))?;
        let totp = self.totp_for(secret, username.as_str())?;
        let step = command.code.digits().and_then(|code| totp.check(&code, unix_now()));
        let Some(step) = step else {
            return Err(ApiError::InvalidCredentials { field: Some("code") });
        };
        let codes: Vec<String> = (0..RECOVERY_CODES)
            .map(|_| {
                let bytes: [u8; 7] = keys.random_bytes()?;
                let code = data_encoding::BASE32_NOPAD.encode(&bytes).to_ascii_lowercase();
                let code = &code[..RECOVERY_CODE_CHARS];
                Ok(format!("{}-{}", &code[..5], &code[5..]))
            })
            .collect::<Result<_, ApiError>>()?;
        let hashes: Vec<String> = codes
            .iter()
            .map(|code| keys.recovery_hashes(&folded_recovery_code(code)).swap_remove(0))
            .collect();
        throttle::forgive(&*self.store, failures).await;
        if !self
            .store
            .confirm_totp(&command.member.id, &username, &pending.sealed_secret, &hashes, step)
            .await?
        {
            return Err(ApiError::invalid(
                "code",
                "confirms nothing: the enrollment was replaced or removed meanwhile (start again)",
            ));
        }
        Ok(RecoveryCodes { recovery_codes: codes })
    }

    /// `DELETE /members/me/totp`: the password checked as a login checks it,
    /// then, while TOTP is on, a code (or a recovery code); an enrollment
    /// still waiting needs no code. With `PASSWORD_POLICY=nist` a password
    /// shorter than a password alone may be is refused first: it would be
    /// the only factor left.
    pub async fn end_totp(&self, command: EndTotp) -> Result<(), ApiError> {
        let username = username_of(&command.member)?;
        let credentials = self
            .check_own_password(
                &command.member,
                &username,
                ("password", &command.password),
                &command.client,
            )
            .await?;
        if let Some(totp) = credentials.totp.as_ref().filter(|t| t.confirmed) {
            let min = self.passwords.member_min(false);
            if command.password.code_points() < min {
                return Err(ApiError::invalid(
                    "password",
                    format_args!("is shorter than {min} characters, too short to be your only factor: change it first"),
                ));
            }
            let Some(code) = &command.code else {
                return Err(ApiError::invalid("code", "is required while TOTP is on"));
            };
            let failures = self.reserve_code_check(&username, &command.client).await?;
            if !self.second_factor(&command.member.id, &username, totp, code).await? {
                return Err(ApiError::InvalidCredentials { field: Some("code") });
            }
            throttle::forgive(&*self.store, failures).await;
        }
        match self.store.end_totp(&command.member.id, &username).await? {
            true => Ok(()),
            false => Err(revoked()),
        }
    }

    /// Counts a code check as a failed login until it succeeds (docs/API.md,
    /// Throttling and quotas): over the limit, `429` before anything is read.
    async fn reserve_code_check(
        &self,
        username: &Username,
        client: &ClientAddress,
    ) -> Result<throttle::Reservation, ApiError> {
        let keys = throttle::login_keys(&self.limits, username.as_str(), &client.0);
        throttle::reserve(&*self.store, &keys, Refusal::TooManyAttempts).await
    }

    /// [`App::check_second_factor`] under the account's own limit on
    /// guesses (docs/API.md, Third audit): [`CODE_GUESSES`] wrong codes in
    /// a row, from any addresses, stop code checks for the hour's window
    /// (`429 too_many_attempts`); a right code or recovery code resets the
    /// run. Apart from the login limits, which count wrong codes too. Each
    /// check is counted before it is made, so concurrent guesses never make
    /// more than the limit: one write, and one more on a right code.
    pub(super) async fn second_factor(
        &self,
        member: &MemberId,
        username: &Username,
        totp: &StoredTotp,
        code: &TotpCode,
    ) -> Result<bool, ApiError> {
        let key = crate::store::AttemptKey(format!("totp:{}", member.as_str()));
        let now = throttle::unix_now();
        let window = crate::domain::Window::containing(now, CODE_GUESS_WINDOW_SECS);
        if self.store.record_failure(&key, window).await? > CODE_GUESSES {
            return Err(ApiError::TooManyAttempts {
                retry_after: (window.end() - now).max(1) as u64,
            });
        }
        let right = self.check_second_factor(member, username, totp, code).await?;
        if right && let Err(e) = self.store.reset_failures(&key, window).await {
            tracing::warn!(error = %e, "a right TOTP code did not reset the run of wrong ones");
        }
        Ok(right)
    }

    /// Whether `code` is a TOTP code of `totp` for a step not accepted
    /// before, or one of its unused recovery codes; either is spent by the
    /// one conditional write that accepts it, so racing uses succeed once.
    /// A secret sealed under an earlier key is sealed again under the current one.
    async fn check_second_factor(
        &self,
        member: &MemberId,
        username: &Username,
        totp: &StoredTotp,
        code: &TotpCode,
    ) -> Result<bool, ApiError> {
        let keys = self.totp_keys()?;
        if let Some(digits) = code.digits() {
            let Some((secret, earlier_key)) = keys.open(&totp.sealed_secret, member) else {
                tracing::error!(
                    "a TOTP secret opens under no TOTP key (was a key dropped from TOTP_KEY_PREVIOUS or PEPPER_PREVIOUS too soon?)"
                );
                return Err(ApiError::Internal("a TOTP secret opens under no TOTP key".into()));
            };
            if earlier_key {
                self.reseal(keys, member, username, &totp.sealed_secret, &secret).await;
            }
            let generator = self.totp_for(secret, username.as_str())?;
            return match generator.check(&digits, unix_now()) {
                Some(step) if step > totp.last_step => Ok(self.store.spend_totp_step(username, step).await?),
                _ => Ok(false),
            };
        }
        let folded = folded_recovery_code(code.0.expose_secret());
        for hash in keys.recovery_hashes(&folded) {
            if totp.recovery_codes.contains(&hash) && self.store.spend_recovery_code(username, &hash).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Best effort: the secret opens under the earlier key until this lands.
    async fn reseal(&self, keys: &TotpKeys, member: &MemberId, username: &Username, old: &str, secret: &[u8]) {
        match keys.seal(secret, member) {
            Ok(new) => match self.store.reseal_totp(username, old, &new).await {
                Ok(_) => tracing::info!("a TOTP secret was sealed again under the current key"),
                Err(e) => tracing::warn!(error = %e, "a TOTP secret was not sealed again"),
            },
            Err(e) => tracing::warn!(error = %e, "a TOTP secret was not sealed again"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> TotpKeys {
        TotpKeys::new(&[b"k".repeat(32).as_slice()])
    }

    #[test]
    fn a_sealed_secret_opens_for_its_member_only_and_under_earlier_keys() {
        let member = MemberId::from_stored("01ARZ3NDEKTSV4RRFFQ69G5FAV".into());
        let other = MemberId::from_stored("01ARZ3NDEKTSV4RRFFQ69G5FAW".into());
        let sealed = keys().seal(b"twenty bytes secret!", &member).unwrap();
        assert!(sealed.starts_with("v1.") && !sealed.contains("twenty"));
        assert_ne!(
            sealed,
            keys().seal(b"twenty bytes secret!", &member).unwrap(),
            "a fresh nonce each time"
        );
        assert_eq!(
            keys().open(&sealed, &member),
            Some((b"twenty bytes secret!".to_vec(), false))
        );
        assert_eq!(keys().open(&sealed, &other), None, "bound to the member");
        let rotated = TotpKeys::new(&[b"n".repeat(32).as_slice(), b"k".repeat(32).as_slice()]);
        assert_eq!(
            rotated.open(&sealed, &member),
            Some((b"twenty bytes secret!".to_vec(), true))
        );
        assert_eq!(
            TotpKeys::new(&[b"n".repeat(32).as_slice()]).open(&sealed, &member),
            None
        );
        let mut tampered = sealed.clone().into_bytes();
        let last = tampered.len() - 2;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(keys().open(std::str::from_utf8(&tampered).unwrap(), &member), None);
        assert_eq!(keys().open("v1.", &member), None);
        assert_eq!(keys().open("garbage", &member), None);
    }

    #[test]
    fn recovery_codes_hash_as_typed_in_any_case_and_under_each_key() {
        let rotated = TotpKeys::new(&[b"n".repeat(32).as_slice(), b"k".repeat(32).as_slice()]);
        let hashes = rotated.recovery_hashes(&folded_recovery_code("ABCDE-fghij"));
        assert_eq!(hashes.len(), 2);
        assert_eq!(
            hashes[0],
            rotated.recovery_hashes(&folded_recovery_code("abcde fghij"))[0]
        );
        assert_eq!(hashes[1], keys().recovery_hashes("abcdefghij")[0]);
        assert_ne!(hashes[0], hashes[1]);
    }

    #[test]
    fn codes_are_six_digits_or_anything_else_short() {
        assert_eq!(
            TotpCode::parse("totp", " 123 456 ".into()).unwrap().digits().as_deref(),
            Some("123456")
        );
        assert_eq!(TotpCode::parse("totp", "12345".into()).unwrap().digits(), None);
        assert_eq!(TotpCode::parse("totp", "abcde-fghij".into()).unwrap().digits(), None);
        assert!(TotpCode::parse("totp", "  ".into()).is_err());
        assert!(TotpCode::parse("totp", "x".repeat(65)).is_err());
        assert_eq!(
            format!("{:?}", TotpCode::parse("totp", "123456".into()).unwrap()),
            "TotpCode(..)"
        );
    }
}
