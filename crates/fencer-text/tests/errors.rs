//! Every error path of the text front-end: each test feeds a bad program and checks the
//! position and the wording of the diagnostic.

use fencer_text::{parse_program, Diagnostic};

fn err(src: &str) -> Diagnostic {
    match parse_program("bad.fen", src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(d) => d,
    }
}

/// Asserts the error is at `line:col` and its message contains `needle`.
fn check(src: &str, line: u32, col: u32, needle: &str) {
    let d = err(src);
    assert_eq!((d.line, d.col), (line, col), "position of: {d}");
    assert!(
        d.message.contains(needle),
        "message `{}` lacks `{needle}`",
        d.message
    );
    let r = d.render(src);
    assert!(
        r.starts_with(&format!("bad.fen:{line}:{col}: error: ")),
        "{r}"
    );
    assert!(r.contains('^'), "no caret in:\n{r}");
}

// ---- lexer ----

#[test]
fn unexpected_character() {
    check(
        "shared x = 0;\nthread p { x = 1 @ 2; }",
        2,
        18,
        "unexpected character `@`",
    );
}

#[test]
fn unterminated_comment() {
    check(
        "shared x;\n/* never closed\nthread p {}",
        2,
        1,
        "unterminated block comment",
    );
}

#[test]
fn integer_too_large() {
    check(
        "shared x = 99999999999999999999;",
        1,
        12,
        "does not fit in 64 bits",
    );
}

#[test]
fn malformed_number() {
    check("shared x = 12ab;", 1, 12, "malformed number");
}

// ---- parser ----

#[test]
fn bad_top_level_item() {
    check(
        "shared x;\nx = 1;",
        2,
        1,
        "expected `shared`, `mutex`, `thread`, `fn`, `exists` or `forall`",
    );
}

#[test]
fn missing_semicolon_after_statement() {
    check(
        "shared x;\nthread p {\n  x = 1\n}",
        4,
        1,
        "expected `;` after a statement, found `}`",
    );
}

#[test]
fn missing_semicolon_after_declaration() {
    check(
        "shared x = 0\nthread p {}",
        2,
        1,
        "expected `;` after a `shared` declaration",
    );
}

#[test]
fn missing_expression() {
    check(
        "shared x;\nthread p { x = ; }",
        2,
        16,
        "expected an expression, found `;`",
    );
}

#[test]
fn keyword_as_name() {
    check("shared while;", 1, 8, "found the keyword `while`");
}

#[test]
fn keyword_as_statement() {
    check(
        "thread p { else; }",
        1,
        12,
        "expected a statement, found the keyword `else`",
    );
}

#[test]
fn statement_not_an_assignment() {
    check(
        "thread p { r + 1; }",
        1,
        14,
        "expected `=` (an assignment) or `(` (a call)",
    );
}

#[test]
fn unclosed_block() {
    check(
        "thread p { r = 1;",
        1,
        18,
        "expected `}` to close the block, found end of file",
    );
}

#[test]
fn unclosed_parenthesis() {
    check(
        "thread p { r = (1 + 2; }",
        1,
        22,
        "expected `)` to close the parenthesis",
    );
}

#[test]
fn bad_array_size() {
    check("shared a[0];", 1, 10, "array size 0 out of range");
}

#[test]
fn list_initialiser_on_scalar() {
    check(
        "shared a = {1, 2};",
        1,
        12,
        "is a scalar but has a list initialiser",
    );
}

#[test]
fn list_initialiser_wrong_length() {
    check(
        "shared a[3] = {1, 2};",
        1,
        15,
        "has 3 cells but its initialiser lists 2 values",
    );
}

#[test]
fn rmw_inside_expression() {
    check(
        "shared x;\nthread p { r = 1 + cas(x, 0, 1); }",
        2,
        20,
        "`cas` can only be the whole right-hand side",
    );
}

#[test]
fn call_inside_expression() {
    check(
        "fn f() { return 1; }\nthread p { r = 1 + f(); }",
        2,
        20,
        "calls are statements",
    );
}

#[test]
fn cas_missing_comma() {
    check(
        "shared x;\nthread p { r = cas(x, 0 1); }",
        2,
        25,
        "expected `,` between the expected and the new value",
    );
}

#[test]
fn spawn_with_two_arguments() {
    check(
        "fn w(a) {}\nthread p { t = spawn w(1, 2); }",
        2,
        27,
        "at most one argument",
    );
}

#[test]
fn condition_not_last() {
    check(
        "shared x;\nthread p {}\nexists (x == 0)\nthread q {}",
        4,
        1,
        "the final condition comes last",
    );
}

#[test]
fn condition_missing_parenthesis() {
    check(
        "shared x;\nthread p {}\nexists x == 0",
        3,
        8,
        "expected `(` after `exists`",
    );
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let src = format!(
        "thread p {{ r = {}1{}; }}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let d = err(&src);
    assert!(d.message.contains("nesting deeper than"), "{d}");
}

#[test]
fn lock_without_parenthesis() {
    check(
        "mutex m;\nthread p { lock m; }",
        2,
        17,
        "expected `(` after `lock`",
    );
}

// ---- semantic checks ----

#[test]
fn no_thread() {
    check("shared x;\n", 2, 1, "the program has no thread");
}

#[test]
fn duplicate_declaration() {
    check(
        "shared x;\nmutex x;\nthread p {}",
        2,
        7,
        "`x` is declared twice (first at line 1, column 8)",
    );
}

#[test]
fn duplicate_thread() {
    check("thread p {}\nthread p {}", 2, 8, "`p` is declared twice");
}

#[test]
fn unknown_name() {
    check("thread p { r = y; }", 1, 16, "unknown name `y`");
}

#[test]
fn unknown_mutex() {
    check("thread p { lock(m); }", 1, 17, "unknown mutex `m`");
}

#[test]
fn lock_on_shared_location() {
    check(
        "shared m;\nthread p { lock(m); }",
        2,
        17,
        "`m` is not a mutex",
    );
}

#[test]
fn mutex_as_value() {
    check(
        "mutex m;\nthread p { r = m; }",
        2,
        16,
        "mutex `m` used as a value",
    );
}

#[test]
fn array_without_index() {
    check(
        "shared a[2];\nthread p { r = a; }",
        2,
        16,
        "array `a` used without an index",
    );
}

#[test]
fn scalar_with_index() {
    check(
        "shared x;\nthread p { r = x[1]; }",
        2,
        18,
        "`x` is a scalar, not an array",
    );
}

#[test]
fn register_with_index() {
    check(
        "thread p { r = 1; s = r[0]; }",
        1,
        25,
        "register `r` is not an array",
    );
}

#[test]
fn rmw_on_register() {
    check(
        "thread p { r = 1; s = cas(r, 0, 1); }",
        1,
        27,
        "`r` is a register, but the target of `cas` must be a shared location",
    );
}

#[test]
fn thread_register_in_code() {
    check(
        "thread p { r = 1; }\nthread q { s = p.r; }",
        2,
        16,
        "only the final condition may read",
    );
}

#[test]
fn unknown_function() {
    check("thread p { g(); }", 1, 12, "unknown function `g`");
}

#[test]
fn calling_a_thread() {
    check("thread p { }\nthread q { p(); }", 2, 12, "`p` is a thread");
}

#[test]
fn wrong_argument_count() {
    check(
        "fn f(a, b) { }\nthread q { f(1); }",
        2,
        12,
        "takes 2 argument(s) but is given 1",
    );
}

#[test]
fn spawning_a_two_parameter_function() {
    check(
        "fn f(a, b) { }\nthread q { t = spawn f(1); }",
        2,
        22,
        "a spawned function takes at most one",
    );
}

#[test]
fn duplicate_parameter() {
    check(
        "fn f(a, a) { }\nthread q { }",
        1,
        9,
        "parameter `a` appears twice",
    );
}

#[test]
fn parameter_shadows_global() {
    check(
        "shared x;\nfn f(x) { }\nthread q { }",
        2,
        6,
        "has the name of a global declaration",
    );
}

#[test]
fn condition_unknown_thread() {
    check(
        "thread p { r = 1; }\nexists (z.r == 1)",
        2,
        9,
        "unknown thread `z`",
    );
}

#[test]
fn condition_unknown_register() {
    check(
        "thread p { r = 1; }\nexists (p.s == 1)",
        2,
        11,
        "thread `p` has no register `s`",
    );
}

#[test]
fn condition_bare_register() {
    let d = err("thread p { r = 1; }\nexists (r == 1)");
    assert_eq!((d.line, d.col), (2, 9));
    assert!(d.message.contains("unknown shared location `r`"));
    assert_eq!(d.help.as_deref(), Some("for a register write `p.r`"));
}

#[test]
fn condition_index_out_of_bounds() {
    check(
        "shared a[2];\nthread p { }\nexists (a[2] == 0)",
        3,
        11,
        "index 2 out of bounds of `a`",
    );
}

#[test]
fn condition_non_constant_index() {
    check(
        "shared a[2];\nthread p { }\nexists (a[1+0] == 0)",
        3,
        11,
        "expected a constant index",
    );
}
