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
    // First, also when the secret exists: a DATA_DIR found open is closed.
    crate::private_files::create_dir(data_dir)
        .map_err(|e| ConfigError::invalid(format!("DATA_DIR {}: {e}", data_dir.display())))?;
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
    let secret: String = rand::random::<[u8; 32]>().iter().map(|b| format!("{b:02x}")).collect();
    write_private(&path, &secret).map_err(failed)?;
    tracing::warn!(
        path = %path.display(),
        "{} was not set: generated one (keep this file; what was made with it needs it)",
        name.to_ascii_uppercase()
    );
    Ok(secret)
}

/// Written whole or not at all: a temporary file (mode 600) is filled and
/// synced, then linked into place (which, unlike a rename, never replaces a
/// secret another process wrote first), and the directory is synced, so a
/// crash never leaves an empty or half-written secret.
#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let temporary = dir.join(format!(".{name}.{:016x}.tmp", rand::random::<u64>()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()?;
        std::fs::hard_link(&temporary, path)
    })();
    let removed = std::fs::remove_file(&temporary);
    written?;
    removed?;
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, contents)
}
