//! A post's edit history (docs/API.md, Edit history and edit locks): read
//! a page of it, and delete one revision, by the post's member author or by
//! staff (then with an entry in the public log).

use super::entry;
use crate::app::{App, ClientAddress, SignedIn};
use crate::domain::{Author, LogAction, PageLimit, PostKey, Revisions};
use crate::error::ApiError;
use crate::store::cursor;

impl App {
    /// A page of the post's kept revisions, newest first.
    pub async fn revisions(
        &self,
        key: &PostKey,
        limit: PageLimit,
        cursor: Option<&str>,
    ) -> Result<Revisions, ApiError> {
        let before = cursor
            .filter(|c| !c.is_empty())
            .map(cursor::decode_revision)
            .transpose()?;
        self.store
            .revisions(key, limit, before)
            .await?
            .ok_or_else(|| self.not_found_post())
    }

    /// `DELETE .../revisions/{revision}`: its author deletes it quietly
    /// (unless banned from the board, as for any of their writes); staff of
    /// the board delete it with a log entry; anyone else `403`.
    pub async fn delete_revision(
        &self,
        member: &SignedIn,
        client: &ClientAddress,
        key: &PostKey,
        revision: &str,
    ) -> Result<(), ApiError> {
        let number = revision
            .parse::<u64>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| ApiError::invalid("revision", "must be a revision's number, a whole number from 1"))?;
        let guard = self.require_post(key).await?;
        let own = matches!(&guard.author, Author::Member { member_id, .. } if member_id == member.id.as_str());
        let entry = match own {
            true => {
                self.require_not_banned(&key.board, client, Some(member)).await?;
                None
            }
            false => {
                self.require_staff(&key.board, member)
                    .await
                    .map_err(|refused| match refused {
                        ApiError::Forbidden(_) => ApiError::Forbidden(
                            "only the post's author or staff of its board may delete its revisions".into(),
                        ),
                        other => other,
                    })?;
                Some(entry(
                    LogAction::DeleteRevision,
                    self.post_target(key).await?,
                    None,
                    member,
                ))
            }
        };
        match self.store.delete_revision(key, number, entry.as_ref()).await? {
            true => Ok(()),
            false => Err(ApiError::not_found("revision")),
        }
    }
}
