//! The shared HTTP contract suite against the `python-svc` backend.

#[test]
fn python_services_pass_the_http_contract() {
    if !svc_tests::service::require_python_sdk() {
        return;
    }
    match svc_tests::contract::run("python-svc") {
        Ok(checks) => eprintln!("python-svc: {checks} contract checks passed"),
        Err(e) => panic!("{e}"),
    }
}
