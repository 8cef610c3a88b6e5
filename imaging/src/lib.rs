//! Uploaded images, checked off the request path (docs/API.md, Images):
//! decoded within [`Limits`], re-encoded so that none of the input's metadata
//! survives (EXIF and its GPS, XMP, IPTC, ICC, comments, PNG text chunks, GIF
//! extensions other than the loop count), turned upright by their EXIF
//! orientation first, and given a thumbnail 320 pixels wide.
//!
//! Only this: no storage, no HTTP, no AWS. The `media` function (and the
//! server's background task) calls [`process`] and records `ready` with the
//! [`Processed`] file, or `rejected` with [`Rejected::reason`].
//!
//! The choices (WebP output, GIF re-encoding, ICC, thumbnail format, memory
//! budget) and their measured cost are in imaging/README.md.

use std::borrow::Cow;
use std::fmt;
use std::io::Cursor;

use image::codecs::jpeg::{JpegDecoder, JpegEncoder};
use image::codecs::png::{CompressionType, FilterType, PngDecoder, PngEncoder};
use image::codecs::webp::{WebPDecoder, WebPEncoder};
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageError, ImageFormat, ImageReader, RgbaImage};

mod gif;
mod webp;

/// The width of every thumbnail; a narrower image keeps its own width.
pub const THUMBNAIL_WIDTH: u32 = 320;
/// JPEG quality of re-encoded photos: visually lossless for photographs at
/// about a third of the size of quality 100.
pub const JPEG_QUALITY: u8 = 88;
/// JPEG quality of thumbnails (small, shown in lists).
pub const THUMBNAIL_JPEG_QUALITY: u8 = 80;

/// What a decode may cost. The defaults are the contract's (docs/API.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Pixels on either side (8,192).
    pub max_side: u32,
    /// Width × height of the image (50 megapixels).
    pub max_pixels: u64,
    /// Frames of an animation (300).
    pub max_frames: u32,
    /// Pixels decoded over all the frames of an animation: bounds the CPU
    /// time of a GIF (300 frames of 8,192 × 6,100 would otherwise pass every
    /// other limit). 250 million: 300 frames of 912 × 912, or five of 50 MP.
    pub max_animation_pixels: u64,
    /// Bytes the decoder may allocate for the decoded pixels (and, for PNG,
    /// its own buffers): 256 MiB holds the largest image the other limits let
    /// through in 8 bits a channel (50 MP RGBA = 200 MB). A 16-bit PNG needs
    /// twice that and is refused above about 33 MP (RGBA) or 44 MP (RGB).
    pub max_alloc: u64,
    /// Bytes of a stored file or thumbnail (`MEDIA_MAX_BYTES`, 20 MiB): an
    /// encoder that writes one more fails at once ([`Rejected::GrowsTooLarge`]).
    pub max_file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_side: 8_192,
            max_pixels: 50_000_000,
            max_frames: 300,
            max_animation_pixels: 250_000_000,
            max_alloc: 256 * 1024 * 1024,
            max_file_bytes: 20 * 1024 * 1024,
        }
    }
}

/// The four content types a client may declare for an upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Declared {
    Jpeg,
    Png,
    Gif,
    Webp,
}

impl Declared {
    /// Parses a declared content type (`image/png`, case-insensitive, with
    /// parameters ignored); `None` for every other type.
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        [Self::Jpeg, Self::Png, Self::Gif, Self::Webp]
            .into_iter()
            .find(|declared| declared.content_type().eq_ignore_ascii_case(essence))
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    fn format(self) -> ImageFormat {
        match self {
            Self::Jpeg => ImageFormat::Jpeg,
            Self::Png => ImageFormat::Png,
            Self::Gif => ImageFormat::Gif,
            Self::Webp => ImageFormat::WebP,
        }
    }
}

impl fmt::Display for Declared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.content_type())
    }
}

/// A checked, re-encoded image and its thumbnail.
#[derive(Clone, PartialEq, Eq)]
pub struct Processed {
    /// The type of `file`, the one it is served with.
    pub content_type: &'static str,
    /// Upright (after the EXIF orientation), in pixels.
    pub width: u32,
    pub height: u32,
    /// The re-encoded image: no metadata of the input.
    pub file: Vec<u8>,
    pub thumbnail: Vec<u8>,
    pub thumbnail_content_type: &'static str,
    pub thumbnail_width: u32,
    pub thumbnail_height: u32,
    /// Frames in `file` (1 for a still image).
    pub frames: u32,
    /// An animated WebP or PNG: only its first (default) image is kept, as
    /// a still image of the same format (README, Animations).
    pub animation_dropped: bool,
}

impl fmt::Debug for Processed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Processed")
            .field("content_type", &self.content_type)
            .field("width", &self.width)
            .field("height", &self.height)
            .field("file_bytes", &self.file.len())
            .field("thumbnail_content_type", &self.thumbnail_content_type)
            .field("thumbnail_width", &self.thumbnail_width)
            .field("thumbnail_height", &self.thumbnail_height)
            .field("thumbnail_bytes", &self.thumbnail.len())
            .field("frames", &self.frames)
            .field("animation_dropped", &self.animation_dropped)
            .finish()
    }
}

/// Why an upload is `rejected`; [`Rejected::reason`] (its `Display`) is the
/// sentence the client reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejected {
    #[error("the file is not an image")]
    NotAnImage,
    #[error("the file was declared {declared} but is {found}")]
    NotWhatItClaims { declared: Declared, found: &'static str },
    #[error("the image is {width} x {height} pixels: at most {max_side} a side and {max_megapixels} megapixels")]
    TooLarge {
        width: u32,
        height: u32,
        max_side: u32,
        max_megapixels: u64,
    },
    #[error("the animation has more than {max} frames")]
    TooManyFrames { max: u32 },
    #[error("the animation has more than {max_megapixels} megapixels in all its frames")]
    AnimationTooLarge { max_megapixels: u64 },
    #[error("the image needs more than {max_mib} MiB to decode")]
    OverMemoryBudget { max_mib: u64 },
    #[error("re-encoded, the image would be larger than {max_bytes} bytes")]
    GrowsTooLarge { max_bytes: u64 },
    #[error("the image is damaged or uses a feature not supported: {0}")]
    Corrupt(String),
}

impl Rejected {
    /// The `reason` of a `rejected` upload.
    pub fn reason(&self) -> String {
        self.to_string()
    }
}

/// Checks `bytes` against `declared` and `limits`, and re-encodes them.
///
/// The format is guessed from the bytes and must be the declared one. The
/// dimensions are read from the header and checked before any pixel is
/// decoded; the decoded pixels are bounded by `limits.max_alloc`; an
/// animation is read one frame at a time and stops at the first frame over
/// `limits.max_frames`.
pub fn process(bytes: &[u8], declared: Declared, limits: &Limits) -> Result<Processed, Rejected> {
    let found = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .ok()
        .and_then(|reader| reader.format())
        .ok_or(Rejected::NotAnImage)?;
    if found != declared.format() {
        return Err(Rejected::NotWhatItClaims {
            declared,
            found: found.to_mime_type(),
        });
    }
    match declared {
        Declared::Jpeg => {
            let decoder = JpegDecoder::new(Cursor::new(bytes)).map_err(|e| rejected(e, limits))?;
            let (image, _) = decode_still(decoder, limits)?;
            finish_still(&image, Output::Jpeg, false, limits)
        }
        Declared::Png => {
            // The header is read under the memory budget only, so that the
            // dimensions are checked (and named in the reason) by decode_still.
            let mut header_limits = image_limits(limits);
            header_limits.max_image_width = None;
            header_limits.max_image_height = None;
            let decoder =
                PngDecoder::with_limits(Cursor::new(bytes), header_limits).map_err(|e| rejected(e, limits))?;
            let animated = decoder.is_apng().map_err(|e| rejected(e, limits))?;
            let (image, _) = decode_still(decoder, limits)?;
            finish_still(&image, Output::Png, animated, limits)
        }
        Declared::Webp => {
            let decoder = WebPDecoder::new(Cursor::new(bytes)).map_err(|e| rejected(e, limits))?;
            let animated = decoder.has_animation();
            let (image, turned) = decode_still(decoder, limits)?;
            // A lossy WebP without alpha is a photo: JPEG keeps it about the
            // size it came; the only WebP encoder here is lossless (README).
            // A still lossless one keeps its own pixel bitstream, the only
            // chunk written, so it is never larger than it came (README).
            let output = if webp::is_lossy(bytes) && !image.color().has_alpha() {
                Output::Jpeg
            } else if let Some(bitstream) = webp::lossless_bitstream(bytes).filter(|_| !animated && !turned) {
                Output::WebpBitstream(bitstream)
            } else {
                Output::Webp
            };
            finish_still(&image, output, animated, limits)
        }
        Declared::Gif => gif::process(bytes, limits),
    }
}

fn image_limits(limits: &Limits) -> image::Limits {
    let mut out = image::Limits::default();
    out.max_image_width = Some(limits.max_side);
    out.max_image_height = Some(limits.max_side);
    out.max_alloc = Some(limits.max_alloc);
    out
}

fn check_dimensions(width: u32, height: u32, limits: &Limits) -> Result<(), Rejected> {
    if width > limits.max_side || height > limits.max_side || u64::from(width) * u64::from(height) > limits.max_pixels {
        return Err(too_large(width, height, limits));
    }
    if width == 0 || height == 0 {
        return Err(Rejected::Corrupt(format!("the image is {width} x {height} pixels")));
    }
    Ok(())
}

fn too_large(width: u32, height: u32, limits: &Limits) -> Rejected {
    Rejected::TooLarge {
        width,
        height,
        max_side: limits.max_side,
        max_megapixels: limits.max_pixels / 1_000_000,
    }
}

fn rejected(error: ImageError, limits: &Limits) -> Rejected {
    match error {
        ImageError::Limits(_) => Rejected::OverMemoryBudget {
            max_mib: limits.max_alloc / (1024 * 1024),
        },
        other => Rejected::Corrupt(other.to_string()),
    }
}

/// The header's dimensions first, then the pixels within `max_alloc`, then
/// upright (and whether that turned or mirrored them).
fn decode_still(mut decoder: impl ImageDecoder, limits: &Limits) -> Result<(DynamicImage, bool), Rejected> {
    let (width, height) = decoder.dimensions();
    check_dimensions(width, height, limits)?;
    let mut budget = image_limits(limits);
    budget.reserve(decoder.total_bytes()).map_err(|e| rejected(e, limits))?;
    decoder.set_limits(budget).map_err(|e| rejected(e, limits))?;
    // A damaged EXIF block is no reason to refuse the pixels: upright as stored.
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut image = DynamicImage::from_decoder(decoder).map_err(|e| rejected(e, limits))?;
    image.apply_orientation(orientation);
    Ok((image, orientation != Orientation::NoTransforms))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output<'a> {
    Jpeg,
    Png,
    Webp,
    /// A lossless WebP's own `VP8L` bitstream, in a container of its own.
    WebpBitstream(&'a [u8]),
}

fn finish_still(
    image: &DynamicImage,
    output: Output<'_>,
    animation_dropped: bool,
    limits: &Limits,
) -> Result<Processed, Rejected> {
    let mut out = Capped::new(limits.max_file_bytes);
    let (encoded, content_type) = match output {
        Output::Jpeg => (encode_jpeg(image, JPEG_QUALITY, &mut out), "image/jpeg"),
        Output::Png => (encode_png(image, &mut out), "image/png"),
        Output::Webp => (encode_webp(image, &mut out), "image/webp"),
        Output::WebpBitstream(bitstream) => (
            webp::contain(bitstream, &mut out).map_err(|e| encoding_failed(e.into())),
            "image/webp",
        ),
    };
    let file = out.finish(encoded)?;
    let thumbnail = thumbnail(image, limits)?;
    Ok(Processed {
        content_type,
        width: image.width(),
        height: image.height(),
        file,
        frames: 1,
        animation_dropped,
        thumbnail: thumbnail.bytes,
        thumbnail_content_type: thumbnail.content_type,
        thumbnail_width: thumbnail.width,
        thumbnail_height: thumbnail.height,
    })
}

fn encoding_failed(error: ImageError) -> Rejected {
    Rejected::Corrupt(format!("re-encoding failed: {error}"))
}

fn encode_jpeg(image: &DynamicImage, quality: u8, out: &mut Capped) -> Result<(), Rejected> {
    let encoder = JpegEncoder::new_with_quality(out, quality);
    // Without a copy when the pixels already are 8-bit RGB or gray (a
    // decoded JPEG): a 48 MP copy is 144 MB more at the peak.
    match image {
        DynamicImage::ImageLuma8(gray) => gray.write_with_encoder(encoder),
        DynamicImage::ImageRgb8(rgb) => rgb.write_with_encoder(encoder),
        other => other.to_rgb8().write_with_encoder(encoder),
    }
    .map_err(encoding_failed)
}

fn encode_png(image: &DynamicImage, out: &mut Capped) -> Result<(), Rejected> {
    let encoder = PngEncoder::new_with_quality(out, CompressionType::Default, FilterType::Adaptive);
    match image {
        DynamicImage::ImageLuma8(_)
        | DynamicImage::ImageLumaA8(_)
        | DynamicImage::ImageRgb8(_)
        | DynamicImage::ImageRgba8(_)
        | DynamicImage::ImageLuma16(_)
        | DynamicImage::ImageLumaA16(_)
        | DynamicImage::ImageRgb16(_)
        | DynamicImage::ImageRgba16(_) => image.write_with_encoder(encoder),
        other => other.to_rgba16().write_with_encoder(encoder),
    }
    .map_err(encoding_failed)
}

fn encode_webp(image: &DynamicImage, out: &mut Capped) -> Result<(), Rejected> {
    let encoder = WebPEncoder::new_lossless(out);
    match image {
        DynamicImage::ImageRgb8(rgb) => rgb.write_with_encoder(encoder),
        DynamicImage::ImageRgba8(rgba) => rgba.write_with_encoder(encoder),
        other if other.color().has_alpha() => other.to_rgba8().write_with_encoder(encoder),
        other => other.to_rgb8().write_with_encoder(encoder),
    }
    .map_err(encoding_failed)
}

/// An encoder's output that holds at most `cap` bytes: the write that would
/// pass it fails, so a file that grows stops growing in memory at the cap.
struct Capped {
    bytes: Vec<u8>,
    cap: u64,
    overflowed: bool,
}

impl Capped {
    fn new(cap: u64) -> Self {
        Capped {
            bytes: Vec::new(),
            cap,
            overflowed: false,
        }
    }

    /// The bytes written, or why not: over the cap whatever the encoder said.
    fn finish<T>(self, encoded: Result<T, Rejected>) -> Result<Vec<u8>, Rejected> {
        if self.overflowed {
            return Err(Rejected::GrowsTooLarge { max_bytes: self.cap });
        }
        encoded.map(|_| self.bytes)
    }
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() as u64 + buf.len() as u64 > self.cap {
            self.overflowed = true;
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                "the encoded image is over the size limit",
            ));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Thumbnail {
    bytes: Vec<u8>,
    content_type: &'static str,
    width: u32,
    height: u32,
}

/// 320 pixels wide (or the image's own width if narrower), the aspect kept;
/// JPEG unless some pixel is not opaque, then PNG (README, Thumbnails).
fn thumbnail(image: &DynamicImage, limits: &Limits) -> Result<Thumbnail, Rejected> {
    let (width, height) = (image.width(), image.height());
    let small = if width > THUMBNAIL_WIDTH {
        let scaled = (u64::from(height) * u64::from(THUMBNAIL_WIDTH) + u64::from(width) / 2) / u64::from(width);
        let thumb_height = u32::try_from(scaled).unwrap_or(u32::MAX).max(1);
        Cow::Owned(image.thumbnail_exact(THUMBNAIL_WIDTH, thumb_height))
    } else {
        Cow::Borrowed(image)
    };
    let transparent = small.color().has_alpha() && small.to_rgba8().pixels().any(|pixel| pixel.0[3] != u8::MAX);
    let mut out = Capped::new(limits.max_file_bytes);
    let (encoded, content_type) = if transparent {
        let rgba = DynamicImage::ImageRgba8(small.to_rgba8());
        (encode_png(&rgba, &mut out), "image/png")
    } else {
        (encode_jpeg(&small, THUMBNAIL_JPEG_QUALITY, &mut out), "image/jpeg")
    };
    let bytes = out.finish(encoded)?;
    Ok(Thumbnail {
        bytes,
        content_type,
        width: small.width(),
        height: small.height(),
    })
}
