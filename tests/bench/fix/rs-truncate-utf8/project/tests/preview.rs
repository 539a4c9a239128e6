use notify_text::preview::{collapse_whitespace, truncate};
use notify_text::Notification;

#[test]
fn short_text_unchanged() {
    assert_eq!(truncate("hello", 10), "hello");
}

#[test]
fn ascii_is_cut_with_ellipsis() {
    assert_eq!(truncate("hello world", 6), "hello…");
}

#[test]
fn accented_text_is_cut_by_characters() {
    assert_eq!(truncate("crème brûlée tonight", 8), "crème b…");
}

#[test]
fn umlaut_at_the_cut() {
    assert_eq!(truncate("Grüße aus Köln", 4), "Grü…");
}

#[test]
fn emoji_count_as_one_character() {
    let cut = truncate("🎉🎉🎉 party at 8", 5);
    assert_eq!(cut, "🎉🎉🎉…");
    assert_eq!(cut.chars().count(), 4);
}

#[test]
fn lock_screen_line() {
    let n = Notification { title: "Zoë".into(), body: "Dinner   at\nmine? Bring the\tdessert".into() };
    assert_eq!(n.lock_screen(24), "Zoë: Dinner at mine? Br…");
    assert_eq!(collapse_whitespace(" a \n b "), "a b");
}
