//! `cargo run -p sam-template`: the one command that writes every file
//! generated from the route table and its sources: both SAM templates,
//! docs/openapi.json, the `cargo lambda watch` router in Cargo.toml,
//! README's and docs/API.md's route tables ([`sam_template::generated`]).
//! `-- --check` only reports whether each is current (and fails when one is
//! stale); `-- --costs` prints the cost table.

use std::process::ExitCode;

fn main() -> anyhow::Result<ExitCode> {
    if std::env::args().any(|a| a == "--costs") {
        let tiers = shared::hashing::tier_file::TierFile::parse(shared::hashing::tier_file::EMBEDDED)?;
        print!("{}", sam_template::cost_table(&tiers));
        return Ok(ExitCode::SUCCESS);
    }
    let check = std::env::args().any(|a| a == "--check");
    let root = sam_template::workspace_root();
    let mut failed = false;
    for (file, texts) in sam_template::generated() {
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
            eprintln!("{file} is stale: run `{}`", shared::http::route_docs::REGENERATE);
            failed = true;
        } else if let Err(e) = std::fs::write(root.join(file), wanted) {
            eprintln!("writing {file}: {e}");
            failed = true;
        } else {
            println!("wrote {file}");
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
