//! A command line as a POSIX shell splits it into words: single and double
//! quotes, backslash escapes, a backslash before a newline joining two
//! lines (how published commands wrap), `#` comments at a word's start.
//! No expansion: `$VAR` stays as written. Linear in the text; never fails
//! (an unclosed quote ends at the text's end, and says so).

/// The words of one command, and whether a quote was left open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Words {
    pub words: Vec<String>,
    pub unclosed_quote: bool,
}

/// Splits `text` (one command, perhaps over `\`-continued lines) into words.
pub fn split(text: &str) -> Words {
    let mut out = Words::default();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                // A line continuation: nothing.
                Some('\n') => {}
                Some('\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                }
                Some(other) => {
                    word.push(other);
                    in_word = true;
                }
                None => {}
            },
            '\'' => {
                in_word = true;
                let mut closed = false;
                for q in chars.by_ref() {
                    if q == '\'' {
                        closed = true;
                        break;
                    }
                    word.push(q);
                }
                out.unclosed_quote |= !closed;
            }
            '"' => {
                in_word = true;
                let mut closed = false;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => {
                            closed = true;
                            break;
                        }
                        '\\' => match chars.peek() {
                            Some(&n @ ('"' | '\\' | '$' | '`')) => {
                                word.push(n);
                                chars.next();
                            }
                            Some('\n') => {
                                chars.next();
                            }
                            _ => word.push('\\'),
                        },
                        other => word.push(other),
                    }
                }
                out.unclosed_quote |= !closed;
            }
            '#' if !in_word => {
                // A comment to the line's end.
                for q in chars.by_ref() {
                    if q == '\n' {
                        break;
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            other => {
                word.push(other);
                in_word = true;
            }
        }
    }
    if in_word {
        out.words.push(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn splits_as_a_shell_does() {
        for (input, words, unclosed) in [
            ("a b  c", vec!["a", "b", "c"], false),
            ("a 'b c' \"d e\"", vec!["a", "b c", "d e"], false),
            (
                "llama-server \\\n  -c 8192 \\\r\n -fa on",
                vec!["llama-server", "-c", "8192", "-fa", "on"],
                false,
            ),
            ("a\\ b", vec!["a b"], false),
            ("x \"a\\\"b\"", vec!["x", "a\"b"], false),
            ("a # comment\nb", vec!["a", "b"], false),
            ("a#b", vec!["a#b"], false),
            ("'open", vec!["open"], true),
            ("", vec![], false),
            ("''", vec![""], false),
        ] {
            let w = split(input);
            assert_eq!(w.words, words, "{input:?}");
            assert_eq!(w.unclosed_quote, unclosed, "{input:?}");
        }
    }
}
