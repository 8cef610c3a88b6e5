//! Members: unique usernames and the password hash swap.

use crate::{Dyn, hash, member, username};
use shared::store::StoreError;

conformance!(
    members_are_unique_by_username,
    a_password_hash_is_replaced_only_while_unchanged,
);

async fn members_are_unique_by_username(store: Dyn) {
    let kim = member("kim");
    store.create_member(&kim, &hash("hash-1"), None).await.unwrap();
    assert_eq!(
        store.create_member(&member("kim"), &hash("hash-2"), None).await,
        Err(StoreError::UsernameTaken)
    );
    let found = store.member_credentials(&username("kim")).await.unwrap().unwrap();
    assert_eq!(found.member, kim);
    assert_eq!(found.password_hash.as_str(), "hash-1");
    assert_eq!(store.member_credentials(&username("nobody")).await.unwrap(), None);
}

async fn a_password_hash_is_replaced_only_while_unchanged(store: Dyn) {
    let lee = username("lee");
    store.create_member(&member("lee"), &hash("old"), None).await.unwrap();
    assert!(
        !store
            .replace_password_hash(&lee, &hash("not-the-stored-one"), &hash("new"))
            .await
            .unwrap()
    );
    assert!(
        store
            .replace_password_hash(&lee, &hash("old"), &hash("new"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .replace_password_hash(&lee, &hash("old"), &hash("newer"))
            .await
            .unwrap(),
        "a second upgrade lost the race"
    );
    assert_eq!(
        store
            .member_credentials(&lee)
            .await
            .unwrap()
            .unwrap()
            .password_hash
            .as_str(),
        "new"
    );
    assert!(
        !store
            .replace_password_hash(&username("ghost"), &hash("old"), &hash("new"))
            .await
            .unwrap()
    );
}
