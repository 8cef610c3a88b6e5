//! The pepper: a secret kept outside the database and mixed in before hashing,
//! as `base64(HMAC-SHA-384(pepper, password))` (OWASP's pre-hashing). The
//! result is 64 ASCII bytes, so bcrypt's 72-byte input limit never truncates
//! anything and every byte of a long password stays significant.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use secrecy::{ExposeSecret, SecretBox, SecretString};
use sha2::Sha384;
use std::sync::OnceLock;

type HmacSha384 = Hmac<Sha384>;

/// Peppers shorter than this are refused at start: a pepper must be a real secret.
pub const MIN_PEPPER_BYTES: usize = 32;

/// One pepper and its public id, which is stored with every hash made under
/// it (docs/DESIGN.md, Tiered hashing). The id is 64 bits of Argon2id of the
/// pepper: someone holding a stolen table pays an Argon2id hash (~35 ms here)
/// per guessed pepper instead of an HMAC. It is computed once, on first use,
/// so a cold start does not pay for it. Hashes made before this (v1: 32 bits
/// of HMAC of a constant, 8 hex digits) still name their pepper by the v1 id,
/// and are rehashed under the new id at their next successful check.
pub struct Pepper {
    id: OnceLock<String>,
    v1_id: String,
    key: SecretBox<[u8]>,
}

impl std::fmt::Debug for Pepper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pepper").finish_non_exhaustive()
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
        let tag = mac(&key, b"pepper-id");
        let v1_id = tag[..4].iter().map(|b| format!("{b:02x}")).collect();
        Ok(Pepper {
            id: OnceLock::new(),
            v1_id,
            key,
        })
    }

    /// The id new hashes carry (16 hex digits).
    pub fn id(&self) -> &str {
        self.id.get_or_init(|| slow_id(&self.key))
    }

    /// The v1 id (a MAC of a constant, 8 hex digits): hashes made before v2 carry it.
    pub fn v1_id(&self) -> &str {
        &self.v1_id
    }

    /// Whether a stored hash's pepper id names this pepper (the current id or the v1 one).
    pub fn answers_to(&self, id: &str) -> bool {
        id == self.v1_id || id == self.id()
    }

    /// The bcrypt/argon2 input for `password` under this pepper.
    pub fn apply(&self, password: &[u8]) -> SecretString {
        SecretString::from(STANDARD.encode(mac(&self.key, password)))
    }
}

/// Argon2id (OWASP's 19 MiB, 2 passes) of the pepper with a fixed salt.
fn slow_id(key: &SecretBox<[u8]>) -> String {
    let params = argon2::Params::new(19_456, 2, 1, Some(8)).expect("valid Argon2id parameters");
    let argon = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
    let mut out = [0u8; 8];
    argon
        .hash_password_into(key.expose_secret(), b"community-boards pepper id v2", &mut out)
        .expect("Argon2id into 8 bytes");
    out.iter().map(|b| format!("{b:02x}")).collect()
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
        self.current.iter().chain(&self.previous).find(|p| p.answers_to(id))
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
    fn pepper_ids_are_stable_distinct_and_slow_to_derive() {
        let a = pepper(&"a".repeat(32));
        assert_eq!(a.id().len(), 16);
        assert_eq!(a.id(), pepper(&"a".repeat(32)).id());
        assert_ne!(a.id(), pepper(&"b".repeat(32)).id());
        // Not the HMAC of a constant any more, but that v1 id is still answered to.
        assert_ne!(a.id(), a.v1_id);
        assert!(a.answers_to(&a.v1_id) && a.answers_to(a.id()));
        let started = std::time::Instant::now();
        let _ = pepper(&"c".repeat(32)).id().to_owned();
        println!("deriving a pepper id took {:?}", started.elapsed());
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
