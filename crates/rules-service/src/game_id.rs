//! A game's id.

/// A game's id: a random UUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GameId(pub(crate) uuid::Uuid);

impl GameId {
    pub fn new() -> GameId {
        GameId(uuid::Uuid::new_v4())
    }

    pub fn as_u128(self) -> u128 {
        self.0.as_u128()
    }

    pub fn from_u128(v: u128) -> GameId {
        GameId(uuid::Uuid::from_u128(v))
    }

    /// The id of the game a CreateGame with idempotency key `key` makes: the same key, the
    /// same game (a version-8 UUID from the key's SHA-256), so the call can be sent again.
    pub fn for_request(key: &str) -> GameId {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("chess-game/{key}").as_bytes());
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        GameId(uuid::Builder::from_custom_bytes(bytes).into_uuid())
    }
}

impl Default for GameId {
    fn default() -> Self {
        GameId::new()
    }
}

impl std::fmt::Display for GameId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Reads stored and exported ids (files, database rows); request fields go through
/// `chess_proto::game_uuid_from_text`, which quotes bad input cut short.
impl std::str::FromStr for GameId {
    type Err = String;
    fn from_str(s: &str) -> Result<GameId, String> {
        uuid::Uuid::parse_str(s).map(GameId).map_err(|_| {
            format!("{s:?} is not a game id (a UUID like 67e55044-10b1-426f-9247-bb680e5fe0c8)")
        })
    }
}
