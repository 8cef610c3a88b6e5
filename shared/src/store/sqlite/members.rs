//! [`Members`] on SQLite: the `members` table, unique by username.

use async_trait::async_trait;
use rusqlite::{ErrorCode, OptionalExtension, TransactionBehavior, params};

use super::idempotency::complete;
use super::{SqliteStore, sql_error};
use crate::domain::{Member, MemberCredentials, MemberId, PasswordHash, Username};
use crate::store::{Completion, Members, StoreError, StoreResult};

#[async_trait]
impl Members for SqliteStore {
    async fn create_member(
        &self,
        member: &Member,
        password_hash: &PasswordHash,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let (member, hash, done) = (member.clone(), password_hash.as_str().to_owned(), done.cloned());
        self.with(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_error)?;
            tx.execute(
                "INSERT INTO members (id, username, nickname, password_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![member.id, member.username, member.nickname, hash, member.created_at],
            )
            .map_err(|e| match e.sqlite_error_code() {
                Some(ErrorCode::ConstraintViolation) => StoreError::UsernameTaken,
                _ => sql_error(e),
            })?;
            complete(&tx, done.as_ref())?;
            tx.commit().map_err(sql_error)
        })
        .await
    }

    async fn member_by_id(&self, id: &MemberId) -> StoreResult<Option<Member>> {
        let id = id.as_str().to_owned();
        self.read(move |conn| {
            conn.query_row(
                "SELECT id, username, nickname, created_at FROM members WHERE id = ?1 AND deleted_at IS NULL",
                [id],
                member_from,
            )
            .optional()
            .map_err(sql_error)
        })
        .await
    }

    async fn member_credentials(&self, username: &Username) -> StoreResult<Option<MemberCredentials>> {
        let username = username.as_str().to_owned();
        self.read(move |conn| {
            conn.query_row(
                "SELECT id, username, nickname, created_at, password_hash, session_epoch,
                        totp_secret, totp_confirmed, totp_last_step, totp_recovery FROM members
                 WHERE username = ?1 AND deleted_at IS NULL",
                [username],
                |row| {
                    Ok(MemberCredentials {
                        member: Member {
                            id: row.get(0)?,
                            username: row.get(1)?,
                            nickname: row.get(2)?,
                            created_at: row.get(3)?,
                        },
                        password_hash: PasswordHash::new(row.get(4)?),
                        session_epoch: u64::try_from(row.get::<_, i64>(5)?).unwrap_or(0),
                        totp: super::second_factors::totp_from(row, 6)?,
                    })
                },
            )
            .optional()
            .map_err(sql_error)
        })
        .await
    }

    async fn username_taken(&self, username: &Username) -> StoreResult<bool> {
        let username = username.as_str().to_owned();
        self.read(move |conn| {
            conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM members WHERE username = ?1)",
                [username],
                |row| row.get(0),
            )
            .map_err(sql_error)
        })
        .await
    }

    async fn replace_password_hash(
        &self,
        username: &Username,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        let (username, old, new) = (
            username.as_str().to_owned(),
            old.as_str().to_owned(),
            new.as_str().to_owned(),
        );
        self.with_unseen(move |conn| {
            let changed = conn
                .execute(
                    "UPDATE members SET password_hash = ?1
                     WHERE username = ?2 AND password_hash = ?3 AND deleted_at IS NULL",
                    params![new, username, old],
                )
                .map_err(sql_error)?;
            Ok(changed == 1)
        })
        .await
    }
}

/// `id, username, nickname, created_at`.
pub(super) fn member_from(row: &rusqlite::Row<'_>) -> rusqlite::Result<Member> {
    Ok(Member {
        id: row.get(0)?,
        username: row.get(1)?,
        nickname: row.get(2)?,
        created_at: row.get(3)?,
    })
}
