//! Images for the tests of uploads (docs/API.md, Images): real
//! encodings made with `image`, a phone photo's EXIF (orientation and a
//! GPS position) built by hand where no encoder writes one, and a PNG
//! whose header claims more pixels than the limits allow.

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::{Rgb, RgbImage};

/// The latitude [`jpeg_with_gps`] carries: 48° 51' 30" N.
pub const GPS_LATITUDE: [u32; 3] = [48, 51, 30];

/// `width` x `height`, left half red and right half blue.
pub fn two_halves(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, _| {
        if x < width / 2 {
            Rgb([255, 0, 0])
        } else {
            Rgb([0, 0, 255])
        }
    })
}

pub fn jpeg(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    two_halves(width, height)
        .write_with_encoder(JpegEncoder::new_with_quality(&mut out, 90))
        .expect("a JPEG encodes");
    out
}

pub fn png(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    two_halves(width, height)
        .write_with_encoder(PngEncoder::new(&mut out))
        .expect("a PNG encodes");
    out
}

/// A JPEG as a phone writes it: EXIF with orientation 6 (rotate 90° to
/// show) and a GPS IFD holding [`GPS_LATITUDE`] north.
pub fn jpeg_with_gps(width: u32, height: u32) -> Vec<u8> {
    let plain = jpeg(width, height);
    let mut out = plain[..2].to_vec();
    out.extend(exif_app1(6));
    out.extend_from_slice(&plain[2..]);
    out
}

/// An APP1 segment: EXIF in little-endian TIFF, IFD0 with Orientation and a
/// GPS IFD pointer, the GPS IFD with GPSLatitudeRef "N" and GPSLatitude.
fn exif_app1(orientation: u16) -> Vec<u8> {
    let mut tiff = Vec::new();
    tiff.extend_from_slice(b"II*\0");
    tiff.extend_from_slice(&8u32.to_le_bytes());
    let entry = |tiff: &mut Vec<u8>, tag: u16, kind: u16, count: u32, value: [u8; 4]| {
        tiff.extend_from_slice(&tag.to_le_bytes());
        tiff.extend_from_slice(&kind.to_le_bytes());
        tiff.extend_from_slice(&count.to_le_bytes());
        tiff.extend_from_slice(&value);
    };
    // IFD0 at 8: 2 entries, ends at 8 + 2 + 24 + 4 = 38.
    tiff.extend_from_slice(&2u16.to_le_bytes());
    let o = orientation.to_le_bytes();
    entry(&mut tiff, 0x0112, 3, 1, [o[0], o[1], 0, 0]);
    entry(&mut tiff, 0x8825, 4, 1, 38u32.to_le_bytes());
    tiff.extend_from_slice(&0u32.to_le_bytes());
    // GPS IFD at 38: 2 entries, ends at 68, then the rationals.
    tiff.extend_from_slice(&2u16.to_le_bytes());
    entry(&mut tiff, 0x0001, 2, 2, *b"N\0\0\0");
    entry(&mut tiff, 0x0002, 5, 3, 68u32.to_le_bytes());
    tiff.extend_from_slice(&0u32.to_le_bytes());
    for value in GPS_LATITUDE {
        tiff.extend_from_slice(&value.to_le_bytes());
        tiff.extend_from_slice(&1u32.to_le_bytes());
    }
    let mut segment = vec![0xFF, 0xE1];
    segment.extend_from_slice(&((2 + 6 + tiff.len()) as u16).to_be_bytes());
    segment.extend_from_slice(b"Exif\0\0");
    segment.extend(tiff);
    segment
}

/// Whether `bytes` hold an EXIF block or the GPS IFD's latitude rationals.
pub fn carries_exif_or_gps(bytes: &[u8]) -> bool {
    let latitude: Vec<u8> = GPS_LATITUDE
        .iter()
        .flat_map(|v| v.to_le_bytes().into_iter().chain(1u32.to_le_bytes()))
        .collect();
    contains(bytes, b"Exif\0\0") || contains(bytes, &latitude)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
    chunk.extend_from_slice(kind);
    chunk.extend_from_slice(data);
    let crc = crc32(&chunk[4..]);
    chunk.extend_from_slice(&crc.to_be_bytes());
    chunk
}

/// A decoding bomb: a PNG whose header claims `width` x `height` (RGBA, 8
/// bits) with a CRC that checks, and no pixels.
pub fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    bytes.extend(png_chunk(b"IHDR", &ihdr));
    bytes.extend(png_chunk(b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]));
    bytes.extend(png_chunk(b"IEND", &[]));
    bytes
}
