//! The shared HTTP contract suite against the `java-svc` backend, with each
//! service started from its packaged jar.

#[test]
fn java_services_pass_the_http_contract() {
    if !svc_tests::service::require_jdk21() {
        return;
    }
    match svc_tests::contract::run("java-svc") {
        Ok(checks) => eprintln!("java-svc: {checks} contract checks passed"),
        Err(e) => panic!("{e}"),
    }
}
