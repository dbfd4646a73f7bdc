//! What a failed call says: its field violations, the size of its headers, and the API-key
//! metadata a call carries.

use tonic::metadata::MetadataValue;
use tonic::{Request, Status};

/// The `google.rpc.BadRequest` field violations of a status, as (field, description).
pub fn violations(status: &Status) -> Vec<(String, String)> {
    use tonic_types::StatusExt;
    status
        .get_error_details()
        .bad_request()
        .map(|b| {
            b.field_violations
                .iter()
                .map(|v| (v.field.clone(), v.description.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Asserts a call failed with `code` and a field violation on `field`.
#[track_caller]
pub fn assert_field_error<T: std::fmt::Debug>(
    result: Result<T, Status>,
    code: tonic::Code,
    field: &str,
) -> Status {
    let status = match result {
        Ok(v) => panic!("expected {code:?} on {field}, got success: {v:?}"),
        Err(s) => s,
    };
    assert_eq!(status.code(), code, "{status:?}");
    let v = violations(&status);
    assert!(
        v.iter().any(|(f, _)| f == field),
        "no violation on {field:?}: {v:?} ({})",
        status.message()
    );
    status
}

/// The bytes the status would take as response headers (names, values and HPACK's 32 bytes
/// of overhead per entry).
pub fn status_header_bytes(status: &Status) -> usize {
    let mut map = tonic::codegen::http::HeaderMap::new();
    match status.add_header(&mut map) {
        Ok(()) => map
            .iter()
            .map(|(k, v)| k.as_str().len() + v.len() + 32)
            .sum(),
        Err(_) => usize::MAX,
    }
}

/// The bytes response metadata takes as headers, counted as [`status_header_bytes`] does.
pub fn metadata_bytes(md: &tonic::metadata::MetadataMap) -> usize {
    md.clone()
        .into_headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 32)
        .sum()
}

/// `message` as a request with `authorization: Bearer <key>`.
pub fn with_key<T>(message: T, key: &str) -> Request<T> {
    let mut req = Request::new(message);
    req.metadata_mut().insert(
        "authorization",
        MetadataValue::try_from(format!("Bearer {key}")).unwrap(),
    );
    req
}
