//! The route table of API.md: which function serves which method and path.
//! The server mounts all of it; each Lambda function mounts its own rows.

use std::collections::BTreeMap;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{MethodFilter, MethodRouter, on};
use http::{Method, Request};

use super::AppState;
use super::error::ApiError;
use super::handlers as h;
use super::input::MAX_BODY_BYTES;

/// The Lambda functions, named as their binaries under `functions/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Function {
    Signup,
    Login,
    Read,
    MemberWrite,
    GuestPost,
    GuestComment,
    Like,
}

impl Function {
    pub const ALL: [Function; 7] = [
        Function::Signup,
        Function::Login,
        Function::Read,
        Function::MemberWrite,
        Function::GuestPost,
        Function::GuestComment,
        Function::Like,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Function::Signup => "signup",
            Function::Login => "login",
            Function::Read => "read",
            Function::MemberWrite => "member-write",
            Function::GuestPost => "guest-post",
            Function::GuestComment => "guest-comment",
            Function::Like => "like",
        }
    }
}

pub struct Route {
    pub function: Function,
    pub method: Method,
    /// axum path syntax, which is also OpenAPI's: `/boards/{slug}/posts`.
    pub path: &'static str,
    handler: MethodRouter<AppState>,
}

fn route(function: Function, method: Method, path: &'static str, handler: MethodRouter<AppState>) -> Route {
    Route {
        function,
        method,
        path,
        handler,
    }
}

fn filter(method: &Method) -> MethodFilter {
    MethodFilter::try_from(method.clone()).expect("route methods are standard methods")
}

macro_rules! routes_table {
    ($( $function:ident $method:ident $path:literal => $handler:path ),* $(,)?) => {
        /// Every route of API.md (except `GET /health`, which every function serves).
        pub fn routes() -> Vec<Route> {
            vec![$( route(Function::$function, Method::$method, $path, on(filter(&Method::$method), $handler)) ),*]
        }
    };
}

routes_table! {
    Signup POST "/members" => h::signup,
    Login POST "/sessions" => h::login,
    Read GET "/boards/{slug}/posts" => h::list_posts,
    Read GET "/boards/{slug}/posts/{post_id}" => h::get_post,
    MemberWrite POST "/boards/{slug}/posts" => h::create_post,
    MemberWrite PUT "/boards/{slug}/posts/{post_id}" => h::update_post,
    MemberWrite DELETE "/boards/{slug}/posts/{post_id}" => h::delete_post,
    MemberWrite POST "/boards/{slug}/posts/{post_id}/comments" => h::create_comment,
    GuestPost POST "/boards/{slug}/posts/guest" => h::create_guest_post,
    GuestPost PUT "/boards/{slug}/posts/{post_id}/guest" => h::update_guest_post,
    GuestPost DELETE "/boards/{slug}/posts/{post_id}/guest" => h::delete_guest_post,
    GuestComment POST "/boards/{slug}/posts/{post_id}/comments/guest" => h::create_guest_comment,
    GuestComment DELETE "/boards/{slug}/posts/{post_id}/comments/{comment_id}/guest" => h::delete_guest_comment,
    Like PUT "/boards/{slug}/posts/{post_id}/like" => h::like,
    Like DELETE "/boards/{slug}/posts/{post_id}/like" => h::unlike,
}

/// A router serving `functions`' routes and `GET /health`; unknown paths
/// answer 404 and known paths with another method 405, in API.md's shape.
pub fn router(state: AppState, functions: &[Function]) -> Router {
    let mut by_path: BTreeMap<&'static str, MethodRouter<AppState>> = BTreeMap::new();
    for r in routes().into_iter().filter(|r| functions.contains(&r.function)) {
        let merged = match by_path.remove(r.path) {
            Some(existing) => existing.merge(r.handler),
            None => r.handler,
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
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(refuse_declared_oversize))
        .with_state(state)
}

/// A body whose declared length is over the limit is refused before any of
/// it is read; bodies without a length are cut off by `DefaultBodyLimit`.
async fn refuse_declared_oversize(
    request: Request<axum::body::Body>,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let declared = request
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > MAX_BODY_BYTES as u64) {
        return axum::response::IntoResponse::into_response(ApiError::PayloadTooLarge);
    }
    next.run(request).await
}
