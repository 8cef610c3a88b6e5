//! The reference web client (`web/`, README: Open it), served at `/`
//! and `/assets/*` beside the API's routes, which keep their paths. The
//! files are built into the binary, so `cargo run -p server` serves them
//! from any directory; on AWS the same folder goes to S3 + CloudFront
//! (docs/deploy.md, The web client).

use std::io::Write as _;
use std::sync::LazyLock;

use axum::Router;
use axum::body::Bytes;
use axum::extract::Path;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use sha2::{Digest as _, Sha256};
use shared::error::ApiError;

/// Each file of `web/` by its path under `/assets/`, with its media type.
/// Only these are served: the folder's README and licence files are not.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/app.js"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/api.js"),
    ),
    (
        "dom.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/dom.js"),
    ),
    (
        "pow.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/pow.js"),
    ),
    (
        "config.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/config.js"),
    ),
    // The TOTP enrollment's QR code: drawn by qr.js with the vendored
    // generator (web/assets/vendor/README.md), both loaded only then.
    (
        "qr.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/qr.js"),
    ),
    (
        "vendor/qrcode.js",
        "text/javascript; charset=utf-8",
        include_str!("../../web/assets/vendor/qrcode.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../web/assets/style.css"),
    ),
];

const INDEX: &str = include_str!("../../web/index.html");

/// The origin `web/assets/config.js` sets as `name` (`API_ORIGIN`, and
/// `MEDIA_ORIGIN`, `UPLOAD_ORIGIN`), or None where it leaves it empty.
/// The file is built in, so this is read once.
fn configured_origin<'a>(config: &'a str, name: &str) -> Option<&'a str> {
    let prefix = format!("export const {name} =");
    config
        .lines()
        .find_map(|line| line.trim().strip_prefix(prefix.as_str()))
        .map(|value| value.trim().trim_end_matches(';').trim().trim_matches('"'))
        .filter(|origin| !origin.is_empty())
}

/// `first`, then each of `more` that is set and not named yet, as a CSP source list.
fn sources<'a>(first: &[&'a str], more: &[Option<&'a str>]) -> String {
    let mut named: Vec<&str> = first.to_vec();
    for origin in more.iter().flatten() {
        if !named.contains(origin) {
            named.push(origin);
        }
    }
    named.join(" ")
}

/// Only this server's own scripts and styles run, whatever a post says, and
/// the page may connect to exactly the origins its client sends requests
/// to: the API's, and the one it uploads images to when that is
/// another (docs/API.md, Hardening v4: a policy allowing any https origin
/// let a script send the token anywhere). Images are shown from the
/// page's origin, the API's (its relative image URLs are of it) and the
/// configured media origin.
fn content_security_policy(config: &str) -> String {
    let api = configured_origin(config, "API_ORIGIN");
    let images = sources(&["'self'", "data:"], &[api, configured_origin(config, "MEDIA_ORIGIN")]);
    let connect = sources(
        &[api.unwrap_or("'self'")],
        &[configured_origin(config, "UPLOAD_ORIGIN")],
    );
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src {images}; \
         connect-src {connect}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"
    )
}

static CONTENT_SECURITY_POLICY: LazyLock<HeaderValue> = LazyLock::new(|| {
    let config = ASSETS
        .iter()
        .find(|(file, _, _)| *file == "config.js")
        .map_or("", |(_, _, body)| *body);
    HeaderValue::from_str(&content_security_policy(config)).expect("config.js's origins are plain origins")
});

pub(crate) fn routes() -> Router {
    // Compressed now, as the server starts, not on the first visit.
    LazyLock::force(&INDEX_FILE);
    LazyLock::force(&ASSET_FILES);
    Router::new()
        .route(
            "/",
            get(|headers: HeaderMap| async move { INDEX_FILE.answer(&headers) }),
        )
        // A path, not one segment: vendored files are under assets/vendor/.
        .route("/assets/{*name}", get(asset))
}

async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    match ASSET_FILES.iter().find(|(file, _)| *file == name) {
        Some((_, file)) => file.answer(&headers),
        None => ApiError::NotFound("no such file".into()).into_response(),
    }
}

static INDEX_FILE: LazyLock<File> = LazyLock::new(|| File::new("text/html; charset=utf-8", INDEX));

static ASSET_FILES: LazyLock<Vec<(&'static str, File)>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|(name, media_type, body)| (*name, File::new(media_type, body)))
        .collect()
});

/// A file of the client, compressed once (each encoding at its best level:
/// the work is done once per process, not per request), every form with a
/// strong `ETag` of its own bytes: the forms differ byte for byte, so a
/// cache never takes one for another (RFC 9110, 8.8.3.3).
#[derive(Debug)]
struct File {
    media_type: &'static str,
    identity: Representation,
    /// Only the encodings that came out smaller than the file itself.
    encoded: Vec<(Coding, Representation)>,
}

#[derive(Debug)]
struct Representation {
    body: Bytes,
    etag: HeaderValue,
}

impl Representation {
    fn new(body: Vec<u8>) -> Self {
        let digest = Sha256::digest(&body);
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        Representation {
            body: Bytes::from(body),
            etag: HeaderValue::from_str(&format!("\"{hex}\"")).expect("hex in quotes is a header value"),
        }
    }
}

/// The content codings the client's files are kept in besides identity,
/// in the order preferred when a request accepts several equally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    Br,
    Gzip,
}

impl Coding {
    const PREFERRED: [Coding; 2] = [Coding::Br, Coding::Gzip];

    fn token(self) -> &'static str {
        match self {
            Coding::Br => "br",
            Coding::Gzip => "gzip",
        }
    }

    fn encode(self, bytes: &[u8]) -> Vec<u8> {
        match self {
            Coding::Br => {
                let mut out = Vec::new();
                let params = brotli::enc::BrotliEncoderParams {
                    quality: 11,
                    ..Default::default()
                };
                brotli::BrotliCompress(&mut &bytes[..], &mut out, &params).expect("compressing in memory");
                out
            }
            Coding::Gzip => {
                let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
                encoder.write_all(bytes).expect("compressing in memory");
                encoder.finish().expect("compressing in memory")
            }
        }
    }
}

impl File {
    fn new(media_type: &'static str, body: &'static str) -> Self {
        let encoded = Coding::PREFERRED
            .iter()
            .map(|&coding| (coding, coding.encode(body.as_bytes())))
            .filter(|(_, encoded)| encoded.len() < body.len())
            .map(|(coding, encoded)| (coding, Representation::new(encoded)))
            .collect();
        File {
            media_type,
            identity: Representation::new(body.as_bytes().to_vec()),
            encoded,
        }
    }

    /// The form `Accept-Encoding` prefers, or `304` when `If-None-Match`
    /// names that form's tag (or is `*`). The headers a `200` would carry
    /// for caching (`ETag`, `Vary`, `Cache-Control`) come with a `304` too.
    fn answer(&self, request: &HeaderMap) -> Response {
        let accepted = accepted_codings(request);
        let chosen = accepted
            .iter()
            .find_map(|coding| self.encoded.iter().find(|(kept, _)| kept == coding));
        let representation = chosen.map_or(&self.identity, |(_, representation)| representation);
        let not_modified = request
            .get(header::IF_NONE_MATCH)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| if_none_match_matches(value, &representation.etag));
        let mut response = if not_modified {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            let mut response = (StatusCode::OK, representation.body.clone()).into_response();
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(self.media_type));
            if let Some((coding, _)) = chosen {
                headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding.token()));
            }
            response
        };
        let headers = response.headers_mut();
        headers.insert(header::ETAG, representation.etag.clone());
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        // Revalidated on every load: a new build is seen at once, an
        // unchanged file costs a `304`.
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY.clone());
        headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
        response
    }
}

/// The codings of [`Coding`] that `Accept-Encoding` allows, most wanted
/// first (by q-value, then [`Coding::PREFERRED`]); `*` stands for a coding
/// it does not name. No header, or one that names neither: none (identity).
fn accepted_codings(request: &HeaderMap) -> Vec<Coding> {
    let mut weights: Vec<(&str, f32)> = Vec::new();
    for value in request.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or("").trim();
            let weight = parts
                .filter_map(|param| param.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if !name.is_empty() {
                weights.push((name, weight));
            }
        }
    }
    let weight_of = |coding: Coding| {
        let named = weights
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(coding.token()));
        named
            .or_else(|| weights.iter().find(|(name, _)| *name == "*"))
            .map_or(0.0, |(_, weight)| *weight)
    };
    let mut accepted: Vec<(Coding, f32)> = Coding::PREFERRED
        .iter()
        .map(|&coding| (coding, weight_of(coding)))
        .filter(|(_, weight)| *weight > 0.0)
        .collect();
    // Stable: equal weights keep the preferred order.
    accepted.sort_by(|a, b| b.1.total_cmp(&a.1));
    accepted.into_iter().map(|(coding, _)| coding).collect()
}

/// `If-None-Match` against the tag of the form that would be sent: `*`
/// matches any, and a list matches when one of its tags does by the weak
/// comparison (RFC 9110, 13.1.2: `W/` is ignored on both sides).
fn if_none_match_matches(header: &str, etag: &HeaderValue) -> bool {
    let opaque = |tag: &str| tag.trim().trim_start_matches("W/").to_owned();
    let ours = etag.to_str().map(opaque).unwrap_or_default();
    header.trim() == "*" || header.split(',').any(|tag| opaque(tag) == ours)
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    fn connect_src(policy: &str) -> &str {
        directive(policy, "connect-src")
    }

    fn directive<'a>(policy: &'a str, name: &str) -> &'a str {
        policy
            .split("; ")
            .find_map(|directive| directive.strip_prefix(name)?.strip_prefix(' '))
            .expect("the directive")
    }

    fn accepting(value: &str) -> Vec<Coding> {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
        accepted_codings(&headers)
    }

    #[test]
    fn accept_encoding_orders_the_codings_by_q_value_then_br_first() {
        assert_eq!(accepting("gzip, deflate, br, zstd"), [Coding::Br, Coding::Gzip]);
        assert_eq!(accepting("GZIP;q=1.0, br;q=0.8"), [Coding::Gzip, Coding::Br]);
        assert_eq!(accepting("br;q=0, gzip"), [Coding::Gzip]);
        // `*` stands for what the header does not name.
        assert_eq!(accepting("*;q=0.5, gzip"), [Coding::Gzip, Coding::Br]);
        assert_eq!(accepting("*, br;q=0"), [Coding::Gzip]);
        assert!(accepting("identity").is_empty());
        assert!(accepted_codings(&HeaderMap::new()).is_empty());
    }

    #[test]
    fn if_none_match_compares_weakly_and_takes_a_list_or_a_star() {
        let etag = HeaderValue::from_static("\"abc\"");
        for matching in ["\"abc\"", "W/\"abc\"", "\"x\", \"abc\"", "\"x\",W/\"abc\"", "*", " * "] {
            assert!(if_none_match_matches(matching, &etag), "{matching}");
        }
        for other in ["\"x\"", "abc", "\"abcd\"", "W/\"ab\"", ""] {
            assert!(!if_none_match_matches(other, &etag), "{other}");
        }
    }

    #[test]
    fn each_form_of_a_file_decodes_to_it_and_has_its_own_tag() {
        let file = File::new("text/javascript; charset=utf-8", ASSETS[0].2);
        let codings: Vec<Coding> = file.encoded.iter().map(|(coding, _)| *coding).collect();
        assert_eq!(codings, [Coding::Br, Coding::Gzip]);
        let mut tags = vec![file.identity.etag.clone()];
        for (coding, form) in &file.encoded {
            assert!(form.body.len() < file.identity.body.len());
            let mut decoded = Vec::new();
            match coding {
                Coding::Br => brotli::Decompressor::new(&form.body[..], 4096).read_to_end(&mut decoded),
                Coding::Gzip => flate2::read::GzDecoder::new(&form.body[..]).read_to_end(&mut decoded),
            }
            .unwrap();
            assert_eq!(decoded, file.identity.body);
            assert!(!tags.contains(&form.etag));
            tags.push(form.etag.clone());
        }
    }

    #[test]
    fn the_shipped_client_may_connect_to_its_own_origin_only() {
        assert_eq!(CONTENT_SECURITY_POLICY.to_str().map(connect_src).ok(), Some("'self'"));
        // Its images are the server's own (`/media/files/...`), or drawn in the
        // page: with nothing configured the policy is what it was before images.
        assert_eq!(
            CONTENT_SECURITY_POLICY.to_str().ok(),
            Some(
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
                 base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"
            )
        );
    }

    #[test]
    fn configured_media_and_upload_origins_are_named_and_nothing_else() {
        let api = "https://abc.execute-api.eu-west-1.amazonaws.com";
        let config = format!(
            "export const API_ORIGIN = \"{api}\";\n\
             export const MEDIA_ORIGIN = \"https://d1234.cloudfront.net\";\n\
             export const UPLOAD_ORIGIN = \"https://media.s3.eu-west-1.amazonaws.com\";\n"
        );
        let policy = content_security_policy(&config);
        assert_eq!(
            directive(&policy, "img-src"),
            format!("'self' data: {api} https://d1234.cloudfront.net")
        );
        assert_eq!(
            connect_src(&policy),
            format!("{api} https://media.s3.eu-west-1.amazonaws.com")
        );
        // The API's relative image URLs are of its origin; an origin named twice is named once.
        let config = format!("export const API_ORIGIN = \"{api}\";\nexport const UPLOAD_ORIGIN = \"{api}\";\n");
        let policy = content_security_policy(&config);
        assert_eq!(directive(&policy, "img-src"), format!("'self' data: {api}"));
        assert_eq!(connect_src(&policy), api);
        // Uploads elsewhere with the API on the page's own origin: both named.
        let policy = content_security_policy("export const UPLOAD_ORIGIN = \"https://media.s3.amazonaws.com\";");
        assert_eq!(connect_src(&policy), "'self' https://media.s3.amazonaws.com");
        assert_eq!(directive(&policy, "img-src"), "'self' data:");
    }

    #[test]
    fn a_configured_api_origin_is_the_only_origin_the_page_may_connect_to() {
        let config = "// a comment\nexport const API_ORIGIN = \"https://abc.execute-api.eu-west-1.amazonaws.com\";\n";
        assert_eq!(
            connect_src(&content_security_policy(config)),
            "https://abc.execute-api.eu-west-1.amazonaws.com"
        );
        assert_eq!(
            connect_src(&content_security_policy("export const API_ORIGIN = \"\";")),
            "'self'"
        );
    }
}
