//! The character-level cursor over a launch file.
//!
//! Owns how the text is walked: comments (`#` to end of line) are cut off, whitespace
//! (including line breaks) separates items, and line numbers are kept for error messages.
//! Values are not pre-split into tokens: like a C++ `istream`, a number is read from the
//! current position and whatever follows it on the line (`1.5` read as an integer leaves
//! `.5`) is what the next read sees. Only an argument header `<...>` is line-bound.

/// Whitespace as C's `isspace` sees it.
pub(super) fn is_space(c: char) -> bool {
    c.is_ascii() && is_space_byte(c as u8)
}

/// [`is_space`] of one byte of UTF-8 text: every space is one ASCII byte.
pub(super) fn is_space_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// A cursor over the comment-stripped lines of a launch file.
pub(super) struct Reader<'a> {
    lines: Vec<&'a str>,
    /// 0-based index of the current line (`lines.len()` once exhausted).
    line: usize,
    /// Byte offset in the current line.
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(text: &'a str) -> Reader<'a> {
        let lines = text.lines().map(strip_comment).collect();
        Reader { lines, line: 0, pos: 0 }
    }

    /// The 1-based number of the line being read (the last line once the text is exhausted).
    pub(super) fn line_no(&self) -> usize {
        self.line.min(self.lines.len().saturating_sub(1)) + 1
    }

    /// Moves to the next non-space character, across lines. False at the end of the text.
    pub(super) fn skip_space(&mut self) -> bool {
        while let Some(line) = self.lines.get(self.line) {
            // Byte by byte: the first byte that is not a space starts a character.
            let rest = &line.as_bytes()[self.pos..];
            match rest.iter().position(|&b| !is_space_byte(b)) {
                Some(skip) => {
                    self.pos += skip;
                    return true;
                }
                None => {
                    self.line += 1;
                    self.pos = 0;
                }
            }
        }
        false
    }

    /// What is left of the current line (empty once the text is exhausted).
    pub(super) fn rest(&self) -> &'a str {
        self.lines.get(self.line).map_or("", |line| &line[self.pos..])
    }

    /// Moves `bytes` further along the current line.
    pub(super) fn advance(&mut self, bytes: usize) {
        self.pos += bytes;
    }

    /// The next whitespace-separated word, or `None` at the end of the text.
    pub(super) fn word(&mut self) -> Option<&'a str> {
        if !self.skip_space() {
            return None;
        }
        let rest = self.rest();
        let len = rest.find(is_space).unwrap_or(rest.len());
        self.advance(len);
        Some(&rest[..len])
    }

    /// The next non-space character, or `None` at the end of the text.
    pub(super) fn char(&mut self) -> Option<char> {
        if !self.skip_space() {
            return None;
        }
        let c = self.rest().chars().next()?;
        self.advance(c.len_utf8());
        Some(c)
    }
}

fn strip_comment(line: &str) -> &str {
    line.find('#').map_or(line, |hash| &line[..hash])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_skip_comments_and_blank_lines() {
        let mut r = Reader::new("a.cl # program\n\n  # only a comment\nk#x\n 1\t2");
        assert_eq!(r.word(), Some("a.cl"));
        assert_eq!(r.line_no(), 1);
        assert_eq!(r.word(), Some("k"));
        assert_eq!(r.line_no(), 4);
        assert_eq!(r.word(), Some("1"));
        assert_eq!(r.word(), Some("2"));
        assert_eq!(r.line_no(), 5);
        assert_eq!(r.word(), None);
        assert_eq!(r.line_no(), 5);
    }

    #[test]
    fn char_and_rest_of_line() {
        let mut r = Reader::new("\n  <size=4 dump> 7\n8");
        assert_eq!(r.char(), Some('<'));
        assert_eq!(r.rest(), "size=4 dump> 7");
        r.advance(12);
        assert_eq!(r.word(), Some("7"));
        assert_eq!(r.char(), Some('8'));
        assert_eq!(r.char(), None);
    }

    #[test]
    fn crlf_lines() {
        let mut r = Reader::new("a\r\nb\r\n");
        assert_eq!(r.word(), Some("a"));
        assert_eq!(r.word(), Some("b"));
        assert_eq!(r.line_no(), 2);
        assert_eq!(r.word(), None);
    }
}
