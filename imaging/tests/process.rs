//! `imaging::process` on real images made here with `image` and `gif`, and on
//! hand-built bytes where an encoder would not write what is tested (EXIF,
//! text chunks, comments, lying headers).

use std::io::Cursor;
use std::time::{Duration, Instant};

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::codecs::webp::WebPEncoder;
use image::{DynamicImage, ImageEncoder, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use imaging::{Declared, Limits, Rejected, process};

fn limits() -> Limits {
    Limits::default()
}

/// Left half red, right half blue.
fn two_halves(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, _| {
        if x < width / 2 {
            Rgb([255, 0, 0])
        } else {
            Rgb([0, 0, 255])
        }
    })
}

fn jpeg(image: &RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    image
        .write_with_encoder(JpegEncoder::new_with_quality(&mut out, 90))
        .unwrap();
    out
}

fn png(image: &DynamicImage) -> Vec<u8> {
    let mut out = Vec::new();
    image.write_with_encoder(PngEncoder::new(&mut out)).unwrap();
    out
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

/// The chunk types of a PNG, in order.
fn png_chunk_types(bytes: &[u8]) -> Vec<String> {
    let mut types = Vec::new();
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let length = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        types.push(String::from_utf8_lossy(&bytes[at + 4..at + 8]).into_owned());
        at += 12 + length;
    }
    types
}

/// A PNG whose IHDR claims `width` x `height` (RGBA, 8 bits), with a CRC
/// that checks, one empty IDAT and no pixels.
fn png_header_claiming(width: u32, height: u32) -> Vec<u8> {
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

/// An APP1 segment: EXIF in little-endian TIFF, IFD0 with Orientation and a
/// GPS IFD pointer, the GPS IFD with GPSLatitudeRef "N" and GPSLatitude
/// 48/1, 51/1, 30/1.
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
    for value in [48u32, 51, 30] {
        tiff.extend_from_slice(&value.to_le_bytes());
        tiff.extend_from_slice(&1u32.to_le_bytes());
    }
    let mut segment = vec![0xFF, 0xE1];
    segment.extend_from_slice(&((2 + 6 + tiff.len()) as u16).to_be_bytes());
    segment.extend_from_slice(b"Exif\0\0");
    segment.extend(tiff);
    segment
}

fn with_app_segment(jpeg: &[u8], segment: &[u8]) -> Vec<u8> {
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(segment);
    out.extend_from_slice(&jpeg[2..]);
    out
}

fn read_exif(bytes: &[u8]) -> Result<exif::Exif, exif::Error> {
    exif::Reader::new().read_from_container(&mut Cursor::new(bytes))
}

fn gif(width: u16, height: u16, frames: &[(u16, u8)], repeat: Option<gif::Repeat>) -> Vec<u8> {
    let palette = [0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 0, 255];
    let mut encoder = gif::Encoder::new(Vec::new(), width, height, &palette).unwrap();
    if let Some(repeat) = repeat {
        encoder.set_repeat(repeat).unwrap();
    }
    for &(delay, colour) in frames {
        let pixels = vec![colour; usize::from(width) * usize::from(height)];
        let mut frame = gif::Frame::from_indexed_pixels(width, height, pixels, None);
        frame.delay = delay;
        encoder.write_frame(&frame).unwrap();
    }
    encoder.into_inner().unwrap()
}

/// (delay, first pixel index) of each frame, and the loop count.
fn gif_frames(bytes: &[u8]) -> (Vec<(u16, u8)>, gif::Repeat) {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(Cursor::new(bytes)).unwrap();
    let mut frames = Vec::new();
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        frames.push((frame.delay, frame.buffer[0]));
    }
    (frames, decoder.repeat())
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

#[test]
fn a_jpeg_with_gps_and_orientation_6_comes_out_upright_with_no_exif_at_all() {
    let input = with_app_segment(&jpeg(&two_halves(64, 32)), &exif_app1(6));
    let exif = read_exif(&input).expect("the input carries EXIF");
    assert!(
        exif.get_field(exif::Tag::GPSLatitude, exif::In::PRIMARY).is_some(),
        "the input has GPS"
    );
    let orientation = exif.get_field(exif::Tag::Orientation, exif::In::PRIMARY).unwrap();
    assert_eq!(orientation.value.get_uint(0), Some(6));

    let out = process(&input, Declared::Jpeg, &limits()).unwrap();
    assert_eq!(out.content_type, "image/jpeg");
    assert!(
        matches!(read_exif(&out.file), Err(exif::Error::NotFound(_))),
        "the output has no EXIF"
    );
    assert!(!contains(&out.file, b"Exif\0\0"));
    // Orientation 6 is a quarter turn clockwise: 64 x 32 is shown 32 x 64,
    // the left (red) half on top.
    assert_eq!((out.width, out.height), (32, 64));
    let decoded = image::load_from_memory_with_format(&out.file, ImageFormat::Jpeg)
        .unwrap()
        .to_rgb8();
    assert_eq!(decoded.dimensions(), (32, 64));
    let (top, bottom) = (decoded.get_pixel(16, 8), decoded.get_pixel(16, 56));
    assert!(top[0] > 200 && top[2] < 60, "top is red: {top:?}");
    assert!(bottom[2] > 200 && bottom[0] < 60, "bottom is blue: {bottom:?}");
    assert!(matches!(read_exif(&out.thumbnail), Err(exif::Error::NotFound(_))));
}

#[test]
fn a_png_text_chunk_does_not_survive() {
    let plain = png(&DynamicImage::ImageRgb8(two_halves(40, 30)));
    let iend = plain.len() - 12;
    let mut input = plain[..iend].to_vec();
    input.extend(png_chunk(b"tEXt", b"Comment\0taken at 48.8584 N 2.2945 E"));
    input.extend_from_slice(&plain[iend..]);
    assert!(contains(&input, b"48.8584"));

    let out = process(&input, Declared::Png, &limits()).unwrap();
    assert_eq!(out.content_type, "image/png");
    assert!(!contains(&out.file, b"48.8584"));
    assert_eq!(png_chunk_types(&out.file), ["IHDR", "IDAT", "IEND"]);
    assert_eq!((out.width, out.height), (40, 30));
}

#[test]
fn html_declared_as_a_png_is_not_an_image() {
    let html = b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>";
    assert_eq!(process(html, Declared::Png, &limits()), Err(Rejected::NotAnImage));
}

#[test]
fn a_png_declared_as_a_jpeg_is_rejected_for_not_being_what_it_claims() {
    let input = png(&DynamicImage::ImageRgb8(two_halves(8, 8)));
    let rejected = process(&input, Declared::Jpeg, &limits()).unwrap_err();
    assert_eq!(
        rejected,
        Rejected::NotWhatItClaims {
            declared: Declared::Jpeg,
            found: "image/png"
        }
    );
    assert_eq!(rejected.reason(), "the file was declared image/jpeg but is image/png");
}

#[test]
fn a_png_header_claiming_100000_by_100000_is_refused_from_its_header_at_once() {
    let input = png_header_claiming(100_000, 100_000);
    let started = Instant::now();
    let rejected = process(&input, Declared::Png, &limits()).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        matches!(
            rejected,
            Rejected::TooLarge {
                width: 100_000,
                height: 100_000,
                ..
            }
        ),
        "{rejected:?}"
    );
    assert_eq!(
        rejected.reason(),
        "the image is 100000 x 100000 pixels: at most 8192 a side and 50 megapixels"
    );
}

#[test]
fn a_png_header_over_50_megapixels_within_8192_a_side_is_refused() {
    let rejected = process(&png_header_claiming(8_000, 6_251), Declared::Png, &limits()).unwrap_err();
    assert!(
        matches!(
            rejected,
            Rejected::TooLarge {
                width: 8_000,
                height: 6_251,
                ..
            }
        ),
        "{rejected:?}"
    );
}

#[test]
fn an_image_8193_pixels_wide_is_refused() {
    let input = png(&DynamicImage::ImageLuma8(image::GrayImage::new(8_193, 2)));
    let rejected = process(&input, Declared::Png, &limits()).unwrap_err();
    assert!(
        matches!(
            rejected,
            Rejected::TooLarge {
                width: 8_193,
                height: 2,
                ..
            }
        ),
        "{rejected:?}"
    );
}

#[test]
fn an_image_8192_pixels_wide_is_accepted() {
    let input = png(&DynamicImage::ImageLuma8(image::GrayImage::new(8_192, 2)));
    let out = process(&input, Declared::Png, &limits()).unwrap();
    assert_eq!((out.width, out.thumbnail_width, out.thumbnail_height), (8_192, 320, 1));
}

#[test]
fn a_gif_of_301_frames_is_refused_and_one_of_300_accepted() {
    let frames: Vec<(u16, u8)> = (0..301).map(|i| (2, (i % 4) as u8)).collect();
    let rejected = process(
        &gif(4, 4, &frames, Some(gif::Repeat::Infinite)),
        Declared::Gif,
        &limits(),
    )
    .unwrap_err();
    assert_eq!(rejected, Rejected::TooManyFrames { max: 300 });
    assert_eq!(rejected.reason(), "the animation has more than 300 frames");

    let out = process(
        &gif(4, 4, &frames[..300], Some(gif::Repeat::Infinite)),
        Declared::Gif,
        &limits(),
    )
    .unwrap();
    assert_eq!(out.frames, 300);
}

#[test]
fn a_gif_of_10000_frames_stops_at_the_301st() {
    let frames: Vec<(u16, u8)> = (0..10_000).map(|i| (2, (i % 4) as u8)).collect();
    let input = gif(64, 64, &frames, None);
    let started = Instant::now();
    let rejected = process(&input, Declared::Gif, &limits()).unwrap_err();
    assert_eq!(rejected, Rejected::TooManyFrames { max: 300 });
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn an_animated_gif_keeps_its_three_frames_delays_and_loop_without_its_comment() {
    let made = gif(30, 20, &[(10, 1), (20, 2), (30, 3)], Some(gif::Repeat::Infinite));
    // A comment extension and an XMP application extension after the
    // global palette (header 6 + screen 7 + palette 4 x 3 = 25 bytes).
    let mut input = made[..25].to_vec();
    input.extend_from_slice(&[0x21, 0xFE, 9]);
    input.extend_from_slice(b"secret-42");
    input.push(0);
    input.extend_from_slice(&[0x21, 0xFF, 11]);
    input.extend_from_slice(b"XMP DataXMP");
    input.push(12);
    input.extend_from_slice(b"<x:xmpmeta/>");
    input.push(0);
    input.extend_from_slice(&made[25..]);
    assert_eq!(
        gif_frames(&input).0.len(),
        3,
        "the input with its extensions still decodes"
    );

    let out = process(&input, Declared::Gif, &limits()).unwrap();
    assert_eq!(
        (out.content_type, out.frames, out.width, out.height),
        ("image/gif", 3, 30, 20)
    );
    let (frames, repeat) = gif_frames(&out.file);
    assert_eq!(frames, [(10, 1), (20, 2), (30, 3)]);
    assert_eq!(repeat, gif::Repeat::Infinite);
    assert!(!contains(&out.file, b"secret-42"));
    assert!(!contains(&out.file, b"XMP"));
    assert!(contains(&out.file, b"NETSCAPE2.0"));
    // The thumbnail is the first frame (palette index 1: white), opaque: JPEG.
    assert_eq!(out.thumbnail_content_type, "image/jpeg");
    let thumbnail = image::load_from_memory(&out.thumbnail).unwrap().to_rgb8();
    assert!(thumbnail.get_pixel(0, 0)[0] > 240);
}

#[test]
fn a_still_gif_stays_a_gif_with_no_loop_extension() {
    let out = process(&gif(10, 10, &[(0, 2)], None), Declared::Gif, &limits()).unwrap();
    assert_eq!((out.content_type, out.frames), ("image/gif", 1));
    assert!(!contains(&out.file, b"NETSCAPE2.0"));
}

#[test]
fn a_thumbnail_is_320_wide_with_the_aspect_kept() {
    let out = process(&jpeg(&two_halves(1_000, 500)), Declared::Jpeg, &limits()).unwrap();
    assert_eq!((out.thumbnail_width, out.thumbnail_height), (320, 160));
    let thumbnail = image::load_from_memory_with_format(&out.thumbnail, ImageFormat::Jpeg).unwrap();
    assert_eq!((thumbnail.width(), thumbnail.height()), (320, 160));
}

#[test]
fn an_image_narrower_than_320_keeps_its_width_in_the_thumbnail() {
    let out = process(&jpeg(&two_halves(200, 100)), Declared::Jpeg, &limits()).unwrap();
    assert_eq!((out.thumbnail_width, out.thumbnail_height), (200, 100));
}

#[test]
fn a_transparent_png_gets_a_png_thumbnail() {
    let image = RgbaImage::from_fn(640, 480, |x, _| Rgba([0, 128, 0, if x < 320 { 0 } else { 255 }]));
    let out = process(&png(&DynamicImage::ImageRgba8(image)), Declared::Png, &limits()).unwrap();
    assert_eq!(
        (out.thumbnail_content_type, out.thumbnail_width, out.thumbnail_height),
        ("image/png", 320, 240)
    );
}

#[test]
fn a_lossless_webp_stays_a_lossless_webp() {
    let image = RgbaImage::from_fn(50, 40, |x, y| Rgba([x as u8 * 5, y as u8 * 6, 0, 200]));
    let mut input = Vec::new();
    WebPEncoder::new_lossless(&mut input)
        .write_image(&image, 50, 40, image::ExtendedColorType::Rgba8)
        .unwrap();
    let out = process(&input, Declared::Webp, &limits()).unwrap();
    assert_eq!((out.content_type, out.width, out.height), ("image/webp", 50, 40));
    let decoded = image::load_from_memory_with_format(&out.file, ImageFormat::WebP)
        .unwrap()
        .to_rgba8();
    assert_eq!(decoded, image, "lossless both ways");
}

#[test]
fn a_declared_content_type_is_read_without_case_or_parameters() {
    assert_eq!(Declared::from_content_type("image/png"), Some(Declared::Png));
    assert_eq!(Declared::from_content_type("IMAGE/JPEG; q=1"), Some(Declared::Jpeg));
    assert_eq!(Declared::from_content_type("image/svg+xml"), None);
    assert_eq!(Declared::from_content_type("image/jpg"), None);
}

#[test]
fn a_truncated_jpeg_is_rejected_as_damaged() {
    let whole = jpeg(&two_halves(64, 64));
    let rejected = process(&whole[..whole.len() / 3], Declared::Jpeg, &limits()).unwrap_err();
    assert!(matches!(rejected, Rejected::Corrupt(_)), "{rejected:?}");
}

/// The chunk fourccs of a WebP, in order.
fn webp_chunks(bytes: &[u8]) -> Vec<String> {
    let mut chunks = Vec::new();
    let mut at = 12;
    while at + 8 <= bytes.len() {
        let size = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        chunks.push(String::from_utf8_lossy(&bytes[at..at + 4]).into_owned());
        at += 8 + size + (size & 1);
    }
    chunks
}

/// A chunk of a RIFF file: fourcc, little-endian size, data, padding.
fn riff_chunk(fourcc: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut chunk = fourcc.to_vec();
    chunk.extend_from_slice(&(data.len() as u32).to_le_bytes());
    chunk.extend_from_slice(data);
    if data.len() % 2 == 1 {
        chunk.push(0);
    }
    chunk
}

/// The audit's file (docs/security.md): 7000 x 7000 pixels tiled from one
/// 64 x 64 tile, 33,608 bytes as libwebp writes it (Pillow, lossless).
/// Re-encoded by the only lossless encoder here it was 146 MB.
const TILED_7000: &[u8] = include_bytes!("fixtures/tiled-7000x7000.webp");

#[test]
fn the_audits_tiled_lossless_webp_is_stored_no_larger_than_it_came() {
    let out = process(TILED_7000, Declared::Webp, &limits()).unwrap();
    assert_eq!((out.content_type, out.width, out.height), ("image/webp", 7000, 7000));
    assert!(
        out.file.len() <= TILED_7000.len(),
        "{} bytes stored from {}",
        out.file.len(),
        TILED_7000.len()
    );
    assert_eq!(webp_chunks(&out.file), ["VP8L"]);
    assert!(out.thumbnail.len() < 64 * 1024, "{}", out.thumbnail.len());
}

#[test]
fn an_extended_lossless_webp_keeps_its_pixels_and_loses_every_other_chunk() {
    let image = RgbaImage::from_fn(33, 21, |x, y| Rgba([x as u8 * 7, y as u8 * 11, 90, 255]));
    let mut simple = Vec::new();
    WebPEncoder::new_lossless(&mut simple)
        .write_image(&image, 33, 21, image::ExtendedColorType::Rgba8)
        .unwrap();
    let bitstream = &simple[20..];
    // VP8X with the EXIF and XMP flags, the pixels, then both blocks.
    let mut vp8x = vec![0b0000_1100, 0, 0, 0];
    vp8x.extend_from_slice(&32u32.to_le_bytes()[..3]);
    vp8x.extend_from_slice(&20u32.to_le_bytes()[..3]);
    let mut body = b"WEBP".to_vec();
    body.extend(riff_chunk(b"VP8X", &vp8x));
    body.extend(riff_chunk(b"VP8L", bitstream));
    body.extend(riff_chunk(b"EXIF", b"Exif\0\0GPS 37.5665 N 126.9780 E"));
    body.extend(riff_chunk(b"XMP ", b"<x:xmpmeta>secret</x:xmpmeta>"));
    let mut input = b"RIFF".to_vec();
    input.extend_from_slice(&(body.len() as u32).to_le_bytes());
    input.extend(body);
    assert_eq!(webp_chunks(&input), ["VP8X", "VP8L", "EXIF", "XMP "]);

    let out = process(&input, Declared::Webp, &limits()).unwrap();
    assert_eq!(webp_chunks(&out.file), ["VP8L"]);
    assert!(!contains(&out.file, b"GPS") && !contains(&out.file, b"secret"));
    let decoded = image::load_from_memory_with_format(&out.file, ImageFormat::WebP)
        .unwrap()
        .to_rgba8();
    assert_eq!(decoded, image, "the same pixels");
}

/// Noise: no encoder makes it much smaller than its pixels.
fn noise(width: u32, height: u32) -> RgbImage {
    let mut state = 0x2545_F491_u32;
    RgbImage::from_fn(width, height, |_, _| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let [a, b, c, _] = state.to_le_bytes();
        Rgb([a, b, c])
    })
}

#[test]
fn a_file_whose_re_encoding_passes_the_cap_is_refused_naming_it() {
    let input = png(&DynamicImage::ImageRgb8(noise(200, 200)));
    let capped = Limits {
        max_file_bytes: 50_000,
        ..limits()
    };
    let rejected = process(&input, Declared::Png, &capped).unwrap_err();
    assert_eq!(rejected, Rejected::GrowsTooLarge { max_bytes: 50_000 });
    assert_eq!(
        rejected.reason(),
        "re-encoded, the image would be larger than 50000 bytes"
    );
    assert!(
        process(&input, Declared::Png, &limits()).is_ok(),
        "under the default cap it is stored"
    );
}

#[test]
fn a_gif_that_passes_the_cap_is_refused_too() {
    let input = gif(64, 64, &[(10, 0), (10, 1), (10, 2), (10, 3)], None);
    let capped = Limits {
        max_file_bytes: 100,
        ..limits()
    };
    let rejected = process(&input, Declared::Gif, &capped).unwrap_err();
    assert_eq!(rejected, Rejected::GrowsTooLarge { max_bytes: 100 });
}
