//! Files only this service's user may read (server mode): `DATA_DIR` is
//! created 0700, the SQLite file and generated secrets 0600, and a secret
//! file that group or others can read is refused (docs/configuration.md).

use std::path::Path;

/// Creates `dir` (and its parents) readable by the owner only; an existing
/// directory is left as it is.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
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
