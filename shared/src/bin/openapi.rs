//! `cargo run -p shared --bin openapi`: writes docs/openapi.json from the
//! types and the route table; `-- --check` fails when the file is stale.

use std::process::ExitCode;

fn main() -> ExitCode {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.json");
    let generated = shared::http::openapi::rendered();
    if std::env::args().any(|a| a == "--check") {
        let current = std::fs::read_to_string(path).unwrap_or_default();
        if current != generated {
            eprintln!("docs/openapi.json is stale: run `cargo run -p shared --bin openapi`");
            return ExitCode::FAILURE;
        }
        println!("docs/openapi.json is current");
        return ExitCode::SUCCESS;
    }
    match std::fs::write(path, generated) {
        Ok(()) => {
            println!("wrote docs/openapi.json");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("writing {path}: {e}");
            ExitCode::FAILURE
        }
    }
}
