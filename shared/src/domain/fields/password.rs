//! Passwords as typed and normalized, and the hashes stored of them.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};
use unicode_normalization::UnicodeNormalization as _;

use super::chars;
use crate::error::ApiError;

/// A password: NFKC-normalized (NIST SP 800-63B), so the same password
/// typed on different keyboards verifies; never logged, never shown, never
/// truncated, never with a NUL. When normalization changed it, the password
/// as typed is kept too: a v1 hash (made before normalization) is checked
/// against it and then replaced (docs/API.md, Field rules).
#[derive(Clone)]
pub struct Password {
    normalized: SecretString,
    as_typed: Option<SecretString>,
    /// Code points after NFKC: what every length rule counts.
    code_points: usize,
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(..)")
    }
}

pub const MEMBER_PASSWORD_MIN: usize = 8;
pub const GUEST_PASSWORD_MIN: usize = 4;
pub const PASSWORD_MAX: usize = 256;

impl Password {
    /// A new member password: 8-256 characters, the floor of every
    /// configuration (`MEMBER_PASSWORD_MIN` and the blocklist are the use
    /// cases' rules: `app::passwords`).
    pub fn member(s: String) -> Result<Self, ApiError> {
        Self::within("password", s, MEMBER_PASSWORD_MIN)
    }

    /// A new member password in a field of another name (`new_password`).
    pub fn member_in(field: &str, s: String) -> Result<Self, ApiError> {
        Self::within(field, s, MEMBER_PASSWORD_MIN)
    }

    /// A guest password: 4-256 characters.
    pub fn guest(s: String) -> Result<Self, ApiError> {
        Self::within("password", s, GUEST_PASSWORD_MIN)
    }

    /// A login attempt: any length up to the maximum may be tried; a wrong one simply does not match.
    pub fn attempt(s: String) -> Result<Self, ApiError> {
        Self::within("password", s, 1)
    }

    /// An attempt in a field of another name (`current_password`).
    pub fn attempt_in(field: &str, s: String) -> Result<Self, ApiError> {
        Self::within(field, s, 1)
    }

    /// The length rule counts code points after NFKC (NIST SP
    /// 800-63B-4): what is hashed is what is counted. What is typed is
    /// bounded first, so normalization never works on more than a field's
    /// worth (NFKC lengthens a character 18 times at most).
    fn within(field: &str, s: String, min: usize) -> Result<Self, ApiError> {
        let rule = || ApiError::invalid(field, format_args!("must be {min}-{PASSWORD_MAX} characters"));
        if chars(&s) > PASSWORD_MAX * 18 {
            return Err(rule());
        }
        // bcrypt ends its input at a NUL byte (without a pepper "\0\0\0\0"
        // would verify as "\0\0\0\0\0\0\0"): refused everywhere, so no
        // configuration has to think about it.
        if s.contains('\0') {
            return Err(ApiError::invalid(field, "must not contain NUL characters"));
        }
        let normalized: String = s.nfkc().collect();
        let code_points = chars(&normalized);
        if !(min..=PASSWORD_MAX).contains(&code_points) {
            return Err(rule());
        }
        let as_typed = (normalized != s).then(|| SecretString::from(s));
        Ok(Password {
            normalized: SecretString::from(normalized),
            as_typed,
            code_points,
        })
    }

    /// Its length in code points after NFKC.
    pub fn code_points(&self) -> usize {
        self.code_points
    }

    /// What is hashed and verified.
    pub fn secret(&self) -> &SecretString {
        &self.normalized
    }

    /// The password as typed, when NFKC changed it: the form a hash stored
    /// before normalization was made from.
    pub fn as_typed(&self) -> Option<&SecretString> {
        self.as_typed.as_ref()
    }

    /// Bytes of the longest form that may be hashed or verified.
    pub fn byte_len(&self) -> usize {
        let typed = self.as_typed.as_ref().map_or(0, |t| t.expose_secret().len());
        self.normalized.expose_secret().len().max(typed)
    }
}

/// A stored password hash (PHC string, maybe with a pepper prefix). Shown to
/// no one: its `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHash(String);

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordHash(..)")
    }
}

impl PasswordHash {
    /// What a hasher produced or a store kept.
    pub fn new(hash: String) -> Self {
        PasswordHash(hash)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_count_characters() {
        assert!(Password::member("1234567".into()).is_err());
        assert!(
            Password::member("한".repeat(256)).is_ok(),
            "256 characters of 3 bytes each"
        );
        assert!(Password::member("x".repeat(257)).is_err());
        // Counted after NFKC: "ﬁ" is two code points, and a Hangul
        // syllable typed as three jamo is one.
        assert_eq!(Password::member("ﬁ".repeat(4)).unwrap().code_points(), 8);
        assert!(
            Password::member("\u{1100}\u{1161}\u{11A8}".repeat(3)).is_err(),
            "3 syllables"
        );
        assert!(Password::member("ﬁ".repeat(129)).is_err(), "258 after NFKC");
        assert!(Password::guest("123".into()).is_err() && Password::guest("1234".into()).is_ok());
        let nul = Password::guest("ab\0d".into()).unwrap_err();
        assert!(nul.to_string().contains("NUL"), "{nul}");
        assert_eq!(
            format!("{:?}", Password::guest("hunter22".into()).unwrap()),
            "Password(..)"
        );
        assert_eq!(
            format!("{:?}", PasswordHash::new("$2b$04$abc".into())),
            "PasswordHash(..)"
        );
    }
}
