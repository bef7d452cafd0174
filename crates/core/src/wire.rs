//! The text the page and its Web Workers send each other: a sequence of
//! length-prefixed fields (`5:hello2:42`). Hand-written rather than JSON so
//! that the page's wasm carries no JSON parser: the workers hold that code
//! and the page downloads it only when someone uses them (ARCHITECTURE.md,
//! "the page stays small").
//!
//! A field is its length in bytes, `:`, then the bytes; nothing needs
//! escaping, and a truncated or foreign message fails to decode (`None`)
//! rather than decoding into something else.
//!
//! Shared at the top: imports nothing of the crate.

use std::fmt::Display;
use std::str::FromStr;

/// Builds one message, field by field.
#[derive(Debug, Default)]
pub struct Writer(String);

impl Writer {
    pub fn new() -> Writer {
        Writer::default()
    }

    /// Appends a text field.
    pub fn text(mut self, s: &str) -> Writer {
        self.0.push_str(&s.len().to_string());
        self.0.push(':');
        self.0.push_str(s);
        self
    }

    /// Appends a number (or anything whose `Display` its `FromStr` reads
    /// back exactly: integers, `bool`, and `f64`, which Rust prints in the
    /// shortest form that parses to the same value).
    pub fn num(self, n: impl Display) -> Writer {
        let s = n.to_string();
        self.text(&s)
    }

    pub fn finish(self) -> String {
        self.0
    }
}

/// Reads one message, field by field; every read is `None` past the end or
/// on a malformed field.
#[derive(Debug)]
pub struct Reader<'a>(&'a str);

impl<'a> Reader<'a> {
    pub fn new(message: &'a str) -> Reader<'a> {
        Reader(message)
    }

    /// The next text field.
    pub fn text(&mut self) -> Option<&'a str> {
        let (len, rest) = self.0.split_once(':')?;
        if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: usize = len.parse().ok()?;
        let field = rest.get(..n)?;
        self.0 = rest.get(n..)?;
        Some(field)
    }

    /// The next field as a number (or `bool`).
    pub fn num<T: FromStr>(&mut self) -> Option<T> {
        self.text()?.parse().ok()
    }

    /// `value` when the whole message was read: trailing fields mean it is
    /// not the message the caller thinks it is.
    pub fn done<T>(self, value: T) -> Option<T> {
        self.0.is_empty().then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_back_as_written() {
        let m = Writer::new()
            .text("import")
            .text("")
            .text("a:b\n5:é")
            .num(u64::MAX)
            .num(-0.1_f64)
            .num(true)
            .finish();
        assert_eq!(m, "6:import0:8:a:b\n5:é20:184467440737095516154:-0.14:true");
        let mut r = Reader::new(&m);
        assert_eq!(r.text(), Some("import"));
        assert_eq!(r.text(), Some(""));
        assert_eq!(r.text(), Some("a:b\n5:é"));
        assert_eq!(r.num::<u64>(), Some(u64::MAX));
        assert_eq!(r.num::<f64>(), Some(-0.1));
        assert_eq!(r.num::<bool>(), Some(true));
        assert_eq!(r.text(), None);
        assert_eq!(r.done(()), Some(()));
    }

    #[test]
    fn malformed_messages_do_not_decode() {
        for bad in [
            "",
            "x",
            "3:ab",
            "-1:",
            "+1:a",
            ":",
            "1:é",
            "99999999999999999999999:a",
        ] {
            assert_eq!(Reader::new(bad).text(), None, "{bad:?}");
        }
        let mut r = Reader::new("1:a1:b");
        assert_eq!(r.text(), Some("a"));
        assert_eq!(r.done(()), None, "a field left over");
    }
}
