//! The whole-stream decompression of GZIP and ZLIB TFRecord files, with the edge behaviour of
//! TensorFlow's `ZlibInputStream` (recorded in `tests/tf_observed/example.jsonl`):
//! - input that ends before the compressed stream does is the end of the data, not an error
//!   (a record cut short by it is then reported as `truncated ... EOF reached`);
//! - after a GZIP member ends, what follows is read as another member (so bytes that are not a
//!   gzip header give `incorrect header check`); after a ZLIB stream ends, the rest is ignored;
//! - damaged data gives zlib's own message (`invalid block type`).

use std::io::{self, BufRead, Read};

use flate2::{Decompress, FlushDecompress, Status};

use crate::error::RecordsError;

/// A `Read` of the decompressed bytes of a GZIP or ZLIB stream.
pub(crate) struct Inflater<R> {
    inner: R,
    state: Decompress,
    gzip: bool,
    /// The stream (ZLIB) or the last member (GZIP) ended and nothing followed yet.
    ended: bool,
    /// ZLIB: the stream ended; the rest of the input is ignored.
    finished: bool,
    /// Decompressed bytes not read yet: `out[pos..len]`.
    out: Vec<u8>,
    pos: usize,
    len: usize,
}

/// How much is decompressed at a time. TensorFlow inflates into a buffer of this order and
/// reports damage found anywhere in it before handing out any of its bytes; so do we (a
/// damaged stream gives zlib's error, not a checksum error on the bytes before the damage).
const CHUNK: usize = 256 << 10;

impl<R: BufRead> Inflater<R> {
    pub(crate) fn new(inner: R, gzip: bool) -> Self {
        Self {
            inner,
            state: new_state(gzip),
            gzip,
            ended: false,
            finished: false,
            out: Vec::new(),
            pos: 0,
            len: 0,
        }
    }
}

fn new_state(gzip: bool) -> Decompress {
    if gzip {
        Decompress::new_gzip(15)
    } else {
        Decompress::new(true)
    }
}

/// The error `Read` hands back for damaged data: a `RecordsError::Inflate` inside an
/// `io::Error`, unwrapped again by the record reader.
fn inflate_error(message: Option<&str>) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        RecordsError::Inflate {
            zlib_code: -3,
            message: message.unwrap_or("invalid data").to_string(),
        },
    )
}

impl<R: BufRead> Inflater<R> {
    /// Decompresses once into `out`, the count produced (0 at the end).
    fn inflate_into(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() || self.finished {
            return Ok(0);
        }
        loop {
            let input = self.inner.fill_buf()?;
            if input.is_empty() {
                // End of input: whatever was decompressed is all there is.
                return Ok(0);
            }
            if self.ended {
                // Another gzip member follows (ZLIB never gets here).
                self.state = new_state(self.gzip);
                self.ended = false;
            }
            let (in0, out0) = (self.state.total_in(), self.state.total_out());
            let status = self
                .state
                .decompress(input, out, FlushDecompress::None)
                .map_err(|e| inflate_error(e.message()))?;
            let consumed = (self.state.total_in() - in0) as usize;
            let produced = (self.state.total_out() - out0) as usize;
            self.inner.consume(consumed);
            if status == Status::StreamEnd {
                if self.gzip {
                    self.ended = true;
                } else {
                    self.finished = true;
                }
            }
            if produced > 0 {
                return Ok(produced);
            }
            if self.finished {
                return Ok(0);
            }
            if consumed == 0 && status != Status::StreamEnd {
                // No progress with input and room for output: cannot happen with zlib, but
                // never spin.
                return Err(inflate_error(Some("inflate made no progress")));
            }
        }
    }
}

impl<R: BufRead> Read for Inflater<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.len {
            // Refill: decompress until the chunk is full or the input ends.
            if self.out.len() < CHUNK {
                self.out.resize(CHUNK, 0);
            }
            let mut out = std::mem::take(&mut self.out);
            let mut filled = 0;
            let result = loop {
                if filled == out.len() {
                    break Ok(());
                }
                match self.inflate_into(&mut out[filled..]) {
                    Ok(0) => break Ok(()),
                    Ok(n) => {
                        filled += n;
                        // A member's end hands out its bytes before the next member (or
                        // junk) is looked at, as TensorFlow does.
                        if self.ended || self.finished {
                            break Ok(());
                        }
                    }
                    Err(e) => break Err(e),
                }
            };
            self.out = out;
            result?;
            self.pos = 0;
            self.len = filled;
            if filled == 0 {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.len - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
