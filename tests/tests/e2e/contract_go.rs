//! The shared HTTP contract suite against the `go` backend.

#[test]
fn go_services_pass_the_http_contract() {
    if !svc_tests::service::require_tool("go") {
        return;
    }
    match svc_tests::contract::run("go") {
        Ok(checks) => eprintln!("go: {checks} contract checks passed"),
        Err(e) => panic!("{e}"),
    }
}
