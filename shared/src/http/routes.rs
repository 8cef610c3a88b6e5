//! The route table of docs/API.md (Routes): which function serves which method and path.
//! The server mounts all of it; each Lambda function mounts its own rows.

use std::collections::BTreeMap;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{MethodFilter, MethodRouter, on};
use http::{Method, Request};
use tower_http::limit::RequestBodyLimitLayer;

use super::AppState;
use super::handlers as h;
use super::input::MAX_BODY_BYTES;
use crate::error::ApiError;
use crate::function::Function;

#[derive(Debug)]
pub struct Route {
    pub function: Function,
    pub method: Method,
    /// axum path syntax, which is also OpenAPI's: `/boards/{slug}/posts`.
    pub path: &'static str,
    /// What docs/openapi.json says of this operation (generated from it).
    pub doc: Doc,
    handler: MethodRouter<AppState>,
}

impl Route {
    /// Every `POST` but `/sessions` creates something and takes an
    /// `Idempotency-Key` (docs/API.md, Idempotent creates).
    pub fn takes_idempotency_key(&self) -> bool {
        self.method == Method::POST && self.path != "/sessions"
    }
}

/// An operation as docs/API.md states it: the success answer, the request
/// and response types (by schema name) and the error statuses it can give.
#[derive(Debug, Clone, Copy)]
pub struct Doc {
    pub summary: &'static str,
    pub status: u16,
    pub description: &'static str,
    pub request: Option<&'static str>,
    pub response: Option<&'static str>,
    pub errors: &'static [u16],
}

const fn doc(summary: &'static str, status: u16, description: &'static str) -> Doc {
    Doc {
        summary,
        status,
        description,
        request: None,
        response: None,
        errors: &[],
    }
}

// Some builders go unused where the routes that call them are compiled out.
#[cfg_attr(not(any(feature = "hashing", feature = "tokens")), expect(dead_code))]
impl Doc {
    const fn takes(mut self, schema: &'static str) -> Self {
        self.request = Some(schema);
        self
    }

    const fn returns(mut self, schema: &'static str) -> Self {
        self.response = Some(schema);
        self
    }

    const fn errors(mut self, statuses: &'static [u16]) -> Self {
        self.errors = statuses;
        self
    }
}

fn route(function: Function, method: Method, path: &'static str, doc: Doc, handler: MethodRouter<AppState>) -> Route {
    Route {
        function,
        method,
        path,
        doc,
        handler,
    }
}

fn filter(method: &Method) -> MethodFilter {
    MethodFilter::try_from(method.clone()).expect("route methods are standard methods")
}

macro_rules! routes_table {
    ($( $(#[$cfg:meta])* $function:ident $method:ident $path:literal => $handler:path, $doc:expr; )*) => {
        /// Every route of docs/API.md (except `GET /health`, which every
        /// function serves) that this build links: a function built without
        /// a feature has none of the routes that need it.
        #[expect(clippy::vec_init_then_push)]
        pub fn routes() -> Vec<Route> {
            // Rows are pushed one by one: each may be compiled out.
            let mut all = Vec::new();
            $( $(#[$cfg])* all.push(route(Function::$function, Method::$method, $path, $doc, on(filter(&Method::$method), $handler))); )*
            all
        }
    };
}

routes_table! {
    #[cfg(feature = "hashing")]
    Signup POST "/members" => h::accounts::signup,
        doc("Sign up", 201, "The new member").takes("SignUpRequest").returns("Member").errors(&[400, 409, 413, 429, 503]);
    #[cfg(all(feature = "hashing", feature = "tokens"))]
    Login POST "/sessions" => h::sessions::login,
        doc("Log in", 200, "A session with its bearer token").takes("LogInRequest").returns("Session").errors(&[400, 401, 413, 429, 503]);
    Read GET "/boards/{slug}/posts" => h::read::list_posts,
        doc("List a board's posts, newest first", 200, "A page of post summaries").returns("Page").errors(&[400, 404, 503]);
    Read GET "/boards/{slug}/posts/{post_id}" => h::read::get_post,
        doc("Read a post with its comments (counts this view)", 200, "The post").returns("PostDetail").errors(&[404, 503]);
    Read GET "/boards/{slug}/posts/{post_id}/comments" => h::read::list_comments,
        doc("Page through a post's comments, oldest first", 200, "A page of comments").returns("CommentPage").errors(&[400, 404, 503]);
    #[cfg(feature = "tokens")]
    MemberWrite POST "/boards/{slug}/posts" => h::member::create_post,
        doc("Create a member post", 201, "The new post").takes("PostRequest").returns("PostDetail").errors(&[400, 401, 404, 413, 429, 503]);
    #[cfg(feature = "tokens")]
    MemberWrite PUT "/boards/{slug}/posts/{post_id}" => h::member::update_post,
        doc("Edit your post", 200, "The edited post").takes("PostRequest").returns("PostDetail").errors(&[400, 401, 403, 404, 413, 503]);
    #[cfg(feature = "tokens")]
    MemberWrite DELETE "/boards/{slug}/posts/{post_id}" => h::member::delete_post,
        doc("Delete your post", 204, "Deleted").errors(&[401, 403, 404, 503]);
    #[cfg(feature = "tokens")]
    MemberWrite POST "/boards/{slug}/posts/{post_id}/comments" => h::member::create_comment,
        doc("Comment as a member", 201, "The new comment").takes("CommentRequest").returns("Comment").errors(&[400, 401, 404, 413, 429, 503]);
    #[cfg(feature = "tokens")]
    MemberWrite DELETE "/boards/{slug}/posts/{post_id}/comments/{comment_id}" => h::member::delete_comment,
        doc("Delete your comment (its replies stay)", 204, "Deleted").errors(&[401, 403, 404, 503]);
    #[cfg(feature = "hashing")]
    GuestPost POST "/boards/{slug}/posts/guest" => h::guest::create_guest_post,
        doc("Create a guest post", 201, "The new post").takes("GuestPostRequest").returns("PostDetail").errors(&[400, 404, 413, 429, 503]);
    #[cfg(feature = "hashing")]
    GuestPost PUT "/boards/{slug}/posts/{post_id}/guest" => h::guest::update_guest_post,
        doc("Edit a guest post with its password", 200, "The edited post").takes("GuestEditRequest").returns("PostDetail").errors(&[400, 403, 404, 413, 429, 503]);
    #[cfg(feature = "hashing")]
    GuestPost DELETE "/boards/{slug}/posts/{post_id}/guest" => h::guest::delete_guest_post,
        doc("Delete a guest post with its password", 204, "Deleted").takes("GuestProofRequest").errors(&[400, 403, 404, 413, 429, 503]);
    #[cfg(feature = "hashing")]
    GuestComment POST "/boards/{slug}/posts/{post_id}/comments/guest" => h::guest::create_guest_comment,
        doc("Comment as a guest", 201, "The new comment").takes("GuestCommentRequest").returns("Comment").errors(&[400, 404, 413, 429, 503]);
    #[cfg(feature = "hashing")]
    GuestComment DELETE "/boards/{slug}/posts/{post_id}/comments/{comment_id}/guest" => h::guest::delete_guest_comment,
        doc("Delete a guest comment with its password", 204, "Deleted").takes("GuestProofRequest").errors(&[400, 403, 404, 413, 429, 503]);
    #[cfg(feature = "tokens")]
    Like PUT "/boards/{slug}/posts/{post_id}/like" => h::member::like,
        doc("Like a post (idempotent)", 200, "The like state").returns("LikeState").errors(&[401, 404, 503]);
    #[cfg(feature = "tokens")]
    Like DELETE "/boards/{slug}/posts/{post_id}/like" => h::member::unlike,
        doc("Unlike a post (idempotent)", 200, "The like state").returns("LikeState").errors(&[401, 404, 503]);
}

/// A router serving `functions`' routes and `GET /health`; unknown paths
/// answer 404 and known paths with another method 405, in docs/API.md's shape.
pub fn router(state: AppState, functions: &[Function]) -> Router {
    let mut by_path: BTreeMap<&'static str, MethodRouter<AppState>> = BTreeMap::new();
    for r in routes().into_iter().filter(|r| functions.contains(&r.function)) {
        #[cfg(any(feature = "hashing", feature = "tokens"))]
        let handler = if r.takes_idempotency_key() {
            let reading = super::idempotency::KeyReading {
                state: state.clone(),
                success_status: r.doc.status,
            };
            r.handler.layer(axum::middleware::from_fn_with_state(
                reading,
                super::idempotency::read_key,
            ))
        } else {
            r.handler
        };
        #[cfg(not(any(feature = "hashing", feature = "tokens")))]
        let handler = r.handler;
        // Outermost on a route with a body: before the key is read.
        let handler = if r.doc.request.is_some() {
            handler.layer(axum::middleware::from_fn(super::input::require_json))
        } else {
            handler
        };
        let merged = match by_path.remove(r.path) {
            Some(existing) => existing.merge(handler),
            None => handler,
        };
        by_path.insert(r.path, merged);
    }
    let mut router = Router::new().route("/health", axum::routing::get(h::health));
    for (path, handler) in by_path {
        router = router.route(path, handler);
    }
    router
        .fallback(|| async { ApiError::NotFound("no such path".into()) })
        .method_not_allowed_fallback(|request: Request<axum::body::Body>| async move {
            ApiError::MethodNotAllowed(request.method().to_string())
        })
        .layer(DefaultBodyLimit::disable())
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .layer(axum::middleware::map_response(payload_too_large_in_api_shape))
        // Outermost: every answer, a 404 or 413 too, carries the request's id.
        .layer(axum::middleware::from_fn(super::conventions::request_id))
        .with_state(state)
}

/// tower-http refuses a declared length over the limit before reading the
/// body (and cuts off an undeclared one after it); its 413 is plain text, so
/// it is answered again in docs/API.md's error shape.
async fn payload_too_large_in_api_shape(response: axum::response::Response) -> axum::response::Response {
    if response.status() == http::StatusCode::PAYLOAD_TOO_LARGE {
        return axum::response::IntoResponse::into_response(ApiError::PayloadTooLarge);
    }
    response
}
