//! The codecs of forwarded calls: requests decoded for the gateway's checks with the bytes they
//! came as kept, answers and forwarded requests passed on as bytes.

use std::marker::PhantomData;

use bytes::{Buf, BufMut, Bytes};
use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// A request as the gateway checks it, and the bytes it arrived as.
#[derive(Debug)]
pub(crate) struct Checked<T> {
    pub message: T,
    pub bytes: Bytes,
}

/// The server side of a forwarded call: requests decoded into [`Checked`], answers sent as
/// the bytes the backend gave.
#[derive(Debug)]
pub(crate) struct ServerCodec<T>(PhantomData<fn() -> T>);

impl<T> Default for ServerCodec<T> {
    fn default() -> Self {
        ServerCodec(PhantomData)
    }
}

impl<T: Message + Default + Send + 'static> Codec for ServerCodec<T> {
    type Encode = Bytes;
    type Decode = Checked<T>;
    type Encoder = RawEncoder;
    type Decoder = CheckedDecoder<T>;

    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }

    fn decoder(&mut self) -> CheckedDecoder<T> {
        CheckedDecoder(PhantomData)
    }
}

/// The client side of a forwarded call: the request's bytes sent, the answer's bytes kept.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;

    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }

    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

/// Writes a message that is already encoded.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RawEncoder;

impl Encoder for RawEncoder {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

/// Takes a message's bytes as they are.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RawDecoder;

impl Decoder for RawDecoder {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

/// Decodes a request for the gateway's checks and keeps its bytes; a message that is not valid
/// protobuf is `INVALID_ARGUMENT`, worded as [`chess_proto::ChessCodec`] words it.
#[derive(Debug)]
pub(crate) struct CheckedDecoder<T>(PhantomData<fn() -> T>);

impl<T: Message + Default> Decoder for CheckedDecoder<T> {
    type Item = Checked<T>;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Checked<T>>, Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        let message = T::decode(bytes.clone()).map_err(not_protobuf)?;
        Ok(Some(Checked { message, bytes }))
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

/// The error of a request that does not decode: [`chess_proto::ChessCodec`]'s words.
pub(super) fn not_protobuf(error: prost::DecodeError) -> Status {
    let text = error.to_string();
    Status::invalid_argument(chess_proto::bounded(&format!(
        "the message is not valid protobuf for this call: {}",
        text.trim_start_matches("failed to decode Protobuf message: ")
    )))
}
