//! Reading a kind's fields from its JSON object, each field described once.
//!
//! [`kind_fields!`](crate::kind_fields) declares a struct whose every field
//! names its JSON key, its type and how it is read: a [`Reader`] method
//! ([`Reader::required`], [`Reader::optional`], [`Reader::or`],
//! [`Reader::or_empty`], [`Reader::positive`]). The same declaration gives
//! the serde name (so the canonical JSON and the JSON Schema) and the reader,
//! so the two cannot disagree.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::json::{Json, Node as JNode};
use crate::read::{Obj, Reader};

/// A value read from the positioned JSON tree; `None` after reporting why
/// it cannot be read.
pub(crate) trait ReadValue: Sized {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self>;
}

impl ReadValue for String {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        r.string(n, p)
    }
}

impl ReadValue for bool {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        match &n.value {
            Json::Bool(b) => Some(*b),
            _ => {
                r.type_error(p, "a boolean", n);
                None
            }
        }
    }
}

/// Free-form JSON: whatever is there.
impl ReadValue for Value {
    fn read(_: &mut Reader, n: &JNode, _: &str) -> Option<Self> {
        Some(n.to_value())
    }
}

/// An array, each item read in turn (the unreadable ones left out).
impl<T: ReadValue> ReadValue for Vec<T> {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        Some(
            r.array(n, p)
                .iter()
                .enumerate()
                .filter_map(|(i, item)| T::read(r, item, &format!("{p}/{i}")))
                .collect(),
        )
    }
}

/// An object of free keys, each value read in turn.
impl<T: ReadValue> ReadValue for BTreeMap<String, T> {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        let o = r.object(n, p)?;
        let mut out = BTreeMap::new();
        for m in o.members {
            if let Some(v) = T::read(r, &m.value, &o.child_ptr(&m.key)) {
                out.insert(m.key.clone(), v);
            }
        }
        Some(out)
    }
}

/// How a declared field is read (the modes of [`kind_fields!`]).
impl Reader {
    /// A field the object must have: `missing-field` without it.
    pub(crate) fn required<T: ReadValue + Default>(
        &mut self,
        o: &mut Obj<'_>,
        key: &'static str,
        what: &str,
    ) -> T {
        match o.field(key) {
            Some((n, p)) => T::read(self, n, &p).unwrap_or_default(),
            None => {
                self.missing(o, key, what);
                T::default()
            }
        }
    }

    /// An optional field; `null` counts as absent, as the schema says.
    pub(crate) fn optional<T: ReadValue>(
        &mut self,
        o: &mut Obj<'_>,
        key: &'static str,
        _what: &str,
    ) -> Option<T> {
        let (n, p) = Self::opt(o, key)?;
        T::read(self, n, &p)
    }

    /// An optional field with a default.
    pub(crate) fn or<T: ReadValue>(
        &mut self,
        o: &mut Obj<'_>,
        key: &'static str,
        what: &str,
        default: T,
    ) -> T {
        self.optional(o, key, what).unwrap_or(default)
    }

    /// A list or map that may be left out (then empty).
    pub(crate) fn or_empty<T: ReadValue + Default>(
        &mut self,
        o: &mut Obj<'_>,
        key: &'static str,
        _what: &str,
    ) -> T {
        match o.field(key) {
            Some((n, p)) => T::read(self, n, &p).unwrap_or_default(),
            None => T::default(),
        }
    }

    /// A count of at least 1 and at most `max`, with a default.
    pub(crate) fn count(
        &mut self,
        o: &mut Obj<'_>,
        key: &'static str,
        _what: &str,
        default: u32,
        max: u64,
    ) -> u32 {
        let v = self.positive(o, key, u64::from(default), max);
        u32::try_from(v).unwrap_or(u32::MAX)
    }

    /// An object read field by field with `fields`, then checked for
    /// unknown members (`what` names it in messages).
    pub(crate) fn object_with<T>(
        &mut self,
        n: &JNode,
        p: &str,
        what: &str,
        fields: impl FnOnce(&mut Reader, &mut Obj<'_>) -> T,
    ) -> Option<T> {
        let mut o = self.object(n, p)?;
        let out = fields(self, &mut o);
        self.finish(o, what);
        Some(out)
    }
}

/// Declares a struct read from a JSON object, each field once: its doc, any
/// serde/schemars attributes, its name, its JSON key, its type and its
/// read mode (a [`Reader`] method: `required`, `optional`, `or(default)`,
/// `or_empty`, `count(default, max)`). `as "what"` also makes the struct a
/// [`ReadValue`] (an object of its own, named `what` in messages); without
/// it, `read_fields` reads it from an object its caller opened (a node).
#[macro_export]
#[doc(hidden)]
macro_rules! kind_fields {
    (
        $(#[$meta:meta])*
        pub struct $name:ident $(as $what:literal)? {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty = $mode:ident ( $key:literal $(, $arg:expr)* )
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $(
                $(#[$fmeta])*
                #[serde(rename = $key)]
                pub $field: $ty,
            )*
        }

        impl $name {
            /// Reads the fields from the object `o` (`what` names it in
            /// messages).
            #[allow(unused_variables)]
            pub(crate) fn read_fields(
                r: &mut $crate::read::Reader,
                o: &mut $crate::read::Obj<'_>,
                what: &str,
            ) -> Self {
                $name { $( $field: r.$mode(o, $key, what $(, $arg)*), )* }
            }
        }

        $(
            impl $crate::nodes::fields::ReadValue for $name {
                fn read(
                    r: &mut $crate::read::Reader,
                    n: &$crate::json::Node,
                    p: &str,
                ) -> Option<Self> {
                    r.object_with(n, p, $what, |r, o| Self::read_fields(r, o, $what))
                }
            }
        )?
    };
}
