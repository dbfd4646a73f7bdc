//! The flag games: made every few seconds with a few seconds on each clock, white moves once, and
//! black's flag must fall on time (polled through the gateway).

use super::*;

/// Every `every`, a game with `minutes` for each side whose white moves once: black's flag
/// falls `minutes` after that move.
pub(super) async fn flag_maker(shared: Arc<Shared>, every: Duration, minutes: String) {
    let black_ms = (minutes.parse::<f64>().unwrap_or(0.1) * 60_000.0) as u64;
    let mut made = 0u32;
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !shared.stopped() {
        tick.tick().await;
        if shared.stopped() {
            break;
        }
        made += 1;
        let key = format!("hosts-{}-flag-{made}", shared.run);
        let Some(game) = create_game(&shared, "flags", &key, &minutes, 0).await else {
            continue;
        };
        let req = v1::MakeMoveRequest {
            game_id: game.id.clone(),
            r#move: "e2e4".into(),
            expected_ply: Some(0),
            request_id: format!("{key}-e4"),
            ..Default::default()
        };
        let mut record = call("flags", "MakeMove", Some(&game.id));
        record.key = Some(req.request_id.clone());
        record.ply = Some(0);
        record.mv = Some("e2e4".into());
        let moved = shared
            .call(record, |ch, d| async move {
                GameServiceClient::new(ch).make_move(request(req, d)).await
            })
            .await;
        if moved.is_err() {
            continue;
        }
        let due_ms = now_ms() + black_ms;
        shared.flags.lock().unwrap().push(FlagGame {
            game: game.id.clone(),
            due_ms,
            polled_over_ms: None,
        });
        watch_game(&shared, &game.id);
        tokio::spawn(flag_poller(shared.clone(), game.id, due_ms));
    }
}

/// Reads a flag game every half second from its due time until it shows the game over (or
/// the watchers stop).
async fn flag_poller(shared: Arc<Shared>, game: String, due_ms: u64) {
    tokio::time::sleep(Duration::from_millis(due_ms.saturating_sub(now_ms()))).await;
    while !*shared.stop_watching.borrow() {
        let req = v1::GetGameRequest {
            game_id: game.clone(),
        };
        let answer = shared
            .call(call("flags", "GetGame", Some(&game)), |ch, d| async move {
                GameServiceClient::new(ch).get_game(request(req, d)).await
            })
            .await;
        if answer.is_ok_and(|s| s.outcome.is_some()) {
            let at = now_ms();
            if let Some(f) = shared
                .flags
                .lock()
                .unwrap()
                .iter_mut()
                .find(|f| f.game == game)
            {
                f.polled_over_ms = Some(at);
            }
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
