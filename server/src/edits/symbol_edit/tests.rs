use super::*;
use expect_test::{expect, Expect};

fn apply(path: &str, before: &str, code: &str, opts: SymbolEdit) -> String {
    match apply_symbol_edits(path, before, code, &opts) {
        Ok((after, changed)) => format!("changed: {}\n{after}", changed.join(", ")),
        Err(e) => format!("error: {e}"),
    }
}

fn check(path: &str, before: &str, code: &str, expected: Expect) {
    expected.assert_eq(&apply(path, before, code, SymbolEdit::default()));
}

const CALC: &str = "import math\n\n\ndef add(a, b):\n    return a - b\n\n\ndef area(r):\n    return math.pi * r * r\n";

#[test]
fn replaces_a_function_by_name() {
    check(
        "calc.py",
        CALC,
        "def add(a, b):\n    return a + b\n",
        expect![[r#"
            changed: add
            import math


            def add(a, b):
                return a + b


            def area(r):
                return math.pi * r * r
        "#]],
    );
}

#[test]
fn a_method_given_alone_is_reindented_into_its_class() {
    let before = "class Cart:\n    def __init__(self):\n        self.items = []\n\n    def total(self):\n        return sum(i.price for i in self.items) - 1\n";
    check(
        "cart.py",
        before,
        "def total(self):\n    return sum(i.price for i in self.items)\n",
        expect![[r#"
            changed: total
            class Cart:
                def __init__(self):
                    self.items = []

                def total(self):
                    return sum(i.price for i in self.items)
        "#]],
    );
}

#[test]
fn a_partial_class_keeps_the_members_left_out() {
    let before =
        "class Cart:\n    def __init__(self):\n        self.items = []\n\n    def total(self):\n        return 0\n";
    check(
        "cart.py",
        before,
        "class Cart:\n    def total(self):\n        return len(self.items)\n\n    def empty(self):\n        return not self.items\n",
        expect![[r#"
            changed: total, empty
            class Cart:
                def __init__(self):
                    self.items = []

                def total(self):
                    return len(self.items)

                def empty(self):
                    return not self.items
        "#]],
    );
}

#[test]
fn new_helpers_and_imports_are_added() {
    check(
        "calc.py",
        CALC,
        "import functools\nimport math\n\ndef _plus(a, b):\n    return a + b\n\ndef add(a, b):\n    return _plus(a, b)\n",
        expect![[r#"
            changed: add, _plus
            import math
            import functools


            def _plus(a, b):
                return a + b

            def add(a, b):
                return _plus(a, b)


            def area(r):
                return math.pi * r * r
        "#]],
    );
}

#[test]
fn unknown_names_get_a_suggestion() {
    check(
        "calc.py",
        CALC,
        "def addition(a, b):\n    return a + b\n",
        expect!["error: the reply defines `addition`, which is not in `calc.py`; did you mean `add`?"],
    );
    check(
        "calc.py",
        CALC,
        "x = add(1, 2)\n",
        expect!["error: the reply holds no code block; reply with the changed code in one ``` fenced block"],
    );
}

#[test]
fn tests_are_protected_when_asked_but_repeated_tests_are_fine() {
    let before = "def add(a, b):\n    return a - b\n\n\ndef test_add():\n    assert add(1, 2) == 3\n";
    let opts = SymbolEdit { focus_line: None, protect_tests: true, region: None };
    let changed_test = "def test_add():\n    assert add(1, 2) == -1\n";
    expect![
        "error: the reply changes `test_add`, a test; fix the code under test instead and leave the tests as they are"
    ]
    .assert_eq(&apply("test_calc.py", before, changed_test, opts.clone()));
    let both = "def add(a, b):\n    return a + b\n\n\ndef test_add():\n    assert add(1, 2) == 3\n";
    expect![[r#"
        changed: add
        def add(a, b):
            return a + b


        def test_add():
            assert add(1, 2) == 3
    "#]]
    .assert_eq(&apply("test_calc.py", before, both, opts));
}

#[test]
fn rust_method_with_doc_comment_replaces_the_old_doc() {
    let before = "struct Rect { w: u32, h: u32 }\n\nimpl Rect {\n    /// The area.\n    pub fn area(&self) -> u32 {\n        self.w + self.h\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn area() {\n        assert_eq!(Rect { w: 2, h: 3 }.area(), 6);\n    }\n}\n";
    let opts = SymbolEdit { focus_line: Some(5), protect_tests: true, region: None };
    expect![[r#"
        changed: area
        struct Rect { w: u32, h: u32 }

        impl Rect {
            /// Width times height.
            pub fn area(&self) -> u32 {
                self.w * self.h
            }
        }

        #[cfg(test)]
        mod tests {
            use super::*;
            #[test]
            fn area() {
                assert_eq!(Rect { w: 2, h: 3 }.area(), 6);
            }
        }
    "#]]
    .assert_eq(&apply(
        "src/lib.rs",
        before,
        "/// Width times height.\npub fn area(&self) -> u32 {\n    self.w * self.h\n}\n",
        opts,
    ));
}

#[test]
fn the_focus_line_picks_between_same_names() {
    let before =
        "class A:\n    def size(self):\n        return 1\n\n\nclass B:\n    def size(self):\n        return 2\n";
    let opts = SymbolEdit { focus_line: Some(8), protect_tests: false, region: None };
    expect![[r#"
        changed: size
        class A:
            def size(self):
                return 1


        class B:
            def size(self):
                return 3
    "#]]
    .assert_eq(&apply("shapes.py", before, "    def size(self):\n        return 3\n", opts));
}

#[test]
fn an_unchanged_reply_is_an_error_and_changed_symbols_are_listed() {
    check(
        "calc.py",
        CALC,
        "def area(r):\n    return math.pi * r * r\n",
        expect!["error: the reply changes nothing in `calc.py`"],
    );
    let after = CALC.replace("a - b", "a + b");
    assert_eq!(changed_symbols("calc.py", CALC, &after), vec!["add".to_string()]);
}

#[test]
fn definitions_go_to_the_file_that_has_them() {
    let files = vec![
        (
            "cart/__init__.py".to_string(),
            "from .pricing import apply_discount\n\n\ndef total(c):\n    return apply_discount(c, 10)\n".to_string(),
        ),
        (
            "cart/pricing.py".to_string(),
            "def apply_discount(cents, percent):\n    return cents - cents * percent // 10\n".to_string(),
        ),
    ];
    let code = "def apply_discount(cents, percent):\n    return cents - cents * percent // 100\n";
    let out = apply_symbol_edits_across(&files, code, &SymbolEdit::default()).unwrap();
    assert_eq!(
        out,
        vec![(
            "cart/pricing.py".to_string(),
            "def apply_discount(cents, percent):\n    return cents - cents * percent // 100\n".to_string()
        )]
    );
    // Both files at once; an unknown helper lands in the primary file.
    let code = "def _pct(p):\n    return p\n\ndef total(c):\n    return apply_discount(c, _pct(10))\n\ndef apply_discount(cents, percent):\n    return cents - cents * percent // 100\n";
    let out = apply_symbol_edits_across(&files, code, &SymbolEdit::default()).unwrap();
    assert_eq!(out.len(), 2);
    assert!(out[0].1.contains("def _pct(p):") && out[0].1.contains("_pct(10)"), "{}", out[0].1);
    assert!(out[1].1.contains("// 100"));
    // A reply that repeats a called definition as it is names it, and its file.
    let code = "def apply_discount(cents, percent):\n    return cents - cents * percent // 10\n";
    let err = apply_symbol_edits_across(&files, code, &SymbolEdit::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the reply repeats `apply_discount` (cart/pricing.py) exactly as they are, so it changes nothing; change the line that computes the wrong value"
    );
}
