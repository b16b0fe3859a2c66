//! Helpers for connector authors (see `marketplace/README.md`):
//! [`Check`] collects config diagnostics with pointers relative to the
//! node's config, [`fill`] fills `__SVC_NAME__` placeholders of a template, and
//! [`c_str`] / [`py_str`] / [`py_collection`] write values as code.

pub(crate) mod check;
pub(crate) mod lang;

pub use crate::literals::{c_str, py_str};
pub use check::{child, Check};
pub use lang::{fill, py_collection};
