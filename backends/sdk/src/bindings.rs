//! Guest-side bindings of the current plugin interface,
//! `wit/since_v0.2.0` (`svc:codegen@0.2.0`).

pub mod backend {
    wit_bindgen::generate!({
        path: "../../wit/since_v0.2.0",
        world: "backend",
        pub_export_macro: true,
        export_macro_name: "__export_backend_world",
        default_bindings_module: "svc_backend_sdk::bindings::backend",
    });
}

pub mod connector {
    wit_bindgen::generate!({
        path: "../../wit/since_v0.2.0",
        world: "connector-plugin",
        pub_export_macro: true,
        export_macro_name: "__export_connector_world",
        default_bindings_module: "svc_backend_sdk::bindings::connector",
        with: {
            "svc:codegen/types@0.2.0": crate::bindings::backend::svc::codegen::types,
        },
    });
}
