//! The pepper: a secret kept outside the database and mixed in before hashing,
//! as `base64(HMAC-SHA-384(pepper, password))` (OWASP's pre-hashing). The
//! result is 64 ASCII bytes, so bcrypt's 72-byte input limit never truncates
//! anything and every byte of a long password stays significant.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use secrecy::{ExposeSecret, SecretBox, SecretString};
use sha2::Sha384;

type HmacSha384 = Hmac<Sha384>;

/// Peppers shorter than this are refused at start: a pepper must be a real secret.
pub const MIN_PEPPER_BYTES: usize = 32;

/// One pepper and its public id, which is stored with every hash made under it.
pub struct Pepper {
    id: String,
    key: SecretBox<[u8]>,
}

impl std::fmt::Debug for Pepper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pepper").field("id", &self.id).finish_non_exhaustive()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{name} must be at least {MIN_PEPPER_BYTES} bytes (it is {len})")]
pub struct PepperTooShort {
    pub name: String,
    pub len: usize,
}

impl Pepper {
    /// `name` is the setting it came from, used only in the error message.
    pub fn parse(name: &str, secret: SecretString) -> Result<Self, PepperTooShort> {
        let bytes = secret.expose_secret().as_bytes();
        if bytes.len() < MIN_PEPPER_BYTES {
            return Err(PepperTooShort {
                name: name.to_owned(),
                len: bytes.len(),
            });
        }
        let key: SecretBox<[u8]> = SecretBox::new(bytes.to_vec().into_boxed_slice());
        // The id is a MAC of a constant, so it reveals nothing about the key.
        let tag = mac(&key, b"pepper-id");
        let id = tag[..4].iter().map(|b| format!("{b:02x}")).collect();
        Ok(Pepper { id, key })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The bcrypt/argon2 input for `password` under this pepper.
    pub fn apply(&self, password: &[u8]) -> SecretString {
        SecretString::from(STANDARD.encode(mac(&self.key, password)))
    }
}

fn mac(key: &SecretBox<[u8]>, message: &[u8]) -> [u8; 48] {
    let mut mac = HmacSha384::new_from_slice(key.expose_secret()).expect("HMAC takes keys of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// The current pepper plus earlier ones still accepted for verify during a rotation.
#[derive(Debug, Default)]
pub struct PepperRing {
    current: Option<Pepper>,
    previous: Vec<Pepper>,
}

impl PepperRing {
    pub fn new(current: Option<Pepper>, previous: Vec<Pepper>) -> Self {
        PepperRing { current, previous }
    }

    pub fn current(&self) -> Option<&Pepper> {
        self.current.as_ref()
    }

    pub fn by_id(&self, id: &str) -> Option<&Pepper> {
        self.current.iter().chain(&self.previous).find(|p| p.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pepper(s: &str) -> Pepper {
        Pepper::parse("PEPPER", SecretString::from(s)).unwrap()
    }

    #[test]
    fn short_peppers_are_refused_naming_the_setting() {
        let err = Pepper::parse("PEPPER_PREVIOUS", SecretString::from("short")).unwrap_err();
        assert_eq!(err.to_string(), "PEPPER_PREVIOUS must be at least 32 bytes (it is 5)");
    }

    #[test]
    fn applying_a_pepper_gives_64_ascii_bytes_that_depend_on_key_and_password() {
        let a = pepper(&"a".repeat(32));
        let b = pepper(&"b".repeat(32));
        let long = "x".repeat(1000);
        let out = a.apply(long.as_bytes());
        assert_eq!(out.expose_secret().len(), 64);
        assert!(out.expose_secret().is_ascii());
        assert_ne!(out.expose_secret(), b.apply(long.as_bytes()).expose_secret());
        assert_ne!(out.expose_secret(), a.apply(b"other").expose_secret());
    }

    #[test]
    fn pepper_ids_are_short_stable_and_distinct() {
        let a = pepper(&"a".repeat(32));
        assert_eq!(a.id().len(), 8);
        assert_eq!(a.id(), pepper(&"a".repeat(32)).id());
        assert_ne!(a.id(), pepper(&"b".repeat(32)).id());
        assert!(!format!("{a:?}").contains("aaaa"), "Debug must not show the key");
    }

    #[test]
    fn a_ring_finds_current_and_previous_peppers_by_id() {
        let ring = PepperRing::new(Some(pepper(&"n".repeat(40))), vec![pepper(&"o".repeat(40))]);
        let old_id = pepper(&"o".repeat(40)).id().to_owned();
        assert!(ring.by_id(&old_id).is_some());
        assert!(ring.by_id(ring.current().unwrap().id()).is_some());
        assert!(ring.by_id("00000000").is_none());
    }
}
