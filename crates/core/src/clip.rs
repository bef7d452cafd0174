//! Short, clean excerpts of what someone typed or a file holds, for
//! messages: one rule for the codec's notices, the importer's errors, the
//! page and the command line.
//!
//! Imports nothing of the crate.

/// Characters of a config value or a typed text quoted in a message.
pub const QUOTE: usize = 40;

/// `s` with control characters replaced (U+FFFD) and cut to `max`
/// characters, an ellipsis marking the cut.
pub fn clip(s: &str, max: usize) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .take(max + 1)
        .collect();
    if clean.chars().count() > max {
        format!("{}…", clean.chars().take(max).collect::<String>())
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::clip;

    #[test]
    fn clips_and_cleans() {
        for (input, max, expected) in [
            ("short", 40, "short"),
            ("a\u{7}b", 40, "a\u{FFFD}b"),
            ("abcdef", 3, "abc…"),
            ("abc", 3, "abc"),
            ("ééééé", 2, "éé…"),
        ] {
            assert_eq!(clip(input, max), expected, "{input:?}");
        }
    }
}
