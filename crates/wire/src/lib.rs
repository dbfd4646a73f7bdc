//! # chess-wire
//!
//! The `chess.v1` contract's conversions that need the chess rules: positions, moves, sides
//! and outcomes read from and written to wire types (bad input a
//! [`chess_proto::FieldViolation`]), `chess-knowledge`'s openings and position reports as
//! wire messages, and the [`TimeControl`]s games are played under (read from text, stored in
//! game logs, carried on the wire). The contract itself (generated code, descriptor, codec,
//! field violations) is `chess-proto`, which needs none of this, so that the gateway and
//! `chess-service-kit` compile without the rules.

#![forbid(unsafe_code)]

mod convert;
mod knowledge;
mod time_control;

pub use convert::*;
pub use knowledge::*;
pub use time_control::*;
