//! Editing a post: the edit's transaction with the revision it keeps, a
//! category change, and a post's revisions read back.

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use crate::domain::{Category, MAX_REVISIONS, PostVersion, Revision};
use crate::store::dynamo::DynamoStore;
use crate::store::dynamo::attributes::{from_item, key, n, s, to_item};
use crate::store::dynamo::items::{POST_ON_BOARD, POST_SK, PostItem, RevisionItem, category_key, post_pk, revision_sk};
use crate::store::dynamo::transact::{Race, TxFailure};
use crate::store::{Edited, PostEdit, StoreError, StoreResult};

impl DynamoStore {
    /// The update of a post's category (and its `ByCategory` key), if `condition`.
    pub(super) fn category_change(
        &self,
        board: &str,
        post_id: &str,
        category: Option<&Category>,
        condition: Option<&str>,
    ) -> StoreResult<TransactWriteItem> {
        let post = key(post_pk(post_id), POST_SK.into());
        match category {
            Some(category) => self.update(
                post,
                "SET category = :category, category_key = :category_key",
                condition,
                &[],
                &[
                    (":board", s(board)),
                    (":category", s(category.as_str())),
                    (":category_key", s(category_key(board, category.as_str()))),
                ],
            ),
            None => self.update(
                post,
                "REMOVE category, category_key",
                condition,
                &[],
                &[(":board", s(board))],
            ),
        }
    }

    /// One attempt of an edit: the read, then the transaction, if the
    /// post is there at an asked version.
    /// `oldest_kept`: whether the revision this edit pushes out (past 50
    /// edits) is taken to be there; it may have been deleted on its own, and
    /// then the transaction fails on it and the edit goes again without it
    /// (no read of it first: it almost always is there).
    pub(super) async fn edit_once(
        &self,
        board: &str,
        post_id: &str,
        edit: &PostEdit,
        oldest_kept: bool,
    ) -> StoreResult<Race<Edited, bool>> {
        let Some(item) = self.get(key(post_pk(post_id), POST_SK.into())).await? else {
            return Ok(Race::Done(Edited::NoSuchPost));
        };
        let read: PostItem = from_item(item)?;
        if read.summary.board != board {
            return Ok(Race::Done(Edited::NoSuchPost));
        }
        if let Some(versions) = &edit.if_version {
            // Of the text read: items from before v3 store no version.
            if !versions.contains(&PostVersion::of(&read.summary.title, &read.body)) {
                return Ok(Race::Done(Edited::OtherVersion));
            }
        }
        let oldest = (read.edits + 1)
            .checked_sub(u64::from(MAX_REVISIONS))
            .filter(|&e| e > 0 && oldest_kept);
        let EditItems {
            items,
            answered,
            oldest_at,
            media_at,
        } = self.edit_items(board, post_id, edit, &read, oldest)?;
        match self.transact(items).await {
            Ok(()) => Ok(Race::Done(Edited::Done)),
            // The revision it pushes out was deleted on its own: again without it.
            Err(TxFailure::Conditions(failed)) if oldest_at.is_some_and(|at| failed[at]) => Ok(Race::Again(false)),
            // Someone else has commented and the board locks: nothing changed.
            Err(TxFailure::Conditions(failed)) if failed[answered].iter().any(|f| *f) => {
                Ok(Race::Done(Edited::Answered))
            }
            // An image it adds is not attachable: nothing changed.
            Err(TxFailure::Conditions(failed)) if failed.iter().skip(media_at).any(|f| *f) => {
                Err(StoreError::MediaUnavailable)
            }
            // Edited or deleted since the read: read it again.
            Err(TxFailure::Conditions(_)) => Ok(Race::Lost(true)),
            Err(TxFailure::Store(e)) => Err(e),
        }
    }

    /// An edit's transaction: the post's update, conditioned on its `edits`
    /// being what `read` has; the version `read` holds as the revision of
    /// this edit; the revision [`MAX_REVISIONS`] edits older, if any;
    /// the images it drops released and, from the index it
    /// answers beside the items, those it adds attached.
    pub(super) fn edit_items(
        &self,
        board: &str,
        post_id: &str,
        edit: &PostEdit,
        read: &PostItem,
        oldest: Option<u64>,
    ) -> StoreResult<EditItems> {
        let (title, body) = (edit.title.as_str(), edit.body.as_str());
        let this_edit = read.edits + 1;
        let mut expression =
            "SET title = :title, body = :body, updated_at = :updated_at, #version = :version, edits = :edits, \
             revisions = :revisions"
                .to_owned();
        let kept = read.kept_revisions() + 1 - u64::from(oldest.is_some());
        let mut values = vec![
            (":board", s(board)),
            (":title", s(title)),
            (":body", s(body)),
            (":updated_at", s(edit.updated_at.as_str())),
            (":version", s(PostVersion::of(title, body).as_str())),
            (":edits", n(i64::try_from(this_edit).unwrap_or(i64::MAX))),
            (":revisions", n(i64::try_from(kept).unwrap_or(i64::MAX))),
        ];
        match &edit.category {
            None => {}
            Some(Some(category)) => {
                expression += ", category = :category, category_key = :category_key";
                values.push((":category", s(category.as_str())));
                values.push((":category_key", s(category_key(board, category.as_str()))));
            }
            Some(None) => expression += " REMOVE category, category_key",
        }
        let (mut releases, mut attaches) = (Vec::new(), Vec::new());
        if let Some(change) = &edit.media {
            let before = crate::domain::media::from_stored(read.media.as_deref()).unwrap_or_default();
            for old in before
                .iter()
                .filter(|old| !change.media.iter().any(|new| new.id == old.id))
            {
                releases.extend(self.release_items(&old.id, post_id, post_id, &edit.updated_at)?);
            }
            let added: Vec<_> = change
                .media
                .iter()
                .filter(|new| !before.iter().any(|old| old.id == new.id))
                .cloned()
                .collect();
            attaches = self.attach_items(&added, post_id, post_id, board, &change.owner, &edit.updated_at)?;
            match crate::domain::media::to_stored(&change.media) {
                Some(stored) => {
                    expression = expression.replacen("SET ", "SET media = :media, media_count = :media_count, ", 1);
                    values.push((":media", s(stored)));
                    values.push((":media_count", n(change.media.len() as i64)));
                }
                None if expression.contains(" REMOVE ") => expression += ", media, media_count",
                None => expression += " REMOVE media, media_count",
            }
        }
        let condition = format!("{POST_ON_BOARD} AND {}", as_read(read, &mut values));
        let post = key(post_pk(post_id), POST_SK.into());
        let mut items = vec![self.update(post, &expression, Some(&condition), &[("#version", "version")], &values)?];
        let revision = RevisionItem {
            pk: post_pk(post_id),
            sk: revision_sk(this_edit),
            title: read.summary.title.clone(),
            body: read.body.clone(),
            edited_at: read.updated_at.clone(),
        };
        items.push(self.overwrite(to_item(&revision)?)?);
        let oldest_at = oldest.map(|_| items.len());
        if let Some(oldest) = oldest {
            let revision = key(post_pk(post_id), revision_sk(oldest));
            items.push(self.delete(revision, Some("attribute_exists(PK)"))?);
        }
        // The edit lock's checks, then releases (their conditions fail only
        // with a racing edit, read again), then the attaches, whose failure
        // is the caller's 400.
        let answered_at = items.len();
        if edit.unless_answered {
            items.extend(self.unanswered(board, post_id)?);
        }
        let answered = answered_at..items.len();
        items.append(&mut releases);
        let media_at = items.len();
        items.append(&mut attaches);
        Ok(EditItems {
            items,
            answered,
            oldest_at,
            media_at,
        })
    }

    /// Up to `limit` revision items of a post numbered below `before`,
    /// newest first, read consistently.
    pub(super) async fn revision_items(
        &self,
        post_id: &str,
        limit: usize,
        before: Option<u64>,
    ) -> StoreResult<Vec<Revision>> {
        let high = before.map_or(u64::from(u32::MAX), |b| b.saturating_sub(1));
        let (low, high) = (revision_sk(0), revision_sk(high));
        let shape = |q: aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder| {
            q.key_condition_expression("PK = :pk AND SK BETWEEN :low AND :high")
                .expression_attribute_values(":low", s(low.clone()))
                .expression_attribute_values(":high", s(high.clone()))
                .scan_index_forward(false)
        };
        self.query_all(&post_pk(post_id), Some(limit), &shape)
            .await?
            .into_iter()
            .map(|item| Ok(from_item::<RevisionItem>(item)?.into_revision()))
            .collect()
    }
}

/// The condition that the post is as `read` left it: its edits and its
/// count of kept revisions (their values added to `values`).
pub(super) fn as_read(read: &PostItem, values: &mut Vec<(&'static str, AttributeValue)>) -> String {
    let edits = if read.edits == 0 {
        "attribute_not_exists(edits)"
    } else {
        values.push((":read_edits", n(i64::try_from(read.edits).unwrap_or(i64::MAX))));
        "edits = :read_edits"
    };
    let revisions = match read.revisions {
        None => "attribute_not_exists(revisions)",
        Some(kept) => {
            values.push((":read_revisions", n(i64::try_from(kept).unwrap_or(i64::MAX))));
            "revisions = :read_revisions"
        }
    };
    format!("{edits} AND {revisions}")
}

/// An edit's transaction items, and where in them the edit lock's checks
/// and the attaches are (their failures answer differently).
pub(super) struct EditItems {
    pub(super) items: Vec<TransactWriteItem>,
    pub(super) answered: std::ops::Range<usize>,
    /// The delete of the revision it pushes out, conditioned on its being there.
    pub(super) oldest_at: Option<usize>,
    pub(super) media_at: usize,
}
