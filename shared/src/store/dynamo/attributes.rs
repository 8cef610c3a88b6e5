//! Attribute values and items: the small builders and readers every request
//! uses, and the (de)serialisation of the item types in [`super::items`].

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::de::DeserializeOwned;

use crate::store::{StoreError, StoreResult};

/// One item (or key) as the SDK sends and returns it.
pub(super) type Item = HashMap<String, AttributeValue>;

/// A string value.
pub(super) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// A number value.
pub(super) fn n(value: i64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// The key `PK` = `pk`, `SK` = `sk`.
pub(super) fn key(pk: String, sk: String) -> Item {
    HashMap::from([("PK".to_owned(), s(pk)), ("SK".to_owned(), s(sk))])
}

/// An item type ([`super::items`]) as an item.
pub(super) fn to_item<T: serde::Serialize>(value: &T) -> StoreResult<Item> {
    serde_dynamo::to_item(value).map_err(|e| StoreError::Internal(format!("encoding item: {e}")))
}

/// An item read back as its item type.
pub(super) fn from_item<T: DeserializeOwned>(item: Item) -> StoreResult<T> {
    serde_dynamo::from_item(item).map_err(|e| StoreError::Internal(format!("decoding item: {e}")))
}

/// The number attribute `name` of `item`.
pub(super) fn number(item: &Item, name: &str) -> StoreResult<u64> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| StoreError::Internal(format!("item has no number `{name}`")))
}

/// A string attribute of an item, if it has one.
pub(super) fn text<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name).and_then(|v| v.as_s().ok()).map(String::as_str)
}

/// The partition key of an item or key (for the capacity meter).
pub(super) fn pk_of(item: &Item) -> String {
    item.get("PK").and_then(|v| v.as_s().ok()).cloned().unwrap_or_default()
}

/// What a read returns of each item: a projection expression and the
/// attribute names it uses.
pub(super) struct Projection {
    pub expression: &'static str,
    pub names: &'static [(&'static str, &'static str)],
}

impl Projection {
    pub(super) fn names(&self) -> HashMap<String, String> {
        self.names
            .iter()
            .map(|(placeholder, name)| ((*placeholder).to_owned(), (*name).to_owned()))
            .collect()
    }
}
