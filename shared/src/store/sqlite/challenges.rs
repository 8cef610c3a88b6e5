//! [`Challenges`] on SQLite: the `spent_challenges` table, swept of expired
//! rows as solutions are spent.

use async_trait::async_trait;
use rusqlite::params;

use super::{SqliteStore, sql_error};
use crate::store::{Challenges, StoreResult};

#[async_trait]
impl Challenges for SqliteStore {
    async fn spend_challenge(&self, challenge: &str, expires_at: i64) -> StoreResult<bool> {
        let challenge = challenge.to_owned();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        self.with_unseen(move |conn| {
            // An expired challenge is refused before it gets here: its row is useless.
            conn.execute("DELETE FROM spent_challenges WHERE expires_at < ?1", [now])
                .map_err(sql_error)?;
            let inserted = conn
                .execute(
                    "INSERT INTO spent_challenges (challenge, expires_at) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                    params![challenge, expires_at],
                )
                .map_err(sql_error)?;
            Ok(inserted == 1)
        })
        .await
    }
}
