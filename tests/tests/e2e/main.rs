//! End-to-end tests, in one binary so the workspace links it once:
//! hostile components, every fixture against every backend, generated
//! projects run with their own toolchains, and the shared HTTP contract
//! suite against each platform.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

mod a2a;
mod a2a_callers;
mod agents;
mod agents_python;
mod anthropic;
mod cache;
mod child_graphs;
mod compat;
mod containers;
mod contract_go;
mod contract_java;
mod contract_python;
mod durable;
mod fixtures;
mod go_projects;

mod hostile;
mod java_projects;
mod manifest_commands;
mod mcp;
mod model_calls;
mod parallel;
mod project_cases;
mod python_projects;
mod random_graphs;
mod runtimes;
mod schemathesis;
mod snapshots;
mod streaming;
mod streaming_leaks;
mod structured_output;
mod telemetry;
mod testkit_api;
mod threads;
