//! A still lossless WebP's pixels as they came: its `VP8L` bitstream holds
//! nothing but the image (width, height, alpha, the coded pixels), and
//! every metadata block (EXIF, XMP, ICC) lives in chunks of its own, which
//! are never written. Re-encoding it instead (the one lossless encoder here
//! has no back-references) made a 46 KB file 146 MB (docs/security.md).

use std::io::Write;

/// The one `VP8L` chunk's data of a still WebP (simple or extended
/// format); `None` for a lossy or animated one, or for two bitstreams.
pub(super) fn lossless_bitstream(bytes: &[u8]) -> Option<&[u8]> {
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WEBP" {
        return None;
    }
    let mut data = &bytes[12..];
    let mut found = None;
    while data.len() >= 8 {
        let size = u32::from_le_bytes([data[4], data[5], data[6], data[7]]) as usize;
        let body = data.get(8..8usize.checked_add(size)?)?;
        match &data[..4] {
            b"VP8L" if found.is_none() => found = Some(body),
            b"VP8L" | b"VP8 " | b"ANMF" | b"ALPH" => return None,
            _ => {}
        }
        let next = 8usize.saturating_add(size).saturating_add(size & 1);
        data = data.get(next..).unwrap_or_default();
    }
    found
}

/// `bitstream` as a simple-format WebP: RIFF, WEBP, one `VP8L` chunk.
pub(super) fn contain(bitstream: &[u8], out: &mut impl Write) -> std::io::Result<()> {
    let size = u32::try_from(bitstream.len()).map_err(std::io::Error::other)?;
    let padding = bitstream.len() & 1;
    let riff = 4 + 8 + size + padding as u32;
    out.write_all(b"RIFF")?;
    out.write_all(&riff.to_le_bytes())?;
    out.write_all(b"WEBPVP8L")?;
    out.write_all(&size.to_le_bytes())?;
    out.write_all(bitstream)?;
    out.write_all(&[0u8; 1][..padding])
}

/// Whether a WebP holds a lossy (`VP8 `) bitstream rather than a lossless
/// (`VP8L`) one; an animation's frames are looked into.
pub(super) fn is_lossy(bytes: &[u8]) -> bool {
    fn chunks_lossy(mut data: &[u8]) -> bool {
        while data.len() >= 8 {
            let (fourcc, size) = (
                &data[..4],
                u32::from_le_bytes([data[4], data[5], data[6], data[7]]) as usize,
            );
            let body = &data[8..data.len().min(8usize.saturating_add(size))];
            match fourcc {
                b"VP8 " => return true,
                b"ANMF" if body.len() > 16 && chunks_lossy(&body[16..]) => return true,
                _ => {}
            }
            let next = 8usize.saturating_add(size).saturating_add(size & 1);
            data = data.get(next..).unwrap_or_default();
        }
        false
    }
    bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" && chunks_lossy(&bytes[12..])
}
