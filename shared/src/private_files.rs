//! Files only this service's user may read (server mode): `DATA_DIR` is
//! created 0700 (and made so when found open), the SQLite file and generated secrets 0600, and a secret
//! file that group or others can read is refused (docs/configuration.md).

use std::path::Path;

/// Creates `dir` (and its parents) readable by the owner only. An
/// existing `dir` that group or others can open is made owner-only, with a
/// warning (docs/API.md, Hardening): it holds the database and the secrets.
/// A shared directory such as `/tmp` (sticky, open to all) is refused
/// rather than taken from its other users.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let mode = std::fs::metadata(dir)?.permissions().mode();
        if mode & 0o077 != 0 {
            if mode & 0o1000 != 0 {
                return Err(std::io::Error::other(format!(
                    "{} is a shared directory (mode {:04o}): give the server a directory of its own",
                    dir.display(),
                    mode & 0o7777
                )));
            }
            tracing::warn!(
                path = %dir.display(),
                mode = format!("{:03o}", mode & 0o777),
                "the data directory was open to group or others: made it owner-only"
            );
            restrict(dir)?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// Creates an empty `path` readable by the owner only, unless it exists.
pub fn create_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path).map(drop)
}

/// The permission bits group and others have on `path` (0 when none, and
/// always 0 where there are no such bits).
pub fn shared_bits(path: &Path) -> std::io::Result<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        Ok(std::fs::metadata(path)?.permissions().mode() & 0o077)
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).map(|_| 0)
    }
}

/// Takes group's and others' access to `path` away.
pub fn restrict(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path)?.permissions().mode() & 0o700;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    std::fs::metadata(path).map(drop)
}
