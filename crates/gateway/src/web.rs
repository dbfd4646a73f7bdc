//! The web app (`web/` in the repository; its built files in `web/dist` are embedded at compile
//! time by `build.rs`), served on `--web-listen` together with the gateway's whole API, so the
//! page calls gRPC-Web on its own origin: no CORS, and the page works behind any proxy or port
//! mapping that serves it.
//!
//! GET and HEAD requests are answered from the embedded files; everything else (gRPC-Web POSTs,
//! CORS preflights) goes to the same layers and services as on `--listen`, API keys included.

use std::collections::HashMap;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use bytes::Bytes;
use chess_service_kit::{ConnectionLimits, Incoming, ServeError};
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use tonic::body::Body;

/// The built files: (path below `web/dist`, contents).
static FILES: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));

/// The files by URL path, each with its gzip form when that is smaller, compressed once.
static ASSETS: LazyLock<HashMap<String, Asset>> = LazyLock::new(|| {
    FILES
        .iter()
        .map(|(path, body)| (format!("/{path}"), Asset::new(path, body)))
        .collect()
});

/// Content-Security-Policy of the page: its own scripts and styles only; API calls to its own
/// origin or, when the person sets another gateway address in the page, to that one.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self' http: https:; object-src 'none'; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

#[derive(Debug)]
struct Asset {
    body: Bytes,
    gzip: Option<Bytes>,
    content_type: &'static str,
    etag: HeaderValue,
    /// Files under `assets/` carry a content hash in their names (Vite's default) and never
    /// change; the page itself is revalidated on every load.
    immutable: bool,
}

impl Asset {
    fn new(path: &str, body: &'static [u8]) -> Asset {
        let mut hasher = std::hash::DefaultHasher::new();
        body.hash(&mut hasher);
        let etag = HeaderValue::from_str(&format!("\"{:016x}\"", hasher.finish()))
            .unwrap_or(HeaderValue::from_static("\"0\""));
        let content_type = content_type(path);
        let compressible = content_type.starts_with("text/")
            || content_type.starts_with("application/javascript")
            || content_type.starts_with("application/json")
            || content_type.starts_with("image/svg");
        let gzip = compressible
            .then(|| gzip(body))
            .flatten()
            .filter(|z| z.len() < body.len())
            .map(Bytes::from);
        Asset {
            body: Bytes::from_static(body),
            gzip,
            content_type,
            etag,
            immutable: path.starts_with("assets/"),
        }
    }
}

fn gzip(data: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).ok()?;
    encoder.finish().ok()
}

fn content_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map_or("", |(_, e)| e);
    match extension {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "application/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Binds the web app's address (port 0 resolved); its connections get the same limits and
/// TCP options as the gRPC listener's.
pub(crate) async fn bind(
    addr: SocketAddr,
    limits: ConnectionLimits,
) -> Result<(SocketAddr, Incoming), ServeError> {
    let incoming = Incoming::bind(addr, limits).await?;
    Ok((incoming.local_addr(), incoming))
}

/// Prints `WEB url=http://ADDR/` on stdout (after the gateway's LISTENING line).
pub(crate) fn announce(addr: SocketAddr) {
    println!("WEB url=http://{addr}/");
    tracing::info!(%addr, files = FILES.len(), "serving the web app");
}

/// Answers GET and HEAD from the embedded files; passes every other request on.
#[derive(Clone, Debug, Default)]
pub(crate) struct WebLayer;

impl<S> tower::Layer<S> for WebLayer {
    type Service = Web<S>;

    fn layer(&self, inner: S) -> Web<S> {
        Web { inner }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Web<S> {
    inner: S,
}

impl<S, B> tower::Service<Request<B>> for Web<S>
where
    S: tower::Service<Request<B>, Response = Response<Body>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if request.method() == Method::GET || request.method() == Method::HEAD {
            let response = respond(&request);
            return Box::pin(std::future::ready(Ok(response)));
        }
        Box::pin(self.inner.call(request))
    }
}

fn respond<B>(request: &Request<B>) -> Response<Body> {
    let path = match request.uri().path() {
        "/" => "/index.html",
        other => other,
    };
    let Some(asset) = ASSETS.get(path) else {
        return plain(StatusCode::NOT_FOUND, "not found\n");
    };
    let mut response = Response::new(Body::empty());
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    h.insert(header::ETAG, asset.etag.clone());
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if asset.immutable {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        }),
    );
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    security_headers(h);
    if asset.content_type.starts_with("text/html") {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    let fresh = request
        .headers()
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|tag| tag.trim() == "*" || tag.trim() == asset.etag);
    if fresh {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        return response;
    }
    let body = match &asset.gzip {
        Some(gzip) if accepts_gzip(request) => {
            response
                .headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            gzip.clone()
        }
        _ => asset.body.clone(),
    };
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    if request.method() != Method::HEAD {
        *response.body_mut() = Body::new(Full::new(body));
    }
    response
}

fn accepts_gzip<B>(request: &Request<B>) -> bool {
    request
        .headers()
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    == Some(0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

fn security_headers(h: &mut http::HeaderMap) {
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::new(Full::new(Bytes::from_static(text.as_bytes()))));
    *response.status_mut() = status;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    security_headers(h);
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    fn get(path: &str, headers: &[(&str, &str)]) -> Request<()> {
        let mut request = Request::get(path);
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        request.body(()).unwrap()
    }

    async fn body(response: Response<Body>) -> Vec<u8> {
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec()
    }

    #[tokio::test]
    async fn serves_the_page_with_its_policy() {
        let response = respond(&get("/", &[]));
        assert_eq!(response.status(), StatusCode::OK);
        let h = response.headers();
        assert_eq!(h["content-type"], "text/html; charset=utf-8");
        assert_eq!(h["cache-control"], "no-cache");
        assert!(
            h["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("script-src 'self'")
        );
        assert_eq!(h["x-content-type-options"], "nosniff");
        assert!(h.get("content-encoding").is_none());
        let page = String::from_utf8(body(response).await).unwrap();
        assert!(page.contains("<script"), "{page}");
    }

    #[tokio::test]
    async fn every_script_the_page_loads_is_embedded_and_gzipped_on_request() {
        let page = String::from_utf8(body(respond(&get("/index.html", &[]))).await).unwrap();
        let scripts: Vec<&str> = page
            .split("src=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect();
        assert!(!scripts.is_empty(), "{page}");
        for src in scripts {
            let plain = respond(&get(src, &[]));
            assert_eq!(plain.status(), StatusCode::OK, "{src}");
            assert!(
                plain.headers()["cache-control"]
                    .to_str()
                    .unwrap()
                    .contains("immutable")
            );
            let raw = body(plain).await;
            let zipped = respond(&get(src, &[("accept-encoding", "br, gzip;q=0.8")]));
            assert_eq!(zipped.headers()["content-encoding"], "gzip");
            let packed = body(zipped).await;
            let mut unpacked = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::read::GzDecoder::new(&packed[..]),
                &mut unpacked,
            )
            .unwrap();
            assert_eq!(unpacked, raw);
            let refused = respond(&get(src, &[("accept-encoding", "gzip;q=0")]));
            assert!(refused.headers().get("content-encoding").is_none());
        }
    }

    #[test]
    fn the_bundle_stays_under_300_kb_gzipped() {
        let gzipped: usize = ASSETS
            .values()
            .map(|a| a.gzip.as_ref().map_or(a.body.len(), Bytes::len))
            .sum();
        assert!(gzipped > 10_000, "the app is embedded ({gzipped} bytes)");
        assert!(gzipped < 300_000, "{gzipped} bytes gzipped (limit 300 kB)");
    }

    #[tokio::test]
    async fn revalidation_and_missing_files() {
        let first = respond(&get("/", &[]));
        let etag = first.headers()["etag"].to_str().unwrap().to_owned();
        let again = respond(&get("/", &[("if-none-match", &etag)]));
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert!(body(again).await.is_empty());
        let missing = respond(&get("/no/such/file.js", &[]));
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        let head = respond(&Request::head("/").body(()).unwrap());
        assert_eq!(head.status(), StatusCode::OK);
        assert!(head.headers().contains_key("content-length"));
        assert!(body(head).await.is_empty());
    }
}
