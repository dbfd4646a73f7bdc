//! The client side of forwarding: a backend method named by its path, and a client that sends
//! and takes encoded messages (what the pass-through server and MakeMove's retry send with).

use bytes::Bytes;
use http::uri::PathAndQuery;
use tonic::{GrpcMethod, Request, Response, Status};

use super::codec::RawCodec;
use crate::connection::Connection;

/// One forwarded method: `/service/name`.
#[derive(Debug)]
pub(crate) struct Method {
    pub service: &'static str,
    pub name: &'static str,
    pub path: &'static str,
}

/// A client of any backend method that sends and takes encoded messages; built by
/// [`client!`] like the generated clients.
#[derive(Debug, Clone)]
pub(crate) struct RawClient {
    inner: tonic::client::Grpc<Connection>,
}

impl RawClient {
    pub fn new(channel: Connection) -> RawClient {
        RawClient {
            inner: tonic::client::Grpc::new(channel),
        }
    }

    pub fn max_decoding_message_size(self, limit: usize) -> RawClient {
        RawClient {
            inner: self.inner.max_decoding_message_size(limit),
        }
    }

    pub fn accept_compressed(self, encoding: tonic::codec::CompressionEncoding) -> RawClient {
        RawClient {
            inner: self.inner.accept_compressed(encoding),
        }
    }

    pub fn send_compressed(self, encoding: tonic::codec::CompressionEncoding) -> RawClient {
        RawClient {
            inner: self.inner.send_compressed(encoding),
        }
    }

    /// Sends `request` (an encoded message) as `method`; the answer's bytes.
    pub async fn unary(
        &mut self,
        method: &'static Method,
        mut request: Request<Bytes>,
    ) -> Result<Response<Bytes>, Status> {
        self.inner
            .ready()
            .await
            .map_err(|e| Status::unknown(format!("Service was not ready: {e}")))?;
        request
            .extensions_mut()
            .insert(GrpcMethod::new(method.service, method.name));
        self.inner
            .unary(request, PathAndQuery::from_static(method.path), RawCodec)
            .await
    }
}

/// MakeMove on the rules service.
pub(crate) static MAKE_MOVE: Method = Method {
    service: "chess.v1.GameService",
    name: "MakeMove",
    path: "/chess.v1.GameService/MakeMove",
};
