//! The single-table layout: every item type with its keys. See README.md,
//! "Single-table design", for the access pattern each one serves.
//!
//! | item    | PK                  | SK                  | GSI1PK         | GSI1SK    |
//! |---------|---------------------|---------------------|----------------|-----------|
//! | member  | `MEMBER#<username>` | `MEMBER`            |                |           |
//! | post    | `POST#<post id>`    | `POST`              | `BOARD#<slug>` | `<post id>` |
//! | comment | `POST#<post id>`    | `COMMENT#<id>`      |                |           |
//! | like    | `LIKES#<post id>`   | `MEMBER#<member id>`|                |           |
//! | attempt | `ATTEMPT#<key>`     | `WINDOW#<start>`    |                |           |

use serde::{Deserialize, Serialize};

use crate::domain::{Author, Comment, Post, PostSummary};

pub const BOARD_INDEX: &str = "GSI1";
pub const POST_SK: &str = "POST";
pub const MEMBER_SK: &str = "MEMBER";
/// Every comment's SK starts with it, and sorts before [`POST_SK`]: a Query
/// `begins_with(SK, COMMENT_SK_PREFIX)` reads a post's comments oldest first
/// (ids are ULIDs), never the post item.
pub const COMMENT_SK_PREFIX: &str = "COMMENT#";

pub fn member_pk(username: &str) -> String {
    format!("MEMBER#{username}")
}

pub fn post_pk(post_id: &str) -> String {
    format!("POST#{post_id}")
}

pub fn comment_sk(comment_id: &str) -> String {
    format!("{COMMENT_SK_PREFIX}{comment_id}")
}

pub fn board_pk(board: &str) -> String {
    format!("BOARD#{board}")
}

pub fn likes_pk(post_id: &str) -> String {
    format!("LIKES#{post_id}")
}

pub fn like_sk(member_id: &str) -> String {
    format!("MEMBER#{member_id}")
}

pub fn attempt_pk(key: &str) -> String {
    format!("ATTEMPT#{key}")
}

pub fn window_sk(start: i64) -> String {
    format!("WINDOW#{start}")
}

#[derive(Debug, Serialize, Deserialize)]
pub struct MemberItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub id: String,
    pub username: String,
    pub nickname: String,
    pub password_hash: String,
    pub created_at: String,
}

/// Author fields as stored on posts and comments.
#[derive(Debug, Serialize, Deserialize)]
pub struct AuthorFields {
    pub author_kind: String,
    pub author_nickname: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_member_id: Option<String>,
}

impl From<&Author> for AuthorFields {
    fn from(author: &Author) -> Self {
        match author {
            Author::Member { member_id, nickname } => AuthorFields {
                author_kind: "member".into(),
                author_nickname: nickname.clone(),
                author_member_id: Some(member_id.clone()),
            },
            Author::Guest { nickname } => AuthorFields {
                author_kind: "guest".into(),
                author_nickname: nickname.clone(),
                author_member_id: None,
            },
        }
    }
}

impl From<AuthorFields> for Author {
    fn from(f: AuthorFields) -> Self {
        match (f.author_kind.as_str(), f.author_member_id) {
            ("member", Some(member_id)) => Author::Member {
                member_id,
                nickname: f.author_nickname,
            },
            _ => Author::Guest {
                nickname: f.author_nickname,
            },
        }
    }
}

/// What the board index projects: a post summary.
#[derive(Debug, Serialize, Deserialize)]
pub struct SummaryFields {
    pub id: String,
    pub board: String,
    pub title: String,
    #[serde(flatten)]
    pub author: AuthorFields,
    pub created_at: String,
    pub view_count: u64,
    pub like_count: u64,
    pub comment_count: u64,
}

impl From<SummaryFields> for PostSummary {
    fn from(s: SummaryFields) -> Self {
        PostSummary {
            id: s.id,
            board: s.board,
            title: s.title,
            author: s.author.into(),
            created_at: s.created_at,
            view_count: s.view_count,
            like_count: s.like_count,
            comment_count: s.comment_count,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct PostItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    #[serde(rename = "GSI1PK")]
    pub gsi1pk: String,
    #[serde(rename = "GSI1SK")]
    pub gsi1sk: String,
    #[serde(flatten)]
    pub summary: SummaryFields,
    pub body: String,
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_password_hash: Option<String>,
}

impl PostItem {
    pub fn new(post: &Post, guest_password_hash: Option<&str>) -> Self {
        let s = &post.summary;
        PostItem {
            pk: post_pk(&s.id),
            sk: POST_SK.into(),
            gsi1pk: board_pk(&s.board),
            gsi1sk: s.id.clone(),
            summary: SummaryFields {
                id: s.id.clone(),
                board: s.board.clone(),
                title: s.title.clone(),
                author: (&s.author).into(),
                created_at: s.created_at.clone(),
                view_count: s.view_count,
                like_count: s.like_count,
                comment_count: s.comment_count,
            },
            body: post.body.clone(),
            updated_at: post.updated_at.clone(),
            guest_password_hash: guest_password_hash.map(str::to_owned),
        }
    }

    pub fn into_post(self) -> Post {
        Post {
            summary: self.summary.into(),
            body: self.body,
            updated_at: self.updated_at,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct CommentItem {
    #[serde(rename = "PK")]
    pub pk: String,
    #[serde(rename = "SK")]
    pub sk: String,
    pub id: String,
    pub post_id: String,
    /// Kept so guarded writes can check the board in their condition.
    pub board: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub body: String,
    #[serde(flatten)]
    pub author: AuthorFields,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_password_hash: Option<String>,
}

impl CommentItem {
    pub fn new(board: &str, c: &Comment, guest_password_hash: Option<&str>) -> Self {
        CommentItem {
            pk: post_pk(&c.post_id),
            sk: comment_sk(&c.id),
            id: c.id.clone(),
            post_id: c.post_id.clone(),
            board: board.to_owned(),
            parent_id: c.parent_id.clone(),
            body: c.body.clone(),
            author: (&c.author).into(),
            created_at: c.created_at.clone(),
            guest_password_hash: guest_password_hash.map(str::to_owned),
        }
    }

    pub fn into_comment(self) -> Comment {
        Comment {
            id: self.id,
            post_id: self.post_id,
            parent_id: self.parent_id,
            body: self.body,
            author: self.author.into(),
            created_at: self.created_at,
        }
    }
}
