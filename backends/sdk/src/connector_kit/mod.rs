//! Helpers for connector authors (see `marketplace/README.md`): [`config`]
//! declares a config once, as a type, and reads it; [`fill`] fills
//! `__SVC_NAME__` placeholders of a template, and [`c_str`] / [`py_str`] /
//! [`py_collection`] write values as code.

pub mod config;
pub(crate) mod lang;

pub use crate::literals::{c_str, py_str};
pub use lang::{fill, py_collection};

svc_ir::diagnostic_codes! {
    /// A connector component was asked to render for a platform it has no code for.
    ///
    /// Connectors render per platform and refuse platforms outside their own list. The host normally catches this earlier (a pack that lacks the platform reports `template-required`), so this code appears when a connector's `info()` and `render` disagree, or when it is called directly.
    ///
    /// Use a connector version that supports the platform, or compile for one it supports.
    ///
    /// # Example
    ///
    /// ```rust,ignore
    /// svc_webhook::Webhook::render("rust", &config)
    /// // error[platform-unsupported]: svc/webhook has no code for the platform `rust`
    /// ```
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// svc_webhook::Webhook::render("go", &config)
    /// ```
    pub PLATFORM_UNSUPPORTED = "platform-unsupported", group "connector";
}
