//! Host-side bindings of `wit/codegen.wit` (package `svc:codegen@0.1.0`).
//!
//! One module per supported interface version, as extension hosts do: when
//! a 0.2 package appears, it gets its own module and an adapter here, and
//! components built against 0.1 keep loading.

pub(crate) mod v0_1 {
    pub(crate) mod backend {
        wasmtime::component::bindgen!({
            path: "../../wit",
            world: "backend",
        });
    }

    pub(crate) mod connector {
        wasmtime::component::bindgen!({
            path: "../../wit",
            world: "connector-plugin",
            with: {
                "svc:codegen/types": super::backend::svc::codegen::types,
            },
        });
    }
}

pub use v0_1::backend::svc::codegen::types;

impl v0_1::backend::svc::codegen::templates::Host for crate::sandbox::Sandbox {
    fn render(
        &mut self,
        connector: types::ConnectorRef,
        platform: String,
        node_config: String,
    ) -> Result<types::Rendered, Vec<types::Diagnostic>> {
        self.host.render(connector, platform, node_config)
    }
}

impl v0_1::backend::svc::codegen::types::Host for crate::sandbox::Sandbox {}
