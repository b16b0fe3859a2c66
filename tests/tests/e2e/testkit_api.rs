//! The backend authors' test kit (`svc_backend_sdk::testkit`) on a real
//! component file: the built-in Go backend passes every fixture, and a
//! fixture declaring the wrong outcome fails.

use svc_tests::fixtures;

#[test]
fn the_sdk_test_kit_runs_a_component_file_against_the_fixtures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wasm = dir.path().join("go.wasm");
    std::fs::write(&wasm, svc_builtin::backend("go").expect("go backend").wasm).expect("write");
    let results = svc_backend_sdk::testkit::run_component(&wasm, &fixtures()).expect("loads");
    assert!(results.len() >= 50, "{}", results.len());
    let failed: Vec<_> = results.iter().filter(|r| !r.passed).collect();
    assert!(failed.is_empty(), "{failed:#?}");

    let fx = dir.path().join("fixtures");
    std::fs::create_dir_all(&fx).expect("mkdir");
    std::fs::copy(
        fixtures().join("valid/minimal.graph.json"),
        fx.join("m.graph.json"),
    )
    .expect("copy");
    std::fs::write(
        fx.join("m.expect.json"),
        r#"{"description": "x", "platforms": {"go": [{"code": "unsupported"}]}}"#,
    )
    .expect("write");
    let results = svc_backend_sdk::testkit::run_component(&wasm, &fx).expect("loads");
    assert_eq!(results.len(), 1);
    assert!(!results[0].passed);
    assert!(
        results[0].detail.contains("but it compiled"),
        "{}",
        results[0].detail
    );
}
