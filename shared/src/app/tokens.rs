//! Bearer tokens (docs/API.md, Conventions): JWT HS256 signed with
//! `JWT_SECRET`, valid for one hour. Only HS256 is accepted (so `alg: none`
//! and key-confusion tokens fail).

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

use crate::domain::{Member, MemberId};
use crate::error::ApiError;

pub const TOKEN_TTL_SECS: u64 = 3600;
pub const MIN_SECRET_BYTES: usize = 32;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Claims {
    /// The member id.
    pub sub: String,
    pub username: String,
    pub nickname: String,
    pub iat: u64,
    pub exp: u64,
    /// The member's session epoch when it was issued: the token works
    /// while the stored epoch is the same (docs/API.md, Accounts). Tokens
    /// from before v3 carry none: 0, every member's first epoch.
    #[serde(default)]
    pub sep: u64,
}

impl Claims {
    /// The member a verified token names.
    pub fn member_id(&self) -> Result<MemberId, ApiError> {
        MemberId::parse(&self.sub).map_err(|_| ApiError::InvalidToken("bearer token is invalid".into()))
    }
}

pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl std::fmt::Debug for JwtKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtKeys").finish_non_exhaustive()
    }
}

impl JwtKeys {
    pub fn new(secret: &SecretString) -> Result<Self, String> {
        let bytes = secret.expose_secret().as_bytes();
        if bytes.len() < MIN_SECRET_BYTES {
            return Err(format!(
                "JWT_SECRET must be at least {MIN_SECRET_BYTES} bytes (it is {})",
                bytes.len()
            ));
        }
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 5;
        validation.set_required_spec_claims(&["exp", "sub"]);
        Ok(JwtKeys {
            encoding: EncodingKey::from_secret(bytes).map_err(|e| format!("JWT_SECRET: {e}"))?,
            decoding: DecodingKey::from_secret(bytes).map_err(|e| format!("JWT_SECRET: {e}"))?,
            validation,
        })
    }

    /// A token for `member` in session epoch `epoch`, issued `now` (Unix seconds).
    pub fn issue(&self, member: &Member, epoch: u64, now: u64) -> Result<String, ApiError> {
        let claims = Claims {
            sub: member.id.clone(),
            username: member.username.clone(),
            nickname: member.nickname.clone(),
            iat: now,
            exp: now + TOKEN_TTL_SECS,
            sep: epoch,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| ApiError::Internal(format!("signing a token: {e}")))
    }

    pub fn verify(&self, token: &str) -> Result<Claims, ApiError> {
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map(|data| data.claims)
            .map_err(|e| {
                let why = match e.kind() {
                    jsonwebtoken::errors::ErrorKind::ExpiredSignature => "bearer token has expired",
                    _ => "bearer token is invalid",
                };
                ApiError::InvalidToken(why.into())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn keys(secret: &str) -> JwtKeys {
        JwtKeys::new(&SecretString::from(secret)).unwrap()
    }

    fn member() -> Member {
        Member {
            id: "01ARZ3NDEKTSV4RRFFQ69G5FAV".into(),
            username: "kim".into(),
            nickname: "Kim".into(),
            created_at: "2026-01-01T00:00:00.000Z".into(),
        }
    }

    fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    #[test]
    fn tokens_verify_with_their_secret_only_and_expire() {
        let k = keys(&"s".repeat(32));
        let token = k.issue(&member(), 0, now()).unwrap();
        let claims = k.verify(&token).unwrap();
        assert_eq!(
            (claims.sub.as_str(), claims.exp - claims.iat),
            ("01ARZ3NDEKTSV4RRFFQ69G5FAV", 3600)
        );
        assert!(keys(&"t".repeat(32)).verify(&token).is_err(), "another secret");
        let expired = k.issue(&member(), 0, now() - 7200).unwrap();
        assert_eq!(
            k.verify(&expired),
            Err(ApiError::InvalidToken("bearer token has expired".into()))
        );
    }

    #[test]
    fn unsigned_and_tampered_tokens_are_refused() {
        let k = keys(&"s".repeat(32));
        let token = k.issue(&member(), 0, now()).unwrap();
        let parts: Vec<&str> = token.split('.').collect();
        let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        assert!(k.verify(&format!("{none_header}.{}.", parts[1])).is_err());
        let forged = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(&serde_json::json!({"sub": "someone-else", "username": "x", "nickname": "x", "iat": now(), "exp": now() + 60})).unwrap(),
        );
        assert!(k.verify(&format!("{}.{forged}.{}", parts[0], parts[2])).is_err());
        assert!(k.verify("not.a.token").is_err());
    }

    #[test]
    fn short_secrets_are_refused() {
        assert!(JwtKeys::new(&SecretString::from("short")).is_err());
    }
}
