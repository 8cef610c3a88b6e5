//! The application's settings: the boards it serves and every limit
//! (docs/API.md, Throttling and quotas). Read from the environment by the
//! composition root; printed at start.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};

use super::throttle::Limits;
use crate::domain::{BlockedWords, Boards};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppSettings {
    pub boards: Boards,
    pub limits: Limits,
    /// `ADMIN_USERNAMES`: the members who are staff of every board.
    pub admins: Vec<String>,
    /// `BLOCKED_WORDS`.
    pub blocked_words: BlockedWords,
    /// `ADMIN_ENROLL_TOKEN`: what a signup of a name in `admins` that
    /// no account holds yet must carry (docs/API.md, Hardening). None: such
    /// a name cannot be signed up.
    pub admin_enroll_token: Option<AdminEnrollToken>,
    /// `POW` and its thresholds.
    pub pow: super::pow::PowSettings,
    /// `MEMBER_PASSWORD_MIN`, `PASSWORD_POLICY`, `STAFF_REQUIRE_TOTP`, `TOTP_ISSUER`.
    pub passwords: PasswordSettings,
    /// `MEDIA_MAX_BYTES`, `MEDIA_BUCKET`, `MEDIA_BASE_URL`.
    pub media: super::media::MediaSettings,
}

/// Member passwords and TOTP (docs/API.md, Passwords and staff sign-in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordSettings {
    /// `MEMBER_PASSWORD_MIN`: code points after NFKC, at least 8 (NIST's floor).
    pub member_min: usize,
    /// `PASSWORD_POLICY=nist`: 15 code points for a member without TOTP,
    /// the password being their only factor (NIST SP 800-63B-4, 3.1.1.2).
    pub nist: bool,
    /// `STAFF_REQUIRE_TOTP`: staff routes refuse staff without confirmed TOTP.
    pub staff_require_totp: bool,
    /// `TOTP_ISSUER`: the name authenticator apps show beside the username.
    pub totp_issuer: String,
}

/// The least `PASSWORD_POLICY=nist` asks of a password that is the only factor.
pub const NIST_SINGLE_FACTOR_MIN: usize = 15;

impl Default for PasswordSettings {
    fn default() -> Self {
        PasswordSettings {
            member_min: crate::domain::MEMBER_PASSWORD_MIN,
            nist: false,
            staff_require_totp: true,
            totp_issuer: "community-boards".to_owned(),
        }
    }
}

impl PasswordSettings {
    /// The least a member's password may have: with `second_factor` (confirmed TOTP) or without.
    pub fn member_min(&self, second_factor: bool) -> usize {
        if self.nist && !second_factor {
            self.member_min.max(NIST_SINGLE_FACTOR_MIN)
        } else {
            self.member_min
        }
    }
}

impl fmt::Display for PasswordSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "member_password_min={} password_policy={} staff_require_totp={}",
            self.member_min,
            if self.nist { "nist" } else { "default" },
            self.staff_require_totp
        )
    }
}

/// A secret compared in constant time and never printed.
#[derive(Clone)]
pub struct AdminEnrollToken(SecretString);

/// Long enough that the signup quota (10 an hour per address) leaves
/// guessing it hopeless.
const MIN_ADMIN_ENROLL_TOKEN_CHARS: usize = 16;

impl AdminEnrollToken {
    pub fn parse(token: String) -> Result<Self, String> {
        if token.chars().count() < MIN_ADMIN_ENROLL_TOKEN_CHARS {
            return Err(format!(
                "ADMIN_ENROLL_TOKEN must be at least {MIN_ADMIN_ENROLL_TOKEN_CHARS} characters"
            ));
        }
        Ok(AdminEnrollToken(SecretString::from(token)))
    }

    /// Whether `offered` is this token, in time that does not depend on
    /// where they differ.
    pub fn matches(&self, offered: &str) -> bool {
        use sha2::Digest as _;
        // Digests first: equal lengths, so the comparison leaks no length.
        let expected = sha2::Sha256::digest(self.0.expose_secret().as_bytes());
        let offered = sha2::Sha256::digest(offered.as_bytes());
        expected
            .iter()
            .zip(offered.iter())
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
    }
}

impl fmt::Debug for AdminEnrollToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AdminEnrollToken(..)")
    }
}

impl PartialEq for AdminEnrollToken {
    fn eq(&self, other: &Self) -> bool {
        self.matches(other.0.expose_secret())
    }
}

impl Eq for AdminEnrollToken {}

impl fmt::Display for AppSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "boards={}", self.boards.names().join(","))?;
        write!(f, " admins={}", self.admins.len())?;
        write!(
            f,
            " admin_enroll_token={}",
            if self.admin_enroll_token.is_some() {
                "set"
            } else {
                "unset"
            }
        )?;
        write!(f, " blocked_words={}", self.blocked_words.len())?;
        write!(f, " {}", self.pow)?;
        write!(f, " {}", self.passwords)?;
        write!(
            f,
            " media_max_bytes={} media_bucket={} media_base_url={}",
            self.media.max_bytes,
            self.media.bucket.as_deref().unwrap_or("unset"),
            self.media.base_url.as_deref().unwrap_or("/media")
        )?;
        let mut limits = self.limits;
        for (name, limit) in limits.named() {
            match limit {
                Some(limit) => write!(f, " {}={limit}", name.to_ascii_lowercase())?,
                None => write!(f, " {}=off", name.to_ascii_lowercase())?,
            }
        }
        Ok(())
    }
}
