//! What TOTP costs on DynamoDB, and what it leaves on the member
//! item (docs/storage.md, TOTP (DynamoDB)).

use std::sync::Arc;

use crate::dynamo::{counted_dynamo_store_on, plain_client};
use crate::{Dyn, hash, id_of, member, name_of, username};
use aws_sdk_dynamodb::types::AttributeValue;
use shared::domain::{SessionState, TotpStart, new_id};
use shared::store::dynamo::{CapacityMeter, Layout};

/// Each TOTP operation is one request (a refusal too), and a confirmation
/// or a removal reaches this process's cached session state without one.
/// Prints the table docs/storage.md shows; pins the request counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_totp_operation_is_one_dynamodb_request_and_reaches_the_cached_session_state() {
    let table = format!("test-{}", new_id().to_lowercase());
    let (dynamo, counter) = counted_dynamo_store_on(Layout::default(), &table).await;
    let meter = CapacityMeter::default();
    let store: Dyn = Arc::new(dynamo.metered(meter.clone()));
    let mut rows: Vec<(&str, u64, f64, f64)> = Vec::new();
    macro_rules! measure {
        ($what:expr, $requests:expr, $work:expr) => {{
            meter.take();
            let before = counter.count();
            let out = $work;
            let requests = counter.count() - before;
            let units = meter.take();
            rows.push(($what, requests, units.table.read, units.table.write));
            assert_eq!(requests, $requests, "{}", $what);
            out
        }};
    }
    let kim = member("measured");
    // An Argon2id hash's length (PHC string: 97 characters).
    let argon2_sized = format!("$argon2id$v=19$m=19456,t=2,p=1${}${}", "s".repeat(22), "h".repeat(43));
    store.create_member(&kim, &hash(&argon2_sized), None).await.unwrap();
    let (id, name) = (id_of(&kim), name_of(&kim));
    let codes: Vec<String> = (0..10).map(|i| format!("{i:064x}")).collect();
    // A sealed secret as the app makes them: `v1.` and 64 characters.
    let sealed = format!("v1.{}", "s".repeat(64));

    measure!("session state, uncached (GetItem, consistent, 4 attributes)", 1, {
        assert_eq!(
            store.session_state(&id, &name).await.unwrap(),
            Some(SessionState { epoch: 0, totp: false })
        )
    });
    measure!("start_totp (UpdateItem)", 1, {
        assert_eq!(store.start_totp(&id, &name, &sealed).await.unwrap(), TotpStart::Started)
    });
    measure!("confirm_totp, 10 recovery codes (UpdateItem, ALL_NEW)", 1, {
        assert!(store.confirm_totp(&id, &name, &sealed, &codes, 100).await.unwrap())
    });
    measure!("session state after the confirmation, cached", 0, {
        assert_eq!(
            store.session_state(&id, &name).await.unwrap(),
            Some(SessionState { epoch: 0, totp: true })
        )
    });
    measure!(
        "start_totp while on: AlreadyOn (UpdateItem, condition fails, ALL_OLD)",
        1,
        {
            assert_eq!(
                store.start_totp(&id, &name, "v1.x").await.unwrap(),
                TotpStart::AlreadyOn
            )
        }
    );
    measure!(
        "start_totp, no such username: NoAccount (UpdateItem, condition fails)",
        1,
        {
            assert_eq!(
                store.start_totp(&id, &username("nobody"), "v1.x").await.unwrap(),
                TotpStart::NoAccount
            )
        }
    );
    measure!("member_credentials with TOTP (GetItem, consistent)", 1, {
        assert!(store.member_credentials(&name).await.unwrap().unwrap().totp.is_some())
    });
    measure!("spend_totp_step (UpdateItem)", 1, {
        assert!(store.spend_totp_step(&name, 101).await.unwrap())
    });
    measure!("spend_totp_step, a replay (UpdateItem, condition fails)", 1, {
        assert!(!store.spend_totp_step(&name, 101).await.unwrap())
    });
    measure!("spend_recovery_code (UpdateItem: DELETE from the set)", 1, {
        assert!(store.spend_recovery_code(&name, &codes[0]).await.unwrap())
    });
    measure!("spend_recovery_code, spent (UpdateItem, condition fails)", 1, {
        assert!(!store.spend_recovery_code(&name, &codes[0]).await.unwrap())
    });
    let resealed = format!("v1.{}", "r".repeat(64));
    measure!("reseal_totp (UpdateItem)", 1, {
        assert!(store.reseal_totp(&name, &sealed, &resealed).await.unwrap())
    });
    measure!("end_totp (UpdateItem, ALL_NEW)", 1, {
        assert!(store.end_totp(&id, &name).await.unwrap())
    });
    measure!("session state after the removal, cached", 0, {
        assert_eq!(
            store.session_state(&id, &name).await.unwrap(),
            Some(SessionState { epoch: 0, totp: false })
        )
    });

    println!("| operation | requests | table RCU (Local) | table WCU (Local) |\n|---|---:|---:|---:|");
    for (what, requests, read, write) in &rows {
        println!("| {what} | {requests} | {read} | {write} |");
    }
}

/// A closed account's tombstone keeps no TOTP attribute, nor does a
/// removal leave one; a confirmation stores the recovery codes as a set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_member_item_holds_totp_as_four_attributes_and_a_tombstone_none() {
    let table = format!("test-{}", new_id().to_lowercase());
    let (dynamo, _) = counted_dynamo_store_on(Layout::default(), &table).await;
    let store: Dyn = Arc::new(dynamo);
    let client = plain_client().await;
    let member_item = |name: String| {
        let client = client.clone();
        let table = table.clone();
        async move {
            client
                .get_item()
                .table_name(table)
                .key("PK", AttributeValue::S(format!("MEMBER#{name}")))
                .key("SK", AttributeValue::S("MEMBER".into()))
                .consistent_read(true)
                .send()
                .await
                .unwrap()
                .item
                .unwrap()
        }
    };
    let totp_attributes = |item: &std::collections::HashMap<String, AttributeValue>| {
        let mut names: Vec<String> = item.keys().filter(|k| k.starts_with("totp_")).cloned().collect();
        names.sort();
        names
    };

    let (kim, lee) = (member("keeping"), member("closing"));
    let codes: Vec<String> = (0..3).map(|i| format!("{i:064x}")).collect();
    for m in [&kim, &lee] {
        let (id, name) = (id_of(m), name_of(m));
        store.create_member(m, &hash("h"), None).await.unwrap();
        assert_eq!(store.start_totp(&id, &name, "v1.s").await.unwrap(), TotpStart::Started);
        assert!(store.confirm_totp(&id, &name, "v1.s", &codes, 1).await.unwrap());
    }
    let item = member_item(kim.username.clone()).await;
    assert_eq!(
        totp_attributes(&item),
        ["totp_confirmed", "totp_last_step", "totp_recovery", "totp_secret"]
    );
    let mut stored_codes = item["totp_recovery"].as_ss().unwrap().clone();
    stored_codes.sort();
    assert_eq!(stored_codes, codes);
    assert_eq!(item["totp_confirmed"], AttributeValue::Bool(true));

    assert!(store.end_totp(&id_of(&kim), &name_of(&kim)).await.unwrap());
    assert!(totp_attributes(&member_item(kim.username.clone()).await).is_empty());

    assert!(
        store
            .close_account(&id_of(&lee), &name_of(&lee), false, &[])
            .await
            .unwrap()
    );
    let tombstone = member_item(lee.username.clone()).await;
    assert!(tombstone.contains_key("deleted_at"));
    assert!(totp_attributes(&tombstone).is_empty(), "{tombstone:?}");
}
