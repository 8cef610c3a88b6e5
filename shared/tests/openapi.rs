//! The route table is the source: the OpenAPI document (`docs/openapi.json`),
//! the `cargo lambda watch` router and README's function table are generated
//! from it, and docs/API.md's route table (read from the file) must match it.

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

/// docs/API.md's route table (section Routes), read from the file: each
/// `| `METHOD /path` | function | ...` row.
fn api_md_routes() -> Vec<(String, String, String)> {
    let api_md = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/API.md")).unwrap();
    let section = api_md
        .split("\n## Routes")
        .nth(1)
        .expect("docs/API.md has a Routes section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let route = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let (method, path) = route.split_once(' ')?;
            Some((method.to_owned(), path.to_owned(), (*cells.get(2)?).to_owned()))
        })
        .filter(|(_, path, _)| path != "/health")
        .collect()
}

#[test]
fn every_route_of_api_md_is_served_by_the_function_api_md_names() {
    let served: Vec<(String, String, String)> = routes()
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_owned(), r.function.name().to_owned()))
        .collect();
    let documented = api_md_routes();
    assert!(documented.len() >= 17, "the parser found {documented:?}");
    assert_eq!(served, documented);
}

#[test]
fn the_watch_router_and_the_readme_function_table_are_the_ones_generated_from_the_route_table() {
    use shared::http::route_docs::{function_table, replace_block, watch_router};
    for (file, comment, block) in [
        ("Cargo.toml", "# ", watch_router()),
        ("README.md", "<!-- ", function_table()),
    ] {
        let path = format!("{}/../{file}", env!("CARGO_MANIFEST_DIR"));
        let current = std::fs::read_to_string(path).unwrap();
        let wanted = replace_block(&current, comment, &block).expect("the generated block's markers");
        assert!(
            current == wanted,
            "{file}'s generated block is stale: run `cargo run -p shared --bin openapi`"
        );
    }
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
