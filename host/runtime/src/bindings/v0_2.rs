//! `svc:codegen@0.2.0` (`wit/since_v0.2.0`): the current interface. Its
//! types are the host's own (re-exported from the crate root).

pub(crate) mod backend {
    wasmtime::component::bindgen!({
        path: "../../wit/since_v0.2.0",
        world: "backend",
    });
}

pub(crate) mod connector {
    wasmtime::component::bindgen!({
        path: "../../wit/since_v0.2.0",
        world: "connector-plugin",
        with: {
            "svc:codegen/types": super::backend::svc::codegen::types,
        },
    });
}

pub use backend::svc::codegen::types;
