//! `cargo run -p shared --bin openapi`: writes everything derived from the
//! route table and the types: docs/openapi.json, the `cargo lambda watch`
//! router in Cargo.toml and README's function table (between their
//! markers). `-- --check` fails when one is stale.

use std::process::ExitCode;

use shared::http::route_docs::{function_table, replace_block, watch_router};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// A file as it is and as it should be, or why it cannot be made.
type Texts = Result<(String, String), String>;

fn derived() -> Vec<(&'static str, Texts)> {
    let read = |file: &str| std::fs::read_to_string(format!("{ROOT}/{file}")).map_err(|e| format!("{file}: {e}"));
    let whole = |file: &'static str, wanted: String| Ok((read(file).unwrap_or_default(), wanted));
    let block = |file: &'static str, comment: &'static str, block: String| {
        let current = read(file)?;
        let wanted = replace_block(&current, comment, &block)
            .ok_or_else(|| format!("{file}: the generated block's markers are missing"))?;
        Ok((current, wanted))
    };
    vec![
        (
            "docs/openapi.json",
            whole("docs/openapi.json", shared::http::openapi::rendered()),
        ),
        ("Cargo.toml", block("Cargo.toml", "# ", watch_router())),
        ("README.md", block("README.md", "<!-- ", function_table())),
    ]
}

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let mut failed = false;
    for (file, texts) in derived() {
        let (current, wanted) = match texts {
            Ok(texts) => texts,
            Err(e) => {
                eprintln!("{e}");
                failed = true;
                continue;
            }
        };
        if current == wanted {
            println!("{file} is current");
        } else if check {
            eprintln!("{file} is stale: run `cargo run -p shared --bin openapi`");
            failed = true;
        } else if let Err(e) = std::fs::write(format!("{ROOT}/{file}"), wanted) {
            eprintln!("writing {file}: {e}");
            failed = true;
        } else {
            println!("wrote {file}");
        }
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
