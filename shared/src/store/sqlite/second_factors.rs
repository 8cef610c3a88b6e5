//! [`SecondFactors`] on SQLite: four columns of the member's row
//! (migrations.rs, migration 8). The one writer connection makes each
//! conditional update exact.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::{SqliteStore, sql_error};
use crate::domain::{MemberId, StoredTotp, TotpStart, Username};
use crate::store::{SecondFactors, StoreResult, from_json, to_json};

/// A live member's row: the id and the username name the same one.
const LIVE: &str = "id = ?1 AND username = ?2 AND deleted_at IS NULL";

/// `totp_secret, totp_confirmed, totp_last_step, totp_recovery` from column `first` on.
pub(super) fn totp_from(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Option<StoredTotp>> {
    let Some(sealed_secret) = row.get::<_, Option<String>>(first)? else {
        return Ok(None);
    };
    let recovery: String = row.get(first + 3)?;
    Ok(Some(StoredTotp {
        sealed_secret,
        confirmed: row.get(first + 1)?,
        last_step: u64::try_from(row.get::<_, i64>(first + 2)?).unwrap_or(0),
        recovery_codes: serde_json::from_str(&recovery).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(first + 3, rusqlite::types::Type::Text, Box::new(e))
        })?,
    }))
}

fn step_of(step: u64) -> i64 {
    i64::try_from(step).unwrap_or(i64::MAX)
}

#[async_trait]
impl SecondFactors for SqliteStore {
    async fn start_totp(&self, id: &MemberId, username: &Username, sealed: &str) -> StoreResult<TotpStart> {
        let (id, username, sealed) = (id.as_str().to_owned(), username.as_str().to_owned(), sealed.to_owned());
        self.with_unseen(move |conn| {
            let started = conn
                .execute(
                    &format!(
                        "UPDATE members SET totp_secret = ?3, totp_confirmed = 0, totp_last_step = 0, totp_recovery = '[]'
                         WHERE {LIVE} AND NOT (totp_secret IS NOT NULL AND totp_confirmed)"
                    ),
                    params![id, username, sealed],
                )
                .map_err(sql_error)?;
            if started == 1 {
                return Ok(TotpStart::Started);
            }
            let live = conn
                .query_row(&format!("SELECT 1 FROM members WHERE {LIVE}"), params![id, username], |_| Ok(()))
                .optional()
                .map_err(sql_error)?;
            Ok(if live.is_some() { TotpStart::AlreadyOn } else { TotpStart::NoAccount })
        })
        .await
    }

    async fn confirm_totp(
        &self,
        id: &MemberId,
        username: &Username,
        sealed: &str,
        recovery_codes: &[String],
        step: u64,
    ) -> StoreResult<bool> {
        let (id, username, sealed) = (id.as_str().to_owned(), username.as_str().to_owned(), sealed.to_owned());
        let recovery = to_json(&recovery_codes)?;
        self.with_unseen(move |conn| {
            conn.execute(
                &format!(
                    "UPDATE members SET totp_confirmed = 1, totp_last_step = ?4, totp_recovery = ?5
                     WHERE {LIVE} AND totp_secret = ?3 AND NOT totp_confirmed"
                ),
                params![id, username, sealed, step_of(step), recovery],
            )
            .map(|changed| changed == 1)
            .map_err(sql_error)
        })
        .await
    }

    async fn spend_totp_step(&self, username: &Username, step: u64) -> StoreResult<bool> {
        let username = username.as_str().to_owned();
        self.with_unseen(move |conn| {
            conn.execute(
                "UPDATE members SET totp_last_step = ?2
                 WHERE username = ?1 AND deleted_at IS NULL AND totp_confirmed AND totp_last_step < ?2",
                params![username, step_of(step)],
            )
            .map(|changed| changed == 1)
            .map_err(sql_error)
        })
        .await
    }

    async fn spend_recovery_code(&self, username: &Username, hash: &str) -> StoreResult<bool> {
        let (username, hash) = (username.as_str().to_owned(), hash.to_owned());
        self.with_unseen(move |conn| {
            let tx = conn.transaction().map_err(sql_error)?;
            let stored: Option<String> = tx
                .query_row(
                    "SELECT totp_recovery FROM members WHERE username = ?1 AND deleted_at IS NULL AND totp_confirmed",
                    [&username],
                    |row| row.get(0),
                )
                .optional()
                .map_err(sql_error)?;
            let Some(stored) = stored else { return Ok(false) };
            let mut codes: Vec<String> = from_json(&stored)?;
            let Some(at) = codes.iter().position(|c| c == &hash) else {
                return Ok(false);
            };
            codes.remove(at);
            tx.execute(
                "UPDATE members SET totp_recovery = ?2 WHERE username = ?1",
                params![username, to_json(&codes)?],
            )
            .map_err(sql_error)?;
            tx.commit().map_err(sql_error)?;
            Ok(true)
        })
        .await
    }

    async fn reseal_totp(&self, username: &Username, old: &str, new: &str) -> StoreResult<bool> {
        let (username, old, new) = (username.as_str().to_owned(), old.to_owned(), new.to_owned());
        self.with_unseen(move |conn| {
            conn.execute(
                "UPDATE members SET totp_secret = ?3 WHERE username = ?1 AND deleted_at IS NULL AND totp_secret = ?2",
                params![username, old, new],
            )
            .map(|changed| changed == 1)
            .map_err(sql_error)
        })
        .await
    }

    async fn end_totp(&self, id: &MemberId, username: &Username) -> StoreResult<bool> {
        let (id, username) = (id.as_str().to_owned(), username.as_str().to_owned());
        self.with_unseen(move |conn| {
            conn.execute(
                &format!(
                    "UPDATE members SET totp_secret = NULL, totp_confirmed = 0, totp_last_step = 0, totp_recovery = '[]'
                     WHERE {LIVE}"
                ),
                params![id, username],
            )
            .map(|changed| changed == 1)
            .map_err(sql_error)
        })
        .await
    }
}
