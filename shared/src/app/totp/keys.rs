//! The TOTP keys: the secret's sealing (AES-256-GCM, bound to the
//! member's id) and the recovery codes' HMAC key, both derived from the
//! TOTP key, with the keys a rotation replaced.

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::rand::{SecureRandom as _, SystemRandom};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::domain::MemberId;
use crate::error::ApiError;

/// Labels the keys are derived with: changing one invalidates what was sealed or hashed.
const SEAL_LABEL: &[u8] = b"community-boards totp secret key v1";
const RECOVERY_LABEL: &[u8] = b"community-boards recovery code key v1";
/// What a sealed secret starts with: the format's version.
const SEALED_PREFIX: &str = "v1.";

fn mac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// One TOTP key: the sealing key and the recovery-code key derived from it.
struct TotpKey {
    seal: LessSafeKey,
    recovery: [u8; 32],
}

/// The TOTP key and, after a rotation, the ones it replaced (newest first):
/// what was sealed under an earlier one still opens, and is sealed again
/// under the current one when next used.
pub struct TotpKeys {
    keys: Vec<TotpKey>,
    random: SystemRandom,
}

impl std::fmt::Debug for TotpKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TotpKeys")
            .field("previous", &self.keys.len().saturating_sub(1))
            .finish_non_exhaustive()
    }
}

impl TotpKeys {
    /// From the configured or derived secrets, newest first (at least one).
    pub fn new(secrets: &[&[u8]]) -> Self {
        assert!(!secrets.is_empty(), "a TOTP key");
        let keys = secrets
            .iter()
            .map(|secret| TotpKey {
                seal: LessSafeKey::new(
                    UnboundKey::new(&AES_256_GCM, &mac(secret, SEAL_LABEL)).expect("a 32-byte AES-256 key"),
                ),
                recovery: mac(secret, RECOVERY_LABEL),
            })
            .collect();
        TotpKeys {
            keys,
            random: SystemRandom::new(),
        }
    }

    /// `v1.` and base64url of a random nonce and the ciphertext with its
    /// tag; the member's id is the associated data, so a sealed secret
    /// copied onto another member's record does not open.
    pub(super) fn seal(&self, secret: &[u8], member: &MemberId) -> Result<String, ApiError> {
        let mut nonce = [0u8; NONCE_LEN];
        self.random
            .fill(&mut nonce)
            .map_err(|_| ApiError::Internal("no randomness for a nonce".into()))?;
        let mut sealed = secret.to_vec();
        self.keys[0]
            .seal
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(member.as_str().as_bytes()),
                &mut sealed,
            )
            .map_err(|_| ApiError::Internal("sealing a TOTP secret failed".into()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(format!("{SEALED_PREFIX}{}", URL_SAFE_NO_PAD.encode(out)))
    }

    /// The secret and whether it was sealed under an earlier key; `None`
    /// when no key opens it (a key dropped too soon, or a forged record).
    pub(super) fn open(&self, sealed: &str, member: &MemberId) -> Option<(Vec<u8>, bool)> {
        let bytes = URL_SAFE_NO_PAD.decode(sealed.strip_prefix(SEALED_PREFIX)?).ok()?;
        if bytes.len() <= NONCE_LEN {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        self.keys.iter().enumerate().find_map(|(i, key)| {
            let mut buffer = ciphertext.to_vec();
            let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
            let plain = key
                .seal
                .open_in_place(nonce, Aad::from(member.as_str().as_bytes()), &mut buffer)
                .ok()?;
            Some((plain.to_vec(), i > 0))
        })
    }

    /// What the store keeps of a recovery code, under the current key or
    /// each earlier one: 128 bits of its HMAC, plenty to tell codes apart,
    /// and ten of them keep a member's DynamoDB item under 1 KB (one WCU a write).
    pub(super) fn recovery_hashes(&self, code: &str) -> Vec<String> {
        self.keys
            .iter()
            .map(|key| data_encoding::HEXLOWER.encode(&mac(&key.recovery, code.as_bytes())[..16]))
            .collect()
    }

    pub(super) fn random_bytes<const N: usize>(&self) -> Result<[u8; N], ApiError> {
        let mut bytes = [0u8; N];
        self.random
            .fill(&mut bytes)
            .map_err(|_| ApiError::Internal("no randomness".into()))?;
        Ok(bytes)
    }
}

/// A recovery code as typed, the way it is hashed: lower case, without
/// the dash and spaces it is shown with.
pub(super) fn folded_recovery_code(code: &str) -> String {
    code.chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}
