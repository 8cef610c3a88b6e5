//! Sign up (docs/API.md, Routes: `POST /members`).

use crate::domain::{Member, MemberId, Nickname, Password, PasswordHash, Username, now};
use crate::error::ApiError;
use crate::hashing::{Hashing, Tier, UNPEPPERED_MAX_BYTES};

use super::App;

pub struct SignUp {
    pub username: Username,
    pub password: Password,
    pub nickname: Nickname,
}

/// Without a pepper bcrypt reads 72 bytes at most: a longer password is
/// refused rather than silently truncated (docs/API.md, Field rules).
pub(super) fn check_length(hashing: &Hashing, tier: Tier, password: &Password) -> Result<(), ApiError> {
    if !hashing.engine().policy(tier).peppered && password.byte_len() > UNPEPPERED_MAX_BYTES {
        return Err(ApiError::validation(format!(
            "password must be at most {UNPEPPERED_MAX_BYTES} bytes"
        )));
    }
    Ok(())
}

impl App {
    pub async fn sign_up(&self, command: SignUp) -> Result<Member, ApiError> {
        let hashing = self.hashing()?;
        check_length(hashing, Tier::Member, &command.password)?;
        let hash = hashing.hash(Tier::Member, command.password.secret().clone()).await?;
        let member = Member {
            id: MemberId::generate().into_inner(),
            username: command.username.into_inner(),
            nickname: command.nickname.into_inner(),
            created_at: now(),
        };
        self.store.create_member(&member, &PasswordHash::new(hash)).await?;
        Ok(member)
    }
}
