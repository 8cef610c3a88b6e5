//! `cargo run -p sam-template` rewrites both templates (infra/template.yaml,
//! infra/template-managed-instances.yaml); `-- --check` only reports whether
//! they are current; `-- --costs` prints the cost table.

use sam_template::ComputeMode;

fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--costs") {
        let tiers = shared::hashing::tier_file::TierFile::parse(shared::hashing::tier_file::EMBEDDED)?;
        print!("{}", sam_template::cost_table(&tiers));
        return Ok(());
    }
    let check = std::env::args().any(|a| a == "--check");
    for mode in ComputeMode::ALL {
        let generated = sam_template::generate_from_repo(mode)?;
        let path = mode.template_path();
        if check {
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
    }
    Ok(())
}
