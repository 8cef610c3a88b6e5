//! Edit locks (docs/API.md, Edit history and edit locks): whether a post
//! has a standing comment by anyone other than its author, for each kind of
//! author, and the lock decided inside the author's own edit or delete.

use shared::domain::{Comment, Guard, Writer, WriterKey, now};
use shared::store::{Edited, PostEdit, StoreError};

use crate::{
    Dyn, authored_by, board, comment, comment_by, comment_key, edit, guest_post, member, post_by, post_key, writer,
};

conformance!(
    a_members_post_is_answered_by_another_member_or_a_guest_not_by_its_author,
    a_guests_post_is_answered_by_another_address_or_a_member_not_by_its_author,
    a_post_whose_author_has_no_address_key_is_answered_by_any_comment,
    a_deleted_comment_of_another_unlocks_the_post,
    an_edit_or_delete_unless_answered_is_refused_in_its_own_write_while_an_answer_stands,
    an_answer_racing_its_posts_delete_is_either_refused_or_keeps_the_post,
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
        .create_comment(&board(board_slug), &c, from, None, false, None)
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

/// `lee`'s comment on `post_id`, counted as an answer as the app counts it
/// on a board that locks.
async fn answer(store: &Dyn, post_id: &str) -> Result<Comment, StoreError> {
    let c = Comment {
        author: authored_by(&member("lee")),
        ..comment(post_id, None, "the answer")
    };
    store
        .create_comment(&board("free"), &c, &other_writer(), None, true, None)
        .await
        .map(|()| c)
}

fn locked_edit(title: &str) -> PostEdit {
    PostEdit {
        unless_answered: true,
        ..edit(title, "b", &now())
    }
}

/// No early read here: the store's own write must see the answer.
async fn an_edit_or_delete_unless_answered_is_refused_in_its_own_write_while_an_answer_stands(store: Dyn) {
    let kim = member("kim");
    let id = post_by(&store, "free", &kim).await.summary.id;
    let key = post_key("free", &id);
    comment_by(&store, "free", &id, &kim).await;
    assert_eq!(
        store.update_post(&key, &locked_edit("own comment only")).await.unwrap(),
        Edited::Done
    );

    let answered = answer(&store, &id).await.unwrap();
    assert_eq!(
        store.update_post(&key, &locked_edit("no")).await.unwrap(),
        Edited::Answered
    );
    assert_eq!(store.delete_post(&key, true).await, Err(StoreError::Answered));
    let detail = store.post_detail(&key).await.unwrap().expect("still there");
    assert_eq!(detail.post.summary.title, "own comment only", "nothing changed");
    assert_eq!(
        store
            .update_post(&key, &edit("without the lock", "b", &now()))
            .await
            .unwrap(),
        Edited::Done
    );

    assert!(
        store
            .delete_comment(&comment_key("free", &id, &answered.id))
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .update_post(&key, &locked_edit("its author's again"))
            .await
            .unwrap(),
        Edited::Done
    );
    assert!(store.delete_post(&key, true).await.unwrap());
}

/// The audit's race: an answer acknowledged while its post's author
/// deletes it must keep the post; on every round one of them loses.
async fn an_answer_racing_its_posts_delete_is_either_refused_or_keeps_the_post(store: Dyn) {
    let kim = member("kim");
    let (mut kept, mut deleted) = (0, 0);
    for _ in 0..10 {
        let id = post_by(&store, "free", &kim).await.summary.id;
        let key = post_key("free", &id);
        let (answered, delete) = tokio::join!(answer(&store, &id), store.delete_post(&key, true));
        match (answered, delete) {
            (Ok(_), Err(StoreError::Answered)) => {
                assert!(
                    store.post_detail(&key).await.unwrap().is_some(),
                    "the answered post stays"
                );
                kept += 1;
            }
            (Err(StoreError::NotFound), Ok(true)) => deleted += 1,
            other => panic!("both or neither went through: {other:?}"),
        }
    }
    assert_eq!(kept + deleted, 10);
}
