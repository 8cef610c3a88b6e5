//! What is derived from the route table besides docs/openapi.json: the
//! `cargo lambda watch` router in the workspace `Cargo.toml` and README's
//! function table. `cargo run -p shared --bin openapi` writes them between
//! their markers; tests fail when a copy is stale. So a new route is one
//! row in `routes.rs`, its handler and its tests.

use std::collections::BTreeMap;

use super::routes::routes;
use crate::function::Function;

/// The markers around each generated block, in Markdown and in TOML.
pub const BEGIN: &str = "generated from the route table by `cargo run -p shared --bin openapi`: do not edit";
pub const END: &str = "end of the generated block";

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
