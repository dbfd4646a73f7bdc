//! gzip where it pays: a message under [`GZIP_MIN_BYTES`] does not shrink (gzip's header and
//! trailer alone are 18 bytes), while setting up a compressor for it (a few hundred kilobytes of
//! tables, zeroed per message) costs more CPU than answering a small rules query.

use tonic::Response;

/// Messages smaller than this (encoded) are sent uncompressed even to a peer that accepts gzip.
pub const GZIP_MIN_BYTES: usize = 1024;

/// `response`, marked to go uncompressed when its message is under [`GZIP_MIN_BYTES`]; a larger
/// one is compressed as the server is configured (`send_compressed`) and the caller accepts.
/// Has effect on unary answers only (tonic compresses streams per server setting).
pub fn gzip_if_large<T: prost::Message>(mut response: Response<T>) -> Response<T> {
    if response.get_ref().encoded_len() < GZIP_MIN_BYTES {
        response.disable_compression();
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_answers_go_uncompressed() {
        use tonic::codec::SingleMessageCompressionOverride as Override;
        let small = gzip_if_large(Response::new("e2e4".to_owned()));
        assert_eq!(
            small.extensions().get::<Override>(),
            Some(&Override::Disable)
        );
        let large = gzip_if_large(Response::new("x".repeat(GZIP_MIN_BYTES)));
        assert_eq!(large.extensions().get::<Override>(), None);
    }
}
