//! The one place where bad input becomes `INVALID_ARGUMENT` with a `google.rpc.BadRequest`
//! field violation, with the contract's own checks that need no chess rules: quoting bad input
//! cut short, idempotency keys and game ids.

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// Bad input in one request field: becomes `INVALID_ARGUMENT` with a `BadRequest` detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldViolation {
    /// The field path, e.g. `fen` or `moves[3]`.
    pub field: String,
    pub description: String,
}

impl FieldViolation {
    /// A violation whose field path and description are cut short (to
    /// [`MAX_FIELD_BYTES`] and [`MAX_DESCRIPTION_BYTES`]) where they are longer, so that
    /// whatever bad input a description quotes, the error stays small enough for any client
    /// to read.
    pub fn new(field: impl Into<String>, description: impl Into<String>) -> FieldViolation {
        let field = field.into();
        let description = description.into();
        FieldViolation {
            field: cut(&field, MAX_FIELD_BYTES),
            description: cut(&description, MAX_DESCRIPTION_BYTES),
        }
    }

    /// `INVALID_ARGUMENT` whose message names the field and whose details carry it.
    pub fn into_status(self) -> Status {
        self.into_status_with(Code::InvalidArgument)
    }

    /// The same with another code, e.g. `FAILED_PRECONDITION` for a move out of turn.
    pub fn into_status_with(self, code: Code) -> Status {
        let message = format!("{}: {}", self.field, self.description);
        let details = ErrorDetails::with_bad_request_violation(self.field, self.description);
        Status::with_error_details(code, message, details)
    }
}

/// Longest field path a violation carries.
pub const MAX_FIELD_BYTES: usize = 128;
/// Longest description a violation carries: the message and the details each quote it, so an
/// error's metadata stays near 2 KiB at most (percent-encoding can triple the message), far
/// under HTTP/2's and gRPC clients' header limits (8 to 16 KiB).
pub const MAX_DESCRIPTION_BYTES: usize = 512;
/// Most bytes of bad input an error quotes.
pub const MAX_QUOTE_BYTES: usize = 48;

/// Bad input as an error message quotes it: in quotes and escaped, and when longer than
/// [`MAX_QUOTE_BYTES`], its first bytes and its length: `"NNNN..." (4234 bytes)`.
pub fn quote(text: &str) -> String {
    if text.len() <= MAX_QUOTE_BYTES {
        return format!("{text:?}");
    }
    let head = &text[..floor_char_boundary(text, MAX_QUOTE_BYTES)];
    let shown = format!("{head:?}");
    format!("{}...\" ({} bytes)", &shown[..shown.len() - 1], text.len())
}

/// Longest idempotency key (`request_id`) a game call accepts.
pub const MAX_REQUEST_ID_BYTES: usize = 64;

/// Reads a game call's idempotency key: `None` when empty, else 1 to
/// [`MAX_REQUEST_ID_BYTES`] printable ASCII characters (no spaces).
///
/// ```
/// use chess_proto::request_id_from_text;
/// assert_eq!(request_id_from_text("request_id", "").unwrap(), None);
/// assert_eq!(request_id_from_text("request_id", "k-1").unwrap().as_deref(), Some("k-1"));
/// assert!(request_id_from_text("request_id", "two words").is_err());
/// assert!(request_id_from_text("request_id", &"x".repeat(65)).is_err());
/// ```
pub fn request_id_from_text(field: &str, text: &str) -> Result<Option<String>, FieldViolation> {
    if text.is_empty() {
        return Ok(None);
    }
    if text.len() > MAX_REQUEST_ID_BYTES || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(FieldViolation::new(
            field,
            format!(
                "an idempotency key is 1 to {MAX_REQUEST_ID_BYTES} printable ASCII characters \
                 without spaces (a UUID, say), not {}",
                quote(text)
            ),
        ));
    }
    Ok(Some(text.to_owned()))
}

/// Gives a game call without an idempotency key a fresh one (a random UUID), so that it can
/// be sent to a second replica without making a second event.
pub fn ensure_request_id(request_id: &mut String) {
    if request_id.is_empty() {
        *request_id = uuid::Uuid::new_v4().to_string();
    }
}

/// Any text (an error message that may quote bad input) cut to at most
/// [`MAX_DESCRIPTION_BYTES`] plus a short note: its start and its end, with the number of
/// bytes left out between them.
pub fn bounded(text: &str) -> String {
    cut(text, MAX_DESCRIPTION_BYTES)
}

/// `text` when at most `max` bytes long; else its first two thirds and last third of `max`
/// bytes (at character boundaries) around a note of what was left out.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let head = floor_char_boundary(text, max * 2 / 3);
    let mut tail = text.len() - max / 3;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{} [... {} bytes left out ...] {}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// The largest character boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut i = at.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl From<FieldViolation> for Status {
    fn from(v: FieldViolation) -> Status {
        v.into_status()
    }
}

/// Reads a game id in every form a UUID is written (`67e55044-10b1-426f-9247-bb680e5fe0c8`,
/// 32 hex digits, `{...}`, `urn:uuid:...`, any case), as the rules service does, and returns
/// its canonical form: the one parser for every service that takes a game id.
pub fn game_id_from_text(field: &str, text: &str) -> Result<String, FieldViolation> {
    game_uuid_from_text(field, text).map(|id| id.hyphenated().to_string())
}

/// A game id in any form a UUID is written in, as the UUID; the error quotes the text cut short.
pub fn game_uuid_from_text(field: &str, text: &str) -> Result<uuid::Uuid, FieldViolation> {
    uuid::Uuid::parse_str(text.trim()).map_err(|_| {
        FieldViolation::new(
            field,
            format!(
                "{} is not a game id (a UUID like 67e55044-10b1-426f-9247-bb680e5fe0c8)",
                quote(text)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn violations_carry_details() {
        let status = FieldViolation::new("fen", "bad").into_status();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert_eq!(status.message(), "fen: bad");
        let details = status.get_error_details();
        let v = &details.bad_request().unwrap().field_violations[0];
        assert_eq!((v.field.as_str(), v.description.as_str()), ("fen", "bad"));
    }

    #[test]
    fn bad_input_is_quoted_cut_short_and_errors_stay_small() {
        assert_eq!(quote("e9"), "\"e9\"");
        let long = "N".repeat(4234);
        let q = quote(&long);
        assert!(
            q.starts_with("\"NNNN") && q.ends_with("...\" (4234 bytes)"),
            "{q}"
        );
        assert!(q.len() < 80, "{q}");
        // Cut at a character boundary.
        let q = quote(&"♞".repeat(100));
        assert!(q.ends_with("...\" (300 bytes)"), "{q}");

        // Whatever a description holds, the status stays small: message and details.
        for text in [long.clone(), "♞é\n\"%".repeat(3000)] {
            let status = FieldViolation::new("moves[0]".repeat(100), text).into_status();
            assert!(status.message().len() <= 2 * MAX_DESCRIPTION_BYTES);
            assert!(status.message().contains("bytes left out"));
            let details = status.get_error_details();
            let v = &details.bad_request().unwrap().field_violations[0];
            assert!(v.description.len() <= MAX_DESCRIPTION_BYTES + 64);
            assert!(v.field.len() <= MAX_FIELD_BYTES + 64);
            let mut headers = tonic::codegen::http::HeaderMap::new();
            status.add_header(&mut headers).unwrap();
            let bytes: usize = headers
                .iter()
                .map(|(k, v)| k.as_str().len() + v.len())
                .sum();
            assert!(bytes < 4096, "{bytes} bytes of headers");
        }
    }

    #[test]
    fn game_ids_in_every_form() {
        let id = "67e55044-10b1-426f-9247-bb680e5fe0c8";
        for form in [
            id.to_owned(),
            id.to_uppercase(),
            id.replace('-', ""),
            format!("{{{id}}}"),
            format!("urn:uuid:{id}"),
            format!(" {id} "),
        ] {
            assert_eq!(game_id_from_text("game_id", &form).unwrap(), id, "{form}");
        }
        let e = game_id_from_text("game_id", &"z".repeat(5000)).unwrap_err();
        assert_eq!(e.field, "game_id");
        assert!(e.description.contains("5000 bytes"), "{}", e.description);
    }
}
