//! Embeds the built web app (`web/dist`, committed; see README "Web app") in the gateway: writes
//! `$OUT_DIR/web_assets.rs`, a list of `(url path, include_bytes!(file))`. Cargo never needs
//! Node.js: the bundle is built by `npm run build` in `web/` and checked in CI.

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let dist = manifest.join("../../web/dist");
    println!("cargo:rerun-if-changed={}", dist.display());
    let mut files = Vec::new();
    if let Err(e) = walk(&dist, &dist, &mut files) {
        panic!(
            "cannot read the web app's bundle in {}: {e} (it is committed; rebuild it with \
             `npm ci && npm run build` in web/)",
            dist.display()
        );
    }
    files.sort();
    let mut out = String::from("&[\n");
    for (url, path) in &files {
        out.push_str(&format!(
            "    ({url:?}, include_bytes!({:?}) as &[u8]),\n",
            path.display().to_string()
        ));
    }
    out.push_str("]\n");
    let target = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(target.join("web_assets.rs"), out).expect("write web_assets.rs");
}

/// Every file under `dir`, as its URL path below `root` (`/`-separated) and its absolute path.
fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(root, &path, files)?;
        } else {
            let relative = path.strip_prefix(root).expect("below the root");
            let url = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            files.push((url, path.canonicalize()?));
        }
    }
    Ok(())
}
