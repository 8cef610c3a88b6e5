//! The ALTCHA proof-of-work protocol, version 1 (docs/API.md, Proof of work
//! for anonymous writes): what `GET /challenge` answers and what an
//! `X-Pow` header carries, as the reference library `altcha-lib` (its `v1`
//! export) and the `altcha` widget make and read them.
//!
//! Written here with the hmac and sha2 crates rather than taken from a
//! crate: the official Rust crate (`altcha`) speaks only version 2 (a
//! PBKDF2 key search with another wire format), and the contract is
//! version 1. `scripts/pow-interop` checks this module against
//! `altcha-lib` both ways.
//!
//! A challenge: `challenge = hex(SHA-256(salt + number))` for a secret
//! number in `0..=maxnumber`, `signature = hex(HMAC-SHA-256(key,
//! challenge))`, and the salt carries its expiry (`<random>?expires=<unix>&`;
//! the closing `&` keeps a solver from moving digits between salt and
//! number, ALTCHA's 2024 advisory). The client finds the number; the server
//! recomputes both digests, which costs two hashes.

use base64::Engine as _;
use data_encoding::HEXLOWER;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// The only algorithm issued and accepted.
pub const ALGORITHM: &str = "SHA-256";

/// How long a challenge may be solved and spent (docs/API.md: 10 minutes).
pub const CHALLENGE_TTL_SECS: i64 = 600;

/// Random bytes of a salt: ALTCHA's default length.
const SALT_BYTES: usize = 12;

/// What `GET /challenge` answers, and what a `428 pow_required` carries.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Challenge {
    /// Always `SHA-256`.
    pub algorithm: String,
    /// Hex SHA-256 of the salt followed by the secret number.
    pub challenge: String,
    /// Random hex, then `?expires=<Unix seconds>&`.
    pub salt: String,
    /// Hex HMAC-SHA-256 of `challenge` under the server's key.
    pub signature: String,
    /// The secret number is at most this: the difficulty.
    pub maxnumber: u64,
}

/// The `X-Pow` header, decoded: ALTCHA's payload.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Solution {
    pub algorithm: String,
    pub challenge: String,
    pub number: u64,
    pub salt: String,
    pub signature: String,
}

/// Why a solution is refused: each says so in the `428`'s message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    Malformed,
    Algorithm,
    /// The salt carries no expiry, or one further out than this server issues.
    NoExpiry,
    Expired,
    WrongNumber,
    Signature,
}

impl Refused {
    pub fn message(self) -> &'static str {
        match self {
            Refused::Malformed => "X-Pow is not the base64 of an ALTCHA payload",
            Refused::Algorithm => "X-Pow must solve a SHA-256 challenge",
            Refused::NoExpiry => "X-Pow solves a challenge this server did not issue",
            Refused::Expired => "X-Pow solves a challenge that has expired",
            Refused::WrongNumber => "X-Pow's number does not solve its challenge",
            Refused::Signature => "X-Pow's challenge does not carry this server's signature",
        }
    }
}

/// A solution that verified: `challenge` names it for spending once, until
/// `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub challenge: String,
    pub expires_at: i64,
}

/// The key challenges are signed with.
pub struct PowKey(Vec<u8>);

impl std::fmt::Debug for PowKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PowKey(..)")
    }
}

impl PowKey {
    pub fn new(key: &[u8]) -> Self {
        PowKey(key.to_vec())
    }

    fn mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("HMAC takes a key of any length")
    }

    /// A fresh challenge, valid from `now` for [`CHALLENGE_TTL_SECS`].
    pub fn issue(&self, now: i64, maxnumber: u64) -> Challenge {
        let random: [u8; SALT_BYTES] = rand::random();
        let salt = format!("{}?expires={}&", HEXLOWER.encode(&random), now + CHALLENGE_TTL_SECS);
        let number = rand::random_range(0..=maxnumber);
        let challenge = digest_hex(&salt, number);
        let mut mac = self.mac();
        mac.update(challenge.as_bytes());
        Challenge {
            algorithm: ALGORITHM.to_owned(),
            signature: HEXLOWER.encode(&mac.finalize().into_bytes()),
            challenge,
            salt,
            maxnumber,
        }
    }

    /// Checks a solution at `now`: algorithm, expiry, number and signature.
    /// Whether it was spent before is the store's to say.
    pub fn verify(&self, solution: &Solution, now: i64) -> Result<Verified, Refused> {
        if solution.algorithm != ALGORITHM {
            return Err(Refused::Algorithm);
        }
        let expires_at = expiry(&solution.salt).ok_or(Refused::NoExpiry)?;
        // A challenge further out than this server issues was not issued here
        // (or by a key holder pretending): it could be spent long after.
        if expires_at > now + CHALLENGE_TTL_SECS + 60 {
            return Err(Refused::NoExpiry);
        }
        if expires_at < now {
            return Err(Refused::Expired);
        }
        // Hex digests compare as lowercase: the reference library makes them so.
        if digest_hex(&solution.salt, solution.number) != solution.challenge {
            return Err(Refused::WrongNumber);
        }
        let signature = HEXLOWER
            .decode(solution.signature.as_bytes())
            .map_err(|_| Refused::Signature)?;
        let mut mac = self.mac();
        mac.update(solution.challenge.as_bytes());
        mac.verify_slice(&signature).map_err(|_| Refused::Signature)?;
        Ok(Verified {
            challenge: solution.challenge.clone(),
            expires_at,
        })
    }
}

/// Decodes an `X-Pow` header: standard base64 (padded or not) of the JSON payload.
pub fn parse_header(value: &str) -> Result<Solution, Refused> {
    let value = value.trim();
    let json = base64::engine::general_purpose::STANDARD
        .decode(value)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(value))
        .map_err(|_| Refused::Malformed)?;
    serde_json::from_slice(&json).map_err(|_| Refused::Malformed)
}

fn digest_hex(salt: &str, number: u64) -> String {
    let mut hasher = Sha256::new();
    hasher.update(salt.as_bytes());
    hasher.update(number.to_string().as_bytes());
    HEXLOWER.encode(&hasher.finalize())
}

/// The `expires` parameter of a delimited salt (`<random>?...&expires=N&`).
fn expiry(salt: &str) -> Option<i64> {
    if !salt.ends_with('&') {
        return None;
    }
    let (_, query) = salt.split_once('?')?;
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "expires")
        .and_then(|(_, value)| value.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_780_000_000;

    fn key() -> PowKey {
        PowKey::new(b"a proof-of-work key for the tests, 40 by")
    }

    /// What a client does: try every number up to the maximum.
    fn solve(challenge: &Challenge) -> Solution {
        let number = (0..=challenge.maxnumber)
            .find(|n| digest_hex(&challenge.salt, *n) == challenge.challenge)
            .expect("every issued challenge has a number");
        Solution {
            algorithm: challenge.algorithm.clone(),
            challenge: challenge.challenge.clone(),
            number,
            salt: challenge.salt.clone(),
            signature: challenge.signature.clone(),
        }
    }

    fn header(solution: &Solution) -> String {
        let json = serde_json::json!({
            "algorithm": solution.algorithm,
            "challenge": solution.challenge,
            "number": solution.number,
            "salt": solution.salt,
            "signature": solution.signature,
            "took": 12,
        });
        base64::engine::general_purpose::STANDARD.encode(json.to_string())
    }

    #[test]
    fn an_issued_challenge_solved_by_search_verifies_until_it_expires() {
        let challenge = key().issue(NOW, 2_000);
        assert!(challenge.salt.ends_with(&format!("?expires={}&", NOW + 600)));
        let solution = parse_header(&header(&solve(&challenge))).unwrap();
        let verified = key().verify(&solution, NOW + 599).unwrap();
        assert_eq!(verified.challenge, challenge.challenge);
        assert_eq!(verified.expires_at, NOW + 600);
        assert_eq!(key().verify(&solution, NOW + 601), Err(Refused::Expired));
    }

    #[test]
    fn a_solution_under_another_key_or_with_another_number_is_refused() {
        let challenge = PowKey::new(b"somebody else's key of forty bytes, too!").issue(NOW, 500);
        let solution = solve(&challenge);
        assert_eq!(key().verify(&solution, NOW), Err(Refused::Signature));
        let ours = solve(&key().issue(NOW, 500));
        let wrong = Solution {
            number: ours.number + 1,
            ..ours.clone()
        };
        assert_eq!(key().verify(&wrong, NOW), Err(Refused::WrongNumber));
        // A number moved into the salt (the advisory's splice) breaks the delimiter.
        let spliced = Solution {
            salt: format!("{}1", ours.salt),
            ..ours
        };
        assert_eq!(key().verify(&spliced, NOW), Err(Refused::NoExpiry));
    }

    #[test]
    fn salts_without_an_expiry_or_beyond_what_is_issued_are_refused() {
        let signed = |salt: &str| {
            let challenge = digest_hex(salt, 7);
            let mut mac = key().mac();
            mac.update(challenge.as_bytes());
            Solution {
                algorithm: ALGORITHM.into(),
                signature: HEXLOWER.encode(&mac.finalize().into_bytes()),
                challenge,
                number: 7,
                salt: salt.into(),
            }
        };
        assert_eq!(key().verify(&signed("abcdef&"), NOW), Err(Refused::NoExpiry));
        let far = format!("abcdef?expires={}&", NOW + 86_400);
        assert_eq!(key().verify(&signed(&far), NOW), Err(Refused::NoExpiry));
        let fine = format!("abcdef?foo=1&expires={}&", NOW + 300);
        assert!(key().verify(&signed(&fine), NOW).is_ok());
    }

    #[test]
    fn headers_that_are_not_a_base64_payload_are_malformed() {
        assert_eq!(parse_header("not base64!"), Err(Refused::Malformed));
        let not_json = base64::engine::general_purpose::STANDARD.encode("{\"algorithm\":");
        assert_eq!(parse_header(&not_json), Err(Refused::Malformed));
        let sha1 = Solution {
            algorithm: "SHA-1".into(),
            ..solve(&key().issue(NOW, 10))
        };
        assert_eq!(key().verify(&sha1, NOW), Err(Refused::Algorithm));
    }
}
