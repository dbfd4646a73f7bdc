//! The report's types: what [`super::describe`] fills in and the text items word.

use chess_rules::Color;
use serde::Serialize;

use super::king::{CentreControl, Development, KingSafety};
use super::pawns::PawnStructure;
use super::phase::{EndgameClass, Phase};

/// One finding, worded in English and in Chinese.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    /// `material`, `bishops`, `pawns`, `files`, `king_safety`, `development`, `centre`,
    /// `space`, `phase`, `endgame` or `winnability`.
    pub topic: &'static str,
    pub en: String,
    pub zh: String,
}

/// One side's material.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SideMaterial {
    pub pawns: u32,
    pub knights: u32,
    pub bishops: u32,
    pub rooks: u32,
    pub queens: u32,
    /// The sum of the piece values.
    pub points: u32,
}

/// Material with the documents' values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Material {
    pub white: SideMaterial,
    pub black: SideMaterial,
    /// White's points minus black's.
    pub balance: i32,
    /// The exchange ("quality"): positive when white has a rook where black has a minor
    /// piece (that many times), negative for black.
    pub exchange_balance: i32,
}

/// One bishop and how its own pawns stand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BishopInfo {
    pub square: String,
    /// `light` or `dark` squares.
    pub colour: &'static str,
    /// Own pawns on squares of the bishop's colour, and on the other colour.
    pub own_pawns_on_colour: u32,
    pub own_pawns_off_colour: u32,
    /// `good` (fewer own pawns on its colour than off it), `bad` (more) or `neutral`.
    pub quality: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SideBishops {
    /// Bishops on both colours.
    pub pair: bool,
    pub bishops: Vec<BishopInfo>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Bishops {
    pub white: SideBishops,
    pub black: SideBishops,
    /// One bishop each, on squares of different colours.
    pub opposite_coloured: bool,
}

/// Files and the rooks on them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Files {
    /// Files without pawns.
    pub open: Vec<String>,
    /// Files without a white pawn but with a black one (half-open for white), and the reverse.
    pub half_open_white: Vec<String>,
    pub half_open_black: Vec<String>,
    /// Rooks on open files, and on files half-open for their side.
    pub white_rooks_open: Vec<String>,
    pub white_rooks_half_open: Vec<String>,
    pub black_rooks_open: Vec<String>,
    pub black_rooks_half_open: Vec<String>,
    /// Rooks on the seventh rank (the second for black).
    pub white_rooks_seventh: Vec<String>,
    pub black_rooks_seventh: Vec<String>,
}

/// Pawn structures of both sides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pawns {
    pub white: PawnStructure,
    pub black: PawnStructure,
}

/// A side-by-side pair of values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sides<T> {
    pub white: T,
    pub black: T,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    pub fen: String,
    #[serde(serialize_with = "crate::ser::color")]
    pub turn: Color,
    pub material: Material,
    pub bishops: Bishops,
    pub pawns: Pawns,
    pub files: Files,
    pub king_safety: Sides<KingSafety>,
    pub development: Sides<Development>,
    pub centre: Sides<CentreControl>,
    /// Squares in the opponent's half that a side's pawns and pieces control and no enemy
    /// pawn guards.
    pub space: Sides<u32>,
    pub phase: Phase,
    /// The known endgame class, when the material makes one.
    pub endgame: Option<EndgameClass>,
    /// Who can still checkmate, by the quick winnability analysis (FIDE 5.2.2).
    pub winnability: WinnabilityReport,
    /// Every finding in words, English and Chinese.
    pub items: Vec<Item>,
}

/// The quick winnability verdicts of both sides, as the report shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WinnabilityReport {
    /// `WB`, `W-`, `-B`, `--` (dead), with `?` for a side not decided quickly.
    pub code: String,
    /// Neither side can mate.
    pub dead: bool,
    /// `winnable`, `unwinnable` or `undetermined`, for White and for Black.
    pub verdicts: Sides<&'static str>,
    /// Why a side cannot win (empty unless it cannot).
    pub reasons: Sides<String>,
}

impl Report {
    /// The report as one JSON object (pretty-printed).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The report as text, one item a line, in English (`zh == false`) or Chinese.
    pub fn to_text(&self, zh: bool) -> String {
        let mut out = String::new();
        for item in &self.items {
            out.push_str(if zh { &item.zh } else { &item.en });
            out.push('\n');
        }
        out
    }
}
