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

/// The moves of a line as people write it, `1.e4 e5 2.Nf3` or `1. e4 e5 2. Nf3 Nc6 *`: each
/// word on its own, move numbers (`2.`, `2...`, the `1.` of `1.e4`) and a result left out.
pub fn move_words(texts: &[String]) -> Vec<String> {
    texts
        .iter()
        .flat_map(|t| t.split_whitespace())
        .filter_map(|w| {
            let digits = w.len() - w.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let rest = &w[digits..];
            let dots = rest.len() - rest.trim_start_matches('.').len();
            let word = if digits > 0 && dots > 0 {
                &rest[dots..]
            } else {
                w
            };
            let result = matches!(word, "1-0" | "0-1" | "1/2-1/2" | "½-½" | "*");
            (!word.is_empty() && !result).then(|| word.to_owned())
        })
        .collect()
}

/// Splits command-line words into a FEN (the first word holds a `/`, and the FEN's other
/// fields may follow as separate words when it was not quoted) and the moves after it.
pub fn fen_and_moves(words: &[String]) -> (Option<String>, Vec<String>) {
    let split: Vec<&str> = words.iter().flat_map(|w| w.split_whitespace()).collect();
    match split.first() {
        Some(first) if first.contains('/') => {
            let is_field = |i: usize, w: &str| match i {
                1 => w == "w" || w == "b",
                2 => w == "-" || w.chars().all(|c| "KQkqABCDEFGHabcdefgh".contains(c)),
                3 => w == "-" || (w.len() == 2 && w.as_bytes()[0].is_ascii_lowercase()),
                _ => w.parse::<u32>().is_ok(),
            };
            let mut n = 1;
            while n < split.len().min(6) && is_field(n, split[n]) {
                n += 1;
            }
            let rest: Vec<String> = split[n..].iter().map(|w| (*w).to_owned()).collect();
            (Some(split[..n].join(" ")), move_words(&rest))
        }
        Some(&"startpos") => (None, move_words(&words[1..])),
        _ => (None, move_words(words)),
    }
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

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn move_numbers_and_results_are_left_out() {
        assert_eq!(move_words(&words("1.e4 e5 2.Nf3")), ["e4", "e5", "Nf3"]);
        assert_eq!(
            move_words(&words("1. e4 e5 2. Nf3 Nc6 *")),
            ["e4", "e5", "Nf3", "Nc6"]
        );
        assert_eq!(move_words(&words("12...Qxb7 1-0")), ["Qxb7"]);
        assert_eq!(move_words(&["e2e4 e7e5".to_owned()]), ["e2e4", "e7e5"]);
    }

    #[test]
    fn a_fen_then_moves() {
        let (fen, moves) = fen_and_moves(&words("8/8/8/8/8/8/4P3/4K2k w - - 0 1 e4 Kh2"));
        assert_eq!(fen.as_deref(), Some("8/8/8/8/8/8/4P3/4K2k w - - 0 1"));
        assert_eq!(moves, ["e4", "Kh2"]);
        let (fen, moves) =
            fen_and_moves(&["8/8/8/8/8/8/4P3/4K2k w - -".to_owned(), "e4".to_owned()]);
        assert_eq!(fen.as_deref(), Some("8/8/8/8/8/8/4P3/4K2k w - -"));
        assert_eq!(moves, ["e4"]);
        assert_eq!(fen_and_moves(&words("e4 e5")), (None, words("e4 e5")));
        assert_eq!(fen_and_moves(&words("startpos e4")), (None, words("e4")));
    }
}
