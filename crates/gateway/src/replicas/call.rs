//! One call sent to the pool's replicas: round-robin, an UNAVAILABLE replica ejected, and the
//! call sent once more to another replica where [`Retry`] allows; streams passed through.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::codec::Streaming;
use tonic::{Code, Request, Response, Status};

use super::{Replica, ReplicaPool, Retry};
use crate::upstream::{
    BoxStream, Call, Failed, StreamHooks, UpstreamChannel, forward_stream, send,
};

impl ReplicaPool {
    /// Forwards a call to a replica (round-robin over the healthy ones), `client` making the
    /// generated client for a replica's channel. One that fails with UNAVAILABLE before
    /// answering is ejected and, where `retry` allows, the call is sent once more to another
    /// replica within the same deadline. Also says which replica answered.
    pub async fn call<C, Req: Clone, Resp, Fut>(
        &self,
        call: &Call,
        message: Req,
        retry: Retry,
        client: impl Fn(&UpstreamChannel) -> C,
        send_with: impl Fn(C, Request<Req>) -> Fut,
    ) -> Result<(Arc<Replica>, Response<Resp>), Status>
    where
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        self.call_reporting(call, message, retry, client, send_with)
            .await
            .map_err(|refused| refused.status)
    }

    /// [`ReplicaPool::call`], its failure saying which replica refused the call and whether a try
    /// before that one may have reached its replica (and so been acted on).
    pub async fn call_reporting<C, Req: Clone, Resp, Fut>(
        &self,
        call: &Call,
        message: Req,
        retry: Retry,
        client: impl Fn(&UpstreamChannel) -> C,
        send_with: impl Fn(C, Request<Req>) -> Fut,
    ) -> Result<(Arc<Replica>, Response<Resp>), Refused>
    where
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let unanswered = |status| Refused {
            status,
            by: None,
            after_maybe_received: false,
        };
        let candidates = match self.candidates() {
            Ok(candidates) => candidates,
            // No replica known, but names configured: they may resolve by now (a backend
            // started after the gateway); the call waits for one lookup, not for the next tick.
            Err(_) if self.has_names() => {
                self.resolve_on_demand(call.deadline).await;
                self.candidates().map_err(unanswered)?
            }
            Err(status) => return Err(unanswered(status)),
        };
        let mut failed: Vec<Tried> = Vec::new();
        for replica in candidates {
            match self
                .attempt(
                    &replica,
                    &failed,
                    retry,
                    call,
                    message.clone(),
                    &client,
                    &send_with,
                )
                .await
            {
                Attempt::Answered(response) => return Ok((replica, response)),
                Attempt::Refused(status) => {
                    return Err(Refused {
                        status,
                        after_maybe_received: failed.iter().any(|t| t.maybe_received),
                        by: Some(replica),
                    });
                }
                Attempt::Unavailable(tried) => failed.push(tried),
                Attempt::NotRetried => break,
            }
        }
        Err(unanswered(self.all_failed(failed)))
    }

    /// One try of a call on `replica`, after the tries that `failed` before it.
    #[allow(clippy::too_many_arguments)]
    async fn attempt<C, Req, Resp, Fut>(
        &self,
        replica: &Arc<Replica>,
        failed: &[Tried],
        retry: Retry,
        call: &Call,
        message: Req,
        client: &impl Fn(&UpstreamChannel) -> C,
        send_with: &impl Fn(C, Request<Req>) -> Fut,
    ) -> Attempt<Resp>
    where
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let backend = &replica.backend;
        if call.deadline.is_some_and(|d| Instant::now() >= d) {
            return Attempt::Refused(backend.deadline_exceeded());
        }
        if let Some(last) = failed.last() {
            if retry == Retry::IfNotSent && last.maybe_received {
                return Attempt::NotRetried;
            }
            self.retried();
            tracing::info!(service = self.service.name, address = %backend.address, "retrying the call on another replica");
        }
        let started = Instant::now();
        // A retry leaves part of the caller's deadline unused, so that when it cannot finish
        // the caller still hears why from us (UNAVAILABLE, outcome unknown) rather than its
        // own DEADLINE_EXCEEDED with nothing said.
        let shortened = match (failed.last(), call.deadline) {
            (Some(_), Some(deadline)) => Some(Call {
                metadata: call.metadata.clone(),
                deadline: Some(
                    deadline - retry_reserve(deadline.saturating_duration_since(started)),
                ),
                caller: call.caller.clone(),
            }),
            _ => None,
        };
        let sent = send(
            backend,
            client(backend),
            shortened.as_ref().unwrap_or(call),
            message,
            send_with,
        )
        .await;
        if let (Some(first), Some(_), Err(Failed { status, .. })) =
            (failed.first(), &shortened, &sent)
            && status.code() == Code::DeadlineExceeded
        {
            return Attempt::Refused(Status::unavailable(format!(
                "outcome unknown: {} failed on the {} service at {} ({}), and the retry on {} \
                 did not answer within the caller's deadline, so it may have been carried out \
                 there; sending the same call again is safe",
                self.service.calls,
                self.service.name,
                first.address,
                first.status.code().description(),
                backend.address,
            )));
        }
        match sent {
            Err(Failed {
                status,
                maybe_received,
            }) if status.code() == Code::Unavailable => {
                self.failed(replica, &status);
                Attempt::Unavailable(Tried {
                    address: backend.address.clone(),
                    status,
                    maybe_received,
                })
            }
            Err(failed) => {
                if failed.status.code() == Code::DeadlineExceeded
                    && started.elapsed() >= super::HANG_MIN
                    && !replica.answered_since(started)
                {
                    // Nothing came back from the replica for the call's whole life: hung,
                    // stopped or unreachable without a reset. Eject it like a refusal, so the
                    // next calls go elsewhere instead of each waiting out its deadline.
                    self.failed(
                        replica,
                        &Status::unavailable(format!(
                            "no answer from the {} service at {} for {} ms",
                            backend.name,
                            backend.address,
                            started.elapsed().as_millis()
                        )),
                    );
                }
                Attempt::Refused(failed.status)
            }
            Ok(response) => {
                self.succeeded(replica);
                Attempt::Answered(response)
            }
        }
    }

    /// The error for a call that no replica answered: the only failure as it was, or both.
    fn all_failed(&self, mut failed: Vec<Tried>) -> Status {
        let name = self.service.name;
        match failed.len() {
            0 => Status::unavailable(format!("no {name} replica answered")),
            // The only replica there is, or a call not retried: its own answer, details and all.
            1 => failed
                .pop()
                .map(|tried| tried.status)
                .unwrap_or_else(|| Status::unavailable(format!("no {name} replica answered"))),
            _ => {
                let tried: Vec<String> = failed
                    .iter()
                    .map(
                        |Tried {
                             address, status, ..
                         }| {
                            if status.message().contains(&**address) {
                                status.message().to_owned()
                            } else {
                                format!("the {name} service at {address}: {}", status.message())
                            }
                        },
                    )
                    .collect();
                Status::unavailable(format!(
                    "{} failed on two {name} replicas, each UNAVAILABLE: {}",
                    self.service.calls,
                    tried.join("; ")
                ))
            }
        }
    }

    /// A stream from `replica` (as [`ReplicaPool::call`] answered) passed through with `hooks`;
    /// failing with UNAVAILABLE ejects the replica.
    pub fn stream<T: Send + 'static>(
        self: &Arc<Self>,
        response: Response<Streaming<T>>,
        replica: Arc<Replica>,
        deadline: Option<Instant>,
        hooks: StreamHooks,
    ) -> Response<BoxStream<T>> {
        let backend = replica.backend.clone();
        let pool = self.clone();
        let hooks = StreamHooks {
            on_unavailable: Some(Box::new(move |status: &Status| {
                pool.failed(&replica, status);
            })),
            ..hooks
        };
        forward_stream(response, &backend, deadline, hooks)
    }
}

/// How much of the time left to the caller's deadline a retry leaves unused: a fifth, at most
/// 200 ms, for the answer to reach the caller before its deadline.
fn retry_reserve(left: Duration) -> Duration {
    (left / 5).min(Duration::from_millis(200))
}

/// A call [`ReplicaPool::call_reporting`] could not get answered.
#[derive(Debug)]
pub(crate) struct Refused {
    /// The caller's error.
    pub status: Status,
    /// The replica the last try went to, when `status` is its refusal (not every replica
    /// being unavailable).
    pub by: Option<Arc<Replica>>,
    /// Whether a try before the last one failed after its replica may have received the call.
    pub after_maybe_received: bool,
}

/// How one try of a call ended.
enum Attempt<Resp> {
    /// The replica answered.
    Answered(Response<Resp>),
    /// It failed with UNAVAILABLE (and was ejected).
    Unavailable(Tried),
    /// Any other failure: the call's answer, not to be retried.
    Refused(Status),
    /// Not sent: the previous try may have reached its replica and the call is not safe to
    /// send twice.
    NotRetried,
}

/// A try that failed with UNAVAILABLE.
#[derive(Debug)]
struct Tried {
    /// The replica's address.
    address: Arc<str>,
    status: Status,
    /// Whether the replica may have received the call (and acted on it).
    maybe_received: bool,
}
