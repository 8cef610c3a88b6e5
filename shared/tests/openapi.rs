//! The route table is the source: the OpenAPI document (`docs/openapi.json`),
//! the `cargo lambda watch` router, README's function table and docs/API.md's
//! route table are generated from it (`cargo run -p sam-template`).

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
    // axum answers HEAD wherever it answers GET (the handler runs, the body is dropped).
    let heads: Vec<_> = served
        .iter()
        .filter(|(method, _, _)| method == "GET")
        .map(|(_, path, function)| ("HEAD".to_owned(), path.clone(), function.clone()))
        .collect();
    served.extend(heads);
    assert_eq!(documented, served);
}

fn operations(doc: &serde_json::Value) -> Vec<(String, String, &serde_json::Value)> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            all.push((method.to_uppercase(), path.clone(), operation));
        }
    }
    all
}

#[test]
fn every_route_has_its_own_stable_verb_noun_operation_id_in_the_route_table() {
    let ids: Vec<&str> = routes().iter().map(|r| r.doc.operation_id).collect();
    for id in &ids {
        let verb_end = id.find(|c: char| c.is_ascii_uppercase()).unwrap_or(0);
        assert!(
            verb_end > 0 && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id} is not verb-noun camelCase"
        );
        assert!(
            [
                "create", "list", "get", "update", "delete", "like", "unlike", "appoint", "dismiss", "remove",
                "report", "resolve", "change",
            ]
            .contains(&&id[..verb_end]),
            "{id}: an unexpected verb"
        );
    }
    let doc = document();
    let documented: Vec<String> = operations(&doc)
        .iter()
        .map(|(method, path, op)| {
            op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} has no operationId"))
                .to_owned()
        })
        .collect();
    let unique: BTreeSet<&String> = documented.iter().collect();
    assert_eq!(unique.len(), documented.len(), "operationIds repeat: {documented:?}");
    for id in ids {
        assert!(documented.iter().any(|d| d == id), "{id} is not in the document");
    }
}

/// docs/API.md, Conventions: every status and header each route can answer.
#[test]
fn every_operation_declares_its_statuses_and_headers() {
    let doc = document();
    let responses = &doc["components"]["responses"];
    let resolve = |response: &serde_json::Value| -> serde_json::Value {
        match response["$ref"].as_str() {
            Some(reference) => responses[reference.rsplit('/').next().unwrap()].clone(),
            None => response.clone(),
        }
    };
    for (method, path, op) in operations(&doc) {
        let what = format!("{method} {path}");
        assert!(op["security"].is_array(), "{what}: no security");
        let statuses = op["responses"].as_object().unwrap();
        for status in ["405", "413", "431"] {
            assert!(statuses.contains_key(status), "{what}: no {status}");
        }
        if op.get("requestBody").is_some() {
            for status in ["400", "415", "500", "503"] {
                assert!(statuses.contains_key(status), "{what}: no {status}");
            }
        }
        let bearer = op["security"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.get("bearer").is_some());
        assert_eq!(
            bearer,
            statuses.contains_key("401") && path != "/sessions",
            "{what}: 401 and bearer"
        );
        for (status, response) in statuses {
            let response = resolve(response);
            let headers = response["headers"].as_object();
            let has = |name: &str| headers.is_some_and(|h| h.contains_key(name));
            assert_eq!(has("X-Request-Id"), status != "431", "{what} {status}: X-Request-Id");
            if status == "401" {
                assert!(has("WWW-Authenticate"), "{what} {status}: WWW-Authenticate");
            }
            if ["429", "503"].contains(&status.as_str()) {
                assert!(has("Retry-After"), "{what} {status}: Retry-After");
            }
            if method == "HEAD" {
                assert!(response.get("content").is_none(), "{what} {status}: a HEAD with a body");
            }
        }
        let parameters: Vec<String> = op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_owned())
            .collect();
        assert!(parameters.contains(&"RequestId".to_owned()), "{what}: X-Request-Id");
        assert_eq!(
            parameters.contains(&"IfMatch".to_owned()),
            statuses.contains_key("412"),
            "{what}: If-Match and 412"
        );
    }
    let created_post = |path: &str| {
        let op = &doc["paths"][path]["post"];
        resolve(&op["responses"]["201"])["headers"].as_object().unwrap().clone()
    };
    for path in ["/boards/{slug}/posts", "/boards/{slug}/posts/guest"] {
        let headers = created_post(path);
        for name in ["Location", "ETag", "Idempotent-Replayed"] {
            assert!(headers.contains_key(name), "POST {path}: {name}");
        }
    }
    for path in ["/boards/{slug}/posts/{post_id}", "/boards/{slug}/posts/{post_id}/guest"] {
        let statuses = doc["paths"][path]["put"]["responses"].as_object().unwrap();
        assert!(statuses.contains_key("412"), "PUT {path}: 412");
        assert!(statuses["200"]["headers"].get("ETag").is_some(), "PUT {path}: ETag");
    }
}

/// docs/API.md, Conventions: no raw control or invisible characters
/// (patterns escape them), and the error code is an open set.
#[test]
fn the_document_is_printable_ascii_and_error_codes_are_open() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.json");
    let text = std::fs::read_to_string(path).unwrap();
    if let Some((at, c)) = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_graphic() || *c == ' ' || *c == '\n'))
    {
        panic!("docs/openapi.json holds U+{:04X} at byte {at}", u32::from(c));
    }
    let code = &document()["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"];
    assert!(code.get("enum").is_none(), "a closed enum: {code}");
    assert!(code["x-extensible-enum"].as_array().unwrap().len() >= 17);
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

/// docs/openapi.json, the `cargo lambda watch` router, README's function
/// table and docs/API.md's route table (the SAM templates: sam-template's
/// tests) are what the route table and the types say.
#[test]
fn every_file_derived_from_the_route_table_is_current() {
    use shared::http::route_docs::{REGENERATE, derived};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = derived(&root);
    assert_eq!(files.len(), 4);
    for (file, texts) in files {
        let (current, wanted) = texts.unwrap_or_else(|e| panic!("{e}"));
        assert!(current == wanted, "{file} is stale: run `{REGENERATE}`");
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
