//! Node kinds as types: the root, PV and non-PV distinctions compile into three copies of the
//! search instead of run-time flags.

/// Compile-time node kinds.
pub(super) trait NodeKind {
    /// A node on the principal variation (searched with an open window).
    const PV: bool;
    /// The root node.
    const ROOT: bool;
}

pub(super) struct Root;
pub(super) struct Pv;
pub(super) struct NonPv;

impl NodeKind for Root {
    const PV: bool = true;
    const ROOT: bool = true;
}
impl NodeKind for Pv {
    const PV: bool = true;
    const ROOT: bool = false;
}
impl NodeKind for NonPv {
    const PV: bool = false;
    const ROOT: bool = false;
}
