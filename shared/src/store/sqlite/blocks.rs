//! [`Blocks`] on SQLite (migrations.rs, migration 9): one row per block,
//! at most [`MAX_BLOCKS`] a member.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::{SqliteStore, sql_error};
use crate::domain::notifications::MAX_BLOCKS;
use crate::domain::{BlockEntry, Blocked, Blocking, Member, MemberId};
use crate::store::{Blocks, StoreError, StoreResult};

#[async_trait]
impl Blocks for SqliteStore {
    async fn block(&self, member: &MemberId, entry: &BlockEntry) -> StoreResult<Blocking> {
        let member = member.as_str().to_owned();
        let key = entry.blocked.key();
        let names = entry.member.clone();
        let created_at = entry.created_at.clone();
        // Blocks filter after the read cache: nothing it keeps changes.
        self.with_unseen(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            let there = tx
                .query_row(
                    "SELECT 1 FROM blocks WHERE member_id = ?1 AND blocked = ?2",
                    params![member, key],
                    |_| Ok(()),
                )
                .optional()
                .map_err(sql_error)?;
            if there.is_some() {
                return Ok(Blocking::Already);
            }
            let count: i64 = tx
                .query_row(
                    "SELECT COUNT(*) FROM blocks WHERE member_id = ?1",
                    params![member],
                    |row| row.get(0),
                )
                .map_err(sql_error)?;
            if count >= MAX_BLOCKS as i64 {
                return Ok(Blocking::Full);
            }
            tx.execute(
                "INSERT INTO blocks (member_id, blocked, username, nickname, member_created_at, created_at, seq)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6,
                    COALESCE((SELECT MAX(seq) FROM blocks WHERE member_id = ?1), 0) + 1)",
                params![
                    member,
                    key,
                    names.as_ref().map(|m| m.username.clone()),
                    names.as_ref().map(|m| m.nickname.clone()),
                    names.as_ref().map(|m| m.created_at.clone()),
                    created_at
                ],
            )
            .map_err(sql_error)?;
            tx.commit().map_err(sql_error)?;
            Ok(Blocking::Added)
        })
        .await
    }

    async fn unblock(&self, member: &MemberId, blocked: &Blocked) -> StoreResult<bool> {
        let (member, key) = (member.as_str().to_owned(), blocked.key());
        self.with_unseen(move |conn| {
            conn.execute(
                "DELETE FROM blocks WHERE member_id = ?1 AND blocked = ?2",
                params![member, key],
            )
            .map(|n| n == 1)
            .map_err(sql_error)
        })
        .await
    }

    async fn blocks(&self, member: &MemberId) -> StoreResult<Vec<BlockEntry>> {
        let member = member.as_str().to_owned();
        self.read(move |conn| {
            let mut statement = conn
                .prepare_cached(
                    "SELECT blocked, username, nickname, member_created_at, created_at FROM blocks
                     WHERE member_id = ?1 ORDER BY seq",
                )
                .map_err(sql_error)?;
            let rows = statement
                .query_map(params![member], |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, Option<String>>(1)?,
                        row.get::<_, Option<String>>(2)?,
                        row.get::<_, Option<String>>(3)?,
                        row.get::<_, String>(4)?,
                    ))
                })
                .map_err(sql_error)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(sql_error)?;
            rows.into_iter()
                .map(|(key, username, nickname, member_created_at, created_at)| {
                    let blocked = Blocked::from_key(&key)
                        .ok_or_else(|| StoreError::Internal(format!("a stored block does not parse: {key}")))?;
                    let member = match (&blocked, username, nickname, member_created_at) {
                        (Blocked::Member(id), Some(username), Some(nickname), Some(created_at)) => Some(Member {
                            id: id.as_str().to_owned(),
                            username,
                            nickname,
                            created_at,
                        }),
                        _ => None,
                    };
                    Ok(BlockEntry {
                        blocked,
                        created_at,
                        member,
                    })
                })
                .collect()
        })
        .await
    }
}
