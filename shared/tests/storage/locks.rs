//! **(v4)** Edit locks (docs/API.md, Edit history and edit locks): whether a
//! post has a standing comment by anyone other than its author, for each
//! kind of author.

use crate::{Dyn, board, comment, comment_by, comment_key, guest_post, member, post_by, post_key, writer};
use shared::domain::{Guard, Writer, WriterKey};

conformance!(
    a_members_post_is_answered_by_another_member_or_a_guest_not_by_its_author,
    a_guests_post_is_answered_by_another_address_or_a_member_not_by_its_author,
    a_post_whose_author_has_no_address_key_is_answered_by_any_comment,
    a_deleted_comment_of_another_unlocks_the_post,
);

/// Another address than [`writer`]'s.
fn other_writer() -> Writer {
    Writer {
        key: WriterKey::new("otherwriterkeyabcdefghijklmnopqrstuvwxyz234567abcdef".into()),
        range: WriterKey::new("otherrangekeyabcdefghijklmnopqrstuvwxyz234567abcdefg".into()),
    }
}

async fn guard_of(store: &Dyn, board: &str, post_id: &str) -> Guard {
    store.post_guard(&post_key(board, post_id)).await.unwrap().unwrap()
}

async fn answered(store: &Dyn, board: &str, post_id: &str) -> bool {
    let guard = guard_of(store, board, post_id).await;
    store
        .answered_by_others(&post_key(board, post_id), &guard)
        .await
        .unwrap()
}

/// A guest's comment on the post, written from `from`.
async fn guest_comment(store: &Dyn, board_slug: &str, post_id: &str, from: &Writer) -> String {
    let c = comment(post_id, None, "a guest's comment");
    store
        .create_comment(&board(board_slug), &c, from, None, None)
        .await
        .unwrap();
    c.id
}

async fn a_members_post_is_answered_by_another_member_or_a_guest_not_by_its_author(store: Dyn) {
    let (kim, lee) = (member("kim"), member("lee"));
    let own = post_by(&store, "free", &kim).await.summary.id;
    assert!(!answered(&store, "free", &own).await, "no comment yet");
    // More than one page of the DynamoDB adapter's first Query.
    for _ in 0..12 {
        comment_by(&store, "free", &own, &kim).await;
    }
    assert!(!answered(&store, "free", &own).await, "only the author's own");
    comment_by(&store, "free", &own, &lee).await;
    assert!(
        answered(&store, "free", &own).await,
        "another member's, after 12 of the author's"
    );

    let by_guest = post_by(&store, "free", &kim).await.summary.id;
    comment_by(&store, "free", &by_guest, &kim).await;
    // From the author's own address, yet a guest's: not the member's.
    guest_comment(&store, "free", &by_guest, &writer()).await;
    assert!(answered(&store, "free", &by_guest).await);
}

async fn a_guests_post_is_answered_by_another_address_or_a_member_not_by_its_author(store: Dyn) {
    let own = guest_post(&store, "free").await.summary.id;
    assert!(!answered(&store, "free", &own).await, "no comment yet");
    guest_comment(&store, "free", &own, &writer()).await;
    guest_comment(&store, "free", &own, &writer()).await;
    assert!(
        !answered(&store, "free", &own).await,
        "the same address key: the author's own"
    );

    let other_address = guest_post(&store, "free").await.summary.id;
    guest_comment(&store, "free", &other_address, &writer()).await;
    guest_comment(&store, "free", &other_address, &other_writer()).await;
    assert!(answered(&store, "free", &other_address).await);

    let by_member = guest_post(&store, "free").await.summary.id;
    // A member writing from the guest's own address is still another author.
    comment_by(&store, "free", &by_member, &member("lee")).await;
    assert!(answered(&store, "free", &by_member).await);
}

/// A guest's post from before v3 (no address key), or a deleted member's:
/// nothing tells its author's comments apart.
async fn a_post_whose_author_has_no_address_key_is_answered_by_any_comment(store: Dyn) {
    let id = guest_post(&store, "free").await.summary.id;
    let key = post_key("free", &id);
    let keyless = Guard {
        writer: None,
        writer_range: None,
        ..guard_of(&store, "free", &id).await
    };
    assert!(!store.answered_by_others(&key, &keyless).await.unwrap());
    guest_comment(&store, "free", &id, &writer()).await;
    assert!(store.answered_by_others(&key, &keyless).await.unwrap());
}

async fn a_deleted_comment_of_another_unlocks_the_post(store: Dyn) {
    let (kim, lee) = (member("kim"), member("lee"));
    let id = post_by(&store, "free", &kim).await.summary.id;
    comment_by(&store, "free", &id, &kim).await;
    let other = comment_by(&store, "free", &id, &lee).await;
    let guest = guest_comment(&store, "free", &id, &other_writer()).await;
    assert!(answered(&store, "free", &id).await);
    assert!(
        store
            .delete_comment(&comment_key("free", &id, &other.id))
            .await
            .unwrap()
    );
    assert!(answered(&store, "free", &id).await, "the guest's still stands");
    assert!(store.delete_comment(&comment_key("free", &id, &guest)).await.unwrap());
    assert!(!answered(&store, "free", &id).await, "only the author's own is left");
}
