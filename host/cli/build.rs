//! `include_dir!` cannot tell cargo what it read: rebuild when the
//! designer's built app (designer/dist, embedded by `svc design`) changes.

fn main() {
    println!("cargo:rerun-if-changed=../../designer/dist");
}
