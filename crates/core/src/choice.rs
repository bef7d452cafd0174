//! Small macros for closed sets of named choices (dtype, optimizer, ...):
//! one place for the query-string value, the label and the list of all
//! values; and for whole numbers with inclusive bounds.
//!
//! Imports nothing of the crate.

/// Declares a `Copy` enum whose variants each have a query value and a label,
/// with `ALL`, `key()`, `label()`, `from_key()` and serde by key.
macro_rules! choice_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $key:literal, $label:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every value, in display order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// `(query value, label)` of every value, for a select box.
            pub const OPTIONS: &'static [(&'static str, &'static str)] = &[$(($key, $label)),+];

            /// The value as written in a query string.
            pub fn key(self) -> &'static str {
                match self { $($name::$variant => $key),+ }
            }

            /// A short plain-words label.
            pub fn label(self) -> &'static str {
                match self { $($name::$variant => $label),+ }
            }

            /// Parses a query-string value (exact, lower case).
            pub fn from_key(s: &str) -> Option<Self> {
                match s { $($key => Some($name::$variant),)+ _ => None }
            }

            /// The query values joined for an error message.
            pub fn keys_joined() -> String {
                Self::ALL.iter().map(|v| v.key()).collect::<Vec<_>>().join(", ")
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.key())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.key())
            }
        }
    };
}

pub(crate) use choice_enum;

/// Declares a whole-number newtype with inclusive bounds checked by `new`.
macro_rules! bounded {
    ($(#[$meta:meta])* $name:ident($inner:ty), $min:expr, $max:expr) => {
        bounded!(@define $(#[$meta])* $name($inner), $min, $max, #[derive(Serialize)] #[serde(transparent)]);
    };
    (@define $(#[$meta:meta])* $name:ident($inner:ty), $min:expr, $max:expr, $(#[$extra:meta])*) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $(#[$extra])*
        pub struct $name($inner);

        impl $name {
            pub const MIN: $inner = $min;
            pub const MAX: $inner = $max;

            /// `None` outside `MIN..=MAX`.
            pub fn new(v: $inner) -> Option<Self> {
                (Self::MIN..=Self::MAX).contains(&v).then_some($name(v))
            }

            pub fn get(self) -> $inner {
                self.0
            }
        }
    };
}

pub(crate) use bounded;
