//! The files derived from the route table, the SAM templates aside:
//! docs/openapi.json, and between their markers the `cargo lambda watch`
//! router in the workspace `Cargo.toml`, README's function table and
//! docs/API.md's route table. [`derived`] lists them with what they should
//! say; `cargo run -p sam-template` writes them with the templates, and
//! tests fail while one is stale. So a new route is one row in
//! `routes/table.rs`, its handler, its use case and their tests.

use std::collections::BTreeMap;
use std::path::Path;

use super::routes::routes;
use crate::function::Function;

/// The markers around each generated block, in Markdown and in TOML.
pub const BEGIN: &str = "generated from the route table by `cargo run -p sam-template`: do not edit";
pub const END: &str = "end of the generated block";

/// The one command that writes every generated file.
pub const REGENERATE: &str = "cargo run -p sam-template";

/// `[workspace.metadata.lambda.watch.router]`: every path to its
/// functions by method, `GET /health` to `read`.
pub fn watch_router() -> String {
    let mut by_path: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for route in routes() {
        by_path.entry(route.path).or_default().push(format!(
            "{{ method = \"{}\", function = \"{}\" }}",
            route.method,
            route.function.name()
        ));
    }
    by_path
        .entry("/health")
        .or_default()
        .push("{ method = \"GET\", function = \"read\" }".to_owned());
    let mut text = String::from("[workspace.metadata.lambda.watch.router]\n");
    for (path, entries) in by_path {
        text.push_str(&format!("\"{path}\" = [{}]\n", entries.join(", ")));
    }
    text
}

/// README's table: each function with its routes.
pub fn function_table() -> String {
    let mut text = String::from("| function (`functions/<name>`) | routes |\n|---|---|\n");
    let all = routes();
    for function in Function::ALL {
        let served: Vec<String> = all
            .iter()
            .filter(|r| r.function == function)
            .map(|r| format!("`{} {}`", r.method, r.path))
            .collect();
        text.push_str(&format!("| `{}` | {} |\n", function.name(), served.join(", ")));
    }
    text
}

/// docs/API.md's route table (section Routes): each route with its
/// function, who may call it and what it answers, then `GET /health`.
pub fn api_md_table() -> String {
    let mut text = String::from("| method and path | function | auth | success |\n|---|---|---|---|\n");
    for route in routes() {
        text.push_str(&format!(
            "| `{} {}` | {} | {} | {} |\n",
            route.method,
            route.path,
            route.function.name(),
            route.doc.auth,
            route.doc.answer
        ));
    }
    text.push_str("| `GET /health` | every deployment | - | `200 {\"status\":\"ok\"}` |\n");
    text
}

/// `file` with the block between the `comment`-prefixed markers replaced
/// by `block`; `None` when the markers are missing.
pub fn replace_block(file: &str, comment: &str, block: &str) -> Option<String> {
    let begin = format!("{comment}{BEGIN}");
    let end = format!("{comment}{END}");
    let start = file.find(&begin)? + begin.len();
    let start = start + file[start..].find('\n')? + 1;
    let stop = start + file[start..].find(&end)?;
    Some(format!("{}{block}{}", &file[..start], &file[stop..]))
}

/// A generated file as it is and as it should be, or why it cannot be made.
pub type Texts = Result<(String, String), String>;

/// Every file this crate derives from the route table and the types, by
/// its path from the workspace `root`, as it is and as it should be.
pub fn derived(root: &Path) -> Vec<(&'static str, Texts)> {
    let read = |file: &str| std::fs::read_to_string(root.join(file)).map_err(|e| format!("{file}: {e}"));
    let block = |file: &'static str, comment: &'static str, block: String| -> Texts {
        let current = read(file)?;
        let wanted = replace_block(&current, comment, &block)
            .ok_or_else(|| format!("{file}: the generated block's markers are missing"))?;
        Ok((current, wanted))
    };
    vec![
        (
            "docs/openapi.json",
            Ok((
                read("docs/openapi.json").unwrap_or_default(),
                super::openapi::rendered(),
            )),
        ),
        ("Cargo.toml", block("Cargo.toml", "# ", watch_router())),
        ("README.md", block("README.md", "<!-- ", function_table())),
        ("docs/API.md", block("docs/API.md", "<!-- ", api_md_table())),
    ]
}
