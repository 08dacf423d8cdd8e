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

    /// The full report: a `file:line:col: error:` headline, then the source line with a
    /// caret (no colours, so that it reads the same in a log and a terminal).
    pub fn render(&self, src: &str) -> String {
        use ariadne::{CharSet, Config, Label, Report, ReportKind, Source};
        let len = src.len();
        // Ariadne counts characters; convert the byte span.
        let to_char = |b: usize| src.get(..b.min(len)).map_or(b, |s| s.chars().count());
        let start = to_char(self.span.start);
        let end = to_char(self.span.end.max(self.span.start + 1)).max(start + 1);
        let file = self.file.as_str();
        let mut report = Report::build(ReportKind::Error, (file, start..end))
            .with_config(
                Config::default()
                    .with_color(false)
                    .with_char_set(CharSet::Ascii),
            )
            .with_message(&self.message)
            .with_label(Label::new((file, start..end)).with_message(&self.label));
        if let Some(h) = &self.help {
            report = report.with_help(h);
        }
        let mut out = Vec::new();
        let rendered = report
            .finish()
            .write((file, Source::from(src)), &mut out)
            .ok()
            .and_then(|_| String::from_utf8(out).ok());
        let mut s = format!("{}\n", self);
        match rendered {
            Some(r) => s.push_str(&r),
            None => {
                if let Some(h) = &self.help {
                    s.push_str(&format!("help: {h}\n"));
                }
            }
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
