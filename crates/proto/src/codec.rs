//! The protobuf codec of every `chess.v1` service and client: prost's, except that a message
//! that cannot be decoded (not protobuf, a wrong wire type, a string that is not UTF-8) is the
//! sender's mistake, `INVALID_ARGUMENT`, as the README promises, and not `INTERNAL`.
//!
//! Servers decode requests with it, so a malformed request gets `INVALID_ARGUMENT` naming what
//! could not be read. (Clients decode responses with it too; a service built from this crate
//! never sends a response it cannot decode.)

use std::marker::PhantomData;

use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

use crate::field::bounded;

/// [`ProstCodec`] with decoding errors reported as `INVALID_ARGUMENT`.
#[derive(Debug, Clone)]
pub struct ChessCodec<T, U> {
    inner: ProstCodec<T, U>,
}

impl<T, U> Default for ChessCodec<T, U> {
    fn default() -> Self {
        ChessCodec {
            inner: ProstCodec::default(),
        }
    }
}

impl<T, U> Codec for ChessCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = ChessDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        self.inner.encoder()
    }

    fn decoder(&mut self) -> Self::Decoder {
        ChessDecoder {
            inner: self.inner.decoder(),
            _message: PhantomData,
        }
    }
}

/// [`ProstDecoder`] whose errors are `INVALID_ARGUMENT`.
#[derive(Debug)]
pub struct ChessDecoder<U> {
    inner: ProstDecoder<U>,
    _message: PhantomData<U>,
}

impl<U: Message + Default> Decoder for ChessDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.inner.decode(buf).map_err(|status| {
            Status::invalid_argument(bounded(&format!(
                "the message is not valid protobuf for this call: {}",
                status
                    .message()
                    .trim_start_matches("failed to decode Protobuf message: ")
            )))
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.inner.buffer_settings()
    }
}
