//! The part of ECMAScript's regular expressions that llama.cpp's tensor
//! overrides are written in (`-ot PATTERN=DEVICE`, matched against each
//! tensor's name by `std::regex_search`, `src/llama-model-loader.cpp`,
//! b10488): literals, `.`, classes (`[0-9]`, `[^a]`, `\d`, `\w`, `\s`),
//! groups `( )` and `(?: )`, alternation `|`, the quantifiers `*`, `+`,
//! `?` and `{m,n}`, and the anchors `^` and `$`. Anything else
//! (lookarounds, back-references) is refused with its position, never
//! read as something else. Matching backtracks over a tensor name (tens of
//! characters), its steps counted: a search that would take more than
//! [`MAX_STEPS`] gives up and says so.

use std::cell::Cell;

/// A compiled pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regex {
    alt: Alt,
}

/// Why a pattern cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexError {
    /// The character position where reading stopped.
    pub at: usize,
    pub why: &'static str,
}

impl std::fmt::Display for RegexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at character {})", self.why, self.at + 1)
    }
}

type Alt = Vec<Vec<Piece>>;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Piece {
    atom: Atom,
    min: u32,
    /// `None`: no upper bound.
    max: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Atom {
    Char(char),
    Any,
    /// Ranges of characters, and whether the class is negated.
    Class(Vec<(char, char)>, bool),
    Group(Alt),
    Start,
    End,
}

/// The most steps one search may take.
pub const MAX_STEPS: u32 = 100_000;

/// The most repetitions a `{m,n}` may ask for.
const MAX_REPEAT: u32 = 1000;

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Regex {
    /// Reads `pattern`.
    pub fn new(pattern: &str) -> Result<Regex, RegexError> {
        let mut p = Parser {
            chars: pattern.chars().collect(),
            at: 0,
        };
        let alt = p.alt()?;
        if p.at < p.chars.len() {
            return Err(p.error("an unmatched `)`"));
        }
        Ok(Regex { alt })
    }

    /// Whether the pattern matches somewhere in `text`
    /// (`std::regex_search`); `None` when backtracking would take more
    /// than [`MAX_STEPS`] steps (a pattern such as `(.|.)*x` doubles them
    /// with each character), so that no pattern stalls the page.
    pub fn search(&self, text: &str) -> Option<bool> {
        let t: Vec<char> = text.chars().collect();
        let steps = Cell::new(0u32);
        let m = Matcher {
            t: &t,
            steps: &steps,
        };
        let found = (0..=t.len()).any(|start| m.alt(&self.alt, start, &mut |_| true));
        (steps.get() <= MAX_STEPS).then_some(found)
    }
}

impl Parser {
    fn error(&self, why: &'static str) -> RegexError {
        RegexError { at: self.at, why }
    }

    /// An error at the character just read.
    fn error_back(&self, why: &'static str) -> RegexError {
        RegexError {
            at: self.at.saturating_sub(1),
            why,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn alt(&mut self) -> Result<Alt, RegexError> {
        let mut alt = vec![self.seq()?];
        while self.peek() == Some('|') {
            self.at += 1;
            alt.push(self.seq()?);
        }
        Ok(alt)
    }

    fn seq(&mut self) -> Result<Vec<Piece>, RegexError> {
        let mut seq = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            let (min, max) = self.quantifier()?;
            if (min, max) != (1, Some(1)) && matches!(atom, Atom::Start | Atom::End) {
                return Err(self.error_back("a quantifier after an anchor"));
            }
            seq.push(Piece { atom, min, max });
        }
        Ok(seq)
    }

    fn atom(&mut self) -> Result<Atom, RegexError> {
        let Some(c) = self.peek() else {
            return Err(self.error("a missing atom"));
        };
        self.at += 1;
        Ok(match c {
            '.' => Atom::Any,
            '^' => Atom::Start,
            '$' => Atom::End,
            '(' => self.group()?,
            '[' => self.class()?,
            '\\' => self.escape(false)?,
            '*' | '+' | '?' | '{' => {
                return Err(self.error_back("a quantifier with nothing to repeat"))
            }
            c => Atom::Char(c),
        })
    }

    fn group(&mut self) -> Result<Atom, RegexError> {
        if self.peek() == Some('?') {
            if self.chars.get(self.at + 1) != Some(&':') {
                return Err(self.error("a lookaround, which vramfit does not read"));
            }
            self.at += 2;
        }
        let alt = self.alt()?;
        if self.peek() != Some(')') {
            return Err(self.error("a `(` without its `)`"));
        }
        self.at += 1;
        Ok(Atom::Group(alt))
    }

    fn class(&mut self) -> Result<Atom, RegexError> {
        let negated = self.peek() == Some('^');
        if negated {
            self.at += 1;
        }
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("a `[` without its `]`"));
            };
            self.at += 1;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = if c == '\\' {
                match self.escape(true)? {
                    Atom::Char(x) => x,
                    Atom::Class(r, false) => {
                        ranges.extend(r);
                        continue;
                    }
                    Atom::Any | Atom::Class(..) | Atom::Group(_) | Atom::Start | Atom::End => {
                        return Err(self.error("an escape vramfit does not read in a class"))
                    }
                }
            } else {
                c
            };
            let hi = if self.peek() == Some('-') && self.chars.get(self.at + 1) != Some(&']') {
                self.at += 1;
                let Some(h) = self.peek() else {
                    return Err(self.error("a `[` without its `]`"));
                };
                self.at += 1;
                if h < lo {
                    return Err(self.error_back("a range whose end is before its start"));
                }
                h
            } else {
                lo
            };
            ranges.push((lo, hi));
        }
        Ok(Atom::Class(ranges, negated))
    }

    fn escape(&mut self, in_class: bool) -> Result<Atom, RegexError> {
        let Some(c) = self.peek() else {
            return Err(self.error("a `\\` at the end"));
        };
        self.at += 1;
        let word = vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
        let space = vec![(' ', ' '), ('\t', '\r')];
        Ok(match c {
            'd' => Atom::Class(vec![('0', '9')], false),
            'D' if !in_class => Atom::Class(vec![('0', '9')], true),
            'w' => Atom::Class(word, false),
            'W' if !in_class => Atom::Class(word, true),
            's' => Atom::Class(space, false),
            'S' if !in_class => Atom::Class(space, true),
            'n' => Atom::Char('\n'),
            't' => Atom::Char('\t'),
            c if c.is_ascii_alphanumeric() => {
                return Err(self.error_back(
                    "an escape vramfit does not read (a back-reference or a class it lacks)",
                ))
            }
            c => Atom::Char(c),
        })
    }

    fn quantifier(&mut self) -> Result<(u32, Option<u32>), RegexError> {
        let q = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                self.at += 1;
                return self.braces();
            }
            Some(_) | None => return Ok((1, Some(1))),
        };
        self.at += 1;
        if self.peek() == Some('?') {
            // Lazy or greedy, a search either matches or not.
            self.at += 1;
        }
        Ok(q)
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let digits: String = self.chars[start..self.at].iter().collect();
        digits.parse().ok().filter(|n| *n <= MAX_REPEAT)
    }

    fn braces(&mut self) -> Result<(u32, Option<u32>), RegexError> {
        let Some(min) = self.number() else {
            return Err(self.error("a `{` without a count (at most 1000)"));
        };
        let max = if self.peek() == Some(',') {
            self.at += 1;
            if self.peek() == Some('}') {
                None
            } else {
                Some(
                    self.number()
                        .ok_or_else(|| self.error("a `{m,` without its bound"))?,
                )
            }
        } else {
            Some(min)
        };
        if self.peek() != Some('}') {
            return Err(self.error("a `{` without its `}`"));
        }
        self.at += 1;
        if max.is_some_and(|m| m < min) {
            return Err(self.error_back("a `{m,n}` with n below m"));
        }
        Ok((min, max))
    }
}

/// A search over one text, counting its steps.
struct Matcher<'a> {
    t: &'a [char],
    steps: &'a Cell<u32>,
}

impl Matcher<'_> {
    /// Whether `alt` matches from `at`, then `k` holds at the end (false
    /// once the steps run out).
    fn alt(&self, alt: &Alt, at: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
        alt.iter().any(|seq| self.seq(seq, at, k))
    }

    fn seq(&self, seq: &[Piece], at: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
        let Some((first, rest)) = seq.split_first() else {
            return k(at);
        };
        self.piece(first, 0, at, &mut |next| self.seq(rest, next, k))
    }

    /// `p` repeated from its `n`-th time on (greedy, backtracking).
    fn piece(&self, p: &Piece, n: u32, at: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
        let more = p.max.is_none_or(|m| n < m);
        if more {
            let again = self.atom(&p.atom, at, &mut |next| {
                // An empty repetition past the least count ends the loop.
                (next != at || n < p.min) && self.piece(p, n + 1, next, k)
            });
            if again {
                return true;
            }
        }
        n >= p.min && k(at)
    }

    fn atom(&self, a: &Atom, at: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
        let steps = self.steps.get().saturating_add(1);
        self.steps.set(steps);
        if steps > MAX_STEPS {
            return false;
        }
        let t = self.t;
        match a {
            Atom::Char(c) => t.get(at) == Some(c) && k(at + 1),
            Atom::Any => t.get(at).is_some_and(|&c| c != '\n') && k(at + 1),
            Atom::Class(ranges, negated) => {
                t.get(at).is_some_and(|&c| {
                    ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&c)) != *negated
                }) && k(at + 1)
            }
            Atom::Group(alt) => self.alt(alt, at, k),
            Atom::Start => at == 0 && k(at),
            Atom::End => at == t.len() && k(at),
        }
    }
}
