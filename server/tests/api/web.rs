//! The reference web client (web/, server/src/web.rs) is served at `/`
//! beside the API, with a policy that runs only its own scripts. Its pages
//! are walked in a real browser by `scripts/web-test`.

use crate::helpers::spawn_app;

#[tokio::test]
async fn the_web_client_is_served_at_the_root_with_its_assets_and_a_strict_content_security_policy() {
    let app = spawn_app(crate::helpers::Backend::Sqlite).await;
    let index = app.get("/").await;
    assert_eq!(index.status(), 200);
    assert_eq!(index.headers()["content-type"], "text/html; charset=utf-8");
    let policy = index.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(
        policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"),
        "{policy}"
    );
    assert_eq!(index.headers()["x-content-type-options"], "nosniff");
    // The page may connect to its own origin and nowhere else: a policy
    // allowing any https origin let a link send the token elsewhere.
    let connect_src: Vec<&str> = policy
        .split("; ")
        .filter_map(|directive| directive.strip_prefix("connect-src "))
        .collect();
    assert_eq!(connect_src, ["'self'"], "{policy}");
    let html = index.text().await.unwrap();
    assert!(html.contains(r#"<html lang="ko">"#) && html.contains(r#"src="assets/app.js""#));
    for (asset, media_type) in [
        ("app.js", "text/javascript; charset=utf-8"),
        ("api.js", "text/javascript; charset=utf-8"),
        ("dom.js", "text/javascript; charset=utf-8"),
        ("pow.js", "text/javascript; charset=utf-8"),
        ("config.js", "text/javascript; charset=utf-8"),
        // The TOTP enrollment's QR code, and the vendored generator under a folder.
        ("qr.js", "text/javascript; charset=utf-8"),
        ("vendor/qrcode.js", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
    ] {
        let response = app.get(&format!("/assets/{asset}")).await;
        assert_eq!(response.status(), 200, "{asset}");
        assert_eq!(response.headers()["content-type"], media_type, "{asset}");
    }
    // Everything the page imports is served (no file missing from the list).
    let app_js = app.get("/assets/app.js").await.text().await.unwrap();
    for import in app_js.lines().filter(|l| l.starts_with("import ")) {
        let file = import.rsplit("\"./").next().unwrap().trim_end_matches("\";");
        assert_eq!(app.get(&format!("/assets/{file}")).await.status(), 200, "{import}");
    }
    let missing = app.get("/assets/missing.js").await;
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.headers()["content-type"], "application/json");
    // Only the listed files: not the vendor folder's notes, nothing outside assets/.
    for unlisted in ["/assets/vendor/README.md", "/assets/vendor/"] {
        assert_eq!(app.get(unlisted).await.status(), 404, "{unlisted}");
    }
    // qr.js imports the vendored generator by the path it is served at.
    let qr_js = app.get("/assets/qr.js").await.text().await.unwrap();
    assert!(qr_js.contains(r#"from "./vendor/qrcode.js""#), "{qr_js}");
    // The API's routes are where they were.
    assert_eq!(app.get("/health").await.status(), 200);
    assert_eq!(app.get("/boards/free/posts").await.status(), 200);
}
