//! Serialising rules types the way the report's JSON writes them.

use chess_rules::Color;
use serde::Serializer;

pub(crate) fn color<S: Serializer>(c: &Color, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(c.name())
}

pub(crate) fn opt_color<S: Serializer>(c: &Option<Color>, s: S) -> Result<S::Ok, S::Error> {
    match c {
        Some(c) => s.serialize_str(c.name()),
        None => s.serialize_none(),
    }
}
