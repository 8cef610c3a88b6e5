//! What one change on the table's stream means to the notifier
//! (the `notify` function: `crate::stream::notify`). The stream's view is
//! `NEW_IMAGE` (infra/table.json): an insert or a modify carries the whole
//! item as written, a remove only its keys.
//!
//! - the insert of a post or a comment item: [`TextEvent::Written`];
//! - the insert of a purge marker (a post's delete or removal, whose step 1
//!   deletes the post item and writes the marker with the board:
//!   [`super::purge`]): [`TextEvent::Gone`] of the post;
//! - the remove of a comment item (its delete, its removal, an account
//!   deletion with content, a purge): [`TextEvent::Gone`] of the comment;
//! - a modify whose post or comment item now names `deleted_member` as its
//!   author (an account deletion that keeps the content:
//!   [`super::accounts`], `disown`): [`TextEvent::Disowned`].
//!
//! Anything else is `None`. The remove of a post item is not read: it comes
//! with its marker's insert, which also names the board.

use serde_dynamo::{AttributeValue, Item};

use super::items::{COMMENT_SK_PREFIX, CommentItem, DELETED_MEMBER_KIND, POST_PK_PREFIX, POST_SK, PostItem};
use super::purges::PURGE_PK;
use crate::domain::{BoardSlug, PostId, PostKey, TextEvent, TextRef, WrittenText};

/// The text event of one stream record (`eventName`, `dynamodb.Keys`,
/// `dynamodb.NewImage`), if it is one.
pub fn text_event_of(event_name: &str, keys: &Item, new_image: &Item) -> Option<TextEvent> {
    let (pk, sk) = (text(keys, "PK")?, text(keys, "SK")?);
    if pk == PURGE_PK {
        if event_name != "INSERT" {
            return None;
        }
        return Some(TextEvent::Gone(TextRef {
            post: post_key(text(new_image, "board")?, sk),
            comment: None,
        }));
    }
    let post_id = pk.strip_prefix(POST_PK_PREFIX)?;
    let comment_id = sk.strip_prefix(COMMENT_SK_PREFIX);
    if comment_id.is_none() && sk != POST_SK {
        return None;
    }
    match event_name {
        "INSERT" => written(comment_id.is_some(), new_image).map(TextEvent::Written),
        // A remove carries keys only: no board. Notifications are withdrawn
        // by the text's id (TextRef::id), never by its board.
        "REMOVE" => comment_id.map(|comment| {
            TextEvent::Gone(TextRef {
                post: post_key("", post_id),
                comment: Some(comment.to_owned()),
            })
        }),
        "MODIFY" if text(new_image, "author_kind") == Some(DELETED_MEMBER_KIND) => Some(TextEvent::Disowned(TextRef {
            post: post_key(text(new_image, "board")?, post_id),
            comment: comment_id.map(str::to_owned),
        })),
        _ => None,
    }
}

/// A post or comment item's new image as the notifier reads it.
fn written(is_comment: bool, new_image: &Item) -> Option<WrittenText> {
    let decoded = if is_comment {
        serde_dynamo::from_item::<_, CommentItem>(new_image.clone()).map(|c| WrittenText {
            text: TextRef {
                post: post_key(&c.board, &c.post_id),
                comment: Some(c.id),
            },
            parent: c.parent_id,
            author: c.author.into(),
            title: None,
            body: c.body,
        })
    } else {
        serde_dynamo::from_item::<_, PostItem>(new_image.clone()).map(|p| WrittenText {
            text: TextRef {
                post: post_key(&p.summary.board, &p.summary.id),
                comment: None,
            },
            parent: None,
            author: p.summary.author.into(),
            title: Some(p.summary.title),
            body: p.body,
        })
    };
    decoded
        .inspect_err(|e| tracing::warn!(error = %e, "a post or comment insert that does not decode as one"))
        .ok()
}

fn post_key(board: &str, post_id: &str) -> PostKey {
    PostKey {
        board: BoardSlug::from_stored(board.to_owned()),
        post: PostId::from_stored(post_id.to_owned()),
    }
}

fn text<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    match item.get(name) {
        Some(AttributeValue::S(s)) => Some(s.as_str()),
        _ => None,
    }
}
