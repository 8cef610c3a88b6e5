//! Writer keys and guest tags (docs/API.md, Guest tag): a client's
//! address key under the server's tag key, HMAC-SHA-256, base32. The tag
//! key is `TAG_KEY` where set (required on Lambda, one secret for every
//! function), else, on the server, derived from the pepper (docs/DESIGN.md,
//! Moderation). `TAG_KEY_PREVIOUS` keeps address bans made under the key
//! before a rotation working: a ban check asks for the writer's key under
//! both. A derived key has its previous ones too, derived from
//! `PEPPER_PREVIOUS`: rotating the pepper lifted every guest ban (docs/API.md,
//! Hardening, Key rotation). What was written keeps its stored key, so its
//! tag never changes.

use hmac::{Hmac, KeyInit, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;

use super::ClientAddress;
use crate::domain::{Writer, WriterKey};

/// The label a derived tag key is made with: changing it changes every tag.
const DERIVED_LABEL: &[u8] = b"community-boards guest tag key v1";

pub const MIN_KEY_BYTES: usize = 32;

pub struct TagKeys {
    current: Vec<u8>,
    /// Newest first.
    previous: Vec<Vec<u8>>,
}

impl std::fmt::Debug for TagKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TagKeys")
            .field("previous", &self.previous.len())
            .finish_non_exhaustive()
    }
}

fn mac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

impl TagKeys {
    /// Configured keys (`TAG_KEY`, `TAG_KEY_PREVIOUS`), each at least
    /// [`MIN_KEY_BYTES`] bytes.
    pub fn new(current: &SecretString, previous: Option<&SecretString>) -> Result<Self, String> {
        let check = |name: &str, key: &SecretString| {
            let bytes = key.expose_secret().as_bytes();
            if bytes.len() < MIN_KEY_BYTES {
                return Err(format!(
                    "{name} must be at least {MIN_KEY_BYTES} bytes (it is {})",
                    bytes.len()
                ));
            }
            Ok(bytes.to_vec())
        };
        Ok(TagKeys {
            current: check("TAG_KEY", current)?,
            previous: previous
                .map(|p| check("TAG_KEY_PREVIOUS", p))
                .transpose()?
                .into_iter()
                .collect(),
        })
    }

    /// The key derived from a secret the server already keeps (the pepper):
    /// `HMAC-SHA-256(secret, "community-boards guest tag key v1")`, and the
    /// keys derived the same way from the secrets it replaced
    /// (`PEPPER_PREVIOUS`, newest first).
    pub fn derived_from(secret: &SecretString, previous: &[SecretString]) -> Self {
        let derive = |s: &SecretString| mac(s.expose_secret().as_bytes(), DERIVED_LABEL).to_vec();
        TagKeys {
            current: derive(secret),
            previous: previous.iter().map(derive).collect(),
        }
    }

    /// A key for another purpose, derived from the current one under
    /// `label` (the proof-of-work key): rotating the tag key rotates it.
    pub fn derive(&self, label: &[u8]) -> [u8; 32] {
        mac(&self.current, label)
    }

    /// The key what `client` writes is stored with.
    pub fn writer_key(&self, client: &ClientAddress) -> WriterKey {
        key_under(&self.current, client)
    }

    /// The keys what `client` writes is stored with: its address key
    /// and its range's.
    pub fn writer(&self, client: &ClientAddress) -> Writer {
        Writer {
            key: self.writer_key(client),
            range: key_under(&self.current, &client.range()),
        }
    }

    /// Every key a range ban of `client` may be stored under, as
    /// [`TagKeys::writer_keys`].
    pub fn range_keys(&self, client: &ClientAddress) -> Vec<WriterKey> {
        self.writer_keys(&client.range())
    }

    /// Every key a ban of `client` may be stored under: the current one
    /// first, then those before each rotation.
    pub fn writer_keys(&self, client: &ClientAddress) -> Vec<WriterKey> {
        let mut keys = vec![self.writer_key(client)];
        keys.extend(self.previous.iter().map(|previous| key_under(previous, client)));
        keys
    }
}

fn key_under(key: &[u8], client: &ClientAddress) -> WriterKey {
    let digest = mac(key, client.0.as_bytes());
    WriterKey::new(data_encoding::BASE32_NOPAD.encode(&digest).to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(s: &str) -> SecretString {
        SecretString::from(s.to_owned())
    }

    #[test]
    fn a_writer_key_is_52_base32_characters_stable_per_address_and_key() {
        let keys = TagKeys::new(&secret(&"k".repeat(32)), None).unwrap();
        let a = ClientAddress("198.51.100.7".into());
        let key = keys.writer_key(&a);
        assert_eq!(key.as_str().len(), 52);
        assert!(
            key.as_str()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b))
        );
        assert_eq!(keys.writer_key(&a), key);
        assert_ne!(keys.writer_key(&ClientAddress("198.51.100.8".into())), key);
        let other = TagKeys::new(&secret(&"j".repeat(32)), None).unwrap();
        assert_ne!(other.writer_key(&a), key);
        assert!(!key.as_str().contains("198"));
    }

    #[test]
    fn after_a_rotation_the_previous_key_is_asked_for_too() {
        let (old, new) = (secret(&"o".repeat(32)), secret(&"n".repeat(32)));
        let before = TagKeys::new(&old, None).unwrap();
        let after = TagKeys::new(&new, Some(&old)).unwrap();
        let a = ClientAddress("2001:db8:1:2::/64".into());
        let keys = after.writer_keys(&a);
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[1], before.writer_key(&a));
        assert_eq!(keys[0], after.writer_key(&a));
    }

    #[test]
    fn short_keys_are_refused_and_derived_keys_differ_from_their_secret() {
        assert!(
            TagKeys::new(&secret("short"), None)
                .unwrap_err()
                .starts_with("TAG_KEY must")
        );
        let pepper = secret(&"p".repeat(32));
        let derived = TagKeys::derived_from(&pepper, &[]);
        let direct = TagKeys::new(&pepper, None).unwrap();
        let a = ClientAddress("203.0.113.1".into());
        assert_ne!(derived.writer_key(&a), direct.writer_key(&a));
        assert_eq!(
            TagKeys::derived_from(&pepper, &[]).writer_key(&a),
            derived.writer_key(&a)
        );
    }

    #[test]
    fn a_derived_key_keeps_the_keys_derived_from_the_peppers_it_replaced() {
        let (old, older, new) = (
            secret(&"o".repeat(32)),
            secret(&"l".repeat(32)),
            secret(&"n".repeat(32)),
        );
        let a = ClientAddress("203.0.113.9".into());
        let after = TagKeys::derived_from(&new, &[old.clone(), older.clone()]);
        assert_eq!(
            after.writer_keys(&a),
            [
                TagKeys::derived_from(&new, &[]).writer_key(&a),
                TagKeys::derived_from(&old, &[]).writer_key(&a),
                TagKeys::derived_from(&older, &[]).writer_key(&a),
            ]
        );
        assert_eq!(
            after.writer_key(&a),
            after.writer_keys(&a)[0],
            "what is written uses the new key"
        );
    }

    #[test]
    fn a_range_key_is_the_same_across_a_range_and_differs_from_every_address_key() {
        let keys = TagKeys::new(&secret(&"k".repeat(32)), None).unwrap();
        let (a, b) = (
            ClientAddress("198.51.100.7".into()),
            ClientAddress("198.51.100.200".into()),
        );
        let other = ClientAddress("198.51.101.7".into());
        assert_eq!(keys.writer(&a).range, keys.writer(&b).range, "one /24");
        assert_ne!(keys.writer(&a).range, keys.writer(&other).range);
        assert_ne!(keys.writer(&a).key, keys.writer(&b).key);
        assert_ne!(keys.writer(&a).range, keys.writer(&a).key);
        let (ipv6, sibling) = (
            ClientAddress("2001:db8:1:2::/64".into()),
            ClientAddress("2001:db8:1:ff::/64".into()),
        );
        assert_eq!(keys.writer(&ipv6).range, keys.writer(&sibling).range, "one /48");
        assert_ne!(
            keys.writer(&ipv6).range,
            keys.writer(&ClientAddress("2001:db8:2:2::/64".into())).range
        );
        assert_eq!(keys.range_keys(&a), [keys.writer(&a).range]);
    }
}
