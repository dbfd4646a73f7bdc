//! The watchers: one `WatchGame` stream per game, reconnecting after errors, every event logged.

use super::*;

/// Starts a watcher on `game` (once).
pub(super) fn watch_game(shared: &Arc<Shared>, game: &str) {
    let log = Arc::new(Mutex::new(WatchLog {
        game: game.to_owned(),
        events: Vec::new(),
    }));
    {
        let mut watches = shared.watches.lock().unwrap();
        if watches.contains_key(game) {
            return;
        }
        watches.insert(game.to_owned(), log.clone());
    }
    tokio::spawn(watcher(shared.clone(), game.to_owned(), log));
}

async fn watcher(shared: Arc<Shared>, game: String, log: Arc<Mutex<WatchLog>>) {
    let mut stop = shared.stop_watching.clone();
    let caught_up = |log: &WatchLog| {
        let last = log.events.iter().rev().find(|e| e.kind >= 0);
        let seen = last.map_or(0, |e| e.moves.len() as u32);
        last.is_some_and(|e| e.over)
            || shared
                .targets
                .lock()
                .unwrap()
                .get(&game)
                .is_some_and(|t| seen >= *t)
    };
    let failed = |log: &Mutex<WatchLog>| {
        log.lock().unwrap().events.push(Seen {
            at_ms: now_ms(),
            kind: -1,
            ply: 0,
            moves: Vec::new(),
            over: false,
        });
    };
    while !*stop.borrow() {
        if caught_up(&log.lock().unwrap()) {
            return;
        }
        let mut client = GameServiceClient::new(shared.channel.clone());
        let open = client.watch_game(v1::WatchGameRequest {
            game_id: game.clone(),
        });
        let opened = tokio::select! {
            r = tokio::time::timeout(shared.deadline, open) => r,
            _ = stop.changed() => return,
        };
        let mut stream = match opened {
            Ok(Ok(s)) => s.into_inner(),
            _ => {
                failed(&log);
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            }
        };
        loop {
            let next = tokio::select! {
                n = stream.message() => n,
                _ = stop.changed() => return,
            };
            match next {
                Ok(Some(event)) => {
                    let state = event.state.unwrap_or_default();
                    let mut log = log.lock().unwrap();
                    log.events.push(Seen {
                        at_ms: now_ms(),
                        kind: event.kind,
                        ply: state.ply,
                        moves: uci_moves(&state),
                        over: state.outcome.is_some(),
                    });
                    if state.outcome.is_some() {
                        return;
                    }
                }
                _ => {
                    failed(&log);
                    break;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}
