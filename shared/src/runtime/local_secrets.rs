//! Server mode only: secrets generated once and kept under `DATA_DIR`
//! (mode 600), so a first run needs no set-up; a secret file that group or
//! others can read is refused.

use std::path::Path;

use super::ConfigError;

/// Server mode only: a secret generated once and kept in `DATA_DIR/<name>`
/// (mode 600), so a first run needs no set-up.
pub(super) fn local_secret(data_dir: &Path, name: &str) -> Result<String, ConfigError> {
    let path = data_dir.join(name);
    let failed = |e: std::io::Error| ConfigError::invalid(format!("{}: {e}", path.display()));
    if let Ok(secret) = std::fs::read_to_string(&path) {
        let shared = crate::private_files::shared_bits(&path).map_err(failed)?;
        if shared != 0 {
            return Err(ConfigError::invalid(format!(
                "{} is readable by group or others (mode bits {shared:03o}): `chmod 600 {}`, and replace the secret if others may have read it",
                path.display(),
                path.display()
            )));
        }
        return Ok(secret.trim().to_owned());
    }
    crate::private_files::create_dir(data_dir)
        .map_err(|e| ConfigError::invalid(format!("DATA_DIR {}: {e}", data_dir.display())))?;
    let secret: String = rand::random::<[u8; 32]>().iter().map(|b| format!("{b:02x}")).collect();
    write_private(&path, &secret).map_err(failed)?;
    tracing::warn!(
        path = %path.display(),
        "{} was not set: generated one (keep this file; what was made with it needs it)",
        name.to_ascii_uppercase()
    );
    Ok(secret)
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, contents)
}
