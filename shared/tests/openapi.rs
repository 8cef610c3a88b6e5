//! The OpenAPI document (`docs/openapi.json`) describes exactly the router's
//! routes, methods and functions.

use std::collections::BTreeSet;

use shared::http::routes;

fn document() -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_openapi_document_lists_exactly_the_routes_the_router_serves() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let function = operation["x-lambda-function"].as_str().unwrap().to_owned();
            documented.insert((method.to_uppercase(), path.clone(), function));
        }
    }
    let mut served: BTreeSet<(String, String, String)> = routes()
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_owned(), r.function.name().to_owned()))
        .collect();
    served.insert(("GET".into(), "/health".into(), "every function".into()));
    assert_eq!(documented, served);
}

#[test]
fn every_route_of_api_md_is_served_by_the_function_api_md_names() {
    // docs/API.md's route table, verbatim.
    let api_md = [
        ("POST", "/members", "signup"),
        ("POST", "/sessions", "login"),
        ("GET", "/boards/{slug}/posts", "read"),
        ("GET", "/boards/{slug}/posts/{post_id}", "read"),
        ("GET", "/boards/{slug}/posts/{post_id}/comments", "read"),
        ("POST", "/boards/{slug}/posts", "member-write"),
        ("PUT", "/boards/{slug}/posts/{post_id}", "member-write"),
        ("DELETE", "/boards/{slug}/posts/{post_id}", "member-write"),
        ("POST", "/boards/{slug}/posts/{post_id}/comments", "member-write"),
        (
            "DELETE",
            "/boards/{slug}/posts/{post_id}/comments/{comment_id}",
            "member-write",
        ),
        ("POST", "/boards/{slug}/posts/guest", "guest-post"),
        ("PUT", "/boards/{slug}/posts/{post_id}/guest", "guest-post"),
        ("DELETE", "/boards/{slug}/posts/{post_id}/guest", "guest-post"),
        ("POST", "/boards/{slug}/posts/{post_id}/comments/guest", "guest-comment"),
        (
            "DELETE",
            "/boards/{slug}/posts/{post_id}/comments/{comment_id}/guest",
            "guest-comment",
        ),
        ("PUT", "/boards/{slug}/posts/{post_id}/like", "like"),
        ("DELETE", "/boards/{slug}/posts/{post_id}/like", "like"),
    ];
    let served: Vec<(String, String, String)> = routes()
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_owned(), r.function.name().to_owned()))
        .collect();
    let expected: Vec<(String, String, String)> = api_md
        .iter()
        .map(|(m, p, f)| ((*m).to_owned(), (*p).to_owned(), (*f).to_owned()))
        .collect();
    assert_eq!(served, expected);
}

#[test]
fn cargo_lambda_watch_routes_every_path_to_its_function() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml")).unwrap();
    let manifest: toml::Value = toml::from_str(&manifest).unwrap();
    let router = manifest["workspace"]["metadata"]["lambda"]["watch"]["router"]
        .as_table()
        .unwrap();
    let mut watched = BTreeSet::new();
    for (path, entries) in router {
        for entry in entries.as_array().unwrap() {
            let method = entry["method"].as_str().unwrap().to_owned();
            watched.insert((method, path.clone(), entry["function"].as_str().unwrap().to_owned()));
        }
    }
    let mut served: BTreeSet<(String, String, String)> = routes()
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_owned(), r.function.name().to_owned()))
        .collect();
    served.insert(("GET".into(), "/health".into(), "read".into()));
    assert_eq!(watched, served);
}

#[test]
fn the_openapi_document_is_the_one_generated_from_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.json");
    let current = std::fs::read_to_string(path).unwrap();
    assert!(
        current == shared::http::openapi::rendered(),
        "docs/openapi.json is stale: run `cargo run -p shared --bin openapi`"
    );
}
