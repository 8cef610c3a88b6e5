//! `cargo run -p shared --bin openapi`: writes everything derived from the
//! route table and the types: docs/openapi.json, the `cargo lambda watch`
//! router in Cargo.toml and README's function table (between their
//! markers). `-- --check` fails when one is stale.

use std::process::ExitCode;

use shared::http::route_docs::{function_table, replace_block, watch_router};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Each file with what it should hold, or why it cannot be made.
fn derived() -> Vec<(&'static str, Result<String, String>)> {
    let read = |file: &str| std::fs::read_to_string(format!("{ROOT}/{file}")).map_err(|e| format!("{file}: {e}"));
    let block = |file: &'static str, comment: &'static str, block: String| {
        let text = read(file)?;
        replace_block(&text, comment, &block)
            .ok_or_else(|| format!("{file}: the generated block's markers are missing"))
    };
    vec![
        ("docs/openapi.json", Ok(shared::http::openapi::rendered())),
        ("Cargo.toml", block("Cargo.toml", "# ", watch_router())),
        ("README.md", block("README.md", "<!-- ", function_table())),
    ]
}

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let mut failed = false;
    for (file, wanted) in derived() {
        let wanted = match wanted {
            Ok(text) => text,
            Err(e) => {
                eprintln!("{e}");
                failed = true;
                continue;
            }
        };
        let path = format!("{ROOT}/{file}");
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == wanted {
            println!("{file} is current");
        } else if check {
            eprintln!("{file} is stale: run `cargo run -p shared --bin openapi`");
            failed = true;
        } else if let Err(e) = std::fs::write(&path, wanted) {
            eprintln!("writing {file}: {e}");
            failed = true;
        } else {
            println!("wrote {file}");
        }
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
