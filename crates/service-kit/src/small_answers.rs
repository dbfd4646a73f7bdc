//! The one way a service marks its small answers: every unary answer goes through
//! [`crate::gzip_if_large`], so that the small ones (a rules query's answer, a game's state, a
//! search's lines) go uncompressed even to a caller that accepts gzip, and large ones (parsed
//! PGN, long games, batches) go compressed.
//!
//! A service declares its own wrapper type (Rust's orphan rule wants the type that implements
//! a generated service trait to be the service crate's own) and has [`small_answers!`]
//! implement each trait for it, delegating every call to the wrapped service:
//!
//! ```text
//! pub(crate) struct SmallAnswers<T>(pub T);
//! chess_service_kit::small_answers! {
//!     SmallAnswers: RulesService for RulesApi {
//!         legal_moves(LegalMovesRequest) -> LegalMovesResponse;
//!     }
//! }
//! ```
//!
//! Streaming methods and their stream types are written out after the unary ones (streams are
//! compressed per the server's setting, message by message).

/// Implements `$service` for `$wrapper<$inner>`: each unary method delegated to `$inner`'s
/// and its answer marked with [`crate::gzip_if_large`]; the items after the list (stream
/// types and streaming methods) are copied as written.
#[macro_export]
macro_rules! small_answers {
    (
        $wrapper:ident: $service:ident for $inner:ty {
            $($method:ident($request:ty) -> $response:ty;)*
        }
        $($extra:item)*
    ) => {
        #[$crate::__tonic::async_trait]
        impl $service for $wrapper<$inner> {
            $(
                async fn $method(
                    &self,
                    request: $crate::__tonic::Request<$request>,
                ) -> ::std::result::Result<
                    $crate::__tonic::Response<$response>,
                    $crate::__tonic::Status,
                > {
                    self.0.$method(request).await.map($crate::gzip_if_large)
                }
            )*
            $($extra)*
        }
    };
}
