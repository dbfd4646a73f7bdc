//! Talking to the gateway: the client options every networked command shares, the connection,
//! the deadline and API key on each call, and how a failed call is reported.

use std::error::Error as StdError;
use std::future::Future;
use std::io;
use std::time::Duration;

use chess_proto::v1::analysis_service_client::AnalysisServiceClient;
use chess_proto::v1::game_service_client::GameServiceClient;
use chess_proto::v1::gateway_service_client::GatewayServiceClient;
use chess_proto::v1::rules_service_client::RulesServiceClient;
use clap::Args;
use tonic::codec::CompressionEncoding;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Status};
use tonic_types::StatusExt as _;

use crate::error::{CliError, CliResult};

/// Where `chess up` puts the gateway, and so where the client looks by default.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:50051";

/// The longest a connection attempt may take, whatever `--timeout` says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest response accepted (a long game's state carries its PGN and every position).
const MAX_RESPONSE_BYTES: usize = 64 << 20;

const HEADING: &str = "Gateway client options (game, rules, analyze, review)";

/// Options of the commands that call the gateway (`chess game`, `chess rules`, `chess analyze`,
/// `chess review`).
#[derive(Clone, Debug, Args)]
pub struct ClientArgs {
    /// The gateway to call: `http://host:port`, or `host:port`.
    #[arg(
        long,
        global = true,
        env = "CHESS_SERVER",
        default_value = DEFAULT_SERVER,
        value_name = "URL",
        help_heading = HEADING
    )]
    pub server: String,

    /// API key, sent as `authorization: Bearer KEY` (the loopback gateway of `chess up` needs
    /// none). Prefer the environment variable: a flag's value shows in the process list.
    #[arg(
        long,
        global = true,
        env = "CHESS_API_KEY",
        hide_env_values = true,
        value_name = "KEY",
        help_heading = HEADING
    )]
    pub api_key: Option<String>,

    /// Deadline of each call in seconds, sent to the server as the gRPC deadline; 0 for none.
    /// (`game watch` runs until the game ends and has no deadline.)
    #[arg(long, global = true, default_value_t = 30, value_name = "SECS", help_heading = HEADING)]
    pub timeout: u64,
}

/// Runs a networked command on a small runtime of its own; the local commands never start one.
pub fn block_on<F: Future<Output = CliResult>>(command: F) -> CliResult {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(command)
}

/// A connection to the gateway, and what each call carries.
#[derive(Debug)]
pub struct Client {
    channel: Channel,
    server: String,
    authorization: Option<AsciiMetadataValue>,
    deadline: Option<Duration>,
}

impl Client {
    /// Connects to `--server`; an unreachable gateway is reported with a hint.
    pub async fn connect(args: &ClientArgs) -> CliResult<Client> {
        let server = server_url(&args.server)?;
        let authorization = match args.api_key.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(key) => Some(
                MetadataValue::try_from(format!("Bearer {key}")).map_err(|_| {
                    // The message never repeats the key.
                    CliError::usage("the API key has characters that cannot be sent in a header")
                })?,
            ),
        };
        let deadline = (args.timeout > 0).then(|| Duration::from_secs(args.timeout));
        let endpoint = Endpoint::from_shared(server.clone())
            .map_err(|e| CliError::usage(format!("--server {server:?} is not a URL: {e}")))?
            .connect_timeout(deadline.unwrap_or(CONNECT_TIMEOUT).min(CONNECT_TIMEOUT));
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| unreachable_error(&server, &e))?;
        Ok(Client {
            channel,
            server,
            authorization,
            deadline,
        })
    }

    /// A unary call's request: the API key and the deadline.
    pub fn request<T>(&self, message: T) -> Request<T> {
        prepare(message, self.authorization.as_ref(), self.deadline)
    }

    /// A request whose deadline is at least `at_least` (a search told to run for a minute
    /// needs more than the default deadline), unless deadlines are off.
    pub fn request_at_least<T>(&self, message: T, at_least: Duration) -> Request<T> {
        let deadline = self.deadline.map(|d| d.max(at_least));
        prepare(message, self.authorization.as_ref(), deadline)
    }

    /// A long-lived stream's request: the API key, no deadline.
    pub fn stream_request<T>(&self, message: T) -> Request<T> {
        prepare(message, self.authorization.as_ref(), None)
    }

    pub fn rules(&self) -> RulesServiceClient<Channel> {
        RulesServiceClient::new(self.channel.clone())
            .accept_compressed(CompressionEncoding::Gzip)
            .max_decoding_message_size(MAX_RESPONSE_BYTES)
    }

    pub fn analysis(&self) -> AnalysisServiceClient<Channel> {
        AnalysisServiceClient::new(self.channel.clone())
            .accept_compressed(CompressionEncoding::Gzip)
            .send_compressed(CompressionEncoding::Gzip)
            .max_decoding_message_size(MAX_RESPONSE_BYTES)
    }

    pub fn gateway(&self) -> GatewayServiceClient<Channel> {
        GatewayServiceClient::new(self.channel.clone())
            .accept_compressed(CompressionEncoding::Gzip)
            .max_decoding_message_size(MAX_RESPONSE_BYTES)
    }

    pub fn games(&self) -> GameServiceClient<Channel> {
        GameServiceClient::new(self.channel.clone())
            .accept_compressed(CompressionEncoding::Gzip)
            .max_decoding_message_size(MAX_RESPONSE_BYTES)
    }

    /// A failed call as the error `main` prints (exit 1).
    pub fn error(&self, status: &Status) -> CliError {
        if status.code() == Code::Unavailable && is_connection_refused(status) {
            return unreachable_error(&self.server, status);
        }
        let mut text = status_text(status);
        if status.code() == Code::Unauthenticated && self.authorization.is_none() {
            text.push_str(
                "\nhint: this gateway wants an API key: pass --api-key or set CHESS_API_KEY",
            );
        }
        CliError::failure(text)
    }
}

/// A request with `authorization` metadata and a `grpc-timeout` (the gRPC deadline).
fn prepare<T>(
    message: T,
    authorization: Option<&AsciiMetadataValue>,
    deadline: Option<Duration>,
) -> Request<T> {
    let mut request = Request::new(message);
    if let Some(value) = authorization {
        request
            .metadata_mut()
            .insert("authorization", value.clone());
    }
    if let Some(deadline) = deadline {
        request.set_timeout(deadline);
    }
    request
}

/// `host:port` becomes `http://host:port`; only plain HTTP/2 is spoken.
fn server_url(text: &str) -> CliResult<String> {
    let text = text.trim().trim_end_matches('/');
    if text.is_empty() {
        return Err(CliError::usage(
            "--server is empty: give the gateway as http://host:port",
        ));
    }
    match text.split_once("://") {
        None => Ok(format!("http://{text}")),
        Some(("http", _)) => Ok(text.to_owned()),
        Some(("https", _)) => Err(CliError::usage(format!(
            "--server {text}: TLS is not supported by this client yet; use http:// (or a local \
             TLS-terminating proxy)"
        ))),
        Some((scheme, _)) => Err(CliError::usage(format!(
            "--server {text}: unsupported scheme {scheme:?}; use http://host:port"
        ))),
    }
}

/// `CODE: message`, then one `  field NAME: DESCRIPTION` line per `BadRequest` violation.
pub fn status_text(status: &Status) -> String {
    let mut text = format!("{}: {}", code_name(status.code()), status.message());
    if let Some(bad_request) = status.get_error_details().bad_request() {
        for violation in &bad_request.field_violations {
            text.push_str(&format!(
                "\n  field {}: {}",
                violation.field, violation.description
            ));
        }
    }
    text
}

/// The code as gRPC spells it (`NOT_FOUND`), as grpcurl and the gRPC docs show it.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// Whether a transport failure is, somewhere down its chain, a refused TCP connection.
fn is_connection_refused(error: &(dyn StdError + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<io::Error>()
            && io.kind() == io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// The whole cause chain on one line: `transport error: tcp connect error: Connection refused`.
fn chain_text(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        let part = e.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = e.source();
    }
    text
}

fn unreachable_error(server: &str, error: &(dyn StdError + 'static)) -> CliError {
    if is_connection_refused(error) {
        CliError::failure(format!(
            "cannot reach the gateway at {server}: connection refused\n\
             hint: start the whole stack locally with `chess up`, or point --server (or \
             CHESS_SERVER) at a running gateway"
        ))
    } else {
        CliError::failure(format!(
            "cannot reach the gateway at {server}: {}",
            chain_text(error)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic_types::ErrorDetails;

    #[test]
    fn server_urls() {
        assert_eq!(
            server_url("127.0.0.1:50051").unwrap(),
            "http://127.0.0.1:50051"
        );
        assert_eq!(
            server_url("http://localhost:1/").unwrap(),
            "http://localhost:1"
        );
        assert_eq!(server_url("https://x:1").unwrap_err().exit_code(), 2);
        assert_eq!(server_url("ftp://x:1").unwrap_err().exit_code(), 2);
        assert_eq!(server_url(" ").unwrap_err().exit_code(), 2);
    }

    #[test]
    fn requests_carry_the_key_and_the_deadline() {
        let key: AsciiMetadataValue = "Bearer k1".parse().unwrap();
        let request = prepare((), Some(&key), Some(Duration::from_secs(30)));
        let metadata = request.metadata();
        assert_eq!(metadata.get("authorization").unwrap(), "Bearer k1");
        assert!(metadata.get("grpc-timeout").is_some());
        let request = prepare((), None, None);
        assert!(request.metadata().is_empty());
    }

    #[test]
    fn status_lines_carry_field_violations() {
        let details = ErrorDetails::with_bad_request_violation("move", "illegal move e5");
        let status = Status::with_error_details(Code::InvalidArgument, "move: bad", details);
        assert_eq!(
            status_text(&status),
            "INVALID_ARGUMENT: move: bad\n  field move: illegal move e5"
        );
        assert_eq!(
            status_text(&Status::not_found("game x not found")),
            "NOT_FOUND: game x not found"
        );
    }

    #[test]
    fn refused_is_found_down_the_chain() {
        #[derive(Debug)]
        struct Wrapper(io::Error);
        impl std::fmt::Display for Wrapper {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("tcp connect error")
            }
        }
        impl StdError for Wrapper {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        let refused = Wrapper(io::Error::from(io::ErrorKind::ConnectionRefused));
        assert!(is_connection_refused(&refused));
        let other = Wrapper(io::Error::from(io::ErrorKind::TimedOut));
        assert!(!is_connection_refused(&other));
        assert!(chain_text(&other).starts_with("tcp connect error: "));
        let message = unreachable_error("http://127.0.0.1:1", &refused).to_string();
        assert!(message.contains("chess up"), "{message}");
    }
}
