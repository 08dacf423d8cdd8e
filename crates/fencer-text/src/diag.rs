//! Diagnostics: a message with a file, line and column, rendered with the source line and a
//! caret under the offending text.

use crate::ast::Span;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based.
    pub line: u32,
    /// 1-based, in characters.
    pub col: u32,
    pub span: Span,
    /// What is wrong, e.g. "expected `;` after a statement, found `}`".
    pub message: String,
    /// Short text under the caret.
    pub label: String,
    pub help: Option<String>,
}

/// Maps byte offsets to 1-based line and column.
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(src: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    pub fn line_col(&self, src: &str, offset: usize) -> (u32, u32) {
        let offset = offset.min(src.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let col = src
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(offset - start);
        (line as u32 + 1, col as u32 + 1)
    }
}

impl Diagnostic {
    pub fn new(
        file: &str,
        src: &str,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Diagnostic {
        let (line, col) = LineIndex::new(src).line_col(src, span.start);
        Diagnostic {
            file: file.to_string(),
            line,
            col,
            span,
            message: message.into(),
            label: label.into(),
            help: None,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// The full report, in the style of rustc: a `file:line:col: error:` headline, the
    /// source line, carets under the offending text with a label, and any help. No colours,
    /// so that it reads the same in a log and a terminal.
    pub fn render(&self, src: &str) -> String {
        let mut s = format!("{self}\n");
        let line_text = src.lines().nth(self.line as usize - 1).unwrap_or("");
        let num = self.line.to_string();
        let pad = " ".repeat(num.len());
        // Carets span the offending text, clipped to its line and at least one wide.
        let start_col = self.col as usize - 1;
        let len = src
            .get(self.span.start..self.span.end.min(src.len()))
            .map(|t| t.lines().next().unwrap_or("").chars().count())
            .unwrap_or(1)
            .max(1);
        // Tabs keep their width on the caret line.
        let lead: String = line_text
            .chars()
            .take(start_col)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        s.push_str(&format!(
            "{pad} |\n{num} | {line_text}\n{pad} | {lead}{} {}\n",
            "^".repeat(len),
            self.label
        ));
        if let Some(h) = &self.help {
            s.push_str(&format!("{pad} = help: {h}\n"));
        }
        s
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let src = "ab\ncd\n\nxé z";
        let ix = LineIndex::new(src);
        assert_eq!(ix.line_col(src, 0), (1, 1));
        assert_eq!(ix.line_col(src, 4), (2, 2));
        assert_eq!(ix.line_col(src, 6), (3, 1));
        // `z` is after a two-byte character: column counts characters.
        assert_eq!(ix.line_col(src, src.find('z').unwrap()), (4, 4));
        assert_eq!(ix.line_col(src, 1000), (4, 5));
    }

    #[test]
    fn render_shows_location_line_and_caret() {
        let src = "shared x = 0;\nthread p { x = ; }\n";
        let d = Diagnostic::new(
            "t.fen",
            src,
            Span::new(29, 30),
            "expected an expression, found `;`",
            "here",
        );
        let r = d.render(src);
        assert!(
            r.starts_with("t.fen:2:16: error: expected an expression"),
            "{r}"
        );
        assert!(r.contains("thread p { x = ; }"), "{r}");
        assert!(r.contains('^'), "{r}");
    }
}
