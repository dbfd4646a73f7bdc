//! The streaming reader: a tokeniser over a byte buffer that reports each game to a
//! [`Visitor`], with bounded memory and recovery after syntax errors.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, BufRead};

use crate::nag::{nag_from_symbol, suffix_nag};
use crate::{ErrorKind, Flow, GameResult, Location, ReadError, Skipper, SyntaxError, Visitor};

/// Bytes asked of the input at a time.
const CHUNK: usize = 64 * 1024;

/// Longest tag name the "comment runs into the next game" check looks at.
const TAG_NAME_PEEK: usize = 64;

/// Limits that keep hostile input from exhausting memory.
///
/// ```
/// use chess_pgn::{ErrorKind, ReadError, Reader, ReaderOptions, Skipper};
/// let opts = ReaderOptions { max_item_len: 16, ..ReaderOptions::default() };
/// let mut reader = Reader::with_options(&b"1. e4 {a comment that is too long} *"[..], opts);
/// let err = reader.read_game(&mut Skipper).unwrap_err();
/// assert!(matches!(
///     err.as_syntax().map(|e| &e.kind),
///     Some(ErrorKind::TooLong { what: "comment", limit: 16 })
/// ));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReaderOptions {
    /// The longest token, comment or tag pair, in bytes (default 1 MiB). The reader's buffer
    /// never holds much more than this.
    pub max_item_len: usize,
    /// The deepest nesting of variations (default 128).
    pub max_depth: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            max_item_len: 1 << 20,
            max_depth: 128,
        }
    }
}

/// Reads PGN games one at a time from a byte stream, reporting each to a [`Visitor`].
///
/// The input is read in chunks into a buffer that grows only to hold one token, comment or
/// tag (see [`ReaderOptions`]); a file of any size is read in constant memory. Accepted:
/// tag pairs with `\"` and `\\` escapes, move numbers (`1.`, `1...`, `12.`), `{}` comments
/// across lines, `;` comments, `%` escape lines, NAGs `$n` and the suffixes `!` `?` `!!` `??`
/// `!?` `?!` (NAGs 1 to 6), nested variations, the results `1-0` `0-1` `1/2-1/2` `*`, a
/// UTF-8 byte-order mark, CRLF line endings, and games without tags. Text that is not UTF-8
/// reaches the visitor with U+FFFD in place of the bad bytes.
///
/// On a syntax error [`Reader::read_game`] returns a [`SyntaxError`] with the line and column,
/// after skipping to the next game: the next line that starts with `[` and follows an empty
/// line or a line ending in a result. Reading then continues with that game.
///
/// ```
/// use chess_pgn::{ErrorKind, ReadError, Reader, Skipper};
///
/// let pgn = "[Event \"good\"]\n\n1. e4 e5 *\n\n\
///            [Event \"broken\"]\n\n1. e4 ) e5 *\n\n\
///            [Event \"good again\"]\n\n1. d4 *\n";
/// let mut reader = Reader::new(pgn.as_bytes());
/// assert!(reader.read_game(&mut Skipper).unwrap().is_some());
/// let err = reader.read_game(&mut Skipper).unwrap_err();
/// let err = err.as_syntax().unwrap();
/// assert_eq!((err.kind.clone(), err.at.line, err.at.column), (ErrorKind::UnmatchedParen, 7, 7));
/// assert!(reader.read_game(&mut Skipper).unwrap().is_some());
/// assert!(reader.read_game(&mut Skipper).unwrap().is_none());
/// ```
pub struct Reader<R> {
    inner: R,
    /// Bytes `pos..end` are read but not yet consumed; `buf.len()` is the capacity in use.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    /// Offset in the input of `buf[0]`.
    base: u64,
    line: u64,
    /// Offset in the input of the current line's first byte.
    line_start: u64,
    /// UTF-8 continuation bytes consumed on the current line (columns count characters).
    line_cont: u64,
    games: u64,
    started: bool,
    done: bool,
    pending_io: Option<io::Error>,
    /// Set by an error found at the start of what is plainly the next game's tag section, so
    /// that recovery resumes right there.
    resync_here: bool,
    /// Where each open variation's `(` is.
    open: Vec<Location>,
    scratch: Vec<u8>,
    opts: ReaderOptions,
}

impl<R> fmt::Debug for Reader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("location", &self.location())
            .field("games", &self.games)
            .field("done", &self.done)
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

/// Bytes that continue a token: everything but whitespace and the delimiters `{}()[];$`.
static IN_TOKEN: [bool; 256] = {
    let mut t = [true; 256];
    let stops = b" \t\r\n\x0b\x0c{}()[];$";
    let mut i = 0;
    while i < stops.len() {
        t[stops[i] as usize] = false;
        i += 1;
    }
    t
};

/// Bytes that may appear in a move token: letters, digits, `+#=:-/.!?*@`, and any byte of
/// a multi-byte UTF-8 character (figurines, Chinese piece names, `×`).
static IN_MOVE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c >= 0x80;
        b += 1;
    }
    let extra = b"+#=:-/.!?*@";
    let mut i = 0;
    while i < extra.len() {
        t[extra[i] as usize] = true;
        i += 1;
    }
    t
};

const fn is_tag_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// UTF-8 continuation bytes, which do not start a character.
fn continuation_bytes(s: &[u8]) -> u64 {
    s.iter().filter(|&&b| (b as i8) < -0x40).count() as u64
}

/// Text for the visitor: bytes that are not UTF-8 become U+FFFD.
fn text(bytes: &[u8]) -> Cow<'_, str> {
    // The strict check is much faster than the lossy one on the valid text of nearly all input.
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The length of the run of dots (`.` or the ellipsis `…`) that `s` starts with.
fn dots_len(s: &[u8]) -> usize {
    let mut k = 0;
    loop {
        if s.get(k) == Some(&b'.') {
            k += 1;
        } else if s[k..].starts_with("\u{2026}".as_bytes()) {
            k += 3;
        } else {
            return k;
        }
    }
}

/// The first 40 characters of a token, for error messages.
fn excerpt(bytes: &[u8]) -> String {
    text(bytes).chars().take(40).collect()
}

impl<R> Reader<R> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn at_line_start(&self) -> bool {
        self.offset() == self.line_start
    }

    fn new_line(&mut self) {
        self.line += 1;
        self.line_start = self.offset();
        self.line_cont = 0;
    }

    /// Consumes `n` bytes that hold no line break.
    fn consume_inline(&mut self, n: usize) {
        self.line_cont += continuation_bytes(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
    }

    /// Consumes `n` bytes, counting the line breaks among them.
    fn consume(&mut self, n: usize) {
        let s = &self.buf[self.pos..self.pos + n];
        match s.iter().rposition(|&b| b == b'\n') {
            None => self.line_cont += continuation_bytes(s),
            Some(last) => {
                self.line += s.iter().filter(|&&b| b == b'\n').count() as u64;
                self.line_cont = continuation_bytes(&s[last + 1..]);
                self.line_start = self.base + (self.pos + last + 1) as u64;
            }
        }
        self.pos += n;
    }

    /// Where the next byte of the input is.
    pub fn location(&self) -> Location {
        let offset = self.offset();
        let column = offset
            .saturating_sub(self.line_start)
            .saturating_sub(self.line_cont)
            + 1;
        Location {
            line: self.line,
            column,
            offset,
        }
    }

    /// The location `rel` bytes ahead on the same line.
    fn location_ahead(&self, rel: usize) -> Location {
        let here = self.location();
        let skipped = &self.buf[self.pos..(self.pos + rel).min(self.end)];
        Location {
            line: here.line,
            column: here.column + skipped.len() as u64 - continuation_bytes(skipped),
            offset: here.offset + rel as u64,
        }
    }

    fn error(&self, kind: ErrorKind, at: Location) -> ReadError {
        ReadError::Syntax(SyntaxError {
            kind,
            at,
            game: self.games,
        })
    }
}

impl<R: BufRead> Reader<R> {
    /// A reader with the default [`ReaderOptions`].
    pub fn new(inner: R) -> Reader<R> {
        Reader::with_options(inner, ReaderOptions::default())
    }

    /// A reader with chosen limits.
    pub fn with_options(inner: R, opts: ReaderOptions) -> Reader<R> {
        Reader {
            inner,
            buf: vec![0; CHUNK],
            pos: 0,
            end: 0,
            eof: false,
            base: 0,
            line: 1,
            line_start: 0,
            line_cont: 0,
            games: 0,
            started: false,
            done: false,
            pending_io: None,
            resync_here: false,
            open: Vec::new(),
            scratch: Vec::new(),
            opts: ReaderOptions {
                max_depth: opts.max_depth.max(1),
                ..opts
            },
        }
    }

    /// Reads the next game, reporting it to `visitor`, and returns what its
    /// [`Visitor::end_game`] gives; `Ok(None)` at the end of the input.
    ///
    /// A [`ReadError::Syntax`] ends that game (without `end_game`); the reader has moved on to
    /// the next game and the next call reads it. A [`ReadError::Io`] ends the input: later
    /// calls return `Ok(None)`.
    pub fn read_game<V: Visitor>(
        &mut self,
        visitor: &mut V,
    ) -> Result<Option<V::Output>, ReadError> {
        if let Some(e) = self.pending_io.take() {
            self.done = true;
            return Err(ReadError::Io(e));
        }
        if self.done {
            return Ok(None);
        }
        let start = self.offset();
        match self.game(visitor) {
            Ok(out) => Ok(out),
            Err(ReadError::Io(e)) => {
                self.done = true;
                Err(ReadError::Io(e))
            }
            Err(ReadError::Syntax(e)) => {
                if let Err(io) = self.recover(start) {
                    self.pending_io = Some(io);
                }
                Err(ReadError::Syntax(e))
            }
        }
    }

    /// Passes over the next game; false at the end of the input.
    pub fn skip_game(&mut self) -> Result<bool, ReadError> {
        Ok(self.read_game(&mut Skipper)?.is_some())
    }

    /// An iterator over the games, each reported to `visitor`; it ends at the end of the
    /// input or after an I/O error.
    pub fn games<'a, V: Visitor>(&'a mut self, visitor: &'a mut V) -> Games<'a, R, V> {
        Games {
            reader: self,
            visitor,
        }
    }

    /// How many games the reader has started, broken ones included.
    pub fn games_started(&self) -> u64 {
        self.games
    }

    /// The underlying reader (bytes already buffered are lost).
    pub fn into_inner(self) -> R {
        self.inner
    }

    // ----- input buffer -----

    /// Reads more input, keeping the unconsumed bytes. False at the end of the input.
    fn fill_more(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            // Callers check their item against `max_item_len` before asking for more, so the
            // buffer stays within about twice that.
            let len = (self.buf.len() * 2).max(CHUNK);
            self.buf.resize(len, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The byte `rel` bytes past the current one, reading more input as needed.
    fn byte_at(&mut self, rel: usize) -> io::Result<Option<u8>> {
        while self.pos + rel >= self.end {
            if !self.fill_more()? {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[self.pos + rel]))
    }

    /// Skips whitespace, returning the next byte without consuming it (`None` at the end).
    #[inline]
    fn skip_ws(&mut self) -> io::Result<Option<u8>> {
        loop {
            while self.pos < self.end {
                let b = self.buf[self.pos];
                match b {
                    b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                    b'\n' => {
                        self.pos += 1;
                        self.new_line();
                    }
                    _ => return Ok(Some(b)),
                }
            }
            if !self.fill_more()? {
                return Ok(None);
            }
        }
    }

    /// Consumes the rest of the line and its line break.
    fn skip_line(&mut self) -> io::Result<()> {
        loop {
            if let Some(k) = self.buf[self.pos..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                self.pos += k + 1;
                self.new_line();
                return Ok(());
            }
            self.pos = self.end;
            if !self.fill_more()? {
                return Ok(());
            }
        }
    }

    // ----- games -----

    fn game<V: Visitor>(&mut self, v: &mut V) -> Result<Option<V::Output>, ReadError> {
        if !self.started {
            self.started = true;
            if self.byte_at(2)?.is_some() && self.buf[self.pos..self.pos + 3] == [0xef, 0xbb, 0xbf]
            {
                self.pos += 3;
                self.line_start = self.offset();
            }
        }
        loop {
            match self.skip_ws()? {
                None => return Ok(None),
                Some(b'%') if self.at_line_start() => self.skip_line()?,
                Some(_) => break,
            }
        }
        self.games += 1;
        v.begin_game(self.games, self.location());
        loop {
            match self.skip_ws()? {
                Some(b'[') => self.tag(v)?,
                Some(b'%') if self.at_line_start() => self.skip_line()?,
                _ => break,
            }
        }
        let skip = v.begin_movetext() == Flow::Skip;
        self.movetext(v, skip)?;
        Ok(Some(v.end_game()))
    }

    /// Reads `[Name "value"]` at the current `[`.
    fn tag<V: Visitor>(&mut self, v: &mut V) -> Result<(), ReadError> {
        let at = self.location();
        let max = self.opts.max_item_len;
        let too_long = |r: &Self| {
            r.error(
                ErrorKind::TooLong {
                    what: "tag pair",
                    limit: max,
                },
                at,
            )
        };
        let mut i = 1;
        while matches!(self.byte_at(i)?, Some(b' ' | b'\t')) {
            i += 1;
            if i > max {
                return Err(too_long(self));
            }
        }
        let name_start = i;
        while let Some(b) = self.byte_at(i)?
            && is_tag_name_byte(b)
        {
            i += 1;
            if i > max {
                return Err(too_long(self));
            }
        }
        let name_end = i;
        if name_end == name_start {
            let kind = match self.byte_at(i)? {
                None | Some(b'\n' | b'\r') => ErrorKind::UnterminatedTag,
                Some(_) => ErrorKind::BadTag("expected a tag name (letters, digits, '_')"),
            };
            return Err(self.error(kind, self.location_ahead(i)));
        }
        while matches!(self.byte_at(i)?, Some(b' ' | b'\t')) {
            i += 1;
            if i > max {
                return Err(too_long(self));
            }
        }
        match self.byte_at(i)? {
            Some(b'"') => i += 1,
            None | Some(b'\n' | b'\r') => return Err(self.error(ErrorKind::UnterminatedTag, at)),
            Some(_) => {
                let kind = ErrorKind::BadTag("expected '\"' to open the value");
                return Err(self.error(kind, self.location_ahead(i)));
            }
        }
        let value_start = i;
        let mut escaped = false;
        let value_end = loop {
            if i > max {
                return Err(too_long(self));
            }
            match self.byte_at(i)? {
                None | Some(b'\n' | b'\r') => {
                    return Err(self.error(ErrorKind::UnterminatedTag, at));
                }
                Some(b'\\') => {
                    escaped = true;
                    i += 1;
                    if matches!(self.byte_at(i)?, None | Some(b'\n' | b'\r')) {
                        return Err(self.error(ErrorKind::UnterminatedTag, at));
                    }
                    i += 1;
                }
                Some(b'"') => {
                    // The closing quote is the one followed by `]`; another is taken as part
                    // of the value, as some programs forget to escape it.
                    let mut j = i + 1;
                    while matches!(self.byte_at(j)?, Some(b' ' | b'\t')) && j <= max {
                        j += 1;
                    }
                    if self.byte_at(j)? == Some(b']') {
                        let end = i;
                        i = j + 1;
                        break end;
                    }
                    i += 1;
                }
                Some(_) => i += 1,
            }
        };
        let name = text(&self.buf[self.pos + name_start..self.pos + name_end]);
        let raw = &self.buf[self.pos + value_start..self.pos + value_end];
        let value = if escaped {
            self.scratch.clear();
            let mut k = 0;
            while k < raw.len() {
                if raw[k] == b'\\' && k + 1 < raw.len() && matches!(raw[k + 1], b'\\' | b'"') {
                    k += 1;
                }
                self.scratch.push(raw[k]);
                k += 1;
            }
            text(&self.scratch)
        } else {
            text(raw)
        };
        v.tag(&name, &value);
        self.consume_inline(i);
        Ok(())
    }

    /// Reads the movetext up to and including the result, or up to the next game's `[` or the
    /// end of the input.
    fn movetext<V: Visitor>(&mut self, v: &mut V, skip_all: bool) -> Result<(), ReadError> {
        self.open.clear();
        // Events are held back while skipping: the whole movetext (depth 0) or the variation
        // opened at this depth.
        let mut skip_from: Option<usize> = skip_all.then_some(0);
        loop {
            let Some(b) = self.skip_ws()? else {
                return self.end_without_result(v);
            };
            let live = skip_from.is_none();
            match b {
                b'{' => self.brace_comment(v, live)?,
                b';' => self.line_comment(v, live)?,
                b'(' => {
                    let at = self.location();
                    if self.open.len() >= self.opts.max_depth {
                        let kind = ErrorKind::TooDeep {
                            limit: self.opts.max_depth,
                        };
                        return Err(self.error(kind, at));
                    }
                    self.pos += 1;
                    self.open.push(at);
                    if live && v.begin_variation(at) == Flow::Skip {
                        skip_from = Some(self.open.len());
                    }
                }
                b')' => {
                    let at = self.location();
                    if self.open.pop().is_none() {
                        return Err(self.error(ErrorKind::UnmatchedParen, at));
                    }
                    self.pos += 1;
                    match skip_from {
                        None => v.end_variation(),
                        Some(d) if d == self.open.len() + 1 => skip_from = None,
                        Some(_) => {}
                    }
                }
                b'$' => self.nag(v, live)?,
                b'[' => return self.end_without_result(v),
                b']' | b'}' => {
                    return Err(self.error(ErrorKind::UnexpectedChar(b as char), self.location()));
                }
                b'%' if self.at_line_start() => self.skip_line()?,
                _ => {
                    if self.token(v, live)? {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// The movetext ends at the end of the input or at the next tag section.
    fn end_without_result<V: Visitor>(&mut self, v: &mut V) -> Result<(), ReadError> {
        if let Some(&at) = self.open.last() {
            // At a `[` starting a line, the next game is right here.
            self.resync_here = self.at_line_start();
            return Err(self.error(ErrorKind::UnclosedVariation, at));
        }
        v.outcome(None);
        Ok(())
    }

    /// Reads a token: a move number, a result, a symbol annotation or a move. True when it
    /// was the result that ends the game.
    fn token<V: Visitor>(&mut self, v: &mut V, live: bool) -> Result<bool, ReadError> {
        let len = self.token_len()?;
        // Moves, by far the most common tokens, start with a letter; nothing else does.
        if !self.buf[self.pos].is_ascii_alphabetic()
            && let Some(ended) = self.non_move_token(v, live, len)
        {
            return Ok(ended);
        }
        let at = self.location();
        let t = &self.buf[self.pos..self.pos + len];
        if t == b"e.p." {
            self.consume_inline(len);
            return Ok(false);
        }
        let first = t[0];
        let starts_move = first.is_ascii_alphabetic()
            || first >= 0x80
            || first == b'-'
            || first == b'@'
            || t.starts_with(b"0-0");
        let core_len = len
            - t.iter()
                .rev()
                .take_while(|&&b| b == b'!' || b == b'?')
                .count();
        let suffix = &t[core_len..];
        let nag = suffix_nag(suffix);
        if !starts_move
            || !t.iter().all(|&b| IN_MOVE[b as usize])
            || (nag.is_none() && !suffix.is_empty())
        {
            return Err(self.error(ErrorKind::BadToken(excerpt(t)), at));
        }
        if live {
            v.san(&text(&t[..core_len]), at);
            if let Some(nag) = nag {
                v.nag(nag);
            }
        }
        self.consume_inline(len);
        Ok(false)
    }

    /// A move number, a result, dots or an annotation symbol, consumed and reported:
    /// `Some(true)` for the result that ends the game, `None` when the token is none of these.
    fn non_move_token<V: Visitor>(&mut self, v: &mut V, live: bool, len: usize) -> Option<bool> {
        let t = &self.buf[self.pos..self.pos + len];
        if t[0].is_ascii_digit() {
            let digits = t.iter().take_while(|b| b.is_ascii_digit()).count();
            let dots = dots_len(&t[digits..]);
            if dots > 0 || digits == len {
                // `12`, `12.` or `12...`; a move may follow without a space (`1.e4`).
                self.consume_inline(digits + dots);
                return Some(false);
            }
        }
        if let Some(result) = GameResult::from_bytes(t) {
            self.consume_inline(len);
            if self.open.is_empty() {
                v.outcome(Some(result));
                return Some(true);
            }
            // A result inside a variation says nothing about the game.
            return Some(false);
        }
        if dots_len(t) == len {
            self.consume_inline(len);
            return Some(false);
        }
        let nag = std::str::from_utf8(t).ok().and_then(nag_from_symbol)?;
        if live {
            v.nag(nag);
        }
        self.consume_inline(len);
        Some(false)
    }

    /// The length of the token at the current byte, reading more input as needed.
    fn token_len(&mut self) -> Result<usize, ReadError> {
        let max = self.opts.max_item_len;
        let mut len = 0;
        loop {
            let rest = &self.buf[self.pos + len..self.end];
            if let Some(k) = rest.iter().position(|&b| !IN_TOKEN[b as usize]) {
                len += k;
                break;
            }
            len = self.end - self.pos;
            if len > max {
                break;
            }
            if !self.fill_more()? {
                break;
            }
        }
        if len > max {
            return Err(self.error(
                ErrorKind::TooLong {
                    what: "token",
                    limit: max,
                },
                self.location(),
            ));
        }
        Ok(len)
    }

    /// Reads `$n` at the current `$`.
    fn nag<V: Visitor>(&mut self, v: &mut V, live: bool) -> Result<(), ReadError> {
        let at = self.location();
        let mut i = 1;
        let mut value: u32 = 0;
        while let Some(b) = self.byte_at(i)?
            && b.is_ascii_digit()
        {
            value = (value * 10 + u32::from(b - b'0')).min(1000);
            i += 1;
            if i > self.opts.max_item_len {
                let kind = ErrorKind::TooLong {
                    what: "NAG",
                    limit: self.opts.max_item_len,
                };
                return Err(self.error(kind, at));
            }
        }
        match u8::try_from(value) {
            Ok(nag) if i > 1 => {
                if live {
                    v.nag(nag);
                }
                self.pos += i;
                Ok(())
            }
            _ => {
                let shown = excerpt(&self.buf[self.pos..self.pos + i]);
                Err(self.error(ErrorKind::BadNag(shown), at))
            }
        }
    }

    /// Reads a `{...}` comment at the current `{`.
    fn brace_comment<V: Visitor>(&mut self, v: &mut V, live: bool) -> Result<(), ReadError> {
        let at = self.location();
        let (len, newlines, last_newline) = self.brace_comment_len(at)?;
        if live {
            v.comment(&text(&self.buf[self.pos + 1..self.pos + len - 1]));
        }
        match last_newline {
            None => self.consume_inline(len),
            Some(k) => {
                self.line += newlines;
                self.line_start = self.base + (self.pos + k + 1) as u64;
                self.line_cont = continuation_bytes(&self.buf[self.pos + k + 1..self.pos + len]);
                self.pos += len;
            }
        }
        Ok(())
    }

    /// The length of the comment at the current `{`, braces included, with the number of
    /// line breaks in it and where the last one is.
    fn brace_comment_len(
        &mut self,
        at: Location,
    ) -> Result<(usize, u64, Option<usize>), ReadError> {
        let max = self.opts.max_item_len;
        let too_long = |r: &Self| {
            r.error(
                ErrorKind::TooLong {
                    what: "comment",
                    limit: max,
                },
                at,
            )
        };
        let mut i = 1;
        let mut newlines = 0;
        let mut last_newline: Option<usize> = None;
        loop {
            let rest = &self.buf[self.pos + i..self.end];
            let Some(k) = rest.iter().position(|&b| b == b'}' || b == b'\n') else {
                i = self.end - self.pos;
                if i > max {
                    return Err(too_long(self));
                }
                if !self.fill_more()? {
                    return Err(self.error(ErrorKind::UnterminatedComment, at));
                }
                continue;
            };
            i += k;
            if self.buf[self.pos + i] == b'}' {
                if i - 1 > max {
                    return Err(too_long(self));
                }
                return Ok((i + 1, newlines, last_newline));
            }
            // An empty line (never the comment's first) and then a tag pair: the comment has
            // run into the next game, which recovery should resume at.
            if let Some(from) = last_newline
                && self.buf[self.pos + from + 1..self.pos + i]
                    .iter()
                    .all(|b| matches!(b, b' ' | b'\t' | b'\r'))
                && self.starts_tag_pair(i + 1)?
            {
                self.consume(i + 1);
                self.resync_here = true;
                return Err(self.error(ErrorKind::UnterminatedComment, at));
            }
            newlines += 1;
            last_newline = Some(i);
            i += 1;
        }
    }

    /// Whether `[Name "` starts `rel` bytes ahead.
    fn starts_tag_pair(&mut self, rel: usize) -> io::Result<bool> {
        if self.byte_at(rel)? != Some(b'[') {
            return Ok(false);
        }
        let mut i = rel + 1;
        while let Some(b) = self.byte_at(i)?
            && is_tag_name_byte(b)
            && i - rel <= TAG_NAME_PEEK
        {
            i += 1;
        }
        if i == rel + 1 {
            return Ok(false);
        }
        let name_end = i;
        while matches!(self.byte_at(i)?, Some(b' ' | b'\t')) && i - name_end <= TAG_NAME_PEEK {
            i += 1;
        }
        Ok(self.byte_at(i)? == Some(b'"'))
    }

    /// Reads a `;` comment to the end of the line.
    fn line_comment<V: Visitor>(&mut self, v: &mut V, live: bool) -> Result<(), ReadError> {
        let max = self.opts.max_item_len;
        let mut len = 1;
        loop {
            if let Some(k) = self.buf[self.pos + len..self.end]
                .iter()
                .position(|&b| b == b'\n')
            {
                len += k;
                break;
            }
            len = self.end - self.pos;
            if len - 1 > max || !self.fill_more()? {
                break;
            }
        }
        if len - 1 > max {
            let kind = ErrorKind::TooLong {
                what: "comment",
                limit: max,
            };
            return Err(self.error(kind, self.location()));
        }
        let mut text_end = len;
        if text_end > 1 && self.buf[self.pos + text_end - 1] == b'\r' {
            text_end -= 1;
        }
        if live {
            v.comment(&text(&self.buf[self.pos + 1..self.pos + text_end]));
        }
        self.consume_inline(len);
        Ok(())
    }

    // ----- recovery -----

    /// After a syntax error, skips to the next game: a line starting with `[` after an empty
    /// line or a line that ends in a result.
    fn recover(&mut self, game_start: u64) -> io::Result<()> {
        let mut prev_ok = std::mem::take(&mut self.resync_here)
            && self.at_line_start()
            && self.offset() != game_start;
        if !self.at_line_start() {
            let (_, ends_in_result) = self.scan_line()?;
            prev_ok = ends_in_result;
        }
        loop {
            match self.byte_at(0)? {
                None => return Ok(()),
                Some(b'[') if prev_ok => return Ok(()),
                Some(_) => {}
            }
            let (blank, ends_in_result) = self.scan_line()?;
            prev_ok = blank || ends_in_result;
        }
    }

    /// Consumes the rest of the line: whether it was blank and whether its last token is a
    /// result.
    fn scan_line(&mut self) -> io::Result<(bool, bool)> {
        let mut blank = true;
        let mut token = [0u8; 8];
        let mut token_len = 0;
        let mut last_is_result = false;
        let is_result =
            |t: &[u8], len: usize| len <= t.len() && GameResult::from_bytes(&t[..len]).is_some();
        loop {
            while self.pos < self.end {
                let b = self.buf[self.pos];
                self.pos += 1;
                match b {
                    b'\n' => {
                        if token_len > 0 {
                            last_is_result = is_result(&token, token_len);
                        }
                        self.new_line();
                        return Ok((blank, last_is_result));
                    }
                    b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                        if token_len > 0 {
                            last_is_result = is_result(&token, token_len);
                            token_len = 0;
                        }
                    }
                    _ => {
                        blank = false;
                        if let Some(slot) = token.get_mut(token_len) {
                            *slot = b;
                        }
                        token_len = (token_len + 1).min(token.len() + 1);
                    }
                }
            }
            if !self.fill_more()? {
                if token_len > 0 {
                    last_is_result = is_result(&token, token_len);
                }
                return Ok((blank, last_is_result));
            }
        }
    }
}

/// The games of a [`Reader`], from [`Reader::games`].
pub struct Games<'a, R, V> {
    reader: &'a mut Reader<R>,
    visitor: &'a mut V,
}

impl<R, V> fmt::Debug for Games<'_, R, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Games")
            .field("reader", &self.reader)
            .finish_non_exhaustive()
    }
}

impl<R: BufRead, V: Visitor> Iterator for Games<'_, R, V> {
    type Item = Result<V::Output, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.reader.read_game(self.visitor).transpose()
    }
}
