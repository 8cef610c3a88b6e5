//! [`Blocks`] on DynamoDB (docs/storage.md, Notifications and blocks):
//! `BLOCKS#<member>` / `BLOCKS` holds every block of the member in one map,
//! read with one GetItem (at most 500 entries, ~90 KB).

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};

use super::DynamoStore;
use super::attributes::{Item, key, n};
use super::transact::{Race, retry_races};
use crate::domain::notifications::MAX_BLOCKS;
use crate::domain::{BlockEntry, Blocked, Blocking, Member, MemberId};
use crate::store::{Blocks, StoreError, StoreResult};

pub(super) fn blocks_key(member: &str) -> Item {
    key(format!("BLOCKS#{member}"), "BLOCKS".to_owned())
}

/// A block as its map entry stores it.
#[derive(Serialize, Deserialize)]
struct BlockValue {
    created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    member: Option<Member>,
}

#[async_trait]
impl Blocks for DynamoStore {
    /// One UpdateItem adding the entry when the map exists, has room and
    /// lacks it; when its condition fails, one GetItem says why (and the
    /// member's first block puts the item).
    async fn block(&self, member: &MemberId, entry: &BlockEntry) -> StoreResult<Blocking> {
        let member = member.as_str();
        let blocked = entry.blocked.key();
        let value = BlockValue {
            created_at: entry.created_at.clone(),
            member: entry.member.clone(),
        };
        let value = serde_dynamo::to_attribute_value::<_, AttributeValue>(&value)
            .map_err(|e| StoreError::Internal(format!("encoding a block: {e}")))?;
        retry_races("blocking kept losing races", (), |()| {
            let (blocked, value) = (&blocked, &value);
            async move {
                let added = self
                    .update_if(
                        blocks_key(member),
                        "SET #blocked.#key = :value",
                        "attribute_exists(#blocked) AND attribute_not_exists(#blocked.#key) AND size(#blocked) < :max",
                        HashMap::from([
                            ("#blocked".to_owned(), "blocked".to_owned()),
                            ("#key".to_owned(), blocked.clone()),
                        ]),
                        HashMap::from([
                            (":value".to_owned(), value.clone()),
                            (":max".to_owned(), n(MAX_BLOCKS as i64)),
                        ]),
                    )
                    .await?;
                if added {
                    return Ok(Race::Done(Blocking::Added));
                }
                let Some(item) = self.get(blocks_key(member)).await? else {
                    let mut item = blocks_key(member);
                    item.insert(
                        "blocked".to_owned(),
                        AttributeValue::M(HashMap::from([(blocked.clone(), value.clone())])),
                    );
                    return Ok(if self.put_new(item, None).await? {
                        Race::Done(Blocking::Added)
                    } else {
                        Race::Again(())
                    });
                };
                let map = item.get("blocked").and_then(|v| v.as_m().ok());
                Ok(match map {
                    Some(map) if map.contains_key(blocked) => Race::Done(Blocking::Already),
                    Some(map) if map.len() >= MAX_BLOCKS => Race::Done(Blocking::Full),
                    // Unblocked or changed between the two requests.
                    _ => Race::Lost(()),
                })
            }
        })
        .await
    }

    /// One UpdateItem removing the entry if it is there.
    async fn unblock(&self, member: &MemberId, blocked: &Blocked) -> StoreResult<bool> {
        self.update_if(
            blocks_key(member.as_str()),
            "REMOVE #blocked.#key",
            "attribute_exists(#blocked.#key)",
            HashMap::from([
                ("#blocked".to_owned(), "blocked".to_owned()),
                ("#key".to_owned(), blocked.key()),
            ]),
            HashMap::new(),
        )
        .await
    }

    /// One consistent GetItem: a block counts from the next request on.
    async fn blocks(&self, member: &MemberId) -> StoreResult<Vec<BlockEntry>> {
        let Some(mut item) = self.get(blocks_key(member.as_str())).await? else {
            return Ok(Vec::new());
        };
        let Some(AttributeValue::M(map)) = item.remove("blocked") else {
            return Ok(Vec::new());
        };
        let mut entries = map
            .into_iter()
            .map(|(key, value)| {
                let blocked = Blocked::from_key(&key)
                    .ok_or_else(|| StoreError::Internal(format!("a stored block does not parse: {key}")))?;
                let value: BlockValue = serde_dynamo::from_attribute_value(value)
                    .map_err(|e| StoreError::Internal(format!("decoding a block: {e}")))?;
                Ok(BlockEntry {
                    blocked,
                    created_at: value.created_at,
                    member: value.member,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        entries.sort_by(|a, b| (&a.created_at, a.blocked.key()).cmp(&(&b.created_at, b.blocked.key())));
        Ok(entries)
    }
}
