use std::time::Duration;

use tokio::sync::watch;

use crate::ServeError;

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => tracing::info!(signal = "SIGTERM", "shutting down"),
                    _ = int.recv() => tracing::info!(signal = "SIGINT", "shutting down"),
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A shutdown trigger shared by the servers of one process: fire it once, every server stops
/// taking new calls, and long-running work can watch it to stop early.
#[derive(Clone, Debug)]
pub struct Shutdown {
    tx: watch::Sender<bool>,
    rx: watch::Receiver<bool>,
}

impl Shutdown {
    pub fn new() -> Shutdown {
        let (tx, rx) = watch::channel(false);
        Shutdown { tx, rx }
    }

    pub fn trigger(&self) {
        let _ = self.tx.send(true);
    }

    /// Resolves once [`Shutdown::trigger`] has been called.
    pub async fn wait(&self) {
        let mut rx = self.rx.clone();
        let _ = rx.wait_for(|&v| v).await;
    }

    /// Triggers on SIGTERM/SIGINT from a background task.
    pub fn trigger_on_signal(&self) {
        let me = self.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            me.trigger();
        });
    }

    /// Resolves after the trigger plus the grace period: the moment to cancel what is left.
    pub async fn wait_with_grace(&self, grace: Duration) {
        self.wait().await;
        tokio::time::sleep(grace).await;
    }
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

/// Runs a service's gRPC server (built with `serve_with_incoming_shutdown` on
/// [`Shutdown::wait`]) to its end: it returns once the server has drained after `shutdown`
/// fired, or once the `grace` period after that is over, whichever comes first (then the
/// calls still running are cancelled).
pub async fn serve_until_stopped<F>(
    server: F,
    shutdown: &Shutdown,
    grace: Duration,
) -> Result<(), ServeError>
where
    F: std::future::Future<Output = Result<(), tonic::transport::Error>>,
{
    tokio::select! {
        served = server => served.map_err(ServeError::Server)?,
        () = shutdown.wait_with_grace(grace) => {
            tracing::warn!(
                grace_secs = grace.as_secs(),
                "grace period over: cancelling the calls still running"
            );
        }
    }
    tracing::info!("stopped");
    Ok(())
}
