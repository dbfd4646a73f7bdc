//! Calls refused with RESOURCE_EXHAUSTED: which limit refused them (read from the servers'
//! messages) and, for the report, why and how to lift it. A load test that meets the gateway's
//! per-caller rate limit measures the limit, not the servers, and its report must say so.

use std::collections::BTreeMap;

use tonic::Code;

/// What refused a call with RESOURCE_EXHAUSTED.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refuser {
    /// The gateway's per-caller token bucket (`--rate-limit`, `--rate-burst`).
    GatewayRateLimit,
    /// The search service with every search slot and queue place taken (`--workers`,
    /// `--queue`): overload.
    SearchBusy,
    /// Any other limit; the report's error sample carries its message.
    Other,
}

impl Refuser {
    /// Reads the limit from a RESOURCE_EXHAUSTED message (the gateway's and the search
    /// service's wording).
    pub fn of(message: &str) -> Refuser {
        if message.starts_with("rate limit exceeded") {
            Refuser::GatewayRateLimit
        } else if message.contains("search service is busy") {
            Refuser::SearchBusy
        } else {
            Refuser::Other
        }
    }

    /// The name in the JSON report.
    pub fn name(self) -> &'static str {
        match self {
            Refuser::GatewayRateLimit => "gateway-rate-limit",
            Refuser::SearchBusy => "search-busy",
            Refuser::Other => "other",
        }
    }

    /// Why `count` of `requests` calls were refused and what to change, in plain words;
    /// `sample` is one refused call's message.
    pub fn explain(self, count: u64, requests: u64, sample: &str) -> String {
        let share = if requests > 0 {
            count as f64 * 100.0 / requests as f64
        } else {
            0.0
        };
        let calls = format!("{count} of {requests} calls ({share:.1}%)");
        match self {
            Refuser::GatewayRateLimit => {
                let allowed = sample
                    .strip_prefix("rate limit exceeded: ")
                    .and_then(|rest| rest.split_once(" allowed"))
                    .map_or_else(
                        || "a fixed number of requests per second".to_owned(),
                        |(allowed, _)| allowed.to_owned(),
                    );
                format!(
                    "{calls} were refused by the gateway's per-caller rate limit ({allowed} for \
                     each API key, or each client address when the gateway runs without keys), \
                     not by the servers' capacity: these figures measure the limit. To load the \
                     servers, lift it: start the gateway with --rate-limit 0 \
                     (CHESS_GATEWAY_RATE_LIMIT=0) or a limit above the load (`chess up` sets \
                     none unless given --rate-limit), or send less (--rate below the limit)."
                )
            }
            Refuser::SearchBusy => format!(
                "{calls} were refused by the search service because every search slot and \
                 queue place was taken: the load is above what it runs at once (overload, \
                 which may be what this run looks for). To take more, start the search \
                 service with more --workers or a longer --queue (CHESS_SEARCH_WORKERS, \
                 CHESS_SEARCH_QUEUE) or add replicas; or send less (fewer --clients, a lower \
                 --rate)."
            ),
            Refuser::Other => format!(
                "{calls} were refused by a server's limit (RESOURCE_EXHAUSTED: {sample}); \
                 its flags are in that server's --help."
            ),
        }
    }
}

/// Refused calls by what refused them: their count and the first one's message.
#[derive(Clone, Debug, Default)]
pub struct Refusals(pub BTreeMap<Refuser, (u64, String)>);

impl Refusals {
    /// Counts a call's outcome if it was a refusal.
    pub fn add(&mut self, code: Code, message: &str) {
        if code != Code::ResourceExhausted {
            return;
        }
        let entry = self
            .0
            .entry(Refuser::of(message))
            .or_insert_with(|| (0, message.to_owned()));
        entry.0 += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gateway's message when its limiter refuses a call (crates/gateway, `auth.rs`).
    const RATE_LIMITED: &str = "rate limit exceeded: 100 requests per second (burst 100) \
                                allowed for this client address; retry in 9 ms";
    /// The search service's message when its slots and queue are full.
    const BUSY: &str = "the search service is busy: 2 search slots and a queue of 8 are all \
                        taken; retry later or add replicas";

    #[test]
    fn refusals_are_told_apart_by_their_message() {
        assert_eq!(Refuser::of(RATE_LIMITED), Refuser::GatewayRateLimit);
        assert_eq!(Refuser::of(BUSY), Refuser::SearchBusy);
        assert_eq!(
            Refuser::of("this gateway already serves its limit of 8 WatchGame streams"),
            Refuser::Other
        );
        let mut r = Refusals::default();
        r.add(Code::ResourceExhausted, RATE_LIMITED);
        r.add(Code::ResourceExhausted, "rate limit exceeded: other text");
        r.add(Code::ResourceExhausted, BUSY);
        r.add(Code::Unavailable, RATE_LIMITED);
        r.add(Code::Ok, "");
        assert_eq!(r.0.len(), 2);
        assert_eq!(
            r.0[&Refuser::GatewayRateLimit],
            (2, RATE_LIMITED.to_owned())
        );
        assert_eq!(r.0[&Refuser::SearchBusy].0, 1);
    }

    #[test]
    fn a_rate_limited_run_is_told_why_and_how_to_lift_the_limit() {
        let text = Refuser::GatewayRateLimit.explain(995, 1000, RATE_LIMITED);
        assert!(text.starts_with("995 of 1000 calls (99.5%) were refused by the gateway's per-caller rate limit (100 requests per second (burst 100) for each API key"), "{text}");
        assert!(text.contains("not by the servers' capacity"), "{text}");
        assert!(text.contains("--rate-limit 0"), "{text}");
        assert!(text.contains("CHESS_GATEWAY_RATE_LIMIT=0"), "{text}");
        // A message in another wording still gets the advice.
        let text = Refuser::GatewayRateLimit.explain(1, 3, "rate limit exceeded");
        assert!(
            text.contains("a fixed number of requests per second"),
            "{text}"
        );
        assert!(text.contains("--rate-limit 0"), "{text}");

        let text = Refuser::SearchBusy.explain(3, 40, BUSY);
        assert!(text.starts_with("3 of 40 calls (7.5%) were refused by the search service"));
        assert!(
            text.contains("--workers") && text.contains("--queue"),
            "{text}"
        );
        let text = Refuser::Other.explain(1, 1, "too many watchers");
        assert!(text.contains("too many watchers"), "{text}");
    }
}
