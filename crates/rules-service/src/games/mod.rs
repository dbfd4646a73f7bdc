//! `chess.v1.GameService`: durable game sessions, in the search service's shape. A call
//! comes in through the handlers (`api.rs`), which check the request and build the event;
//! the cache of live games (`cache.rs`) loads the game, has the session check the event,
//! stores it and tells the watchers; `wire.rs` turns sessions and errors into wire types,
//! `pgn.rs` writes a game's PGN, and `sync.rs` keeps cached games in step with the store.

mod api;
mod cache;
mod pgn;
mod sync;
mod wire;

pub use self::api::GamesApi;
pub use self::sync::Eviction;
