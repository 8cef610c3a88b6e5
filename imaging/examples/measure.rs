//! `cargo run -p imaging --release --example measure`: the time and peak
//! memory of `imaging::process` on generated images (gradients with noise,
//! so that they compress like photographs), each in a child process of its
//! own so that its peak resident memory (VmHWM) is its alone. Prints a
//! Markdown table (imaging/README.md, Measured).

use std::process::Command;
use std::time::Instant;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::codecs::webp::WebPEncoder;
use image::{DynamicImage, ImageEncoder, RgbImage};
use imaging::{Declared, Limits, process};

/// Smooth gradients with ±12 of noise (xorshift), like a photograph's grain.
fn photo(width: u32, height: u32) -> RgbImage {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    RgbImage::from_fn(width, height, |x, y| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let noise = (state % 25) as i32 - 12;
        let channel = |base: u32| (base as i32 + noise).clamp(0, 255) as u8;
        image::Rgb([
            channel(x * 255 / width),
            channel(y * 255 / height),
            channel((x + y) * 127 / (width + height) + 64),
        ])
    })
}

fn jpeg(image: &RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    image
        .write_with_encoder(JpegEncoder::new_with_quality(&mut out, 90))
        .unwrap();
    out
}

/// An APP1 EXIF segment holding only Orientation (little-endian TIFF).
/// An EXIF block (little-endian TIFF) holding only an Orientation tag.
fn orientation_tiff(orientation: u16) -> Vec<u8> {
    let mut tiff = b"II*\0".to_vec();
    tiff.extend_from_slice(&8u32.to_le_bytes());
    tiff.extend_from_slice(&1u16.to_le_bytes());
    tiff.extend_from_slice(&0x0112u16.to_le_bytes());
    tiff.extend_from_slice(&3u16.to_le_bytes());
    tiff.extend_from_slice(&1u32.to_le_bytes());
    tiff.extend_from_slice(&orientation.to_le_bytes());
    tiff.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    tiff
}

fn with_orientation(jpeg: &[u8], orientation: u16) -> Vec<u8> {
    let tiff = orientation_tiff(orientation);
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&((2 + 6 + tiff.len()) as u16).to_be_bytes());
    out.extend_from_slice(b"Exif\0\0");
    out.extend(tiff);
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// A still lossless WebP in the extended format with an EXIF block that
/// says `orientation`: turned, it must be re-encoded rather than kept.
fn webp_with_orientation(simple: &[u8], width: u32, height: u32, orientation: u16) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, fourcc: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(fourcc);
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
            out.push(0);
        }
    }
    let tiff = orientation_tiff(orientation);
    let mut vp8x = vec![0b0000_1000, 0, 0, 0];
    vp8x.extend_from_slice(&(width - 1).to_le_bytes()[..3]);
    vp8x.extend_from_slice(&(height - 1).to_le_bytes()[..3]);
    let mut body = b"WEBP".to_vec();
    chunk(&mut body, b"VP8X", &vp8x);
    chunk(&mut body, b"VP8L", &simple[20..]);
    chunk(&mut body, b"EXIF", &tiff);
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend(body);
    out
}

/// The audit's file: 7000 x 7000 tiled from one 64 x 64 tile, by libwebp.
const TILED_7000: &[u8] = include_bytes!("../tests/fixtures/tiled-7000x7000.webp");

fn gif_animation(width: u16, height: u16, frames: usize) -> Vec<u8> {
    let palette: Vec<u8> = (0..=255u8).flat_map(|i| [i, 255 - i, i / 2]).collect();
    let mut encoder = gif::Encoder::new(Vec::new(), width, height, &palette).unwrap();
    encoder.set_repeat(gif::Repeat::Infinite).unwrap();
    for n in 0..frames {
        let pixels: Vec<u8> = (0..usize::from(width) * usize::from(height))
            .map(|i| ((i % usize::from(width) + i / usize::from(width) + n * 3) % 256) as u8)
            .collect();
        let mut frame = gif::Frame::from_indexed_pixels(width, height, pixels, None);
        frame.delay = 4;
        encoder.write_frame(&frame).unwrap();
    }
    encoder.into_inner().unwrap()
}

fn png_header_claiming(width: u32, height: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut crc = !0u32;
        for &byte in &out[start..] {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        out.extend_from_slice(&(!crc).to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn vm_hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// In the child: process one file, print `ms peak_delta_mib peak_mib outcome`.
fn child(path: &str, declared: &str) {
    let bytes = std::fs::read(path).unwrap();
    let declared = Declared::from_content_type(declared).unwrap();
    let before = vm_hwm_kib();
    let started = Instant::now();
    let outcome = process(&bytes, declared, &Limits::default());
    let elapsed = started.elapsed();
    let after = vm_hwm_kib();
    let outcome = match outcome {
        Ok(out) => format!(
            "{} {}x{}, {} frame(s), {} KiB; thumbnail {} {}x{}, {} KiB",
            out.content_type,
            out.width,
            out.height,
            out.frames,
            out.file.len() / 1024,
            out.thumbnail_content_type,
            out.thumbnail_width,
            out.thumbnail_height,
            out.thumbnail.len() / 1024
        ),
        Err(rejected) => format!("rejected: {rejected}"),
    };
    println!(
        "{}\t{:.0}\t{:.0}\t{}",
        elapsed.as_millis(),
        (after - before) as f64 / 1024.0,
        after as f64 / 1024.0,
        outcome
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[1] == "child" {
        return child(&args[2], &args[3]);
    }
    let dir = std::env::temp_dir().join(format!("imaging-measure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cases: Vec<(String, &str, Vec<u8>)> = Vec::new();
    let mut sizes = Vec::new();
    for (label, width, height) in [("1 MP", 1_155, 866), ("12 MP", 4_000, 3_000), ("48 MP", 8_000, 6_000)] {
        let image = photo(width, height);
        let file = jpeg(&image);
        if width <= 4_000 {
            // The WebP choice: what each encoder makes of the same photograph.
            let mut png = Vec::new();
            DynamicImage::ImageRgb8(image.clone())
                .write_with_encoder(PngEncoder::new(&mut png))
                .unwrap();
            let mut webp = Vec::new();
            WebPEncoder::new_lossless(&mut webp)
                .write_image(&image, width, height, image::ExtendedColorType::Rgb8)
                .unwrap();
            let q88 = imaging::process(&file, Declared::Jpeg, &Limits::default())
                .unwrap()
                .file
                .len();
            sizes.push((label, q88, png.len(), webp.len()));
            cases.push((
                format!("{label} lossless WebP ({} KiB)", webp.len() / 1024),
                "image/webp",
                webp,
            ));
        }
        cases.push((
            format!("{label} JPEG ({} KiB)", file.len() / 1024),
            "image/jpeg",
            file.clone(),
        ));
        if width == 4_000 {
            cases.push((
                format!("{label} JPEG, EXIF orientation 6"),
                "image/jpeg",
                with_orientation(&file, 6),
            ));
        }
    }
    cases.push((
        "GIF 300 frames of 480 x 270".into(),
        "image/gif",
        gif_animation(480, 270, 300),
    ));
    cases.push((
        format!(
            "audit: 7000 x 7000 tiled lossless WebP ({} KiB)",
            TILED_7000.len() / 1024
        ),
        "image/webp",
        TILED_7000.to_vec(),
    ));
    cases.push((
        "the same with EXIF orientation 6 (re-encoded)".into(),
        "image/webp",
        webp_with_orientation(TILED_7000, 7_000, 7_000, 6),
    ));
    cases.push((
        "PNG header claiming 100,000 x 100,000".into(),
        "image/png",
        png_header_claiming(100_000, 100_000),
    ));

    println!("| input | time (ms) | peak RSS growth (MiB) | peak RSS (MiB) | outcome |");
    println!("|---|---:|---:|---:|---|");
    let exe = std::env::current_exe().unwrap();
    for (n, (label, declared, bytes)) in cases.iter().enumerate() {
        let path = dir.join(format!("{n}"));
        std::fs::write(&path, bytes).unwrap();
        let out = Command::new(&exe)
            .args(["child", path.to_str().unwrap(), declared])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let line = String::from_utf8(out.stdout).unwrap();
        let fields: Vec<&str> = line.trim_end().splitn(4, '\t').collect();
        println!(
            "| {label} | {} | {} | {} | {} |",
            fields[0], fields[1], fields[2], fields[3]
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!();
    println!("| photograph | JPEG q{} | PNG | lossless WebP |", imaging::JPEG_QUALITY);
    println!("|---|---:|---:|---:|");
    for (label, q88, png, webp) in sizes {
        println!(
            "| {label} | {} KiB | {} KiB | {} KiB |",
            q88 / 1024,
            png / 1024,
            webp / 1024
        );
    }
}
