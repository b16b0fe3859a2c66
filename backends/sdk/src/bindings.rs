//! Guest-side bindings of `wit/codegen.wit`.

pub mod backend {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "backend",
        pub_export_macro: true,
        export_macro_name: "__export_backend_world",
        default_bindings_module: "svc_backend_sdk::bindings::backend",
    });
}

pub mod connector {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "connector-plugin",
        pub_export_macro: true,
        export_macro_name: "__export_connector_world",
        default_bindings_module: "svc_backend_sdk::bindings::connector",
        with: {
            "svc:codegen/types@0.1.0": crate::bindings::backend::svc::codegen::types,
        },
    });
}
