//! Reading what the user gives: FEN words from the command line and text files.

use std::fs;
use std::io::{self, Read};
use std::path::Path;

use chess_rules::{FenError, Position};

use crate::error::{CliError, CliResult};

/// Joins FEN words (users often forget to quote a FEN, so the shell splits it).
pub fn join_words(words: &[String]) -> String {
    words.join(" ")
}

/// The position named by an optional `--fen`, the start position when absent.
pub fn position_or_start(words: Option<&[String]>) -> CliResult<Position> {
    match words {
        None => Ok(Position::startpos()),
        Some(words) => parse_fen(&join_words(words)),
    }
}

/// Reads and validates a FEN, turning a failure into `invalid FEN "<text>": <why>`.
pub fn parse_fen(text: &str) -> CliResult<Position> {
    Position::from_fen(text).map_err(|e| CliError::failure(fen_error_message(text, &e)))
}

/// The one-line report for a FEN that failed to parse.
pub fn fen_error_message(text: &str, err: &FenError) -> String {
    let mut message = format!("invalid FEN {text:?}: {err}");
    if matches!(err, FenError::WrongFieldCount { found: 1 }) && text.contains('/') {
        message.push_str(" (a FEN contains spaces: quote it)");
    }
    message
}

/// Reads a whole file as bytes, reporting a failure with the path quoted.
pub fn read_bytes(path: &Path) -> CliResult<Vec<u8>> {
    fs::read(path).map_err(|e| CliError::failure(format!("cannot read {:?}: {e}", path.display())))
}

/// Where a byte stream first stops being UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadUtf8 {
    /// The first byte of the bad sequence.
    pub byte: u8,
    /// One-based line number.
    pub line: u64,
    /// Bytes from the start of the stream.
    pub offset: u64,
}

impl std::fmt::Display for BadUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invalid byte 0x{:02x} at line {} (byte offset {})",
            self.byte, self.line, self.offset
        )
    }
}

/// Passes a stream through unchanged, noting where the first invalid UTF-8 sequence is, so a
/// streaming reader that decodes lossily can still have its input reported as not UTF-8.
#[derive(Debug)]
pub struct Utf8Watch<R> {
    inner: R,
    /// The start of a character split between two reads, and where it began.
    carry: [u8; 4],
    carry_len: usize,
    carry_offset: u64,
    offset: u64,
    line: u64,
    first_bad: Option<BadUtf8>,
}

impl<R> Utf8Watch<R> {
    pub fn new(inner: R) -> Utf8Watch<R> {
        Utf8Watch {
            inner,
            carry: [0; 4],
            carry_len: 0,
            carry_offset: 0,
            offset: 0,
            line: 1,
            first_bad: None,
        }
    }

    /// The first invalid sequence met so far (a character cut off by the end of the stream
    /// counts once the end has been read).
    pub fn first_bad(&self) -> Option<BadUtf8> {
        self.first_bad
    }

    fn bad_at(&mut self, byte: u8, offset: u64) {
        self.first_bad = Some(BadUtf8 {
            byte,
            line: self.line,
            offset,
        });
    }

    /// Checks the bytes `data`, which start at `self.offset`.
    fn check(&mut self, data: &[u8]) {
        let mut used = 0;
        while self.carry_len > 0 && used < data.len() {
            self.carry[self.carry_len] = data[used];
            self.carry_len += 1;
            used += 1;
            match std::str::from_utf8(&self.carry[..self.carry_len]) {
                Ok(_) => self.carry_len = 0,
                Err(e) if e.error_len().is_some() || self.carry_len == 4 => {
                    return self.bad_at(self.carry[0], self.carry_offset);
                }
                Err(_) => {}
            }
        }
        if self.carry_len > 0 {
            return;
        }
        let rest = &data[used..];
        let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as u64;
        match std::str::from_utf8(rest) {
            Ok(_) => self.line += newlines(rest),
            Err(e) => {
                let valid = e.valid_up_to();
                self.line += newlines(&rest[..valid]);
                let offset = self.offset + (used + valid) as u64;
                if e.error_len().is_some() {
                    self.bad_at(rest[valid], offset);
                } else {
                    // An incomplete character at the end: at most three bytes.
                    let tail = &rest[valid..];
                    self.carry[..tail.len()].copy_from_slice(tail);
                    self.carry_len = tail.len();
                    self.carry_offset = offset;
                }
            }
        }
    }
}

impl<R: Read> Read for Utf8Watch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.first_bad.is_none() {
            if n == 0 && !buf.is_empty() && self.carry_len > 0 {
                self.bad_at(self.carry[0], self.carry_offset);
            } else {
                self.check(&buf[..n]);
            }
        }
        self.offset += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `data` through the watch `chunk` bytes at a time.
    fn watch(data: &[u8], chunk: usize) -> Option<BadUtf8> {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut w = Utf8Watch::new(Chunks(data, chunk));
        let mut sink = Vec::new();
        w.read_to_end(&mut sink).unwrap();
        assert_eq!(sink, data);
        w.first_bad()
    }

    #[test]
    fn utf8_watch_across_chunks() {
        let good = "1. e4 {\u{2658}f3 \u{738b}}\n2. \u{1f600} *\n".as_bytes();
        for chunk in 1..8 {
            assert_eq!(watch(good, chunk), None, "chunk {chunk}");
        }
        let mut bad = b"ab\ncd\n".to_vec();
        bad.extend_from_slice(&[b'x', 0xe9, b'y']);
        for chunk in 1..8 {
            assert_eq!(
                watch(&bad, chunk),
                Some(BadUtf8 {
                    byte: 0xe9,
                    line: 3,
                    offset: 7
                })
            );
        }
        let cut = &"\n\u{2658}".as_bytes()[..3];
        for chunk in 1..4 {
            assert_eq!(
                watch(cut, chunk),
                Some(BadUtf8 {
                    byte: 0xe2,
                    line: 2,
                    offset: 1
                })
            );
        }
        let broken = [b'a', 0xe2, 0x99, b'b'];
        for chunk in 1..5 {
            assert_eq!(
                watch(&broken, chunk),
                Some(BadUtf8 {
                    byte: 0xe2,
                    line: 1,
                    offset: 1
                })
            );
        }
    }

    #[test]
    fn fen_hint_for_unquoted_fen() {
        let text = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
        let err = Position::from_fen(text).unwrap_err();
        assert!(fen_error_message(text, &err).ends_with("quote it)"));
    }
}
