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
    assert_eq!(doc["info"]["version"], "4.0.0", "the contract's version");
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
    // The HEAD beside every GET is served (the next test) but left out:
    // generated clients would make each one a function.
    assert_eq!(documented, served);
    let description = doc["info"]["description"].as_str().unwrap();
    for said in ["`HEAD`", "`X-Request-Id`", "`431"] {
        assert!(description.contains(said), "info.description does not say {said}");
    }
}

/// docs/API.md, Conventions: the HEAD forms the document leaves out are
/// still served, through the real router: the same status as the GET, no body.
#[tokio::test]
async fn every_get_route_also_answers_head_without_a_body() {
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    let author = shared::domain::Author::Guest {
        nickname: "seed".into(),
        tag: Some("testwrit".into()),
    };
    let h = test_support::router::harness(author, Some("unused-hash")).await;
    let app = shared::http::router(h.state.clone(), &shared::function::Function::ALL);
    let mut paths: Vec<String> = routes()
        .iter()
        .filter(|r| r.method == http::Method::GET)
        .map(|r| {
            // The seeded post; any other id names nothing (a 404 is served too).
            r.path
                .replace("{slug}", "free")
                .replace("{post_id}", test_support::router::POST_ID)
                .replace("{comment_id}", "01JD3Z8Q6W4G7T2N5B8K1M0CCC")
                .replace("{member_id}", "01JD3Z8Q6W4G7T2N5B8K1M0MMM")
                .replace("{ban_id}", "01JD3Z8Q6W4G7T2N5B8K1M0BBB")
                .replace("{report_id}", "01JD3Z8Q6W4G7T2N5B8K1M0RRR")
        })
        .collect();
    paths.push("/health".into());
    assert!(paths.len() >= 10, "{paths:?}");
    let answer = |method: http::Method, path: &str| {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", format!("Bearer {}", h.token))
            .body(axum::body::Body::empty())
            .unwrap();
        let app = app.clone();
        async move {
            let response = app.oneshot(request).await.unwrap();
            let status = response.status();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, body)
        }
    };
    for path in paths {
        let (head_status, head_body) = answer(http::Method::HEAD, &path).await;
        let (get_status, get_body) = answer(http::Method::GET, &path).await;
        assert_eq!(head_status, get_status, "HEAD {path}");
        assert_ne!(head_status, http::StatusCode::METHOD_NOT_ALLOWED, "HEAD {path}");
        assert!(head_body.is_empty(), "HEAD {path} has a body");
        assert!(!get_body.is_empty(), "GET {path} has none");
    }
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
                "create",
                "list",
                "get",
                "update",
                "delete",
                "like",
                "unlike",
                "appoint",
                "dismiss",
                "remove",
                "report",
                "resolve",
                "change", //
                "dislike",
                "undislike",
                "put",
                "vote",
                "recategorize",
                "unbest",
                "start", // TOTP enrollment, then
                "confirm",
                "mark",  // notifications read,
                "block", // and blocks
                "unblock",
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

/// docs/API.md, Conventions: every status and header each route can answer;
/// every error response has a body (the `431` of the server's HTTP
/// layer is described once, in `info.description`), the client's
/// `X-Request-Id` is no parameter, and header names are as sent: lowercase.
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
        for status in ["405", "413"] {
            assert!(statuses.contains_key(status), "{what}: no {status}");
        }
        assert!(!statuses.contains_key("431"), "{what}: a 431 of its own");
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
            let headers = response["headers"].as_object().unwrap();
            for name in headers.keys() {
                assert_eq!(*name, name.to_ascii_lowercase(), "{what} {status}: {name} as sent");
            }
            let has = |name: &str| headers.contains_key(name);
            assert!(has("x-request-id"), "{what} {status}: x-request-id");
            if status == "401" {
                assert!(has("www-authenticate"), "{what} {status}: www-authenticate");
            }
            if ["429", "503"].contains(&status.as_str()) {
                assert!(has("retry-after"), "{what} {status}: retry-after");
            }
            // Only a success may be bodiless: generated clients type an
            // error union with a bodiless member as unknown.
            assert_eq!(
                response.get("content").is_none(),
                status == "204",
                "{what} {status}: a body only and always where the status has one"
            );
        }
        let parameters: Vec<String> = op["parameters"]
            .as_array()
            .map(|parameters| {
                parameters
                    .iter()
                    .map(|p| p["$ref"].as_str().unwrap().rsplit('/').next().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert!(!parameters.contains(&"RequestId".to_owned()), "{what}: X-Request-Id");
        assert_eq!(
            parameters.contains(&"IfMatch".to_owned()),
            statuses.contains_key("412"),
            "{what}: If-Match and 412"
        );
    }
    for (name, parameter) in doc["components"]["parameters"].as_object().unwrap() {
        assert_ne!(
            parameter["name"], "X-Request-Id",
            "{name}: a per-operation X-Request-Id"
        );
    }
    assert_eq!(
        doc["components"]["headers"]["IdempotentReplayed"]["required"], false,
        "idempotent-replayed comes on replays only"
    );
    let created = |path: &str| {
        let op = &doc["paths"][path]["post"];
        resolve(&op["responses"]["201"])["headers"].as_object().unwrap().clone()
    };
    for path in ["/boards/{slug}/posts", "/boards/{slug}/posts/guest"] {
        let headers = created(path);
        for name in ["location", "etag", "idempotent-replayed"] {
            assert!(headers.contains_key(name), "POST {path}: {name}");
        }
    }
    for path in ["/boards/{slug}/posts/{post_id}", "/boards/{slug}/posts/{post_id}/guest"] {
        let statuses = doc["paths"][path]["put"]["responses"].as_object().unwrap();
        assert!(statuses.contains_key("412"), "PUT {path}: 412");
        assert!(statuses["200"]["headers"].get("etag").is_some(), "PUT {path}: etag");
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

/// A made-up cursor is schema-valid and answered 400 (docs/API.md, Paging), so
/// scripts/schemathesis.toml must allow 400 on every paged operation: the
/// fuzzer found one missing when the revisions page gained its cursor.
#[test]
fn every_paged_operation_lets_the_fuzzer_expect_400_for_a_cursor_it_made_up() {
    let doc = document();
    let settings =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/schemathesis.toml")).unwrap();
    let mut missing = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let paged = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["$ref"] == "#/components/parameters/Cursor");
            let entry = format!("include-name = \"{} {path}\"\n", method.to_uppercase());
            let allowed = settings
                .split("[[operations]]")
                .any(|block| block.contains(&entry) && block.contains("\"400\""));
            if paged && !allowed {
                missing.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    assert!(missing.is_empty(), "add to scripts/schemathesis.toml: {missing:?}");
}
