//! A member's TOTP (docs/API.md, Passwords and staff sign-in): an
//! enrollment waits for its first code, each time step and each recovery
//! code is accepted once, and the session check sees it on.

use futures::future::join_all;
use shared::domain::{Member, MemberId, SessionState, StoredTotp, TotpStart, Username};

use crate::{Dyn, hash, id_of, member, member_id, name_of, username};

conformance!(
    an_enrollment_waits_for_its_first_code_and_a_new_one_replaces_it,
    only_the_live_account_named_by_id_and_username_enrolls,
    a_time_step_is_accepted_once_and_only_after_the_last_one,
    each_recovery_code_is_spent_once_even_by_racing_spends,
    a_secret_is_resealed_only_from_the_value_stored,
    ending_totp_removes_it_whether_on_or_waiting,
    the_session_state_shows_totp_from_its_confirmation_to_its_end,
    a_closed_account_loses_its_totp,
);

/// Recovery-code hashes as the app makes them (hex of an HMAC).
fn hashes(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{i:064x}")).collect()
}

async fn signed_up(store: &Dyn, name: &str) -> (Member, MemberId, Username) {
    let m = member(name);
    store.create_member(&m, &hash("h"), None).await.unwrap();
    let (id, name) = (id_of(&m), name_of(&m));
    (m, id, name)
}

/// The member's TOTP as `member_credentials` reads it, recovery codes sorted.
async fn totp_of(store: &Dyn, name: &Username) -> Option<StoredTotp> {
    let mut totp = store.member_credentials(name).await.unwrap().unwrap().totp?;
    totp.recovery_codes.sort();
    Some(totp)
}

fn stored(sealed: &str, confirmed: bool, last_step: u64, recovery_codes: &[String]) -> Option<StoredTotp> {
    let mut recovery_codes = recovery_codes.to_vec();
    recovery_codes.sort();
    Some(StoredTotp {
        sealed_secret: sealed.into(),
        confirmed,
        last_step,
        recovery_codes,
    })
}

/// A member with TOTP on: secret `sealed`, `codes`, first code at `step`.
async fn enrolled(store: &Dyn, name: &str, sealed: &str, codes: &[String], step: u64) -> (Member, MemberId, Username) {
    let (m, id, name) = signed_up(store, name).await;
    assert_eq!(store.start_totp(&id, &name, sealed).await.unwrap(), TotpStart::Started);
    assert!(store.confirm_totp(&id, &name, sealed, codes, step).await.unwrap());
    (m, id, name)
}

async fn an_enrollment_waits_for_its_first_code_and_a_new_one_replaces_it(store: Dyn) {
    let (_, id, name) = signed_up(&store, "enrolling").await;
    assert_eq!(totp_of(&store, &name).await, None, "off after signup");
    assert_eq!(
        store.start_totp(&id, &name, "v1.first").await.unwrap(),
        TotpStart::Started
    );
    assert_eq!(totp_of(&store, &name).await, stored("v1.first", false, 0, &[]));

    assert_eq!(
        store.start_totp(&id, &name, "v1.second").await.unwrap(),
        TotpStart::Started,
        "a waiting enrollment is replaced"
    );
    assert_eq!(totp_of(&store, &name).await, stored("v1.second", false, 0, &[]));
    let codes = hashes(10);
    assert!(
        !store.confirm_totp(&id, &name, "v1.first", &codes, 100).await.unwrap(),
        "the replaced one confirms nothing"
    );
    assert_eq!(totp_of(&store, &name).await, stored("v1.second", false, 0, &[]));

    assert!(store.confirm_totp(&id, &name, "v1.second", &codes, 100).await.unwrap());
    assert_eq!(totp_of(&store, &name).await, stored("v1.second", true, 100, &codes));
    assert!(
        !store
            .confirm_totp(&id, &name, "v1.second", &hashes(2), 200)
            .await
            .unwrap(),
        "confirmed once"
    );
    assert_eq!(
        store.start_totp(&id, &name, "v1.third").await.unwrap(),
        TotpStart::AlreadyOn
    );
    assert_eq!(
        totp_of(&store, &name).await,
        stored("v1.second", true, 100, &codes),
        "nothing changed by the refused writes"
    );
}

async fn only_the_live_account_named_by_id_and_username_enrolls(store: Dyn) {
    let (_, id, name) = signed_up(&store, "owner").await;
    let stranger = member_id();
    assert_eq!(
        store.start_totp(&stranger, &name, "v1.x").await.unwrap(),
        TotpStart::NoAccount,
        "another id under the username"
    );
    let nobody = username("nobody");
    assert_eq!(
        store.start_totp(&id, &nobody, "v1.x").await.unwrap(),
        TotpStart::NoAccount
    );
    assert_eq!(totp_of(&store, &name).await, None, "nothing written");

    assert_eq!(
        store.start_totp(&id, &name, "v1.mine").await.unwrap(),
        TotpStart::Started
    );
    assert!(
        !store
            .confirm_totp(&stranger, &name, "v1.mine", &hashes(1), 5)
            .await
            .unwrap(),
        "confirmed only by its member"
    );
    assert!(store.confirm_totp(&id, &name, "v1.mine", &hashes(1), 5).await.unwrap());
    assert_eq!(
        store.start_totp(&stranger, &name, "v1.x").await.unwrap(),
        TotpStart::NoAccount,
        "not AlreadyOn: the account is not theirs"
    );
}

async fn a_time_step_is_accepted_once_and_only_after_the_last_one(store: Dyn) {
    let (_, id, name) = signed_up(&store, "stepping").await;
    assert!(!store.spend_totp_step(&name, 50).await.unwrap(), "no TOTP");
    assert_eq!(store.start_totp(&id, &name, "v1.s").await.unwrap(), TotpStart::Started);
    assert!(
        !store.spend_totp_step(&name, 50).await.unwrap(),
        "an enrollment waiting accepts no login code"
    );
    assert!(store.confirm_totp(&id, &name, "v1.s", &hashes(3), 100).await.unwrap());

    assert!(
        !store.spend_totp_step(&name, 100).await.unwrap(),
        "the confirming code's step"
    );
    assert!(!store.spend_totp_step(&name, 99).await.unwrap(), "an earlier step");
    assert!(store.spend_totp_step(&name, 101).await.unwrap());
    assert!(!store.spend_totp_step(&name, 101).await.unwrap(), "a replay");
    assert!(
        store.spend_totp_step(&name, 103).await.unwrap(),
        "a later step, skipping one"
    );
    assert!(
        !store.spend_totp_step(&name, 102).await.unwrap(),
        "a skipped step is past"
    );
    assert_eq!(totp_of(&store, &name).await, stored("v1.s", true, 103, &hashes(3)));
    assert!(!store.spend_totp_step(&username("nobody"), 200).await.unwrap());

    let racing = (0..5).map(|_| {
        let (store, name) = (store.clone(), name.clone());
        tokio::spawn(async move { store.spend_totp_step(&name, 104).await.unwrap() })
    });
    let won: Vec<bool> = join_all(racing).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(won.iter().filter(|w| **w).count(), 1, "{won:?}");
}

async fn each_recovery_code_is_spent_once_even_by_racing_spends(store: Dyn) {
    let codes = hashes(3);
    let (_, id, name) = signed_up(&store, "recovering").await;
    assert_eq!(store.start_totp(&id, &name, "v1.r").await.unwrap(), TotpStart::Started);
    assert!(
        !store.spend_recovery_code(&name, &codes[0]).await.unwrap(),
        "none before the confirmation"
    );
    assert!(store.confirm_totp(&id, &name, "v1.r", &codes, 10).await.unwrap());

    assert!(store.spend_recovery_code(&name, &codes[0]).await.unwrap());
    assert!(!store.spend_recovery_code(&name, &codes[0]).await.unwrap(), "spent");
    assert!(
        !store.spend_recovery_code(&name, &hashes(4)[3]).await.unwrap(),
        "not one of them"
    );
    assert!(!store.spend_recovery_code(&username("nobody"), &codes[1]).await.unwrap());

    let racing = (0..5).map(|_| {
        let (store, name, code) = (store.clone(), name.clone(), codes[1].clone());
        tokio::spawn(async move { store.spend_recovery_code(&name, &code).await.unwrap() })
    });
    let won: Vec<bool> = join_all(racing).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(won.iter().filter(|w| **w).count(), 1, "{won:?}");
    assert_eq!(totp_of(&store, &name).await, stored("v1.r", true, 10, &codes[2..]));

    assert!(
        store.spend_recovery_code(&name, &codes[2]).await.unwrap(),
        "the last one"
    );
    assert_eq!(
        totp_of(&store, &name).await,
        stored("v1.r", true, 10, &[]),
        "TOTP stays on without recovery codes"
    );
    assert!(!store.spend_recovery_code(&name, &codes[2]).await.unwrap());
    assert!(store.spend_totp_step(&name, 11).await.unwrap(), "codes still work");
}

async fn a_secret_is_resealed_only_from_the_value_stored(store: Dyn) {
    let codes = hashes(2);
    let (_, _, name) = enrolled(&store, "resealing", "v1.old", &codes, 7).await;
    assert!(!store.reseal_totp(&name, "v1.other", "v1.new").await.unwrap());
    assert_eq!(totp_of(&store, &name).await, stored("v1.old", true, 7, &codes));
    assert!(store.reseal_totp(&name, "v1.old", "v1.new").await.unwrap());
    assert_eq!(
        totp_of(&store, &name).await,
        stored("v1.new", true, 7, &codes),
        "only the secret changes"
    );
    assert!(
        !store.reseal_totp(&name, "v1.old", "v1.newer").await.unwrap(),
        "resealed once"
    );
    assert!(!store.reseal_totp(&username("nobody"), "v1.new", "v1.x").await.unwrap());
    assert_eq!(totp_of(&store, &name).await, stored("v1.new", true, 7, &codes));
}

async fn ending_totp_removes_it_whether_on_or_waiting(store: Dyn) {
    let (_, id, name) = signed_up(&store, "ending").await;
    assert_eq!(
        store.start_totp(&id, &name, "v1.waiting").await.unwrap(),
        TotpStart::Started
    );
    assert!(store.end_totp(&id, &name).await.unwrap());
    assert_eq!(totp_of(&store, &name).await, None);
    assert!(
        !store
            .confirm_totp(&id, &name, "v1.waiting", &hashes(1), 3)
            .await
            .unwrap(),
        "the removed enrollment confirms nothing"
    );

    let codes = hashes(2);
    assert_eq!(store.start_totp(&id, &name, "v1.on").await.unwrap(), TotpStart::Started);
    assert!(store.confirm_totp(&id, &name, "v1.on", &codes, 3).await.unwrap());
    assert!(!store.end_totp(&member_id(), &name).await.unwrap(), "another id");
    assert!(!store.end_totp(&id, &username("nobody")).await.unwrap());
    assert_eq!(totp_of(&store, &name).await, stored("v1.on", true, 3, &codes));

    assert!(store.end_totp(&id, &name).await.unwrap());
    assert_eq!(totp_of(&store, &name).await, None);
    assert_eq!(
        store.session_state(&id, &name).await.unwrap(),
        Some(SessionState { epoch: 0, totp: false })
    );
    assert!(!store.spend_totp_step(&name, 4).await.unwrap());
    assert!(!store.spend_recovery_code(&name, &codes[0]).await.unwrap());
    assert!(!store.reseal_totp(&name, "v1.on", "v1.x").await.unwrap());
    assert!(store.end_totp(&id, &name).await.unwrap(), "ending none is no error");
    assert_eq!(
        store.start_totp(&id, &name, "v1.again").await.unwrap(),
        TotpStart::Started,
        "and enrolling again starts afresh"
    );
    assert_eq!(totp_of(&store, &name).await, stored("v1.again", false, 0, &[]));
}

/// DynamoDB keeps the state in the process for 10 s: read before each
/// change, it must show the change at once all the same.
async fn the_session_state_shows_totp_from_its_confirmation_to_its_end(store: Dyn) {
    let (_, id, name) = signed_up(&store, "staff").await;
    let state = |epoch, totp| Some(SessionState { epoch, totp });
    assert_eq!(store.session_state(&id, &name).await.unwrap(), state(0, false));
    assert_eq!(store.start_totp(&id, &name, "v1.t").await.unwrap(), TotpStart::Started);
    assert_eq!(
        store.session_state(&id, &name).await.unwrap(),
        state(0, false),
        "not while it waits"
    );
    assert!(store.confirm_totp(&id, &name, "v1.t", &hashes(1), 9).await.unwrap());
    assert_eq!(
        store.session_state(&id, &name).await.unwrap(),
        state(0, true),
        "at once"
    );

    assert!(store.end_sessions(&id, &name).await.unwrap());
    assert_eq!(store.session_state(&id, &name).await.unwrap(), state(1, true));
    assert!(store.change_password(&id, &name, &hash("new")).await.unwrap());
    assert_eq!(store.session_state(&id, &name).await.unwrap(), state(2, true));
    assert_eq!(
        store.session_state(&member_id(), &name).await.unwrap(),
        None,
        "another id under the username"
    );

    assert!(store.end_totp(&id, &name).await.unwrap());
    assert_eq!(
        store.session_state(&id, &name).await.unwrap(),
        state(2, false),
        "at once"
    );
    let credentials = store.member_credentials(&name).await.unwrap().unwrap();
    assert_eq!((credentials.session_epoch, credentials.totp), (2, None));
}

async fn a_closed_account_loses_its_totp(store: Dyn) {
    let codes = hashes(2);
    let (_, id, name) = enrolled(&store, "leaving", "v1.l", &codes, 5).await;
    assert!(store.close_account(&id, &name, false, &[]).await.unwrap());
    assert!(store.member_credentials(&name).await.unwrap().is_none());
    assert_eq!(store.session_state(&id, &name).await.unwrap(), None);
    assert_eq!(
        store.start_totp(&id, &name, "v1.x").await.unwrap(),
        TotpStart::NoAccount
    );
    assert!(!store.confirm_totp(&id, &name, "v1.l", &codes, 6).await.unwrap());
    assert!(!store.spend_totp_step(&name, 6).await.unwrap());
    assert!(!store.spend_recovery_code(&name, &codes[0]).await.unwrap());
    assert!(!store.reseal_totp(&name, "v1.l", "v1.x").await.unwrap());
    assert!(!store.end_totp(&id, &name).await.unwrap());
}
