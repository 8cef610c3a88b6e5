//! `cargo run -p sam-template` rewrites infra/template.yaml; `-- --check`
//! only reports whether it is current; `-- --costs` prints the cost table.

fn main() -> anyhow::Result<()> {
    let generated = sam_template::generate_from_repo()?;
    let path = sam_template::TEMPLATE_PATH;
    if std::env::args().any(|a| a == "--costs") {
        let tiers = shared::hashing::tier_file::TierFile::parse(shared::hashing::tier_file::EMBEDDED)?;
        print!("{}", sam_template::cost_table(&tiers));
        return Ok(());
    }
    if std::env::args().any(|a| a == "--check") {
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        anyhow::ensure!(
            committed == generated,
            "{path} is stale: run `cargo run -p sam-template`"
        );
        println!("{path} is current");
    } else {
        std::fs::write(path, generated)?;
        println!("wrote {path}");
    }
    Ok(())
}
