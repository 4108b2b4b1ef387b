// The page (../dist, built by Trunk) is embedded by rust-embed; rebuild when it changes, or
// appears, so a binary never serves a stale or missing page.
fn main() {
    println!("cargo:rerun-if-changed=../dist");
}
