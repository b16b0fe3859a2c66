//! Every fixture against every built-in backend: each must give exactly the
//! outcome its `.expect.json` declares (a declared failure that starts
//! passing fails too).

use svc_tests::service::test_runtime;
use svc_tests::{fixtures, Builtins};

#[test]
fn every_fixture_gives_its_declared_outcome_on_every_builtin_backend() {
    let runtime = test_runtime();
    let mut failures = Vec::new();
    let mut total = 0;
    for backend in svc_builtin::BACKENDS {
        let results = svc_compile::testkit::run(
            &fixtures(),
            backend.platform,
            &Builtins { runtime: &runtime },
        );
        assert!(results.len() >= 50, "only {} fixtures found", results.len());
        total += results.len();
        for r in results.iter().filter(|r| !r.passed) {
            failures.push(format!(
                "{} [{}]: {}",
                r.fixture.display(),
                backend.platform,
                r.detail
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} fixture runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
