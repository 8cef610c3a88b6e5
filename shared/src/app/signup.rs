//! Sign up (docs/API.md, Routes: `POST /members`).

use secrecy::{ExposeSecret, SecretString};

use super::{Answer, IdempotencyKey};
use crate::domain::moderation::Screened;
use crate::domain::{Member, MemberId, Nickname, Password, PasswordHash, Username, now};
use crate::error::ApiError;
use crate::hashing::Tier;

use super::passwords::{check_length, check_new_password};
use super::throttle::{self, Refusal};
use super::{App, ClientAddress};

#[derive(Debug)]
pub struct SignUp {
    /// The request's `Idempotency-Key`, if it came with one.
    pub idempotency: Option<IdempotencyKey>,
    pub username: Username,
    pub password: Password,
    pub nickname: Nickname,
    pub client: ClientAddress,
    /// The request's `Admin-Enroll-Token`, if it came with one.
    pub admin_enroll_token: Option<SecretString>,
    /// The request's `X-Pow`, if it came with one.
    pub pow: Option<String>,
}

impl App {
    /// Refused over the signup quota and for a taken username before any
    /// hashing; the store's conditional write still decides races.
    /// The password rules (length, blocklist, username and nickname) come
    /// first of all: they cost no store request.
    pub async fn sign_up(&self, command: SignUp) -> Result<Answer<Member>, ApiError> {
        let hashing = &self.hashing()?.for_client(&command.client.0);
        check_length(hashing, Tier::Member, "password", &command.password)?;
        check_new_password(
            &self.passwords,
            "password",
            &command.password,
            &[command.username.as_str(), command.nickname.as_str()],
            false,
        )?;
        let counted = self
            .require_pow(super::pow::AnonymousWrite {
                client: &command.client,
                board: None,
                proof: command.pow.as_deref(),
            })
            .await?;
        let keys = throttle::signup_keys(&self.limits, &command.client.0);
        let reservation = throttle::reserve_after(&*self.store, &keys, Refusal::RateLimited, counted).await?;
        let reservation = self
            .screen_counted(&[(Screened::Nickname, command.nickname.as_str())], reservation)
            .await?;
        let reserved = self.reserved_for_an_admin(&command);
        let created = self
            .once(command.idempotency.as_ref(), |claim| async move {
                if reserved || self.store.username_taken(&command.username).await? {
                    return Err(ApiError::UsernameTaken);
                }
                let hash = hashing.hash(Tier::Member, command.password.secret().clone()).await?;
                let member = Member {
                    id: MemberId::generate().into_inner(),
                    username: command.username.as_str().to_owned(),
                    nickname: command.nickname.as_str().to_owned(),
                    created_at: now(),
                };
                let done = super::completion(claim.as_ref(), &member)?;
                self.store
                    .create_member(&member, &PasswordHash::new(hash), done.as_ref())
                    .await?;
                Ok(member)
            })
            .await;
        match created {
            // A taken username is an answer: it stays counted (it bounds
            // probing usernames through signup too).
            Ok(Answer::Created(_)) | Err(ApiError::UsernameTaken) => {}
            Ok(Answer::Replayed(_)) | Err(_) => throttle::forgive(&*self.store, reservation).await,
        }
        created
    }

    /// A name `ADMIN_USERNAMES` lists is taken unless the signup
    /// carries `ADMIN_ENROLL_TOKEN` (docs/API.md, Hardening): whoever came
    /// first to an unclaimed admin name would be admin. Answered as taken,
    /// so it counts like one and says nothing more.
    fn reserved_for_an_admin(&self, command: &SignUp) -> bool {
        self.is_listed_admin(&command.username) && !self.admin_enroll_token_matches(command.admin_enroll_token.as_ref())
    }

    /// Whether `ADMIN_USERNAMES` names `username`.
    pub(super) fn is_listed_admin(&self, username: &Username) -> bool {
        self.admins.iter().any(|admin| admin == username.as_str())
    }

    /// Whether `offered` is the deployment's `ADMIN_ENROLL_TOKEN` (never
    /// when none is set).
    pub(super) fn admin_enroll_token_matches(&self, offered: Option<&SecretString>) -> bool {
        match (&self.admin_enroll_token, offered) {
            (Some(expected), Some(offered)) => expected.matches(offered.expose_secret()),
            _ => false,
        }
    }

    /// The names `ADMIN_USERNAMES` lists that no account holds yet:
    /// reserved, and warned about at start, each by name.
    pub async fn warn_about_unclaimed_admin_names(&self) -> Result<Vec<String>, ApiError> {
        let mut unclaimed = Vec::new();
        for name in self.admins.iter() {
            let username = Username::parse(name.clone())?;
            if !self.store.username_taken(&username).await? {
                tracing::warn!(
                    username = %name,
                    enroll_token = self.admin_enroll_token.is_some(),
                    "ADMIN_USERNAMES names an account nobody has signed up yet: the name is reserved, and only a signup with Admin-Enroll-Token (ADMIN_ENROLL_TOKEN) can take it"
                );
                unclaimed.push(name.clone());
            }
        }
        Ok(unclaimed)
    }
}
