//! GIF through the `gif` crate itself, one frame at a time: the indexed
//! pixels, palettes, delays, disposal and transparency are written back as
//! they were (lossless, no re-quantising), with the loop count, and nothing
//! else: comments, XMP and other application extensions are never written.

use super::*;
use ::gif::{ColorOutput, DecodeOptions, Encoder, Frame, MemoryLimit, Repeat};
use std::num::NonZeroU64;

fn corrupt(error: impl fmt::Display) -> Rejected {
    Rejected::Corrupt(error.to_string())
}

pub(super) fn process(bytes: &[u8], limits: &Limits) -> Result<Processed, Rejected> {
    let mut options = DecodeOptions::new();
    options.set_color_output(ColorOutput::Indexed);
    // Indexed: a byte a pixel, so a frame is at most max_pixels bytes.
    options.set_memory_limit(MemoryLimit::Bytes(
        NonZeroU64::new(limits.max_pixels.max(1)).unwrap_or(NonZeroU64::MIN),
    ));
    let mut decoder = options.read_info(Cursor::new(bytes)).map_err(corrupt)?;
    let (width, height) = (decoder.width(), decoder.height());
    check_dimensions(width.into(), height.into(), limits)?;
    let global_palette = decoder.global_palette().map(<[u8]>::to_vec);

    let mut encoder: Option<Encoder<Capped>> = None;
    let mut first: Option<RgbaImage> = None;
    let (mut frames, mut decoded_pixels) = (0u32, 0u64);
    // Frame headers are read (and counted) before their pixels are.
    while let Some(info) = decoder.next_frame_info().map_err(corrupt)? {
        let info = info.clone();
        frames += 1;
        if frames > limits.max_frames {
            return Err(Rejected::TooManyFrames { max: limits.max_frames });
        }
        let pixels = u64::from(info.width) * u64::from(info.height);
        if u32::from(info.width) > limits.max_side
            || u32::from(info.height) > limits.max_side
            || pixels > limits.max_pixels
        {
            return Err(too_large(info.width.into(), info.height.into(), limits));
        }
        decoded_pixels += pixels;
        if decoded_pixels > limits.max_animation_pixels {
            return Err(Rejected::AnimationTooLarge {
                max_megapixels: limits.max_animation_pixels / 1_000_000,
            });
        }
        let mut buffer = vec![0; decoder.buffer_size()];
        decoder.read_into_buffer(&mut buffer).map_err(corrupt)?;
        let palette = info
            .palette
            .as_deref()
            .or(global_palette.as_deref())
            .ok_or_else(|| corrupt("a frame has no palette"))?;
        if first.is_none() {
            first = Some(compose_first(width, height, &info, &buffer, palette));
        }
        let encoder = match &mut encoder {
            Some(encoder) => encoder,
            None => {
                // The loop count is known once the first frame's header is read.
                let mut new = Encoder::new(
                    Capped::new(limits.max_file_bytes),
                    width,
                    height,
                    global_palette.as_deref().unwrap_or_default(),
                )
                .map_err(|e| written(e, limits))?;
                if decoder.repeat() != Repeat::Finite(0) {
                    new.set_repeat(decoder.repeat()).map_err(corrupt)?;
                }
                encoder.insert(new)
            }
        };
        let frame = Frame {
            delay: info.delay,
            dispose: info.dispose,
            transparent: info.transparent,
            needs_user_input: false,
            top: info.top,
            left: info.left,
            width: info.width,
            height: info.height,
            interlaced: false,
            palette: info.palette,
            buffer: Cow::Owned(buffer),
        };
        encoder.write_frame(&frame).map_err(|e| written(e, limits))?;
    }
    let (Some(encoder), Some(first)) = (encoder, first) else {
        return Err(corrupt("the GIF has no image"));
    };
    let file = encoder.into_inner().map_err(|e| written(e, limits))?.finish(Ok(()))?;
    let thumbnail = thumbnail(&DynamicImage::ImageRgba8(first), limits)?;
    Ok(Processed {
        content_type: "image/gif",
        width: width.into(),
        height: height.into(),
        file,
        frames,
        animation_dropped: false,
        thumbnail: thumbnail.bytes,
        thumbnail_content_type: thumbnail.content_type,
        thumbnail_width: thumbnail.width,
        thumbnail_height: thumbnail.height,
    })
}

/// An encoder's failure: over `max_file_bytes` ([`Capped`]), or the GIF's own.
fn written(error: impl Into<::gif::EncodingError>, limits: &Limits) -> Rejected {
    match error.into() {
        ::gif::EncodingError::Io(io) if io.kind() == std::io::ErrorKind::FileTooLarge => Rejected::GrowsTooLarge {
            max_bytes: limits.max_file_bytes,
        },
        other => corrupt(other),
    }
}

/// The first frame on a transparent canvas, as a viewer shows it.
fn compose_first(width: u16, height: u16, info: &Frame<'_>, indices: &[u8], palette: &[u8]) -> RgbaImage {
    let mut canvas = RgbaImage::new(width.into(), height.into());
    let row_length = usize::from(info.width);
    for (y, row) in indices.chunks(row_length.max(1)).enumerate() {
        let canvas_y = u32::from(info.top) + y as u32;
        if canvas_y >= u32::from(height) {
            break;
        }
        for (x, &index) in row.iter().enumerate() {
            let canvas_x = u32::from(info.left) + x as u32;
            if canvas_x >= u32::from(width) || Some(index) == info.transparent {
                continue;
            }
            let at = usize::from(index) * 3;
            if let Some(rgb) = palette.get(at..at + 3) {
                canvas.put_pixel(canvas_x, canvas_y, image::Rgba([rgb[0], rgb[1], rgb[2], u8::MAX]));
            }
        }
    }
    canvas
}
