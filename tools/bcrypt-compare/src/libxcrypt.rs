//! The system's C bcrypt: libxcrypt's `crypt_rn` with a `$2b$` setting, which
//! runs Solar Designer's crypt_blowfish.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};

#[link(name = "crypt")]
unsafe extern "C" {
    fn crypt_rn(phrase: *const c_char, setting: *const c_char, data: *mut c_void, size: c_int) -> *mut c_char;
}

/// `sizeof(struct crypt_data)` in libxcrypt 4.x. crypt_rn checks the size it
/// is given and fails (returns NULL) when the buffer is too small.
const CRYPT_DATA_SIZE: usize = 32_768;

/// A reusable work area, as crypt_r callers keep one per thread.
pub struct Crypt {
    data: Vec<u8>,
}

impl Crypt {
    pub fn new() -> Self {
        Crypt {
            data: vec![0; CRYPT_DATA_SIZE],
        }
    }

    /// `setting` is a bcrypt prefix with salt (`$2b$10$` + 22 characters) or a full hash.
    pub fn hash(&mut self, password: &str, setting: &str) -> anyhow::Result<String> {
        let phrase = CString::new(password)?;
        let setting = CString::new(setting)?;
        let size = c_int::try_from(self.data.len())?;
        // SAFETY: both strings are NUL-terminated and outlive the call; `data`
        // is a zeroed buffer of `size` bytes that crypt_rn only writes within;
        // the returned pointer points into `data` and is copied out before
        // `data` is touched again.
        let out = unsafe { crypt_rn(phrase.as_ptr(), setting.as_ptr(), self.data.as_mut_ptr().cast(), size) };
        anyhow::ensure!(
            !out.is_null(),
            "crypt_rn failed (unsupported setting or buffer too small)"
        );
        // SAFETY: non-null results are NUL-terminated strings inside `data`.
        let hashed = unsafe { CStr::from_ptr(out) }.to_str()?.to_owned();
        anyhow::ensure!(!hashed.starts_with('*'), "crypt_rn refused the setting: {hashed}");
        Ok(hashed)
    }
}
