//! chess-loadgen against a real local stack: every scenario and load shape with small bounded
//! counts, its JSON report checked against what the services' own metrics counted
//! (`counts.rs`), overload seen as RESOURCE_EXHAUSTED and the reasons for refusals
//! (`refusals.rs`), the compare mode's exit status and the refusal of targets outside loopback
//! (`cli.rs`).

mod cli;
mod counts;
mod refusals;
