//! A minimal PNG encoder for palette images: no compression (zlib "stored" blocks), which
//! keeps it short and easy to check by hand, at the cost of size (one byte per pixel).
//!
//! Layout (PNG specification, ISO/IEC 15948): the 8-byte signature, then chunks of
//! `length (u32 BE) | type (4 ASCII bytes) | data | CRC-32 (u32 BE) of type and data`:
//! `IHDR` (width, height, bit depth 8, colour type 3 = palette), `PLTE` (RGB triples),
//! `IDAT` (a zlib stream of the scanlines, each prefixed with filter type 0), `IEND`.
//! The zlib stream (RFC 1950) is the header `78 01`, deflate blocks of type 00 (stored,
//! RFC 1951: a header byte, `LEN` and `!LEN` as u16 LE, then `LEN` raw bytes, at most
//! 65535) and the Adler-32 of the raw data (u32 BE).

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) lookup table, built at compile time.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
};

/// CRC-32 of `bytes`, as PNG chunks use it.
pub fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |c, &b| CRC_TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8))
}

/// Adler-32 of `bytes`, as the zlib trailer holds it.
pub fn adler32(bytes: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 is the most bytes that cannot overflow `b` before the reduction (zlib's NMAX).
    for chunk in bytes.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// `data` as a zlib stream of stored (uncompressed) deflate blocks.
pub fn zlib_stored(data: &[u8]) -> Vec<u8> {
    const MAX_BLOCK: usize = 65535;
    let blocks = data.len().div_ceil(MAX_BLOCK).max(1);
    let mut out = Vec::with_capacity(data.len() + 5 * blocks + 6);
    // CMF 0x78: deflate, 32 KiB window; FLG 0x01: no dictionary, level 0, and
    // (0x78 * 256 + 0x01) % 31 == 0 as RFC 1950 requires.
    out.extend_from_slice(&[0x78, 0x01]);
    let mut chunks = data.chunks(MAX_BLOCK).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[0x01, 0x00, 0x00, 0xFF, 0xFF]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let len = chunk.len() as u16;
        out.push(u8::from(last)); // BFINAL in bit 0, BTYPE 00 (stored)
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// Why an image cannot be encoded.
#[derive(Debug, PartialEq, Eq)]
pub enum PngError {
    /// Width or height is zero or over 2^31 - 1.
    BadSize,
    /// The palette is empty or has more than 256 colours.
    BadPalette,
    /// `pixels` does not hold `width * height` entries.
    WrongPixelCount,
    /// A pixel names a palette entry that does not exist.
    IndexOutOfPalette,
}

impl std::fmt::Display for PngError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PngError::BadSize => "image width and height must be 1..2^31",
            PngError::BadPalette => "a PNG palette has 1 to 256 colours",
            PngError::WrongPixelCount => "pixel buffer length is not width * height",
            PngError::IndexOutOfPalette => "a pixel names a colour beyond the palette",
        })
    }
}

impl std::error::Error for PngError {}

/// Encodes a `width` x `height` image whose pixels (row by row, top first) are indices
/// into `palette`.
pub fn encode_indexed(
    width: u32,
    height: u32,
    palette: &[[u8; 3]],
    pixels: &[u8],
) -> Result<Vec<u8>, PngError> {
    if width == 0 || height == 0 || width > i32::MAX as u32 || height > i32::MAX as u32 {
        return Err(PngError::BadSize);
    }
    if palette.is_empty() || palette.len() > 256 {
        return Err(PngError::BadPalette);
    }
    let (w, h) = (width as usize, height as usize);
    if pixels.len() != w * h {
        return Err(PngError::WrongPixelCount);
    }
    if pixels.iter().any(|&p| usize::from(p) >= palette.len()) {
        return Err(PngError::IndexOutOfPalette);
    }
    let mut raw = Vec::with_capacity((w + 1) * h);
    for row in pixels.chunks(w) {
        raw.push(0); // filter type 0: the row as is
        raw.extend_from_slice(row);
    }
    let mut out = Vec::with_capacity(raw.len() + raw.len() / 65535 * 5 + 1024);
    out.extend_from_slice(&[0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n']);
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    // Bit depth 8, colour type 3 (palette), compression 0, filter 0, no interlace.
    ihdr.extend_from_slice(&[8, 3, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"PLTE", palette.as_flattened());
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, b"IEND", &[]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decoder for exactly what the encoder writes: checks every chunk's CRC, inflates
    /// the stored blocks, checks the Adler-32, and returns the header, palette and rows.
    fn decode(png: &[u8]) -> (u32, u32, Vec<[u8; 3]>, Vec<u8>) {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let mut pos = 8;
        let (mut width, mut height, mut palette, mut idat) = (0, 0, Vec::new(), Vec::new());
        let mut kinds = Vec::new();
        while pos < png.len() {
            let len = u32::from_be_bytes(png[pos..pos + 4].try_into().unwrap()) as usize;
            let kind = &png[pos + 4..pos + 8];
            let data = &png[pos + 8..pos + 8 + len];
            let crc = u32::from_be_bytes(png[pos + 8 + len..pos + 12 + len].try_into().unwrap());
            assert_eq!(crc, crc32(&png[pos + 4..pos + 8 + len]), "CRC of {}", String::from_utf8_lossy(kind));
            match kind {
                b"IHDR" => {
                    width = u32::from_be_bytes(data[0..4].try_into().unwrap());
                    height = u32::from_be_bytes(data[4..8].try_into().unwrap());
                    assert_eq!(&data[8..], &[8, 3, 0, 0, 0]);
                }
                b"PLTE" => palette = data.chunks(3).map(|c| [c[0], c[1], c[2]]).collect(),
                b"IDAT" => idat.extend_from_slice(data),
                b"IEND" => assert!(data.is_empty()),
                _ => panic!("unexpected chunk"),
            }
            kinds.push(String::from_utf8_lossy(kind).into_owned());
            pos += 12 + len;
        }
        assert_eq!(kinds.first().map(String::as_str), Some("IHDR"));
        assert_eq!(kinds.last().map(String::as_str), Some("IEND"));
        (width, height, palette, inflate_stored(&idat))
    }

    fn inflate_stored(z: &[u8]) -> Vec<u8> {
        assert_eq!((u16::from(z[0]) << 8 | u16::from(z[1])) % 31, 0, "zlib header check");
        assert_eq!(z[0] & 0x0F, 8, "deflate");
        let mut pos = 2;
        let mut out = Vec::new();
        loop {
            let header = z[pos];
            assert_eq!(header & 0b110, 0, "stored block");
            let len = u16::from_le_bytes([z[pos + 1], z[pos + 2]]);
            let nlen = u16::from_le_bytes([z[pos + 3], z[pos + 4]]);
            assert_eq!(len, !nlen);
            out.extend_from_slice(&z[pos + 5..pos + 5 + usize::from(len)]);
            pos += 5 + usize::from(len);
            if header & 1 == 1 {
                break;
            }
        }
        assert_eq!(u32::from_be_bytes(z[pos..pos + 4].try_into().unwrap()), adler32(&out));
        assert_eq!(pos + 4, z.len(), "nothing after the trailer");
        out
    }

    #[test]
    fn known_checksums() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b"IEND"), 0xAE42_6082, "every PNG ends with this CRC");
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
        // Long input: the modular reduction must not overflow.
        let big = vec![0xFFu8; 100_000];
        let (mut a, mut b) = (1u64, 0u64);
        for &x in &big {
            a = (a + u64::from(x)) % 65521;
            b = (b + a) % 65521;
        }
        assert_eq!(adler32(&big), ((b << 16) | a) as u32);
    }

    #[test]
    fn round_trip_small_image() {
        let palette = [[255, 255, 255], [0, 0, 0], [200, 30, 40]];
        let pixels = [0, 1, 2, 2, 1, 0];
        let png = encode_indexed(3, 2, &palette, &pixels).unwrap();
        let (w, h, pal, raw) = decode(&png);
        assert_eq!((w, h), (3, 2));
        assert_eq!(pal, palette);
        assert_eq!(raw, vec![0, 0, 1, 2, 0, 2, 1, 0]);
        // The end of every PNG: IEND with length 0 and its fixed CRC.
        assert_eq!(&png[png.len() - 12..], b"\0\0\0\0IEND\xAE\x42\x60\x82");
    }

    #[test]
    fn round_trip_spans_several_stored_blocks() {
        let (w, h) = (700u32, 300u32); // 701 * 300 = 210300 bytes: 4 blocks
        let pixels: Vec<u8> = (0..w * h).map(|i| (i % 7) as u8).collect();
        let palette: Vec<[u8; 3]> = (0..7).map(|i| [i * 30, 0, 0]).collect();
        let png = encode_indexed(w, h, &palette, &pixels).unwrap();
        let (_, _, _, raw) = decode(&png);
        assert_eq!(raw.len(), 701 * 300);
        for (row, line) in raw.chunks(701).enumerate() {
            assert_eq!(line[0], 0, "filter byte of row {row}");
            assert_eq!(&line[1..], &pixels[row * 700..(row + 1) * 700]);
        }
    }

    #[test]
    fn empty_zlib_stream_is_one_final_empty_block() {
        assert_eq!(inflate_stored(&zlib_stored(&[])), Vec::<u8>::new());
    }

    #[test]
    fn rejects_bad_input() {
        let pal = [[0, 0, 0]];
        assert_eq!(encode_indexed(0, 1, &pal, &[]), Err(PngError::BadSize));
        assert_eq!(encode_indexed(1, 1, &[], &[0]), Err(PngError::BadPalette));
        assert_eq!(encode_indexed(2, 1, &pal, &[0]), Err(PngError::WrongPixelCount));
        assert_eq!(encode_indexed(1, 1, &pal, &[1]), Err(PngError::IndexOutOfPalette));
    }
}
