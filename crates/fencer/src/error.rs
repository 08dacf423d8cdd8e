//! Why a check has no answer: the input or the options are wrong (exit code 2), or fencer
//! itself failed (exit code 4, never a verdict).

use fencer_text::Diagnostic;

/// A check that could not run. `message` is the whole text a person reads (with the
/// source line and a caret where the position is known); `diagnostic` carries the
/// position for programs that read it.
#[derive(Clone, Debug)]
pub struct Error {
    pub message: String,
    pub diagnostic: Option<Box<Diagnostic>>,
    /// A bug in fencer (a result it could not confirm, a model it built that does not
    /// compile), not in the input.
    pub internal: bool,
    /// One of the engine's bounds stopped the run before any answer (exit code 3): the
    /// input is fine, but too large for the bound.
    pub limit: bool,
}

impl Error {
    /// Bad input or options: the user's to fix.
    pub fn usage(message: &str, diagnostic: Option<&Diagnostic>) -> Error {
        Error {
            message: message.to_string(),
            diagnostic: diagnostic.map(|d| Box::new(d.clone())),
            internal: false,
            limit: false,
        }
    }

    /// fencer's fault.
    pub fn internal(message: &str) -> Error {
        Error {
            message: message.to_string(),
            diagnostic: None,
            internal: true,
            limit: false,
        }
    }

    /// An engine's bound stopped the run before it had an answer.
    pub fn limit(message: &str) -> Error {
        Error {
            message: message.to_string(),
            diagnostic: None,
            internal: false,
            limit: true,
        }
    }

    /// A front-end's diagnostic, rendered against the source it points into.
    pub fn diagnostic(d: &Diagnostic, src: &str) -> Error {
        Error::usage(&d.render(src), Some(d))
    }

    /// The exit code `fencer` gives it: 2, 3 for a limit, or 4 when internal.
    pub fn exit_code(&self) -> u8 {
        if self.internal {
            4
        } else if self.limit {
            3
        } else {
            2
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message.trim_end())
    }
}

impl std::error::Error for Error {}
