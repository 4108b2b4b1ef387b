//! What a file handed over as a capture is, before its packets are read: gzip or zstd
//! (unpacked while read, as tshark reads them), or something that is no capture at all and
//! says so in its own sentence (nothing, a directory, a pipescope recording).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::CaptureError;

const GZIP: &[u8] = &[0x1f, 0x8b];
const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// The file at `path`, to be read through `unpacked`.
pub(super) fn open(path: &Path) -> Result<std::fs::File, CaptureError> {
    let open_error = |cause| CaptureError::Open {
        path: path.to_path_buf(),
        cause,
    };
    if std::fs::metadata(path).map_err(open_error)?.is_dir() {
        return Err(CaptureError::Directory {
            path: path.to_path_buf(),
        });
    }
    std::fs::File::open(path).map_err(open_error)
}

/// `bytes` (named `path` in the messages), unpacked if compressed.
pub(super) fn unpacked<'a>(
    path: &Path,
    bytes: impl Read + Send + 'a,
) -> Result<Box<dyn Read + Send + 'a>, CaptureError> {
    look(path, Box::new(bytes), false)
}

/// What `bytes` begin as; `unpacking`: they are a compressed file's contents.
fn look<'a>(
    path: &Path,
    bytes: Box<dyn Read + Send + 'a>,
    unpacking: bool,
) -> Result<Box<dyn Read + Send + 'a>, CaptureError> {
    let mut reader = BufReader::new(bytes);
    let head = peek(&mut reader).map_err(|cause| CaptureError::Open {
        path: path.to_path_buf(),
        cause,
    })?;
    let unpack_error = |what: &'static str, cause: String| CaptureError::Unpack {
        path: path.to_path_buf(),
        what,
        cause,
    };
    if head.is_empty() {
        return Err(CaptureError::Empty {
            path: path.to_path_buf(),
            size: match unpacking {
                true => "nothing once unpacked",
                false => "0 bytes",
            },
        });
    }
    // Unpacked contents are looked at in turn: empty, or packed again.
    if head.starts_with(GZIP) {
        let decoder = flate2::bufread::MultiGzDecoder::new(reader);
        return look(path, Box::new(decoder), true);
    }
    if head.starts_with(ZSTD) {
        let decoder = ruzstd::decoding::StreamingDecoder::new(reader)
            .map_err(|e| unpack_error("zstd", e.to_string()))?;
        return look(path, Box::new(decoder), true);
    }
    let text = String::from_utf8_lossy(&head);
    if text.trim_start().starts_with('{') && text.contains("pipescope-recording") {
        return Err(CaptureError::IsARecording {
            path: path.to_path_buf(),
        });
    }
    Ok(Box::new(reader))
}

/// What the first read holds (a file's first 8 KiB), left in `reader` to be read again.
fn peek(reader: &mut BufReader<impl Read>) -> std::io::Result<Vec<u8>> {
    Ok(reader.fill_buf()?.to_vec())
}
