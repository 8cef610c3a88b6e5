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
        .layer(DefaultBodyLimit::disable())
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .layer(axum::middleware::map_response(payload_too_large_in_api_shape))
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
