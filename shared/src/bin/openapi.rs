//! `cargo run -p shared --bin openapi`, kept for old habits: runs the one
//! command that writes every file derived from the route table,
//! `cargo run -p sam-template` (docs/openapi.json, both SAM templates, the
//! `cargo lambda watch` router, README's and docs/API.md's route tables),
//! with the same arguments (`-- --check`).

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args(["run", "--quiet", "-p", "sam-template", "--"])
        .args(std::env::args().skip(1))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .status();
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("running `{}`: {e}", shared::http::route_docs::REGENERATE);
            ExitCode::FAILURE
        }
    }
}
