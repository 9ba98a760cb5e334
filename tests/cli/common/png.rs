//! Decodes the PNG screenshots headless Chromium takes (`--screenshot`), so a browser test can
//! count the pixels of a plot's colours: the drawing was painted, not only parsed.

use std::io::Read;

/// A decoded screenshot: RGB(A) pixels, row by row.
pub struct Image {
    channels: usize,
    pixels: Vec<u8>,
}

impl Image {
    /// Pixels of exactly this colour.
    pub fn count(&self, r: u8, g: u8, b: u8) -> usize {
        self.count_where(|p| p == [r, g, b])
    }

    /// Pixels whose colour `keep` accepts (for a thin, anti-aliased line: a hue, not a
    /// colour).
    pub fn count_where(&self, keep: impl Fn([u8; 3]) -> bool) -> usize {
        self.pixels
            .chunks_exact(self.channels)
            .filter(|p| keep([p[0], p[1], p[2]]))
            .count()
    }
}

/// A PNG of 8-bit RGB or RGBA, not interlaced (what Chromium writes), decoded.
pub fn decode_png(bytes: &[u8]) -> Result<Image, Box<dyn std::error::Error>> {
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    let (mut at, mut idat) = (8, Vec::new());
    let (mut width, mut channels) = (0_usize, 0_usize);
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into()?) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(data[0..4].try_into()?) as usize;
                assert_eq!((data[8], data[12]), (8, 0), "8-bit, not interlaced");
                channels = match data[9] {
                    2 => 3,
                    6 => 4,
                    other => return Err(format!("PNG colour type {other}").into()),
                };
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..]).read_to_end(&mut raw)?;
    let stride = width * channels;
    let mut pixels = Vec::with_capacity(raw.len());
    let mut previous = vec![0_u8; stride];
    for line in raw.chunks_exact(stride + 1) {
        let (filter, line) = (line[0], &line[1..]);
        let mut row = vec![0_u8; stride];
        for i in 0..stride {
            let a = if i >= channels { row[i - channels] } else { 0 };
            let b = previous[i];
            let c = if i >= channels {
                previous[i - channels]
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => paeth(a, b, c),
                other => return Err(format!("PNG filter {other}").into()),
            };
            row[i] = line[i].wrapping_add(predicted);
        }
        pixels.extend_from_slice(&row);
        previous = row;
    }
    Ok(Image { channels, pixels })
}

/// PNG's Paeth predictor.
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}
