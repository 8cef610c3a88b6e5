//! The table definition, read from `infra/table.json`. Its property names are
//! CloudFormation's `AWS::DynamoDB::Table` properties, so the SAM template
//! declares the same table; local and test tables are created from it.

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType, TimeToLiveSpecification,
};
use serde::Deserialize;

use crate::store::StoreError;

pub const TABLE_JSON: &str = include_str!("../../../../infra/table.json");

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct TableDefinition {
    pub attribute_definitions: Vec<AttributeDef>,
    pub key_schema: Vec<KeyElement>,
    pub global_secondary_indexes: Vec<IndexDef>,
    pub billing_mode: String,
    /// The stream the `purge` function reads (the marker's new image
    /// names its board). In the template only: local tables are created
    /// without it, since the server purges by itself and DynamoDB Local
    /// would keep a record of every write of a test suite (the purge
    /// tests turn it on for their tables).
    pub stream_specification: StreamDef,
    pub time_to_live_specification: TtlDef,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct StreamDef {
    pub stream_view_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct AttributeDef {
    pub attribute_name: String,
    pub attribute_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct KeyElement {
    pub attribute_name: String,
    pub key_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct IndexDef {
    pub index_name: String,
    pub key_schema: Vec<KeyElement>,
    pub projection: ProjectionDef,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct ProjectionDef {
    pub projection_type: String,
    #[serde(default)]
    pub non_key_attributes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct TtlDef {
    pub attribute_name: String,
    pub enabled: bool,
}

impl TableDefinition {
    pub fn load() -> Self {
        serde_json::from_str(TABLE_JSON).expect("infra/table.json is checked by the tests")
    }
}

fn keys(elements: &[KeyElement]) -> Result<Vec<KeySchemaElement>, StoreError> {
    elements
        .iter()
        .map(|k| {
            KeySchemaElement::builder()
                .attribute_name(&k.attribute_name)
                .key_type(KeyType::from(k.key_type.as_str()))
                .build()
                .map_err(StoreError::from)
        })
        .collect()
}

/// Creates `table` from the definition unless it exists (local endpoints only).
pub async fn ensure_table(client: &Client, table: &str) -> Result<(), StoreError> {
    match client.describe_table().table_name(table).send().await {
        Ok(_) => return Ok(()),
        Err(e)
            if e.as_service_error()
                .is_some_and(|s| s.is_resource_not_found_exception()) => {}
        Err(e) => return Err(super::sdk_error(e)),
    }
    let def = TableDefinition::load();
    let attributes = def
        .attribute_definitions
        .iter()
        .map(|a| {
            AttributeDefinition::builder()
                .attribute_name(&a.attribute_name)
                .attribute_type(ScalarAttributeType::from(a.attribute_type.as_str()))
                .build()
                .map_err(StoreError::from)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let indexes = def
        .global_secondary_indexes
        .iter()
        .map(|index| {
            let projection = Projection::builder()
                .projection_type(ProjectionType::from(index.projection.projection_type.as_str()))
                .set_non_key_attributes(
                    (!index.projection.non_key_attributes.is_empty())
                        .then(|| index.projection.non_key_attributes.clone()),
                )
                .build();
            GlobalSecondaryIndex::builder()
                .index_name(&index.index_name)
                .set_key_schema(Some(keys(&index.key_schema)?))
                .projection(projection)
                .build()
                .map_err(StoreError::from)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let created = client
        .create_table()
        .table_name(table)
        .set_attribute_definitions(Some(attributes))
        .set_key_schema(Some(keys(&def.key_schema)?))
        .set_global_secondary_indexes(Some(indexes))
        .billing_mode(BillingMode::from(def.billing_mode.as_str()))
        .send()
        .await;
    match created {
        Ok(_) => {}
        // Another process created it first.
        Err(e) if e.as_service_error().is_some_and(|s| s.is_resource_in_use_exception()) => {
            return Ok(());
        }
        Err(e) => return Err(super::sdk_error(e)),
    }
    let ttl = TimeToLiveSpecification::builder()
        .attribute_name(&def.time_to_live_specification.attribute_name)
        .enabled(def.time_to_live_specification.enabled)
        .build()
        .map_err(StoreError::from)?;
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(ttl)
        .send()
        .await
        .map_err(super::sdk_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_definition_parses_and_has_the_keys_the_code_uses() {
        let def = TableDefinition::load();
        let names: Vec<_> = def.key_schema.iter().map(|k| k.attribute_name.as_str()).collect();
        assert_eq!(names, ["PK", "SK"]);
        assert_eq!(
            def.global_secondary_indexes[0].index_name,
            super::super::items::BOARD_INDEX
        );
        // `ById`: hash key `id` only, keys only.
        let by_id = def
            .global_secondary_indexes
            .iter()
            .find(|i| i.index_name == super::super::items::BY_ID_INDEX)
            .expect("infra/table.json declares ById");
        let keys: Vec<_> = by_id
            .key_schema
            .iter()
            .map(|k| (k.attribute_name.as_str(), k.key_type.as_str()))
            .collect();
        assert_eq!(keys, [("id", "HASH")]);
        assert_eq!(by_id.projection.projection_type, "KEYS_ONLY");
        assert!(
            def.attribute_definitions
                .iter()
                .any(|a| a.attribute_name == "id" && a.attribute_type == "S")
        );
        // `ByOwner`: `owner` / `owner_sk`, projecting what a member's
        // listings and an account deletion read, never a body.
        let by_owner = def
            .global_secondary_indexes
            .iter()
            .find(|i| i.index_name == super::super::items::BY_OWNER_INDEX)
            .expect("infra/table.json declares ByOwner");
        let keys: Vec<_> = by_owner
            .key_schema
            .iter()
            .map(|k| (k.attribute_name.as_str(), k.key_type.as_str()))
            .collect();
        assert_eq!(keys, [("owner", "HASH"), ("owner_sk", "RANGE")]);
        assert_eq!(by_owner.projection.projection_type, "INCLUDE");
        let projected = &by_owner.projection.non_key_attributes;
        for needed in [
            "id",
            "board",
            "title",
            "author_kind",
            "author_nickname",
            "author_member_id",
            "author_tag",
            "created_at",
            "post_id",
        ] {
            assert!(projected.iter().any(|a| a == needed), "ByOwner projects {needed}");
        }
        assert!(
            !projected
                .iter()
                .any(|a| a == "body" || a.contains("hash") || a.starts_with("writer_")),
            "{projected:?}"
        );
        for name in ["owner", "owner_sk"] {
            assert!(
                def.attribute_definitions
                    .iter()
                    .any(|a| a.attribute_name == name && a.attribute_type == "S"),
                "{name}"
            );
        }
        // v4: the sparse listing indexes, each projecting what the board
        // index projects, and the keys-only index of post numbers.
        let index = |name: &str| {
            def.global_secondary_indexes
                .iter()
                .find(|i| i.index_name == name)
                .unwrap_or_else(|| panic!("infra/table.json declares {name}"))
        };
        let keys_of = |name: &str| -> Vec<(String, String)> {
            index(name)
                .key_schema
                .iter()
                .map(|k| (k.attribute_name.clone(), k.key_type.clone()))
                .collect()
        };
        let pair = |hash: &str, range: &str| {
            vec![
                (hash.to_owned(), "HASH".to_owned()),
                (range.to_owned(), "RANGE".to_owned()),
            ]
        };
        use super::super::items::{BEST_INDEX, BY_CATEGORY_INDEX, BY_NUMBER_INDEX};
        assert_eq!(keys_of(BY_NUMBER_INDEX), pair("GSI1PK", "number"));
        assert_eq!(index(BY_NUMBER_INDEX).projection.projection_type, "KEYS_ONLY");
        assert_eq!(keys_of(BY_CATEGORY_INDEX), pair("category_key", "GSI1SK"));
        assert_eq!(keys_of(BEST_INDEX), pair("best_board", "GSI1SK"));
        let board_projection = &def.global_secondary_indexes[0].projection;
        for name in [BY_CATEGORY_INDEX, BEST_INDEX] {
            assert_eq!(&index(name).projection, board_projection, "{name}");
        }
        for needed in ["number", "category", "best_board"] {
            assert!(
                board_projection.non_key_attributes.iter().any(|a| a == needed),
                "GSI1 projects {needed}"
            );
        }
        for (name, kind) in [("number", "N"), ("category_key", "S"), ("best_board", "S")] {
            assert!(
                def.attribute_definitions
                    .iter()
                    .any(|a| a.attribute_name == name && a.attribute_type == kind),
                "{name}"
            );
        }
        assert_eq!(def.time_to_live_specification.attribute_name, "expires_at");
        assert_eq!(def.billing_mode, "PAY_PER_REQUEST");
    }
}
