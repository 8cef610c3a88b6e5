//! [`Members`] on DynamoDB: one item per member, keyed by username, so a
//! taken username is a failed condition on the put. A deleted
//! account's item stays as a tombstone ([`super::accounts`]): its username
//! stays taken, and nothing here finds it.

use async_trait::async_trait;

use super::DynamoStore;
use super::accounts::stored_totp;
use super::attributes::{key, to_item};
use super::items::{MEMBER_SK, MemberItem, live_member, member_pk};
use crate::domain::{Member, MemberCredentials, MemberId, PasswordHash, Username};
use crate::store::{Completion, Members, StoreError, StoreResult};

#[async_trait]
impl Members for DynamoStore {
    async fn create_member(
        &self,
        member: &Member,
        password_hash: &PasswordHash,
        done: Option<&Completion>,
    ) -> StoreResult<()> {
        let item = to_item(&MemberItem {
            pk: member_pk(&member.username),
            sk: MEMBER_SK.into(),
            id: member.id.clone(),
            username: member.username.clone(),
            nickname: member.nickname.clone(),
            password_hash: password_hash.as_str().to_owned(),
            created_at: member.created_at.clone(),
            session_epoch: 0,
        })?;
        if self.put_new(item, done).await? {
            Ok(())
        } else {
            Err(StoreError::UsernameTaken)
        }
    }

    /// One consistent GetItem of the member item: the hash, the epoch and
    /// the TOTP attributes together.
    async fn member_credentials(&self, username: &Username) -> StoreResult<Option<MemberCredentials>> {
        let Some(item) = self.get(key(member_pk(username.as_str()), MEMBER_SK.into())).await? else {
            return Ok(None);
        };
        let totp = stored_totp(&item)?;
        let Some(m) = live_member(item)? else {
            return Ok(None);
        };
        Ok(Some(MemberCredentials {
            member: Member {
                id: m.id,
                username: m.username,
                nickname: m.nickname,
                created_at: m.created_at,
            },
            password_hash: PasswordHash::new(m.password_hash),
            session_epoch: m.session_epoch,
            totp,
        }))
    }

    /// Two requests: a Query of `ById` for the member item's key (the
    /// item keyed by username whose SK is `MEMBER`), then that item
    /// (consistent GetItem). The index is eventually consistent: a member
    /// who signed up a moment ago may not be found yet, and a deleted one
    /// may still be named by it a moment after (its tombstone, read
    /// consistently, then answers `None`).
    async fn member_by_id(&self, id: &MemberId) -> StoreResult<Option<Member>> {
        let keys = self.keys_by_id(id.as_str()).await?;
        let Some((pk, _)) = keys.into_iter().find(|(_, sk)| sk == MEMBER_SK) else {
            return Ok(None);
        };
        let Some(item) = self.get(key(pk, MEMBER_SK.into())).await? else {
            return Ok(None);
        };
        let Some(m) = live_member(item)? else {
            return Ok(None);
        };
        Ok((m.id == id.as_str()).then_some(Member {
            id: m.id,
            username: m.username,
            nickname: m.nickname,
            created_at: m.created_at,
        }))
    }

    /// The member item, a tombstone included: one consistent GetItem.
    async fn username_taken(&self, username: &Username) -> StoreResult<bool> {
        Ok(self
            .get(key(member_pk(username.as_str()), MEMBER_SK.into()))
            .await?
            .is_some())
    }

    async fn replace_password_hash(
        &self,
        username: &Username,
        old: &PasswordHash,
        new: &PasswordHash,
    ) -> StoreResult<bool> {
        self.replace_hash(
            key(member_pk(username.as_str()), MEMBER_SK.into()),
            "password_hash",
            None,
            old.as_str(),
            new.as_str(),
        )
        .await
    }
}
