//! `TABLE_NAME=<table> cargo run -p shared --bin backfill`: moves a v1
//! table's counts and likes to the v2 layout (docs/storage.md, "Upgrading
//! a v1 table") and gives a v2 table's member posts, comments and
//! likes their `ByOwner` keys ("Upgrading a v2 table"), and numbers
//! and counts posts from before v4 ("Upgrading a v3 table"). `DYNAMODB_ENDPOINT`
//! points it at DynamoDB Local. Idempotent.

use std::process::ExitCode;

use shared::runtime::Env;
use shared::store::dynamo::{DynamoStore, SdkTuning};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let env = Env::process();
    let Some(table) = env.get("TABLE_NAME") else {
        eprintln!("TABLE_NAME is required: the table to upgrade");
        return ExitCode::FAILURE;
    };
    let endpoint = env.get("DYNAMODB_ENDPOINT");
    let tuning = SdkTuning::defaults(endpoint.is_some());
    let result = async {
        let extra_roots =
            shared::runtime::ca_bundle(&env).map_err(|e| shared::store::StoreError::Internal(e.to_string()))?;
        let store = DynamoStore::connect(&table, endpoint.as_deref(), extra_roots.as_deref(), &tuning).await?;
        store.backfill().await
    }
    .await;
    match result {
        Ok(done) => {
            println!(
                "{table}: {} likes moved, {} duplicate likes removed, {} posts' counts moved to their shards; \
                 indexed by member: {} posts, {} comments, {} likes; {} posts numbered",
                done.likes_moved,
                done.duplicate_likes,
                done.posts_folded,
                done.posts_owned,
                done.comments_owned,
                done.likes_owned,
                done.posts_numbered
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("backfill of {table} stopped (run it again to go on): {e}");
            ExitCode::FAILURE
        }
    }
}
